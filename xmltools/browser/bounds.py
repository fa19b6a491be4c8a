"""Bounded waits: every call into the browser has a bound, and passing it raises :class:`Hung`.

Owns the bound on one awaited call (:meth:`Bounds.bounded`), the longer bound
of an input action that the page keeps busy with dialogs (:meth:`Bounds.input`),
the wait that a storm of dialogs cuts short (:meth:`Bounds.unless_storm`), and
the quiet end of background tasks (:func:`forget`).  Knows nothing of
pages or sessions; must not import anything of the browser package but its
settings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .settings import Timeouts

__all__ = [
    "DIALOG_GAP",
    "DIALOG_STORM",
    "MAX_NAVIGATIONS",
    "Bounds",
    "Departed",
    "DialogStorm",
    "Hung",
    "forget",
]

T = TypeVar("T")

MAX_NAVIGATIONS = 20  # a page that navigates more often than this during one action is shown as it is
DIALOG_GAP = 1.0  # seconds without a dialog that end a run of them
DIALOG_STORM = 2.0  # seconds of one run of dialogs that make a storm


class Hung(Exception):
    """A protocol call passed its bound."""


class Departed(Hung):
    """The page started loading another document during a wait on its current one, which was given
    up: a page between two documents answers no script until the new one commits."""


class DialogStorm(Hung):
    """The page raised dialogs one after another for longer than :data:`DIALOG_STORM`, and a wait
    that its dialogs keep from ending was given up: nothing else can run on the page meanwhile."""


def forget(task: asyncio.Future[Any]) -> None:
    """A background task's end: its failure (a dialog on a page that closed meanwhile) is not news."""
    if not task.cancelled():
        task.exception()


class Bounds:
    """The bounds of one session; ``dialogs`` tells when the page's current run of dialogs began
    and when its latest dialog came (a run ends with a gap of :data:`DIALOG_GAP`)."""

    def __init__(self, timeouts: Timeouts, dialogs: Callable[[], tuple[float, float]]) -> None:
        self.timeouts = timeouts
        self._dialogs = dialogs

    async def bounded(self, aw: Awaitable[T], seconds: float) -> T:
        try:
            return await asyncio.wait_for(aw, seconds)
        except TimeoutError as e:
            raise Hung(f"no answer within {seconds:g} s") from e

    async def input(self, aw: Awaitable[T], seconds: float) -> T:
        """An input action, bounded by ``seconds``; longer only while the page keeps raising dialogs.

        A click whose handler raises dialogs one after another does not return
        until the last one is dismissed: that is progress, not a stuck page, so
        it may run up to the navigation bound, and past it is a storm.
        """
        hard = max(seconds, self.timeouts.navigation)

        def verdict(waited: float) -> Hung | None:
            busy_with_dialogs = time.monotonic() - self._dialogs()[1] < DIALOG_GAP
            if waited >= hard and busy_with_dialogs:
                return DialogStorm(f"the page kept raising dialogs for {hard:g} s")
            if waited >= hard or (waited >= seconds and not busy_with_dialogs):
                return Hung(f"no answer within {seconds:g} s")
            return None

        return await _until(aw, verdict)

    async def unless_storm(
        self, aw: Awaitable[T], seconds: float, departed: Callable[[], bool] | None = None
    ) -> T:
        """``aw`` bounded by ``seconds``, given up as soon as the page's dialogs make a storm, or, with
        ``departed``, as soon as that says the page has started loading another document
        (:class:`Departed`).

        A storm: dialogs come during the wait, in a run of at least
        :data:`DIALOG_STORM`.  A document whose script raises dialogs for ever
        never loads, and its page can be neither evaluated nor captured: waiting
        out the bound shows nothing.
        """

        before = self._dialogs()[1]

        def verdict(waited: float) -> Hung | None:
            since, last = self._dialogs()
            if last != before and last - since >= DIALOG_STORM and time.monotonic() - last < DIALOG_GAP:
                return DialogStorm(f"the page kept raising dialogs for {last - since:.0f} s")
            if departed is not None and departed():
                return Departed("the page started loading another document")
            return Hung(f"no answer within {seconds:g} s") if waited >= seconds else None

        return await _until(aw, verdict)


async def _until(aw: Awaitable[T], verdict: Callable[[float], Hung | None]) -> T:
    """``aw``'s result, unless ``verdict(seconds waited)``, asked every 50 ms, gives up first."""
    loop = asyncio.get_running_loop()
    fut = asyncio.ensure_future(aw)
    start = loop.time()
    try:
        while True:
            await asyncio.wait({fut}, timeout=0.05)
            if fut.done():
                return fut.result()
            given_up = verdict(loop.time() - start)
            if given_up is not None:
                raise given_up
    finally:
        if not fut.done():
            fut.cancel()
        fut.add_done_callback(forget)
