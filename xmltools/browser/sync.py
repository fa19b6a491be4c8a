"""A synchronous facade over the async session, usable where an event loop already runs.

Playwright's own sync API refuses to start inside a running event loop (as in
Jupyter).  This facade runs the async session on an event loop of its own, in
a background thread, and waits for each result with a bound.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Literal, TypeVar

from ..base.results import Failure, Observation, Point, Viewport
from ..base.threadloop import LoopThread
from .session import BrowserSession
from .settings import BrowserConfig

__all__ = ["SyncBrowser"]

T = TypeVar("T")


class SyncBrowser:
    """``with SyncBrowser() as b: obs = b.launch(url)`` — the same results as the async session."""

    def __init__(self, config: BrowserConfig | None = None) -> None:
        self._loop = LoopThread()
        self.session = BrowserSession(config)
        t = self.session.config.timeouts
        # a generous outer bound: every inner wait has its own, smaller one
        self._bound = t.launch + t.navigation + t.settle + t.screenshot + t.close * 3 + 30

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.call(coro, self._bound)

    def __enter__(self) -> SyncBrowser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    @property
    def is_open(self) -> bool:
        return self.session.is_open

    def launch(self, url: str) -> Observation | Failure:
        return self._call(self.session.launch(url))

    def click(self, p: Point) -> Observation | Failure:
        return self._call(self.session.click(p))

    def hover(self, p: Point) -> Observation | Failure:
        return self._call(self.session.hover(p))

    def type(self, text: str) -> Observation | Failure:
        return self._call(self.session.type(text))

    def press(self, keys: str) -> Observation | Failure:
        return self._call(self.session.press(keys))

    def scroll(self, direction: Literal["up", "down"]) -> Observation | Failure:
        return self._call(self.session.scroll(direction))

    def resize(self, size: Viewport) -> Observation | Failure:
        return self._call(self.session.resize(size))

    def run(self, action: object) -> Observation | Failure | None:
        return self._call(self.session.run(action))

    def close(self) -> Failure | None:
        return self._call(self.session.close())

    def shutdown(self) -> None:
        try:
            self._call(self.session.shutdown())
        finally:
            self._loop.stop()
