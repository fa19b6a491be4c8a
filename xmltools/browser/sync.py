"""A synchronous facade over the async controller, usable where an event loop already runs.

Playwright's own sync API refuses to start inside a running event loop (as in
Jupyter).  This facade runs the async session on an event loop of its own, in
a background thread, and waits for each result with a bound.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, Literal, TypeVar

from ..errors import BrowserError
from ..results import Failure, Observation, Point, Viewport
from .controller import BrowserConfig, BrowserSession

__all__ = ["LoopThread", "SyncBrowser"]

T = TypeVar("T")


class LoopThread:
    """An asyncio loop running in a daemon thread; ``call(coro)`` runs a coroutine there and waits."""

    def __init__(self, name: str = "xmltools-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        if threading.current_thread() is self._thread:
            raise BrowserError("a synchronous call from inside its own loop thread would deadlock")
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result(timeout)
        except TimeoutError:
            fut.cancel()
            raise

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
        if not self.loop.is_running():
            self.loop.close()


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
