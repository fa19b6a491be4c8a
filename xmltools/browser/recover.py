"""How a failed step is told: classified, the page probed, and a stuck page's session dropped.

A lost browser, context or renderer ends the session; a page that keeps
raising dialogs, or whose main thread no longer answers a trivial evaluation,
has its session closed to stop it, unless a document it navigates to is still
on its way (a page between two documents runs no scripts, and is not stuck);
anything else is the page's problem, reported with the page as it looks now.
A failure that carries no observation says itself what dialogs the page
raised.  Must not import the session.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from playwright.async_api import Error as PlaywrightError

from ..base.results import Failure, FailureKind, Observation
from .bounds import DialogStorm, Hung
from .collect import clip
from .failures import FailureClass, first_line
from .observe import Observer
from .settle import Settler
from .watch import Watch

__all__ = ["Recovery"]


class Recovery:
    """The failures of one session's steps."""

    def __init__(
        self,
        watch: Watch,
        settler: Settler,
        observer: Observer,
        drop: Callable[[], Awaitable[None]],
        look: Callable[[], Awaitable[Observation | None]],
    ) -> None:
        self.watch = watch
        self.settler = settler
        self.observer = observer
        self._drop = drop
        self._look = look

    def with_dialogs(self, failure: Failure) -> Failure:
        """A failure with no observation to carry them says itself what dialogs the page raised."""
        lines = self.watch.notes.take_dialogs() if failure.observation is None else []
        if not lines:
            return failure
        said = "; ".join(lines)
        return failure.model_copy(update={"message": f"{failure.message} Meanwhile {said}."})

    async def failed(self, name: str, err: Exception) -> Failure:
        cls = self.watch.classify(err) if isinstance(err, PlaywrightError) else FailureClass.PAGE
        if cls is FailureClass.LOST:
            return await self.lost(err)
        if isinstance(err, DialogStorm) or await self.watch.storming():
            # nothing runs on a page raising dialogs, and it cannot be captured: stop it
            said = "; ".join(self.watch.notes.take_dialogs()) or "the page kept raising dialogs"
            return await self._dropped(
                "timeout",
                f"the page kept raising dialogs, so the {name} action could not finish: {said}."
                " The browser was closed to stop them; launch it again to go on.",
            )
        timed_out = isinstance(err, Hung) or "timeout" in str(err).lower()
        loading = next(iter(self.watch.navigating), None)
        if timed_out and loading is not None:
            # between two documents: the old one runs no more scripts, and the new one has not come
            msg = (
                f"the {name} action got no answer in time: the page is still loading"
                f" {clip(loading.url, 200)}, which has not answered yet, and the page it leaves runs no"
                " scripts meanwhile."
            )
            return self.with_dialogs(Failure(kind="timeout", message=msg, observation=await self._look()))
        if timed_out and not await self.settler.probe() and time.monotonic() - self.watch.last_event >= 1.0:
            if not self.watch.alive():
                return await self.lost(err)
            return await self._dropped(
                "timeout", "the page stopped answering: a script on it may be stuck in a loop."
            )
        if timed_out:
            msg = (
                f"the {name} action got no answer in time ({first_line(err)}); the page itself still answers."
            )
            return self.with_dialogs(Failure(kind="timeout", message=msg, observation=await self._look()))
        return self.with_dialogs(
            Failure(
                kind="internal",
                message=f"the browser reported: {clip(first_line(err), 300)}",
                observation=await self._look(),
            )
        )

    async def lost(self, err: BaseException) -> Failure:
        if self.watch.crashed or "crash" in str(err).lower():
            return await self._dropped("crashed", "the page's renderer process crashed.")
        return await self._dropped("closed", "the browser process has exited.")

    async def _dropped(self, kind: FailureKind, message: str) -> Failure:
        """The session closed, and the failure that says so and what dialogs the page raised before."""
        failure = self.with_dialogs(
            Failure(kind=kind, message=message, browser_closed=True, last_url=self.observer.last_url)
        )
        await self._drop()
        return failure
