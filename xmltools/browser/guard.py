"""The URL policy, enforced in the browser on every request of a session and on every redirect hop.

Owns the routing of the session's context: each request (documents, frames,
new tabs, subresources) is checked against the :class:`~xmltools.urlpolicy.UrlPolicy`
before the browser makes it, and a document's redirects are walked here so that
no hop escapes the check.  Owns what was refused and why, for the messages of
the navigation that ran into it.  A refusal is told to the model as a note (via
:class:`~.watch.Watch`).  Must not import the tabs, the targets, the handlers
or the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urljoin

from playwright.async_api import BrowserContext, Route
from playwright.async_api import Error as PlaywrightError

from ..urlpolicy import UrlPolicy
from .bounds import MAX_NAVIGATIONS
from .collect import clip
from .settings import Timeouts
from .watch import Watch

__all__ = ["Guard"]


class Guard:
    """The URL policy of one session, applied to each request its context makes."""

    def __init__(self, policy: UrlPolicy, timeouts: Timeouts, watch: Watch) -> None:
        self.policy = policy
        self.timeouts = timeouts
        self.watch = watch
        self._refused: dict[str, str] = {}  # URL -> why the policy refused it

    async def install(self, context: BrowserContext) -> None:
        if self.policy.restricts_requests:
            await context.route("**/*", self._route)

    async def uninstall(self, context: BrowserContext) -> None:
        """Stop routing ``context`` before it closes: a request still being checked is let go
        quietly, instead of leaving a routing task pending for ever (bounded)."""
        if self.policy.restricts_requests:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(context.unroute_all(behavior="ignoreErrors"), self.timeouts.close)

    def refusal(self, url: str | None) -> str | None:
        """Why ``url`` was refused; else why the latest refused request was (a redirect's target)."""
        return self._refused.get(url or "") or next(iter(self._refused.values()), None)

    def reset(self) -> None:
        self._refused.clear()

    async def _route(self, route: Route) -> None:
        """Every request of the session passes here: the URL policy decides, in the browser."""
        req = route.request
        navigation = req.is_navigation_request()
        try:
            reason = self.policy.check(req.url, navigation=navigation)
            if reason is not None:
                await self._refuse(route, req.url, reason)
            elif navigation and req.url.startswith(("http://", "https://")):
                await self._route_navigation(route)
            else:
                await route.fallback()
        except PlaywrightError:
            pass  # the page or the request went away meanwhile

    async def _refuse(self, route: Route, url: str, reason: str) -> None:
        self._refused[route.request.url] = reason
        self.watch.silence(route.request.url)
        self.watch.notes.add(f"the page tried to open {clip(url, 200)}, which was refused: {reason}")
        await route.abort("aborted" if route.request.is_navigation_request() else "blockedbyclient")

    async def _route_navigation(self, route: Route) -> None:
        """A document request, with every redirect hop checked before the browser follows it.

        Playwright lets the browser follow redirects without routing them, so the
        hops are walked here (``route.fetch`` shares the context's cookies).  With
        no redirect, the fetched answer is handed to the browser as it is; after
        redirects, the browser is sent straight to the last, checked URL, so no
        hop is requested twice, only that last page.
        """
        req = route.request
        bound = self.timeouts.navigation * 1000
        url, method = req.url, req.method
        try:
            resp = await route.fetch(max_redirects=0, timeout=bound)
        except PlaywrightError:
            # no answer at all (refused, unknown host, timeout): the browser asks again itself
            # and reports its own error, as it would without the policy
            await route.fallback()
            return
        hops = 0
        while 300 <= resp.status < 400 and resp.headers.get("location") and hops < MAX_NAVIGATIONS:
            target = urljoin(url, resp.headers["location"])
            reason = self.policy.check(target)
            if reason is not None:
                await resp.dispose()
                await self._refuse(route, target, f"a redirect led there, and {reason}")
                return
            if resp.status in (301, 302, 303):
                method = "GET"
            await resp.dispose()
            hops += 1
            url = target
            try:
                resp = await route.fetch(url=url, method=method, max_redirects=0, timeout=bound)
            except PlaywrightError as e:
                await route.abort(_abort_code(str(e)))
                return
        if hops == 0:
            await route.fulfill(response=resp)
            return
        await resp.dispose()
        await route.fulfill(status=302, headers={"location": url}, body="")


def _abort_code(message: str) -> str:
    """The browser's error for a request that could not be made, from Node's words for it."""
    low = message.lower()
    for fragment, code in (
        ("econnrefused", "connectionrefused"),
        ("enotfound", "namenotresolved"),
        ("eai_again", "namenotresolved"),
        ("econnreset", "connectionreset"),
        ("timeout", "timedout"),
    ):
        if fragment in low:
            return code
    return "failed"
