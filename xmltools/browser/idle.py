"""Closing a session left unused: the idle timer, held off while a public call runs.

Owns the count of public calls running now, the timer (armed again after the
last one ends), the task that closes the session when it fires, and the
timeout that closed it (until the session opens again), for the next action
to say so.  Knows the session only through the two callables it is given; must
not import anything of the browser package but :mod:`.bounds`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .bounds import forget

__all__ = ["Idle"]

T = TypeVar("T")


class Idle:
    """The idle timeout of one session: ``seconds`` unused, then ``close()``, when ``is_open()``."""

    def __init__(
        self, seconds: float | None, is_open: Callable[[], bool], close: Callable[[], Awaitable[Any]]
    ) -> None:
        self.seconds = seconds
        self._is_open = is_open
        self._close = close
        self.closed_after: float | None = None  # the timeout that closed the session, until it opens again
        self.timer: asyncio.TimerHandle | None = None
        self._busy = 0  # public calls running now: the timer never closes the session under one
        self._task: asyncio.Task[Any] | None = None

    async def using(self, aw: Awaitable[T]) -> T:
        """Await one public call, with the timer held off while it runs and armed again after it."""
        self._busy += 1
        try:
            return await aw
        finally:
            self._busy -= 1
            if not self._busy:
                self.arm()

    def arm(self) -> None:
        """(Re)start the timer, when there is a timeout and something of the session is open."""
        self.disarm()
        if self.seconds is None or not self._is_open():
            return
        self.timer = asyncio.get_running_loop().call_later(self.seconds, self._fire)

    def disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _fire(self) -> None:
        self.timer = None
        if self._busy:
            self.arm()  # a long action is still running: it is not idleness
            return
        if self._task is None or self._task.done():
            # kept apart from the session's background tasks, which closing cancels
            self._task = asyncio.ensure_future(self._close_unused())
            self._task.add_done_callback(forget)

    async def _close_unused(self) -> None:
        if self._busy or not self._is_open():
            return
        self.closed_after = self.seconds
        await self._close()  # exactly what close() does: the context and its pool slot go back
