"""One streamed assistant message: chunks fed as they arrive, the call found as soon as it closes.

The host feeds the model's stream chunk by chunk; once the first complete call
has closed (``call_complete``), it may stop reading, and :meth:`TurnStream.finish`
interprets what arrived.  Imports no browser and no templates of its own, and
not :mod:`.core`, which imports it: what a stream needs of its interpreter is
:class:`Interpreting` (an :class:`~.core.AsyncInterpreter` is one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..errors import UsageError
from ..parser import StreamParser, ToolCompleted, ToolUse
from ..record.turn import StreamUpdate, Turn

if TYPE_CHECKING:
    from ..config.settings import Config
    from ..tools import ToolRegistry

__all__ = ["Interpreting", "TurnStream"]


class Interpreting(Protocol):
    """What a stream uses of the interpreter it belongs to."""

    config: Config
    registry: ToolRegistry

    async def check_expectations(self) -> None: ...

    def _recorded(self, turn: Turn, answered: ToolUse | None = None) -> Turn: ...

    async def _interpret(self, text: str, blocks: list[Any], *, cut: bool) -> Turn: ...


class TurnStream:
    """One streaming assistant message.  Feed chunks; stop when ``call_complete``; then ``finish()``."""

    def __init__(self, interp: Interpreting) -> None:
        c = interp.config
        self._interp = interp
        self._parser = StreamParser(interp.registry, compat=c.compat, fenced=c.fenced, limits=c.limits())
        self._complete: ToolUse | None = None
        self._finished = False

    @property
    def call_complete(self) -> bool:
        return self._complete is not None

    @property
    def call(self) -> ToolUse | None:
        """The first complete call, once its closing tag has arrived: the one that runs."""
        return self._complete

    def feed(self, chunk: str) -> StreamUpdate:
        if self._finished:
            raise UsageError("this stream is finished")
        events = self._parser.feed(chunk)
        if self._complete is None:
            for e in events:
                if isinstance(e, ToolCompleted) and e.block.complete:
                    self._complete = e.block
                    break
        return StreamUpdate(events, self._complete is not None)

    async def finish(self, *, stopped: bool = False) -> Turn:
        """End the message.  ``stopped=True`` says the host stopped reading the model's stream.

        When stopped after the first complete call, the assistant message in the
        history ends where that call ends, and the turn is marked ``cut``.
        """
        if self._finished:
            raise UsageError("finish() was already called")
        self._finished = True
        await self._interp.check_expectations()
        self._parser.close()
        text = self._parser.text
        blocks = self._parser.blocks()
        cut = False
        if stopped and self._complete is not None:
            end = self._complete.span[1]
            cut = True
            text = text[:end]
            blocks = [b for b in blocks if b.span[0] < end]
        return self._interp._recorded(await self._interp._interpret(text, blocks, cut=cut))
