"""The rendered pieces of a user turn, and the message each provider wants made of them.

Three shapes: OpenAI chat (``image_url`` parts), Anthropic messages (base64
``image`` parts after the text) and plain text.  Pure: no templates.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..base.results import Screenshot
from ..errors import ConfigError

__all__ = ["SHAPES", "Rendered", "Shape", "to_message"]

Shape = Literal["openai", "anthropic", "plain"]
SHAPES: tuple[Shape, ...] = ("openai", "anthropic", "plain")


@dataclass(frozen=True)
class Rendered:
    """A piece of a user turn: text, and at most one image to show after it."""

    kind: Literal["result", "error", "note"]
    text: str
    image: Screenshot | None = None


def to_message(parts: Sequence[Rendered] | Iterable[Rendered], shape: Shape = "openai") -> dict[str, Any]:
    """One user message holding the rendered parts: all the text first, then the images."""
    parts = list(parts)
    text = "\n\n".join(p.text for p in parts if p.text)
    images = [p.image for p in parts if p.image is not None]
    if shape == "plain":
        for img in images:
            text += f"\n\n[screenshot: {img.width}x{img.height} {img.format}]"
        return {"role": "user", "content": text}
    if shape == "openai":
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [{"type": "image_url", "image_url": {"url": img.data_url()}} for img in images]
        return {"role": "user", "content": content}
    if shape == "anthropic":
        content = [{"type": "text", "text": text}]
        content += [
            {"type": "image", "source": {"type": "base64", "media_type": img.media_type, "data": img.b64()}}
            for img in images
        ]
        return {"role": "user", "content": content}
    raise ConfigError(f"unknown message shape {shape!r}; use one of {', '.join(SHAPES)}")
