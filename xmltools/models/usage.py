"""Token counts of a model's calls: as the server reported them, or estimated where it could not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Usage"]


@dataclass
class Usage:
    """Token counts: as the server reported them, or estimated where it could not.

    A stream cut after the first complete call never receives the server's
    usage report, so such calls are estimated (about four characters a token,
    and a flat 765 tokens an image) and counted in ``estimated_calls``.  An
    Anthropic stream reports the prompt's tokens at its start: when it is cut,
    only the completion's tokens are estimated (the call still counts as
    estimated).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0  # model calls
    estimated_calls: int = 0  # calls whose tokens are estimates

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def describe(self) -> str:
        """The counts for a person: ``tokens: 1,234 in, 56 out``; estimates are marked ``~``.

        ``tokens: ~1,234 in, ~56 out (estimated for 2 of 3 calls)``: when any
        call was estimated, both totals are marked, since either may hold an
        estimate.
        """
        if not self.calls and not self.total_tokens:
            return "tokens: none (no model call)"
        mark = "~" if self.estimated_calls else ""
        text = f"tokens: {mark}{self.prompt_tokens:,} in, {mark}{self.completion_tokens:,} out"
        if self.estimated_calls:
            calls = f"{self.calls} call{'s' if self.calls != 1 else ''}"
            text += f" (estimated for {self.estimated_calls} of {calls})"
        return text

    def add(self, prompt: int | None, completion: int | None) -> None:
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0

    def estimate(self, messages: list[dict[str, Any]], reply: str) -> None:
        chars = 0
        images = 0
        for m in messages:
            content = m.get("content")
            if isinstance(content, str):
                chars += len(content)
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "text":
                        chars += len(str(part.get("text", "")))
                    else:
                        images += 1
        self.add((chars + 3) // 4 + 765 * images, (len(reply) + 3) // 4)
        self.estimated_calls += 1
