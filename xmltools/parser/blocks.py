"""The parser's output: blocks, the events of a stream, and diagnostics.

This module owns the frozen data the scanner produces (``TextBlock``,
``ToolUse``, ``Diagnostic`` and the four events), kept apart from the machine
that makes it.  It is pure and imports nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, TypeAlias

__all__ = [
    "Block",
    "Diagnostic",
    "Event",
    "ParamDelta",
    "Span",
    "TextBlock",
    "TextDelta",
    "ToolCompleted",
    "ToolStarted",
    "ToolUse",
]

Span: TypeAlias = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A structured problem found in the model's text: a code, a message and a span."""

    code: str
    message: str
    span: Span

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "span": list(self.span)}


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text between calls (trimmed; its span covers the trimmed content)."""

    content: str
    partial: bool = False
    span: Span = (0, 0)
    diagnostics: tuple[Diagnostic, ...] = ()
    type: Literal["text"] = "text"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"type": "text", "content": self.content, "partial": self.partial}
        out["span"] = list(self.span)
        if self.diagnostics:
            out["diagnostics"] = [d.to_json() for d in self.diagnostics]
        return out


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call.  ``partial`` means its closing tag has not arrived.

    A call is *complete* (fit to run) when it is closed and has no diagnostics.
    """

    name: str
    params: Mapping[str, str] = field(default_factory=dict)
    partial: bool = False
    span: Span = (0, 0)
    param_spans: Mapping[str, Span] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()
    type: Literal["tool_use"] = "tool_use"

    @property
    def complete(self) -> bool:
        return not self.partial and not self.diagnostics

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "type": "tool_use",
            "name": self.name,
            "params": dict(self.params),
            "partial": self.partial,
            "span": list(self.span),
        }
        if self.diagnostics:
            out["diagnostics"] = [d.to_json() for d in self.diagnostics]
        return out


Block: TypeAlias = TextBlock | ToolUse
"""One piece of a parsed message: a :class:`TextBlock` or a :class:`ToolUse` (``block.type`` says which)."""


class TextDelta(NamedTuple):
    """Raw text was added to the current text block (untrimmed)."""

    text: str


class ToolStarted(NamedTuple):
    """A tool call opened.  ``call_index`` is its position among the calls of the message."""

    call_index: int
    name: str
    start: int


class ParamDelta(NamedTuple):
    """Raw characters were added to a parameter value (untrimmed)."""

    call_index: int
    name: str
    text: str


class ToolCompleted(NamedTuple):
    """A tool call's closing tag arrived; ``block.complete`` says whether it is fit to run."""

    call_index: int
    block: ToolUse


Event: TypeAlias = TextDelta | ToolStarted | ParamDelta | ToolCompleted
