"""Request interception through Chromium's own Fetch domain: the URL policy without buffering.

Owns the DevTools sessions that pause a guarded session's requests before they
leave the browser, and the map of which browser target (tab, frame) belongs to
which guarded context.  Playwright's routing is not used for this: any route
turns the HTTP cache off for the whole context, and Playwright lets redirects
through without routing them, so the guard had to fetch each document itself
and hand over the whole body (a streamed page showed nothing until it ended).

Two kinds of listener:

- :class:`PageIntercept`, one per tab: a DevTools session on the tab that pauses
  every request of its frames, redirect hops included (each hop is paused as a
  request of its own), and asks the guard.  Allowed requests continue untouched,
  so documents stream and the cache answers as it would without a policy.
- :class:`BrowserIntercept`, one per browser: a browser-wide session that pauses
  every request of every context.  It decides for every request of a guarded
  target (a tab's main frame, an out-of-process frame, a worker), the tab's own
  listener or not: a popup's first request is made before the tab is reported,
  and a request begun before the tab's listener was ready (its redirect hops
  included) may never reach that listener.  An allowed request may so be decided
  twice, with the same answer.  A request of an inner frame (which is not a
  target of its own) is left to its tab's listener; it waits, within
  :data:`BIRTH_BOUND`, while a guarded tab is being born, since it could be
  that tab's.

Written here rather than taken from a library: Playwright offers only the
routing above, and nothing else speaks to the browser's Fetch domain.  Must not
import the tabs, the targets, the handlers or the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from playwright.async_api import Browser, BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from .bounds import forget

__all__ = ["BIRTH_BOUND", "BrowserIntercept", "Decide", "PageIntercept"]

log = logging.getLogger("xmltools.browser")

BIRTH_BOUND = 2.0  # seconds an inner frame's request waits for a guarded tab being born
_ALL = {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}

# (url, navigation, redirected) -> the browser's error reason to fail the request with, or None
Decide = Callable[[str, bool, bool], Awaitable[str | None]]


class _Tasks:
    """The answers still being sent: kept so that none is dropped half-way, and their failures (a
    request the page cancelled meanwhile) are not news."""

    def __init__(self) -> None:
        self._running: set[asyncio.Future[Any]] = set()

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        task.add_done_callback(forget)


async def _answer(cdp: CDPSession, event: dict[str, Any], decide: Decide) -> None:
    """Let one paused request go on, or fail it with the reason ``decide`` gives."""
    request_id = event["requestId"]
    try:
        navigation = event.get("resourceType") == "Document"
        reason = await decide(event["request"]["url"], navigation, bool(event.get("redirectedRequestId")))
    except BaseException:
        await _send(cdp, "Fetch.failRequest", {"requestId": request_id, "errorReason": "Failed"})
        raise
    if reason is None:
        await _send(cdp, "Fetch.continueRequest", {"requestId": request_id})
    else:
        await _send(cdp, "Fetch.failRequest", {"requestId": request_id, "errorReason": reason})


async def _send(cdp: CDPSession, method: str, params: dict[str, Any]) -> None:
    with contextlib.suppress(PlaywrightError):  # the request, the tab or the browser went away
        await cdp.send(method, params)


class BrowserIntercept:
    """The browser-wide listener of one browser: decides for tabs not yet covered by their own."""

    _of: ClassVar[weakref.WeakKeyDictionary[Browser, asyncio.Future[BrowserIntercept | None]]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, cdp: CDPSession) -> None:
        self.cdp = cdp
        self.deciders: dict[str, Decide] = {}  # browser context id -> its guard's decision
        self.targets: dict[str, tuple[str, str]] = {}  # target id -> (type, browser context id)
        self.covered: set[str] = set()  # tabs with a listener of their own
        self.inner: set[str] = set()  # frame ids known not to be targets (inner frames)
        self.settled = asyncio.Event()  # no guarded tab is being born
        self.settled.set()
        self._tasks = _Tasks()

    @classmethod
    async def of(cls, browser: Browser) -> BrowserIntercept | None:
        """The listener of ``browser``, started on first use; None where the browser offers no
        browser-wide DevTools session (a Playwright server)."""
        made = cls._of.get(browser)
        if made is None:
            made = asyncio.ensure_future(cls._start(browser))
            cls._of[browser] = made
        return await asyncio.shield(made)

    @classmethod
    async def _start(cls, browser: Browser) -> BrowserIntercept | None:
        try:
            cdp = await browser.new_browser_cdp_session()
            self = cls(cdp)
            cdp.on("Target.targetCreated", self._on_target)
            cdp.on("Target.targetInfoChanged", self._on_target)
            cdp.on("Target.targetDestroyed", self._on_target_gone)
            cdp.on("Fetch.requestPaused", lambda e: self._tasks.spawn(self._paused(e)))
            await cdp.send("Target.setDiscoverTargets", {"discover": True})
            await cdp.send("Fetch.enable", _ALL)
        except PlaywrightError as e:
            log.debug("no browser-wide DevTools session (%s): the URL policy routes instead", e)
            return None
        return self

    def guard(self, context_id: str, decide: Decide) -> None:
        self.deciders[context_id] = decide
        self._update()

    def unguard(self, context_id: str) -> None:
        self.deciders.pop(context_id, None)
        self._update()

    def cover(self, target_id: str) -> None:
        self.covered.add(target_id)
        self._update()

    def _on_target(self, event: dict[str, Any]) -> None:
        info = event["targetInfo"]
        self.targets[info["targetId"]] = (info["type"], info.get("browserContextId", ""))
        self._update()

    def _on_target_gone(self, event: dict[str, Any]) -> None:
        self.targets.pop(event["targetId"], None)
        self.covered.discard(event["targetId"])
        self._update()

    def _births(self) -> set[str]:
        """The guarded contexts with a tab that has no listener of its own yet."""
        return {
            ctx
            for target, (kind, ctx) in self.targets.items()
            if kind == "page" and ctx in self.deciders and target not in self.covered
        }

    def _update(self) -> None:
        if self._births():
            self.settled.clear()
        else:
            self.settled.set()

    async def _paused(self, event: dict[str, Any]) -> None:
        decide = await self._decider(event.get("frameId"))
        if decide is None:
            await _send(self.cdp, "Fetch.continueRequest", {"requestId": event["requestId"]})
        else:
            await _answer(self.cdp, event, decide)

    async def _decider(self, frame_id: str | None) -> Decide | None:
        """Who decides for a request of ``frame_id`` here: its context's guard when the frame is a
        target, whether its tab has a listener of its own or not (see the module's words); None for
        an inner frame, whose tab's listener decides, or where no policy applies."""
        if not frame_id:
            return None  # not seen here: a service worker's requests come as its own target's
        if frame_id not in self.targets and frame_id not in self.inner:
            try:
                info = (await self.cdp.send("Target.getTargetInfo", {"targetId": frame_id}))["targetInfo"]
                self.targets[frame_id] = (info["type"], info.get("browserContextId", ""))
            except PlaywrightError:
                self.inner.add(frame_id)
        known = self.targets.get(frame_id)
        if known is not None:
            return self.deciders.get(known[1])
        # an inner frame: its tab's listener decides, once the tab has one
        if self.settled.is_set():
            return None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.settled.wait(), BIRTH_BOUND)
            return None
        # still being born: every guard with a tab being born must allow it
        pending = [self.deciders[c] for c in self._births() if c in self.deciders]
        return _strictest(pending) if pending else None


def _strictest(deciders: list[Decide]) -> Decide:
    async def decide(url: str, navigation: bool, redirected: bool) -> str | None:
        for d in deciders:
            reason = await d(url, navigation, redirected)
            if reason is not None:
                return reason
        return None

    return decide


class PageIntercept:
    """The listener of one tab: every request of its frames, redirect hops included, is decided."""

    def __init__(self, cdp: CDPSession, target_id: str, context_id: str) -> None:
        self.cdp = cdp
        self.target_id = target_id
        self.context_id = context_id

    @classmethod
    async def start(cls, context: BrowserContext, page: Page, decide: Decide) -> PageIntercept:
        cdp = await context.new_cdp_session(page)
        tasks = _Tasks()
        cdp.on("Fetch.requestPaused", lambda e: tasks.spawn(_answer(cdp, e, decide)))
        # one round trip for both: which target this is, and the pausing turned on
        asked: list[dict[str, Any]] = await asyncio.gather(
            cdp.send("Target.getTargetInfo"), cdp.send("Fetch.enable", _ALL)
        )
        info = asked[0]["targetInfo"]
        return cls(cdp, info["targetId"], info.get("browserContextId", ""))
