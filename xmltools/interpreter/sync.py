"""The synchronous twin of :class:`~xmltools.interpreter.core.AsyncInterpreter`.

It runs the same core on a loop thread of its own, so it also works where an
event loop is already running; no logic is repeated here, every call delegates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..base.expectations import Expectation
from ..base.secrets import Secret
from ..base.threadloop import LoopThread
from ..browser.base import BrowserLike
from ..config.settings import Config
from ..parser import ToolUse
from ..protocol.approval import Callback, PendingApproval
from ..protocol.machine import Session, State
from ..record.turn import StreamUpdate, Turn
from ..render.prompts import Renderer
from ..tools import ToolRegistry
from .core import AsyncInterpreter
from .stream import TurnStream

if TYPE_CHECKING:
    from pathlib import Path

    from ..browser.pool import BrowserPool
    from ..record.transcript import TranscriptWriter

__all__ = ["Interpreter", "SyncTurnStream"]

T = TypeVar("T")


class Interpreter:
    """The synchronous interpreter: the same behaviour as :class:`AsyncInterpreter`.

    ``with Interpreter(config) as it: turn = it.handle(text)``.  The browser is
    closed when the block exits, also on an exception.
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        registry: ToolRegistry | None = None,
        renderer: Renderer | None = None,
        browser: BrowserLike | None = None,
        clock: Callable[[], float] = time.monotonic,
        pool: BrowserPool | None = None,
        approver: Callback | None = None,
        browser_factory: Callable[[str], BrowserLike] | None = None,
        secrets: Mapping[str, str | Secret] | None = None,
    ) -> None:
        self._loop = LoopThread("xmltools-interpreter")
        self.core = AsyncInterpreter(
            config,
            registry=registry,
            renderer=renderer,
            browser=browser,
            clock=clock,
            pool=pool,
            approver=approver,
            browser_factory=browser_factory,
            secrets=secrets,
        )
        if self.core.mcp and self.core.config.mcp_start == "eager":
            try:
                self._call(self.core.start_servers())
            except BaseException:
                self.close()
                raise

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.call(coro)

    def __enter__(self) -> Interpreter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def config(self) -> Config:
        return self.core.config

    @property
    def registry(self) -> ToolRegistry:
        return self.core.registry

    def record(
        self, path: str | Path, *, append: bool = False, base_url: str | None = None
    ) -> TranscriptWriter:
        """Record every turn from now on (see :meth:`AsyncInterpreter.record`).  The writer's
        ``expect_*`` assertions are checked in the browser at once, and raise
        :class:`~xmltools.base.expectations.ExpectationFailed` when they do not hold.

        The configured MCP servers are started first, as :meth:`system_prompt` starts them: the
        system prompt recorded is the one the model is given, with their tools, whichever of the
        two is called first."""
        self._start_servers()
        writer = self.core.record(path, append=append, base_url=base_url)
        writer.defer = False
        writer.verifier = self.verify
        return writer

    def verify(self, exp: Expectation) -> str | None:
        """None when the assertion holds on its session's page (see :meth:`AsyncInterpreter.verify`)."""
        return self._call(self.core.verify(exp))

    @property
    def state(self) -> State:
        return self.core.state

    @property
    def open_sessions(self) -> tuple[str, ...]:
        return self.core.open_sessions

    @property
    def session(self) -> Session:
        return self.core.session

    def system_prompt(self) -> str:
        """The system prompt; configured MCP servers are started first, so that it lists their tools."""
        self._start_servers()
        return self.core.system_prompt()

    def _start_servers(self) -> None:
        """Start the configured MCP servers that have not started (the prompt lists their tools)."""
        if self.core.mcp and not self.core.mcp.started:
            self._call(self.core.start_servers())

    def trim_history(self, messages: list[dict[str, Any]]) -> int:
        return self.core.trim_history(messages)

    def handle(self, text: str) -> Turn:
        return self._call(self.core.handle(text))

    def stream(self) -> SyncTurnStream:
        return SyncTurnStream(self, self.core.stream())

    def approve(self, pending: PendingApproval | ToolUse) -> Turn:
        """Run the call held for approval (see :meth:`AsyncInterpreter.approve`)."""
        return self._call(self.core.approve(pending))

    def deny(self, pending: PendingApproval | ToolUse, reason: str = "the user did not approve it") -> Turn:
        """Refuse the call held for approval (see :meth:`AsyncInterpreter.deny`)."""
        return self._call(self.core.deny(pending, reason))

    def close(self) -> None:
        try:
            self._call(self.core.aclose())
        finally:
            self._loop.stop()


class SyncTurnStream:
    def __init__(self, owner: Interpreter, inner: TurnStream) -> None:
        self._owner = owner
        self._inner = inner

    @property
    def call_complete(self) -> bool:
        return self._inner.call_complete

    def feed(self, chunk: str) -> StreamUpdate:
        return self._inner.feed(chunk)

    def finish(self, *, stopped: bool = False) -> Turn:
        return self._owner._call(self._inner.finish(stopped=stopped))
