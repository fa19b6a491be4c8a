"""An event loop on a thread of its own, so that sync code can drive async code anywhere.

Used by the synchronous facades: they work even where an event loop is
already running in the calling thread (as in Jupyter), which ``asyncio.run``
and Playwright's own sync API refuse.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from ..errors import UsageError

__all__ = ["LoopThread", "run_sync"]

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
            raise UsageError("a synchronous call from inside its own loop thread would deadlock")
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result(timeout)
        except TimeoutError:
            fut.cancel()
            raise

    def stop(self) -> None:
        """Cancel what still runs on the loop (bounded), then stop and close it."""
        if self.loop.is_running():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_cancel_the_rest(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
        if not self.loop.is_running():
            self.loop.close()


async def _cancel_the_rest() -> None:
    """Every other task of the loop cancelled and awaited (within 2 s), its end read: a task left
    pending, or ended with an exception nobody read, is reported when the process exits."""
    me = asyncio.current_task()
    rest = [t for t in asyncio.all_tasks() if t is not me]
    for t in rest:
        t.cancel()
    if rest:
        await asyncio.wait(rest, timeout=2)
    for t in rest:
        if t.done() and not t.cancelled():
            t.exception()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    lt = LoopThread("xmltools-run")
    try:
        return lt.call(coro)
    finally:
        lt.stop()
