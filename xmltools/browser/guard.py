"""The URL policy, enforced in the browser on every request of a session and on every redirect hop.

Owns the decision for each request a session's context makes (documents,
frames, new tabs, subresources, and each hop of a redirect), taken before the
browser makes it, and what was refused and why, for the messages of the
navigation that ran into it.  A refusal is told to the model as a note (via
:class:`~.watch.Watch`).

The requests are paused through the browser's Fetch domain
(:mod:`.intercept`): allowed ones continue untouched, so a streamed document
shows as it arrives and the HTTP cache works.  Where the browser offers no
browser-wide DevTools session (a persistent context, a Playwright server),
Playwright's routing is the fallback: it turns the cache off, and since it
lets redirects through unrouted, a document's hops are then walked here and
its body handed over whole.

Host names are resolved here, before the browser may open them, when the
policy has address rules (link-local and metadata addresses, and
``blocked_addresses``): a session's ``host_map`` first (the same names are
mapped for a local Chromium with ``--host-resolver-rules``), then the
system's resolver, within :data:`RESOLVE_BOUND`.  A name this process cannot
resolve is left to the browser, which then fails to open it as well.  What
stays open: a name whose answer changes between this lookup and the
browser's own (DNS rebinding with a short TTL).  Each name is looked up once
a session, so a rebinding answer has to reach the browser's lookup and not
this one; only a resolver the browser shares with this process, or a proxy
that resolves, closes that.  Must not import the tabs, the targets, the handlers
or the session.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping
from urllib.parse import urljoin

from playwright.async_api import BrowserContext, Page, Route
from playwright.async_api import Error as PlaywrightError

from ..base.urlpolicy import UrlPolicy
from .bounds import MAX_NAVIGATIONS, forget
from .collect import clip
from .intercept import BrowserIntercept, PageIntercept
from .settings import Timeouts
from .watch import Watch

__all__ = ["RESOLVE_BOUND", "Guard"]

RESOLVE_BOUND = 3.0  # seconds to look a host name up


class Guard:
    """The URL policy of one session, applied to each request its context makes."""

    def __init__(
        self, policy: UrlPolicy, timeouts: Timeouts, watch: Watch, host_map: Mapping[str, str] | None = None
    ) -> None:
        self.policy = policy
        self.timeouts = timeouts
        self.watch = watch
        self.host_map = {k.lower(): v for k, v in (host_map or {}).items()}
        self._refused: dict[str, str] = {}  # URL -> why the policy refused it
        self._addresses: dict[str, tuple[str, ...]] = {}  # host name -> its addresses, this session
        self._wide: BrowserIntercept | None = None  # the browser-wide listener, when the browser has one
        self._guarded: BrowserContext | None = None  # the context whose tabs get listeners, while it does
        self._context_id: str | None = None  # the browser's id of the guarded context
        self._covering: dict[Page, asyncio.Future[None]] = {}  # each tab's own listener, being started
        self._routed = False  # Playwright's routing instead (no browser-wide DevTools session)

    async def judge(self, url: str, *, navigation: bool = True) -> str | None:
        """Why ``url`` may not be opened (its host's addresses included), or None."""
        reason = self.policy.check(url, navigation=navigation)
        if reason is not None:
            return reason
        host = self.policy.host_to_resolve(url)
        if host is None:
            return None
        return self.policy.check_addresses(host, await self.resolve(host))

    async def resolve(self, host: str) -> tuple[str, ...]:
        """The addresses of ``host``: from the host map, else the system's resolver (bounded, once a
        session); none when it cannot be resolved here."""
        if host in self.host_map:
            return (self.host_map[host],)
        known = self._addresses.get(host)
        if known is not None:
            return known
        try:
            infos = await asyncio.wait_for(
                asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM), RESOLVE_BOUND
            )
            found = tuple(dict.fromkeys(str(info[4][0]) for info in infos))
        except (OSError, TimeoutError, UnicodeError):
            found = ()
        self._addresses[host] = found
        return found

    async def install(self, context: BrowserContext) -> None:
        """Guard every request ``context`` makes from now on (its tabs' listeners start meanwhile;
        :meth:`ready` waits for them)."""
        if not self.policy.restricts_requests:
            return
        browser = context.browser
        self._wide = await BrowserIntercept.of(browser) if browser is not None else None
        if self._wide is None:
            self._routed = True
            await context.route("**/*", self._route)
            return
        self._guarded = context
        context.on("page", self._on_page)
        for page in context.pages:
            self._cover(context, page, self._wide)

    async def ready(self) -> None:
        """Wait until every tab known so far has its own listener."""
        if self._covering:
            await asyncio.gather(*self._covering.values())

    def _on_page(self, page: Page) -> None:
        """A tab of the guarded context opened.  A context being closed still reports the tabs it
        opens meanwhile (a page opening popups without end): those were let go with the context."""
        context = page.context
        if context is self._guarded and self._wide is not None:
            self._cover(context, page, self._wide)

    def _cover(self, context: BrowserContext, page: Page, wide: BrowserIntercept) -> None:
        if page not in self._covering:
            self._covering[page] = asyncio.ensure_future(self._listen(context, page, wide))
            self._covering[page].add_done_callback(forget)

    async def _listen(self, context: BrowserContext, page: Page, wide: BrowserIntercept) -> None:
        try:
            tab = await PageIntercept.start(context, page, self._decide)
        except PlaywrightError:
            return  # the tab closed first
        if context is not self._guarded:
            return  # the context was let go meanwhile
        if self._context_id is None:
            self._context_id = tab.context_id
            wide.guard(tab.context_id, self._decide)
        wide.cover(tab.target_id)

    def uninstall(self, context: BrowserContext) -> None:
        """Stop guarding ``context``, which is closing.  With routing, its route handlers let go of
        the requests they still hold, quietly, instead of staying pending for ever.  Not awaited:
        on a page that keeps the renderer busy (a dialog storm), the browser's answer can take
        seconds."""
        if self._wide is not None and self._context_id is not None:
            self._wide.unguard(self._context_id)
        if self._guarded is not None:
            self._guarded.remove_listener("page", self._on_page)
        for covering in self._covering.values():
            covering.cancel()
        self._covering.clear()
        self._wide, self._context_id, self._guarded = None, None, None
        if self._routed:
            self._routed = False
            task = asyncio.ensure_future(context.unroute_all(behavior="ignoreErrors"))
            task.add_done_callback(forget)

    def refusal(self, url: str | None) -> str | None:
        """Why ``url`` was refused; else why the latest refused request was (a redirect's target)."""
        return self._refused.get(url or "") or next(iter(self._refused.values()), None)

    def reset(self) -> None:
        self._refused.clear()
        self._addresses.clear()

    async def _decide(self, url: str, navigation: bool, redirected: bool) -> str | None:
        """The browser's error reason for a request the policy refuses (said as a note), or None."""
        reason = await self.judge(url, navigation=navigation)
        if reason is None:
            return None
        self._note(url, url, f"a redirect led there, and {reason}" if redirected else reason)
        return "Aborted" if navigation else "BlockedByClient"

    def _note(self, request_url: str, url: str, reason: str) -> None:
        """``request_url`` was refused because ``url`` (itself, or where its redirect led) is refused."""
        self._refused[request_url] = reason
        self.watch.silence(request_url)
        self.watch.notes.add(f"the page tried to open {clip(url, 200)}, which was refused: {reason}")

    async def _route(self, route: Route) -> None:
        """Every request of the session passes here: the URL policy decides, in the browser."""
        req = route.request
        navigation = req.is_navigation_request()
        try:
            reason = await self.judge(req.url, navigation=navigation)
            if reason is not None:
                await self._refuse(route, req.url, reason)
            elif navigation and req.url.startswith(("http://", "https://")):
                await self._route_navigation(route)
            else:
                await route.fallback()
        except PlaywrightError:
            pass  # the page or the request went away meanwhile

    async def _refuse(self, route: Route, url: str, reason: str) -> None:
        self._note(route.request.url, url, reason)
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
            reason = await self.judge(target)
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
