"""Finding tool calls in raw model text, whole or chunk by chunk.

This package owns the tool-call dialect (DESIGN §3): which tags are structure,
where a parameter value ends, what is partial, and the diagnostics that say
what is wrong with a call.  It is pure: no I/O, and it must import neither
jinja2 nor playwright nor pydantic (nor anything that does).

Two modes exist:

* ``compat="default"``: our dialect.  Tags mentioned in prose stay text,
  truncated calls never count as complete, duplicate and unknown tags make a
  call invalid, and the ``text``-like raw parameters keep their spaces.
* ``compat="roo"`` and ``compat="cline"``: the block output of Roo-Code's and
  Cline's whole-message parsers, reproduced for migration and comparison
  (``compat.py``).  They differ only in trimming: Cline trims every value.

The modules, each with one concern::

    vocabulary.py  ToolSyntax, Vocabulary, Limits: what the parser is built with
    blocks.py      TextBlock, ToolUse, Diagnostic and the events: what it produces
    text.py        the stored text of the message, and reading a span of it
    state.py       the scanner's state between feeds, and the moves its steps share
    scanner.py     the steps of our dialect, one per state: STEPS[state]
    compat.py      the anchors' steps (roo, cline): ANCHOR_STEPS[state]
    stream.py      StreamParser: feed, close, blocks
    __init__.py    parse(), and the public names

The scanner is incremental.  Every decision it makes depends only on the text
up to a bounded look-ahead, so feeding a message in chunks of any size gives
exactly the blocks of parsing it whole, and the total cost stays linear.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import UsageError
from .blocks import (
    Block,
    Diagnostic,
    Event,
    ParamDelta,
    TextBlock,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUse,
)
from .stream import Compat, Fenced, StreamParser
from .vocabulary import BROWSER_ACTION, HasVocabulary, Limits, ToolSyntax, Vocabulary

__all__ = [
    "BROWSER_ACTION",
    "Block",
    "Diagnostic",
    "Event",
    "Limits",
    "ParamDelta",
    "StreamParser",
    "TextBlock",
    "TextDelta",
    "ToolCompleted",
    "ToolStarted",
    "ToolSyntax",
    "ToolUse",
    "Vocabulary",
    "parse",
]


def parse(
    text: str,
    *,
    tools: Vocabulary | HasVocabulary | Iterable[ToolSyntax] | None = None,
    compat: Compat = "default",
    fenced: Fenced = "call",
    limits: Limits | None = None,
    final: bool = True,
) -> list[Block]:
    """Parse a whole assistant message into text and tool-use blocks.

    ``final=False`` gives the view of a stream that has not ended yet: the
    last text block is partial and a fragment that may begin a tag is held back.
    """
    if not isinstance(text, str):
        raise UsageError(f"parse() takes str, not {type(text).__name__}")
    p = StreamParser(tools, compat=compat, fenced=fenced, limits=limits)
    p._load(text)
    if final:
        p.close()
    return p.blocks()
