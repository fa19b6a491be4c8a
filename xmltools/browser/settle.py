"""Waiting for the page after an action: any navigation it started followed to its load, then quiet.

Owns the navigation-aware wait of one session: a navigation the action
started (a link, a form, a timer that sets ``location``, redirects) is
followed to the new document; then the network's quiet window and the DOM's
run side by side; downloads and new tabs the page asked for are waited for.
Every wait has a bound; hitting one is said in a note, never swallowed.
Failures are judged with the one table of :mod:`.failures` (through
:class:`~.watch.Watch`, which knows the session's health).  Must not import
the targets, the observer, the handlers or the session.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from . import scripts
from .bounds import MAX_NAVIGATIONS, Bounds, Departed, DialogStorm, Hung, forget
from .collect import clip
from .failures import FailureClass
from .settings import Timeouts
from .tabs import Tabs
from .watch import Watch

__all__ = ["KEPT_NAVIGATING", "STILL_WAITING", "Settler"]

KEPT_NAVIGATING = "the page kept navigating"
MIN_WINDOW = 0.05  # seconds: the shortest quiet window, when the navigation bound leaves less
STILL_WAITING = "the page was still waiting for"  # a document that had not come at the bound
_NEW_REQUEST_GRACE = 1.0  # how long a navigation the page started may take to reach the network
_MOVED, _BUSY = object(), object()  # what a quiet window saw instead of a quiet page


class Settler:
    """The waits of one session between an action and its observation."""

    def __init__(self, timeouts: Timeouts, tabs: Tabs, watch: Watch, bounds: Bounds) -> None:
        self.timeouts = timeouts
        self.tabs = tabs
        self.watch = watch
        self.bounds = bounds
        self._action_started = 0.0
        self.early: object | None = None  # the capture taken during the last window, when it was kept

    def begin(self) -> None:
        """An action starts now: the network is quiet unless it is busy from here on."""
        self._action_started = time.monotonic()

    async def settle(
        self, nav_started: bool = False, capture: Callable[[], Awaitable[object]] | None = None
    ) -> list[str]:
        """Follow any navigation the action started, then wait until the page is quiet.

        Bounded by the navigation timeout for the navigations, and by the settle
        timeout for the quiet windows.  If the page asked for a new tab, that tab
        is waited for and settled too.  With ``capture``, the page is captured while
        the quiet window runs; :attr:`early` then holds that capture when nothing
        moved under it (see :class:`_Early`), else None.
        """
        self.early = None
        early = _Early(capture, self.watch) if capture is not None else None
        try:
            return await self._settle(nav_started, early)
        finally:
            if early is not None:
                early.drop()

    async def _settle(self, nav_started: bool, early: _Early | None) -> list[str]:
        t = self.timeouts
        w = self.watch
        loop = asyncio.get_running_loop()
        nav_deadline = loop.time() + t.navigation
        notes: list[str] = []
        hops = 0
        quiet_rounds = 0
        quiet_deadline: float | None = None  # the quiet windows of one document share one bound
        quiet_started = loop.time()
        expect_nav = nav_started
        committed = w.commits
        while True:
            if w.tasks:
                await asyncio.wait(list(w.tasks), timeout=t.settle)
            page = self.tabs.require_page()
            await self._await_navigation(page, nav_deadline, expect_nav, notes)
            if self.tabs.page is not page:
                continue  # a new tab took over
            if loop.time() >= nav_deadline and (w.navigating or w.commits - committed > 1):
                # at the bound, between two documents (where no script answers), or past the action's
                # own document on others the page went to by itself: a page that committed others
                # on the way kept navigating, and is shown as it is; else its one document has not come
                if w.commits != committed:
                    notes.append(_kept_navigating(max(hops, w.commits - committed)))
                return notes
            commits, requests = w.commits, w.nav_requests
            if quiet_deadline is None:
                quiet_deadline = loop.time() + t.settle
                quiet_started = loop.time()
            budget = max(MIN_WINDOW, min(t.settle, nav_deadline - loop.time()))
            res = await self._quiet(page, budget, quiet_deadline, requests, early)
            if res is _BUSY:
                # not stuck: the page is still busy (logging, loading); show it as it is
                notes.append(
                    f"the page's scripts were still busy after {t.settle:g} s; this is how it looked"
                )
                return notes
            if isinstance(res, dict):
                cross = bool(res.get("crossNavs"))
                moved = cross or w.commits != commits or w.nav_requests != requests or bool(w.navigating)
            else:
                cross, moved = False, res is _MOVED
            if moved:
                # the document changed, or began to, under the wait: once more, unless the page has
                # kept navigating past the bounds, when it is shown as it is
                hops += 1
                quiet_deadline = None
                expect_nav = cross
                if hops <= MAX_NAVIGATIONS and loop.time() < nav_deadline:
                    continue
                notes.append(_kept_navigating(hops))
                return notes
            if not isinstance(res, dict):
                return notes
            if w.inflight and quiet_rounds < 3:
                quiet_rounds += 1  # the page started requests while the DOM was quiet: wait for them too
                continue
            if not res.get("settled", True):
                notes.append(
                    _unsettled(
                        loop.time() - quiet_started, nav_deadline - loop.time(), w.commits - committed, hops
                    )
                )
            await self._await_downloads(int(res.get("downloads") or 0))
            if int(res.get("popups") or 0) and not await self._await_popup(page):
                notes.append("the page asked for a new tab, but none opened")
            if self.tabs.page is not page:
                continue  # settle the new tab too
            if early is not None:
                self.early = await early.kept(res)
            return notes

    async def _quiet(
        self, page: Page, budget: float, quiet_deadline: float, requests: int, early: _Early | None
    ) -> object:
        """The network's quiet window and the DOM's, side by side: the page script's result;
        ``_MOVED`` when the document changed under the wait or the page started loading another
        (a page between two documents answers no script); ``_BUSY`` when the page's scripts kept it
        from answering while it still logged or loaded.  With ``early``, the window's script is
        started first and the capture begins while it runs."""
        t = self.timeouts
        w = self.watch
        args = [t.dom_quiet * 1000, budget * 1000, scripts.MARK]
        departed = functools.partial(_departed, w, requests)
        try:
            started = False
            if early is not None:
                early.drop()  # a capture of an earlier window
                start = page.evaluate(scripts.SETTLE_START, args)
                started = await self.bounds.unless_storm(start, budget + t.action, departed=departed)
                if started:
                    early.start()
            window = page.evaluate(scripts.SETTLE_WAIT) if started else page.evaluate(scripts.SETTLE, args)
            res, _ = await asyncio.gather(
                self.bounds.unless_storm(window, budget + t.action, departed=departed),
                self._network_quiet(quiet_deadline),
            )
            return res if res is not None else _MOVED  # no window on this document: it is another one
        except DialogStorm:
            raise
        except Departed:
            return _MOVED
        except Hung:
            if time.monotonic() - w.last_event < 1.0:
                return _BUSY
            raise
        except PlaywrightError as e:
            if w.classify(e) is not FailureClass.TRANSIENT:
                raise
            return _MOVED

    async def probe(self) -> bool:
        """Whether the page's main thread answers a trivial evaluation at once."""
        page = self.tabs.page
        if page is None:
            return False
        try:
            await self.bounds.bounded(page.evaluate("0"), self.timeouts.probe)
            return True
        except Hung:
            return False
        except PlaywrightError as e:
            return self.watch.classify(e) is not FailureClass.LOST

    async def _await_navigation(self, page: Page, deadline: float, expect: bool, notes: list[str]) -> None:
        """Wait until no main-frame navigation is in flight and the current document has loaded."""
        t = self.timeouts
        w = self.watch
        loop = asyncio.get_running_loop()
        commits, requests = w.commits, w.nav_requests
        grace = loop.time() + _NEW_REQUEST_GRACE
        while self.tabs.page is page and loop.time() < deadline and not w.crashed:
            waiting_request = expect and w.nav_requests == requests and w.commits == commits
            if not w.navigating and not (waiting_request and loop.time() < grace):
                break
            await asyncio.sleep(0.01)
        else:
            if self.tabs.page is page and w.navigating and not w.crashed:
                url = clip(next(iter(w.navigating)).url, 200)
                notes.append(f"{STILL_WAITING} {url} after {t.navigation:g} s; this is how it looked then")
                return
        if self.tabs.page is not page or w.crashed:
            return
        remaining = deadline - loop.time()
        if remaining <= 0:
            return
        try:
            await self.bounds.unless_storm(
                page.wait_for_load_state("load", timeout=remaining * 1000), remaining + 1
            )
        except DialogStorm:
            raise
        except (PlaywrightError, Hung) as e:
            if isinstance(e, PlaywrightError) and w.classify(e) is not FailureClass.PAGE:
                return  # the document changed again, or the session is gone: the caller looks again
            notes.append(
                f"the page had not finished loading after {t.navigation:g} s; this is how it looked then"
            )

    async def _network_quiet(self, deadline: float) -> None:
        """Until no request is in flight and none has been heard of for ``network_quiet``, if any
        was during the action (a main-frame document's own events aside), within ``deadline``."""
        w = self.watch
        if not w.inflight and w.last_sub < self._action_started:
            return
        loop = asyncio.get_running_loop()
        while (left := deadline - loop.time()) > 0:
            due = w.last_sub + self.timeouts.network_quiet - time.monotonic()
            if not w.inflight and due <= 0:
                return
            await asyncio.sleep(min(left, 0.01 if w.inflight else due))

    async def _await_downloads(self, expected: int) -> None:
        """Wait for the downloads the page started (``expected``, by its own count) and those its
        navigations were answered with, each until it is saved, within the bounds."""
        w = self.watch
        expected = max(expected, w.downloads_expected)
        w.downloads_expected = 0
        if not expected:
            return
        loop = asyncio.get_running_loop()
        limit = loop.time() + self.timeouts.settle
        while w.downloads_seen < expected and loop.time() < limit:
            await asyncio.sleep(0.01)
        w.downloads_seen = 0
        if w.tasks:
            await asyncio.wait(list(w.tasks), timeout=self.timeouts.navigation)

    async def _await_popup(self, page: Page) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeouts.settle
        while self.tabs.page is page and loop.time() < deadline:
            await asyncio.sleep(0.01)
            if self.watch.tasks:
                await asyncio.wait(list(self.watch.tasks), timeout=self.timeouts.settle)
        return self.tabs.page is not page


class _Early:
    """A capture taken while the last quiet window runs, kept only when nothing moved under it.

    The capture begins once the window's script runs in the page, so the frame it grabs holds
    every change made before the window began.  It is kept when the window saw no change to the
    DOM and no short timer fire, and no request, response, navigation or new document came from
    the capture's start to its end; otherwise it is dropped, and the page is captured after the
    wait as it would be without it.  The window and the capture then overlap instead of adding up.
    """

    def __init__(self, capture: Callable[[], Awaitable[object]], watch: Watch) -> None:
        self.capture = capture
        self.watch = watch
        self.task: asyncio.Future[object] | None = None
        self.marks = (0, 0)
        self.started = 0.0

    def start(self) -> None:
        w = self.watch
        self.marks, self.started = (w.commits, w.nav_requests), time.monotonic()
        self.task = asyncio.ensure_future(self.capture())

    def drop(self) -> None:
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
            task.add_done_callback(forget)

    def _still(self) -> bool:
        w = self.watch
        moved = (w.commits, w.nav_requests) != self.marks or w.navigating or w.inflight
        return not moved and w.last_net < self.started

    async def kept(self, res: object) -> object | None:
        """The capture, when the window's result ``res`` and the session's counters say nothing moved."""
        if not isinstance(res, dict) or res.get("changed", True) or not self._still():
            self.drop()
            return None
        task, self.task = self.task, None
        if task is None:
            return None
        try:
            seen = await task
        except Exception:  # whatever stopped it, the capture after the wait meets it again and says so
            return None
        return seen if self._still() else None


def _departed(watch: Watch, requests: int) -> bool:
    """Whether the page has started loading a document since ``requests`` were counted."""
    return bool(watch.navigating) and watch.nav_requests != requests


def _unsettled(waited: float, left: float, commits: int, hops: int) -> str:
    """The note for a document whose quiet window ran out: a page that went to other documents by
    itself during the action and whose window the navigation bound cut short kept navigating (its
    next document was about to come); otherwise it was still changing."""
    if left < MIN_WINDOW and (commits > 1 or hops):
        return _kept_navigating(max(hops, commits))
    return f"the page was still changing after {waited:.2g} s; this is how it looked then"


def _kept_navigating(hops: int) -> str:
    return (
        f"{KEPT_NAVIGATING} ({hops} times during this action); this is the latest page."
        " It may navigate again by itself."
    )
