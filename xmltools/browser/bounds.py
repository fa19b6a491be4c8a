"""Bounded waits: every call into the browser has a bound, and passing it raises :class:`Hung`.

Owns the bound on one awaited call (:meth:`Bounds.bounded`), the longer bound
of an input action that the page keeps busy with dialogs (:meth:`Bounds.input`),
and the quiet end of background tasks (:func:`forget`).  Knows nothing of
pages or sessions; must not import anything of the browser package but its
settings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .settings import Timeouts

__all__ = ["MAX_NAVIGATIONS", "Bounds", "Hung", "forget"]

T = TypeVar("T")

MAX_NAVIGATIONS = 20  # a page that navigates more often than this during one action is shown as it is


class Hung(Exception):
    """A protocol call passed its bound."""


def forget(task: asyncio.Future[Any]) -> None:
    """A background task's end: its failure (a dialog on a page that closed meanwhile) is not news."""
    if not task.cancelled():
        task.exception()


class Bounds:
    """The bounds of one session; ``last_dialog`` tells when the page last raised a dialog."""

    def __init__(self, timeouts: Timeouts, last_dialog: Callable[[], float]) -> None:
        self.timeouts = timeouts
        self._last_dialog = last_dialog

    async def bounded(self, aw: Awaitable[T], seconds: float) -> T:
        try:
            return await asyncio.wait_for(aw, seconds)
        except TimeoutError as e:
            raise Hung(f"no answer within {seconds:g} s") from e

    async def input(self, aw: Awaitable[T], seconds: float) -> T:
        """An input action, bounded by ``seconds``; longer only while the page keeps raising dialogs.

        A click whose handler raises dialogs one after another does not return
        until the last one is dismissed: that is progress, not a stuck page, so
        it may run up to the navigation bound.
        """
        loop = asyncio.get_running_loop()
        fut = asyncio.ensure_future(aw)
        deadline = loop.time() + seconds
        hard = loop.time() + max(seconds, self.timeouts.navigation)
        try:
            while True:
                await asyncio.wait({fut}, timeout=0.05)
                if fut.done():
                    return fut.result()
                now = loop.time()
                busy_with_dialogs = time.monotonic() - self._last_dialog() < 1.0
                if now >= hard or (now >= deadline and not busy_with_dialogs):
                    raise Hung(f"no answer within {seconds:g} s")
        finally:
            if not fut.done():
                fut.cancel()
            fut.add_done_callback(forget)
