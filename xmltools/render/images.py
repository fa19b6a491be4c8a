"""The history's image budget: only the newest screenshots are sent again.

Works on messages of any provider shape (OpenAI's ``image_url`` parts and
Anthropic's ``image`` parts).  Pure: no templates.
"""

from __future__ import annotations

from typing import Any

__all__ = ["apply_image_budget"]


def apply_image_budget(messages: list[dict[str, Any]], budget: int, placeholder: str) -> int:
    """Keep the newest ``budget`` images; replace older ones by a text part.  Returns how many went."""
    seen = 0
    dropped = 0
    for msg in reversed(messages):
        content = msg.get("content")
        if not isinstance(content, list):
            continue
        for i in range(len(content) - 1, -1, -1):
            part = content[i]
            if isinstance(part, dict) and part.get("type") in ("image_url", "image"):
                seen += 1
                if seen > budget:
                    content[i] = {"type": "text", "text": placeholder}
                    dropped += 1
    return dropped
