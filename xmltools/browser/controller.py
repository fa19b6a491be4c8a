"""One browser session: its context, its pages, what they report, and every action.

This package is the only place that imports Playwright.  A
:class:`BrowserSession` is one isolated ``BrowserContext`` taken from a
:class:`~xmltools.browser.pool.BrowserPool` (the process-wide one unless the
host passes its own); with ``profile_dir`` set it is a persistent context on
that folder instead, whose cookies and storage outlive the session.  Every
public coroutine runs on the pool's event loop, so a session may be used from
any loop or thread.  With ``idle_timeout`` set, a session left unused that
long closes itself, and its next action says so.

Honesty rules:

- every wait has a bound, and hitting it is reported (as a note in the
  observation, or as a :class:`~xmltools.results.Failure`), never swallowed;
- a navigation during or after an action is normal: the controller follows it
  to the new document, waits for it to load and settle, and shows it;
- browser failures are classified once (:mod:`.failures`): a transient one is
  retried on the new document, a page's problem is reported with the session
  kept, and only a lost browser, context or renderer ends the session;
- "a script may be stuck" is said only after the page failed to answer a
  trivial evaluation;
- the URL policy is enforced on every request the browser makes, not only on
  the URL the model wrote.

Host errors (no browser, a bad path, an unreachable endpoint) are raised as
:class:`~xmltools.errors.BrowserError` from :meth:`BrowserSession.launch`;
they are never told to the model.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urljoin

from playwright.async_api import (
    BrowserContext,
    CDPSession,
    ConsoleMessage,
    Dialog,
    Download,
    Frame,
    Locator,
    Page,
    Request,
    Response,
    Route,
)
from playwright.async_api import Error as PlaywrightError

from ..actions import InTab, Target
from ..config import Config
from ..errors import BrowserError, ConfigError
from ..results import Failure, Observation, Point, Screenshot, Viewport
from ..snapshot import ref_lines, refs_in, shape
from ..tools import DEFAULT_VIEWPORT
from ..urlpolicy import UrlPolicy
from . import scripts
from .extract import cap, clean_html, normalise_text
from .failures import FailureClass, classify, first_line
from .images import image_size
from .observe import Caps, ConsoleCollector, NoteCollector, clip
from .pool import CHROMIUM_FLAGS, Backend, BrowserPool, PoolFullError, default_pool, discover_remote
from .targets import TargetError, describe, disabled, explain_action_error, hidden, locate, shown

__all__ = [
    "CHROMIUM_FLAGS",
    "BrowserConfig",
    "BrowserSession",
    "Caps",
    "Timeouts",
    "discover_remote",
]

T = TypeVar("T")
log = logging.getLogger("xmltools.browser")

TYPE_KEYS_MAX = 200  # longer text is inserted with one input event instead of a keystroke per character
MAX_NAVIGATIONS = 20  # a page that navigates more often than this during one action is shown as it is
_NEW_REQUEST_GRACE = 1.0  # how long a navigation the page started may take to reach the network


@dataclass(frozen=True)
class Timeouts:
    """Every bound, in seconds."""

    launch: float = 30.0  # all of start-up: the browser, its context and the first page
    navigation: float = 15.0  # a page load, and following the navigations an action starts
    action: float = 5.0  # one input action or protocol call
    settle: float = 3.0  # the longest extra wait for a page to settle after it loaded
    dom_quiet: float = 0.05  # the DOM (and the page's short timers) must be still this long
    network_quiet: float = 0.05  # no request in flight for this long after requests during the action
    screenshot: float = 10.0
    close: float = 5.0
    probe: float = 1.0  # a trivial evaluation that tells a busy page from a stuck one
    discovery: float = 1.0  # asking a remote Chrome for its endpoint


@dataclass(frozen=True)
class BrowserConfig:
    """How to reach the browser, what each session looks like, and what to observe."""

    executable: str | None = None  # local: a path; None finds one
    remote: str | None = None  # a DevTools endpoint, a Playwright server (ws://), or "auto"
    headless: bool = True
    viewport: Viewport = DEFAULT_VIEWPORT
    screenshot_format: Literal["webp", "png", "jpeg"] = "webp"
    screenshot_quality: int = 75
    device_scale_factor: float = 1.0
    downloads_dir: Path | None = None  # the session's folder; a temporary one (removed at close) by default
    extra_args: tuple[str, ...] = ()
    timeouts: Timeouts = field(default_factory=Timeouts)
    caps: Caps = field(default_factory=Caps)
    url_policy: UrlPolicy = field(default_factory=UrlPolicy)
    observe: Literal["screenshot", "snapshot", "both"] = "screenshot"
    max_snapshot_chars: int = 20_000
    snapshot_boxes: bool = False
    max_extract_chars: int = 10_000  # what get_text, get_html and get_attribute return at most
    max_wait_seconds: float = 10.0  # the longest wait the model may ask for
    workspace: Path | None = None  # where screenshots with a path are saved
    profile_dir: Path | None = None  # a user data folder (local only): cookies and storage persist there
    idle_timeout: float | None = None  # close the session after this many seconds unused; None: never

    def __post_init__(self) -> None:
        if not 0 <= self.screenshot_quality <= 100:
            raise ConfigError("screenshot_quality must be 0 to 100")
        if self.device_scale_factor <= 0:
            raise ConfigError("device_scale_factor must be positive")
        if self.idle_timeout is not None and self.idle_timeout <= 0:
            raise ConfigError("idle_timeout must be positive (or None for no timeout)")
        if self.profile_dir is not None and self.remote:
            raise ConfigError(
                "profile_dir needs a local browser: a remote browser keeps its own profile, so leave"
                " remote unset or drop profile_dir"
            )

    @classmethod
    def from_config(cls, c: Config) -> BrowserConfig:
        """The browser part of the one configuration."""
        return cls(
            executable=c.executable,
            remote=c.remote,
            headless=c.headless,
            viewport=c.viewport,
            screenshot_format=c.screenshot_format,
            screenshot_quality=c.screenshot_quality,
            device_scale_factor=c.device_scale_factor,
            downloads_dir=c.downloads_dir,
            timeouts=Timeouts(
                launch=c.launch_timeout,
                navigation=c.navigation_timeout,
                action=c.action_timeout,
                settle=c.settle_timeout,
            ),
            caps=Caps(
                console_entries=c.max_console_entries,
                console_entry_chars=c.max_console_entry_chars,
                console_chars=c.max_console_chars,
                title_chars=c.max_title_chars,
                notes=c.max_notes,
                note_chars=c.max_note_chars,
            ),
            url_policy=c.url_policy(),
            observe=c.observe,
            max_snapshot_chars=c.max_snapshot_chars,
            snapshot_boxes=c.snapshot_boxes,
            max_extract_chars=c.max_extract_chars,
            max_wait_seconds=c.max_wait_seconds,
            workspace=c.workspace,
            profile_dir=c.profile_dir,
            idle_timeout=c.idle_timeout,
        )

    @property
    def backends(self) -> tuple[Backend, ...]:
        """Where sessions may open: one local browser, or the remote endpoints listed."""
        return Backend.all_from_settings(
            executable=self.executable, remote=self.remote, headless=self.headless, args=self.extra_args
        )


class _Hung(Exception):
    """A protocol call passed its bound."""


class _NoTarget(Exception):
    pass


class _Navigation(Exception):
    pass


@dataclass(frozen=True)
class _SnapshotRequest:
    target: Any = None  # a ref or selector target (xmltools.tools.Target), or None for the page
    depth: int | None = None
    find: str | None = None


@dataclass(frozen=True)
class _Seen:
    page: Page
    shot: Screenshot | None
    title: str
    snapshot: str | None


class _WaitedOut(Exception):
    """A wait the model asked for ran out: reported, not a mistake, the session goes on."""


class _Moved(Exception):
    """The page moved to a new document while it was being looked at."""


class BrowserSession:
    """One isolated browser session.  ``async with BrowserSession(cfg) as b: await b.launch(url)``.

    Every action returns an :class:`Observation` on success or a
    :class:`Failure`; ``close()`` returns None or a Failure.  Nothing here
    raises for a page that misbehaves.
    """

    def __init__(self, config: BrowserConfig | None = None, *, pool: BrowserPool | None = None) -> None:
        self.config = config or BrowserConfig()
        self.pool = pool or default_pool()
        self.viewport = self.config.viewport
        self.mouse: Point | None = None
        self.browser_version = ""
        self.mode: Literal["local", "remote"] = "remote" if self.config.remote else "local"
        self.downloads_dir: Path | None = self.config.downloads_dir
        self._own_downloads = self.config.downloads_dir is None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._cdp: CDPSession | None = None
        self._console = ConsoleCollector(self.config.caps)
        self._console_log = ConsoleCollector(self.config.caps)  # everything since the last console_logs
        self._notes = NoteCollector(self.config.caps)
        self._inflight: set[Request] = set()
        self._navigating: set[Request] = set()  # main-frame navigation requests in flight
        self._nav_requests = 0  # main-frame navigation requests seen
        self._commits = 0  # main-frame documents committed (and same-document changes)
        self._last_net = 0.0
        self._last_dialog = 0.0
        self._last_event = 0.0  # the page's latest sign of life (a console line, a request, a dialog)
        self._crashed = False
        self._disconnected = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._opening = False
        self._hooked: list[Page] = []
        self._downloads_seen = 0
        self._action_started = 0.0
        self._webp = True
        self._refused: dict[str, str] = {}  # URL -> why the policy refused it
        self._tab_ids: dict[Page, str] = {}  # t1, t2, …: short and stable within the session
        self._refs: set[str] = set()  # the refs of the latest snapshot of the current document
        self._ref_lines: dict[str, str] = {}  # ref -> its element's role and name in that snapshot
        self._last_url: str | None = None
        self._blank_start = False  # launched with no page: the first open_tab uses the blank tab
        self._busy = 0  # public calls running now: the idle timer never closes the session under one
        self._idle_timer: asyncio.TimerHandle | None = None
        self._idle_task: asyncio.Task[Any] | None = None
        self._idle_closed: float | None = None  # the idle_timeout that closed the session, until relaunch

    # -- running on the pool's loop ----------------------------------------------------

    def _on_pool(self, coro: Coroutine[Any, Any, T]) -> Awaitable[T]:
        return self.pool.run(coro)

    async def __aenter__(self) -> BrowserSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    @property
    def is_open(self) -> bool:
        return self._page is not None and not self._disconnected and not self._crashed

    @property
    def page(self) -> Page | None:
        """The current page.  Playwright objects belong to the pool's loop: use :meth:`on_page`."""
        return self._page

    async def on_page(self, fn: Callable[[Page], Awaitable[T]]) -> T:
        """Run ``fn(page)`` on the pool's loop (for tests and host scripts)."""

        async def body() -> T:
            return await fn(self._require_page())

        return await self._on_pool(self._using(body()))

    async def browser_pid(self) -> int | None:
        """The process id of the local browser behind this session (None when not local or closed)."""

        async def body() -> int | None:
            if self._context is None or self._context.browser is None or self.mode != "local":
                return None
            cdp = await self._context.browser.new_browser_cdp_session()
            try:
                info = await cdp.send("SystemInfo.getProcessInfo")
            finally:
                with contextlib.suppress(Exception):
                    await cdp.detach()
            for proc in info.get("processInfo", []):
                if proc.get("type") == "browser":
                    return int(proc["id"])
            return None

        return await self._on_pool(body())

    # -- lifecycle ----------------------------------------------------------------------

    async def close(self) -> Failure | None:
        """Close this session's context (bounded).  Returns a Failure if the browser had gone."""

        async def body() -> Failure | None:
            self._idle_closed = None
            return await self._close()

        return await self._on_pool(body())

    async def _close(self) -> Failure | None:
        failure: Failure | None = None
        if self._page is not None and (self._disconnected or self._crashed):
            failure = Failure(
                kind="closed",
                message="the browser had already gone away.",
                browser_closed=True,
                last_url=self._last_url,
            )
        await self._drop()
        return failure

    async def _drop(self) -> None:
        """Forget everything of this session and give its context back.  Safe to call more than once."""
        for task in list(self._tasks):
            task.cancel()
        self._disarm_idle()
        ctx = self._context
        self._context = None
        self._page = self._cdp = None
        self._unhook()
        self._tab_ids.clear()
        self._console.clear()
        self._console_log.clear()
        self._notes.clear()
        self._inflight.clear()
        self._navigating.clear()
        self._refused.clear()
        self._refs.clear()
        self._downloads_seen = 0
        self.mouse = None
        if ctx is not None:
            await self.pool.release(ctx)
        if self._own_downloads and self.downloads_dir is not None:
            await asyncio.to_thread(shutil.rmtree, self.downloads_dir, True)
            self.downloads_dir = None

    async def shutdown(self) -> None:
        """Close the session.  The pool (and its browser) stays for other sessions.  Idempotent."""

        async def body() -> None:
            self._idle_closed = None
            await self._drop()

        await self._on_pool(body())

    # -- closing when unused (all on the pool's loop) -----------------------------------------------

    async def _using(self, aw: Awaitable[T]) -> T:
        """Await one public call, with the idle timer held off while it runs and armed again after it."""
        self._busy += 1
        try:
            return await aw
        finally:
            self._busy -= 1
            if not self._busy:
                self._arm_idle()

    async def _action(self, coro: Coroutine[Any, Any, T]) -> T | Failure:
        """One public action; on a session closed for being unused, the Failure that says so."""
        if self._idle_closed is not None and self._page is None:
            coro.close()
            return Failure(
                kind="closed",
                message=f"the browser was closed after {self._idle_closed:g} s unused;"
                " launch it again to go on.",
                browser_closed=True,
                last_url=self._last_url,
            )
        return await self._using(coro)

    def _arm_idle(self) -> None:
        """(Re)start the idle timer, when there is one and something of the session is open."""
        self._disarm_idle()
        seconds = self.config.idle_timeout
        if seconds is None or self._context is None:
            return
        self._idle_timer = asyncio.get_running_loop().call_later(seconds, self._on_idle)

    def _disarm_idle(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def _on_idle(self) -> None:
        self._idle_timer = None
        if self._busy:
            self._arm_idle()  # a long action is still running: it is not idleness
            return
        if self._idle_task is None or self._idle_task.done():
            # kept apart from self._tasks, which closing cancels
            self._idle_task = asyncio.ensure_future(self._close_idle())
            self._idle_task.add_done_callback(_forget)

    async def _close_idle(self) -> None:
        if self._busy or self._context is None:
            return
        self._idle_closed = self.config.idle_timeout
        await self._close()  # exactly what close() does: the context and its pool slot go back

    # -- events (all on the pool's loop) -----------------------------------------------------

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_forget)

    def _handlers(self) -> dict[str, Callable[[Any], None]]:
        return {
            "console": self._on_console,
            "pageerror": self._on_pageerror,
            "request": self._on_request,
            "requestfinished": self._on_request_done,
            "requestfailed": self._on_request_failed,
            "response": self._on_response,
            "dialog": self._on_dialog,
            "download": self._on_download,
            "crash": self._on_crash,
            "framenavigated": self._on_framenavigated,
            "close": self._on_page_close,
        }

    def _hook(self, page: Page) -> None:
        if page in self._hooked:
            return
        self._hooked.append(page)
        self._tab_ids.setdefault(page, f"t{len(self._tab_ids) + 1}")
        for event, handler in self._handlers().items():
            page.on(event, handler)  # type: ignore[call-overload]

    def _open_tabs(self) -> list[Page]:
        return [p for p in self._tab_ids if not p.is_closed()]

    async def _tab_lines(self) -> tuple[str, ...]:
        """The open tabs with their titles, the current one marked; empty with one tab."""
        tabs = self._open_tabs()
        if len(tabs) < 2:
            return ()
        lines = []
        for p in tabs:
            try:
                title = await self._bounded(p.title(), self.config.timeouts.probe)
            except (PlaywrightError, _Hung):
                title = ""
            mark = " (current)" if p is self._page else ""
            lines.append(f'{self._tab_ids[p]} "{clip(title, 80)}" {clip(p.url, 200)}{mark}')
        return tuple(lines)

    def _tab(self, tab_id: str) -> Page:
        for p in self._open_tabs():
            if self._tab_ids[p] == tab_id:
                return p
        known = ", ".join(self._tab_ids[p] for p in self._open_tabs()) or "none"
        raise TargetError(f"there is no open tab {clip(tab_id, 40)!r}; the open tabs are {known}.")

    def _unhook(self) -> None:
        """Stop listening: nothing a closing page still reports may reach the next session."""
        for page in self._hooked:
            for event, handler in self._handlers().items():
                with contextlib.suppress(Exception):
                    page.remove_listener(event, handler)
        self._hooked.clear()

    def _on_console(self, msg: ConsoleMessage) -> None:
        kind = str(msg.type)
        if kind == "verbose":
            return  # the browser's own advice, such as "[DOM] Password field is not contained in a form"
        self._last_event = time.monotonic()
        text = msg.text
        if kind == "error" and text.startswith("Failed to load resource"):
            return  # the same failure is reported once, with its URL, from the network events
        self._console.add(kind, text)
        self._console_log.add(kind, text)

    def _on_pageerror(self, err: Exception) -> None:
        text = str(getattr(err, "message", None) or err)
        self._console.add("pageerror", text)
        self._console_log.add("pageerror", text)

    def _main_navigation(self, req: Request) -> bool:
        page = self._page
        if page is None or not req.is_navigation_request():
            return False
        try:
            return req.frame == page.main_frame
        except PlaywrightError:
            return False  # a request of a service worker has no frame

    def _on_request(self, req: Request) -> None:
        self._last_event = time.monotonic()
        self._inflight.add(req)
        self._last_net = time.monotonic()
        if self._main_navigation(req):
            self._navigating.add(req)
            self._nav_requests += 1

    def _on_request_done(self, req: Request) -> None:
        self._inflight.discard(req)
        self._navigating.discard(req)
        self._last_net = time.monotonic()

    def _on_request_failed(self, req: Request) -> None:
        self._inflight.discard(req)
        self._navigating.discard(req)
        self._last_net = time.monotonic()
        failure = req.failure or "failed"
        if req.url in self._refused or _is_favicon(req.url):
            return
        if "ERR_ABORTED" in failure and req.is_navigation_request():
            return  # a navigation replaced by another one, or a download
        self._console.add("requestfailed", f"{req.method} {req.url}: {failure}")

    def _on_response(self, resp: Response) -> None:
        # answered: a body nobody reads (an unread fetch, an event stream) must not hold the page open
        self._inflight.discard(resp.request)
        self._last_net = time.monotonic()
        if resp.status >= 400 and not _is_favicon(resp.url):
            self._console.add(
                "httperror", f"{resp.status} {resp.status_text} {resp.request.method} {resp.url}"
            )

    def _on_framenavigated(self, frame: Frame) -> None:
        if self._page is not None and frame == self._page.main_frame:
            self._commits += 1
            self._refs.clear()  # a new page (or view): its elements need a new snapshot
            self._ref_lines.clear()
            self._navigating.clear()  # the navigation committed; any earlier one was replaced

    def _on_dialog(self, dialog: Dialog) -> None:
        self._last_dialog = self._last_event = time.monotonic()
        self._notes.dialog(dialog.type, dialog.message)
        self._spawn(dialog.dismiss())

    def _on_download(self, download: Download) -> None:
        self._downloads_seen += 1
        self._spawn(self._save_download(download))

    async def _save_download(self, download: Download) -> None:
        folder = self._downloads_folder()
        name = Path(download.suggested_filename).name or "download"
        target = folder / name
        n = 1
        while target.exists():
            target = folder / f"{Path(name).stem}-{n}{Path(name).suffix}"
            n += 1
        try:
            await asyncio.wait_for(download.save_as(target), self.config.timeouts.navigation)
        except Exception as e:
            self._notes.add(f"a download of {name!r} failed: {first_line(e)}")
            return
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(download.delete(), self.config.timeouts.close)
        self._notes.add(f"a file was downloaded and saved as {target} ({target.stat().st_size:,} bytes)")

    def _downloads_folder(self) -> Path:
        if self.downloads_dir is None:
            self.downloads_dir = Path(tempfile.mkdtemp(prefix="xmltools-session-"))
        self.downloads_dir.mkdir(parents=True, exist_ok=True)
        return self.downloads_dir

    def _on_crash(self, page: Page) -> None:
        if page is self._page:
            self._crashed = True

    def _on_context_page(self, page: Page) -> None:
        if self._opening:
            return  # the page this session opened itself
        self._spawn(self._follow(page))

    async def _follow(self, page: Page) -> None:
        await self._use_page(page)
        self._notes.add("a new tab opened, and you now see it (the earlier tab stays open behind it)")

    def _on_page_close(self, page: Page) -> None:
        if page is not self._page or self._context is None:
            return
        rest = [p for p in self._context.pages if not p.is_closed() and p is not page]
        if rest:
            self._notes.add("the tab closed itself; you now see the previous tab")
            self._spawn(self._use_page(rest[-1]))

    async def _use_page(self, page: Page) -> None:
        self._page = page
        self._hook(page)
        self._navigating.clear()
        self._cdp = None
        with contextlib.suppress(PlaywrightError, _Hung):
            await self._ensure_cdp()

    async def _ensure_cdp(self) -> CDPSession:
        if self._cdp is None:
            if self._context is None or self._page is None:
                raise _Hung("no page is open")
            self._cdp = await self._bounded(
                self._context.new_cdp_session(self._page), self.config.timeouts.action
            )
        return self._cdp

    async def _route(self, route: Route) -> None:
        """Every request of the session passes here: the URL policy decides, in the browser."""
        req = route.request
        navigation = req.is_navigation_request()
        try:
            reason = self.config.url_policy.check(req.url, navigation=navigation)
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
        self._notes.add(f"the page tried to open {clip(url, 200)}, which was refused: {reason}")
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
        t = self.config.timeouts
        url, method = req.url, req.method
        try:
            resp = await route.fetch(max_redirects=0, timeout=t.navigation * 1000)
        except PlaywrightError:
            # no answer at all (refused, unknown host, timeout): the browser asks again itself
            # and reports its own error, as it would without the policy
            await route.fallback()
            return
        hops = 0
        while 300 <= resp.status < 400 and resp.headers.get("location") and hops < MAX_NAVIGATIONS:
            target = urljoin(url, resp.headers["location"])
            reason = self.config.url_policy.check(target)
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
                resp = await route.fetch(url=url, method=method, max_redirects=0, timeout=t.navigation * 1000)
            except PlaywrightError as e:
                await route.abort(_abort_code(str(e)))
                return
        if hops == 0:
            await route.fulfill(response=resp)
            return
        await resp.dispose()
        await route.fulfill(status=302, headers={"location": url}, body="")

    # -- helpers -----------------------------------------------------------------------------

    async def _bounded(self, aw: Awaitable[T], seconds: float) -> T:
        try:
            return await asyncio.wait_for(aw, seconds)
        except TimeoutError as e:
            raise _Hung(f"no answer within {seconds:g} s") from e

    async def _input(self, aw: Awaitable[T], seconds: float) -> T:
        """An input action, bounded by ``seconds``; longer only while the page keeps raising dialogs.

        A click whose handler raises dialogs one after another does not return
        until the last one is dismissed: that is progress, not a stuck page, so
        it may run up to the navigation bound.
        """
        loop = asyncio.get_running_loop()
        fut = asyncio.ensure_future(aw)
        deadline = loop.time() + seconds
        hard = loop.time() + max(seconds, self.config.timeouts.navigation)
        try:
            while True:
                await asyncio.wait({fut}, timeout=0.05)
                if fut.done():
                    return fut.result()
                now = loop.time()
                busy_with_dialogs = time.monotonic() - self._last_dialog < 1.0
                if now >= hard or (now >= deadline and not busy_with_dialogs):
                    raise _Hung(f"no answer within {seconds:g} s")
        finally:
            if not fut.done():
                fut.cancel()
            fut.add_done_callback(_forget)

    def _require_page(self) -> Page:
        if self._page is None:
            raise _Hung("no page is open")
        return self._page

    def _alive(self) -> bool:
        ctx = self._context
        browser = ctx.browser if ctx is not None else None
        return not self._crashed and not self._disconnected and (browser is None or browser.is_connected())

    def _classify(self, err: BaseException) -> FailureClass:
        page = self._page
        return classify(str(err), alive=self._alive(), page_open=page is not None and not page.is_closed())

    async def _probe(self) -> bool:
        """Whether the page's main thread answers a trivial evaluation at once."""
        page = self._page
        if page is None:
            return False
        try:
            await self._bounded(page.evaluate("0"), self.config.timeouts.probe)
            return True
        except _Hung:
            return False
        except PlaywrightError as e:
            return self._classify(e) is not FailureClass.LOST

    # -- settling --------------------------------------------------------------------------------

    async def _settle(self, nav_started: bool = False) -> list[str]:
        """Follow any navigation the action started, then wait until the page is quiet.

        Bounded by the navigation timeout for the navigations, and by the settle
        timeout for the quiet windows.  If the page asked for a new tab, that tab
        is waited for and settled too.
        """
        t = self.config.timeouts
        loop = asyncio.get_running_loop()
        nav_deadline = loop.time() + t.navigation
        notes: list[str] = []
        hops = 0
        quiet_rounds = 0
        quiet_deadline: float | None = None  # the quiet windows of one document share one bound
        expect_nav = nav_started
        while True:
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=t.settle)
            page = self._require_page()
            await self._await_navigation(page, nav_deadline, expect_nav, notes)
            if self._page is not page:
                continue  # a new tab took over
            commits, requests = self._commits, self._nav_requests
            if quiet_deadline is None:
                quiet_deadline = loop.time() + t.settle
            budget = max(0.05, min(t.settle, nav_deadline - loop.time()))
            try:
                # the network's quiet window and the DOM's run side by side
                res, _ = await asyncio.gather(
                    self._bounded(
                        page.evaluate(scripts.SETTLE, [t.dom_quiet * 1000, budget * 1000, scripts.MARK]),
                        budget + t.action,
                    ),
                    self._network_quiet(quiet_deadline),
                )
            except _Hung:
                if time.monotonic() - self._last_event < 1.0:
                    # not stuck: the page is still busy (logging, loading); show it as it is
                    notes.append(
                        f"the page's scripts were still busy after {t.settle:g} s; this is how it looked"
                    )
                    return notes
                raise
            except PlaywrightError as e:
                if self._classify(e) is FailureClass.TRANSIENT and loop.time() < nav_deadline:
                    hops += 1
                    quiet_deadline = None
                    expect_nav = False
                    if hops <= MAX_NAVIGATIONS:
                        continue
                    notes.append(_kept_navigating(hops))
                    return notes
                raise
            if not isinstance(res, dict):
                return notes
            moved = bool(res.get("crossNavs")) or self._commits != commits or self._nav_requests != requests
            if moved or self._navigating:
                hops += 1
                quiet_deadline = None
                expect_nav = bool(res.get("crossNavs"))
                if hops > MAX_NAVIGATIONS or loop.time() >= nav_deadline:
                    notes.append(_kept_navigating(hops))
                    return notes
                continue
            if self._inflight and quiet_rounds < 3:
                quiet_rounds += 1  # the page started requests while the DOM was quiet: wait for them too
                continue
            if not res.get("settled", True):
                notes.append(f"the page was still changing after {t.settle:g} s; this is how it looked then")
            await self._await_downloads(int(res.get("downloads") or 0))
            if int(res.get("popups") or 0) and not await self._await_popup(page):
                notes.append("the page asked for a new tab, but none opened")
            if self._page is not page:
                continue  # settle the new tab too
            return notes

    async def _await_navigation(self, page: Page, deadline: float, expect: bool, notes: list[str]) -> None:
        """Wait until no main-frame navigation is in flight and the current document has loaded."""
        t = self.config.timeouts
        loop = asyncio.get_running_loop()
        commits, requests = self._commits, self._nav_requests
        grace = loop.time() + _NEW_REQUEST_GRACE
        while self._page is page and loop.time() < deadline and not self._crashed:
            waiting_request = expect and self._nav_requests == requests and self._commits == commits
            if not self._navigating and not (waiting_request and loop.time() < grace):
                break
            await asyncio.sleep(0.01)
        else:
            if self._page is page and self._navigating and not self._crashed:
                url = clip(next(iter(self._navigating)).url, 200)
                notes.append(
                    f"the page was still waiting for {url} after {t.navigation:g} s;"
                    " this is how it looked then"
                )
                return
        if self._page is not page or self._crashed:
            return
        remaining = deadline - loop.time()
        if remaining <= 0:
            return
        try:
            await self._bounded(page.wait_for_load_state("load", timeout=remaining * 1000), remaining + 1)
        except (PlaywrightError, _Hung) as e:
            if isinstance(e, PlaywrightError) and self._classify(e) is not FailureClass.PAGE:
                return  # the document changed again, or the session is gone: the caller looks again
            notes.append(
                f"the page had not finished loading after {t.navigation:g} s; this is how it looked then"
            )

    async def _network_quiet(self, deadline: float) -> None:
        t = self.config.timeouts
        if not self._inflight and self._last_net < self._action_started:
            return
        loop = asyncio.get_running_loop()
        while loop.time() < deadline:
            if not self._inflight and time.monotonic() - self._last_net >= t.network_quiet:
                return
            await asyncio.sleep(0.01)

    async def _await_downloads(self, expected: int) -> None:
        if not expected:
            return
        loop = asyncio.get_running_loop()
        limit = loop.time() + self.config.timeouts.settle
        while self._downloads_seen < expected and loop.time() < limit:
            await asyncio.sleep(0.01)
        self._downloads_seen = 0
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=self.config.timeouts.navigation)

    async def _await_popup(self, page: Page) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.timeouts.settle
        while self._page is page and loop.time() < deadline:
            await asyncio.sleep(0.01)
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=self.config.timeouts.settle)
        return self._page is not page

    # -- observing ---------------------------------------------------------------------------------

    async def _page_screenshot(self) -> Screenshot:
        """Playwright's own screenshot (PNG or JPEG): slower, but it copes with any page."""
        c = self.config
        t = c.timeouts
        page = self._require_page()
        kind: Literal["png", "jpeg"] = "jpeg" if c.screenshot_format == "jpeg" else "png"
        quality = c.screenshot_quality if kind == "jpeg" else None
        data = await self._bounded(
            page.screenshot(type=kind, quality=quality, scale="device", timeout=t.screenshot * 1000),
            t.screenshot + 1,
        )
        w, h = image_size(data)
        return Screenshot(data=data, format=kind, width=w, height=h)

    async def _screenshot(self) -> Screenshot:
        """A screenshot over the DevTools protocol (WebP by default).

        Raises :class:`_Moved` when the page commits a new document while the
        capture waits: such a capture may never finish, so it is abandoned.
        """
        c = self.config
        t = c.timeouts
        if c.device_scale_factor != 1:
            # A clipped protocol capture would drop this page's emulated pixel ratio, so Playwright's
            # own screenshot takes this case; it has no WebP, which then falls back to PNG.
            return await self._page_screenshot()
        fmt = c.screenshot_format if (c.screenshot_format != "webp" or self._webp) else "png"
        params: dict[str, Any] = {"format": fmt, "captureBeyondViewport": False, "fromSurface": True}
        if fmt != "png":
            params["quality"] = c.screenshot_quality
        cdp = await self._ensure_cdp()
        commits = self._commits
        capture = asyncio.ensure_future(cdp.send("Page.captureScreenshot", params))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + t.screenshot
        try:
            while not capture.done():
                await asyncio.wait({capture}, timeout=0.02)
                if capture.done():
                    break
                if self._commits != commits:
                    raise _Moved("the page committed a new document during the screenshot")
                if loop.time() >= deadline:
                    raise _Hung(f"no screenshot within {t.screenshot:g} s")
            res = capture.result()
        except PlaywrightError as e:
            if fmt != "webp" or "format" not in str(e).lower():
                self._cdp = None  # the next try attaches again
                raise
            self._webp = False  # this browser cannot encode WebP: PNG from now on
            return await self._screenshot()
        finally:
            if not capture.done():
                capture.cancel()
            capture.add_done_callback(_forget)
        data = base64.b64decode(res["data"])
        w, h = image_size(data)
        return Screenshot(data=data, format=fmt, width=w, height=h)

    async def _capture(self, snap: _SnapshotRequest | None = None) -> _Seen:
        """Title, screenshot and snapshot, as the observe mode asks; seen again if the document changes.

        After a few documents have changed under the protocol's capture,
        Playwright's own screenshot (PNG) is used: it copes with a page that
        keeps navigating.
        """
        t = self.config.timeouts
        mode = self.config.observe
        if snap is None and mode != "screenshot":
            snap = _SnapshotRequest()
        for attempt in range(MAX_NAVIGATIONS):
            page = self._require_page()
            shoot = self._screenshot if attempt < 3 else self._page_screenshot
            try:
                title, shot, text = await asyncio.gather(
                    self._bounded(page.title(), t.action),
                    shoot() if mode != "snapshot" else _none(),
                    self._snapshot_text(page, snap) if snap is not None else _none(),
                )
                return _Seen(page, shot, title, text)
            except (PlaywrightError, _Moved) as e:
                if isinstance(e, PlaywrightError) and self._classify(e) is not FailureClass.TRANSIENT:
                    raise
                await asyncio.sleep(0.02)
        raise _Hung("the page kept changing under the screenshot")

    async def _snapshot_text(self, page: Page, req: _SnapshotRequest) -> str:
        """Playwright's AI snapshot of the page or of a target, shaped to fit (see xmltools.snapshot)."""
        c = self.config
        t = c.timeouts
        bound = t.screenshot
        if req.target is not None:
            loc = await self._locate(req.target)
            raw = await self._bounded(
                loc.aria_snapshot(mode="ai", boxes=True, depth=req.depth, timeout=bound * 1000), bound + 1
            )
            self._refs |= refs_in(raw)
            self._ref_lines.update(ref_lines(raw))
        else:
            # boxes only when the page is too long to show whole: they order what is shown, and cost time
            raw = await self._bounded(
                page.aria_snapshot(mode="ai", depth=req.depth, timeout=bound * 1000), bound + 1
            )
            if len(raw) > c.max_snapshot_chars or c.snapshot_boxes:
                raw = await self._bounded(
                    page.aria_snapshot(mode="ai", boxes=True, depth=req.depth, timeout=bound * 1000),
                    bound + 1,
                )
            self._refs = refs_in(raw)
            self._ref_lines = ref_lines(raw)
        shaped = shape(
            raw,
            max_chars=c.max_snapshot_chars,
            viewport_height=self.viewport.height,
            find=req.find,
            keep_boxes=c.snapshot_boxes,
        )
        return shaped.text

    async def _observe(
        self,
        extra_notes: list[str] | None = None,
        target: str | None = None,
        captured: _Seen | None = None,
    ) -> Observation:
        """The page as it is now, with everything collected since the last observation."""
        caps = self.config.caps
        seen = captured or await self._capture()
        page = seen.page
        console, cut = self._console.take()
        self._last_url = page.url
        return Observation(
            url=clip(page.url, caps.url_chars),
            title=clip(seen.title, caps.title_chars),
            console=console,
            screenshot=seen.shot,
            viewport=self.viewport,
            mouse=self.mouse,
            notes=self._notes.take([*(extra_notes or []), *cut]),
            target=target,
            snapshot=seen.snapshot,
            tabs=await self._tab_lines(),
        )

    async def observe(self, extra_notes: list[str] | None = None) -> Observation:
        return await self._on_pool(self._using(self._observe(extra_notes)))

    async def boxes(self, selectors: Sequence[str]) -> list[tuple[float, float, float, float]]:
        """The viewport boxes (x, y, width, height, CSS pixels) of every element the selectors match
        in the current page; a selector that matches nothing, or is not valid, gives none."""
        return await self._on_pool(self._using(self._boxes(selectors)))

    async def _boxes(self, selectors: Sequence[str]) -> list[tuple[float, float, float, float]]:
        page = self._require_page()
        out: list[tuple[float, float, float, float]] = []
        for sel in selectors:
            try:
                found = await self._bounded(
                    page.locator(sel).evaluate_all(_BOXES_JS), self.config.timeouts.action
                )
            except PlaywrightError:
                continue
            out.extend((float(x), float(y), float(w), float(h)) for x, y, w, h in found)
        return out

    # -- running an action -----------------------------------------------------------------------

    async def _run(
        self,
        name: str,
        body: Callable[[], Awaitable[tuple[list[str], str | None]]],
        *,
        navigates: bool = False,
        snap: _SnapshotRequest | None = None,
    ) -> Observation | Failure:
        """Run an action's body, settle, observe; turn every way of failing into an honest Failure."""
        if self._page is None:
            return Failure(kind="closed", message="the browser is not open.", browser_closed=True)
        if not self._alive():
            return await self._lost(PlaywrightError("the browser has disconnected"))
        self._action_started = time.monotonic()
        try:
            pre, target = await body()
            if self._crashed:
                raise PlaywrightError("Target crashed")
            notes = await self._settle(navigates)
            for _ in range(3):
                before = (self._page, self._commits, self._nav_requests)
                captured = await self._capture(snap)
                moved = (captured.page, self._commits, self._nav_requests) != before or bool(self._navigating)
                if not moved or any(n.startswith(_KEPT_NAVIGATING) for n in notes):
                    break
                notes += await self._settle()  # a navigation began while the page was being looked at
            return await self._observe([*pre, *notes], target, captured)
        except _NoTarget as e:
            return Failure(kind="no_target", message=str(e), observation=await self._try_observe())
        except TargetError as e:
            return Failure(kind="target", message=str(e), observation=await self._try_observe())
        except _Navigation as e:
            return Failure(kind="navigation", message=str(e), observation=await self._try_observe())
        except _WaitedOut as e:
            return Failure(kind="timeout", message=str(e), observation=await self._try_observe())
        except (_Hung, PlaywrightError) as e:
            return await self._failed(name, e)

    async def _failed(self, name: str, err: Exception) -> Failure:
        cls = self._classify(err) if isinstance(err, PlaywrightError) else FailureClass.PAGE
        if cls is FailureClass.LOST:
            return await self._lost(err)
        timed_out = isinstance(err, _Hung) or "timeout" in str(err).lower()
        if timed_out and not await self._probe() and time.monotonic() - self._last_event >= 1.0:
            if not self._alive():
                return await self._lost(err)
            last = self._last_url
            await self._drop()
            return Failure(
                kind="timeout",
                message="the page stopped answering: a script on it may be stuck in a loop.",
                browser_closed=True,
                last_url=last,
            )
        if timed_out:
            msg = (
                f"the {name} action got no answer in time ({first_line(err)}); the page itself still answers."
            )
            return Failure(kind="timeout", message=msg, observation=await self._try_observe())
        return Failure(
            kind="internal",
            message=f"the browser reported: {clip(first_line(err), 300)}",
            observation=await self._try_observe(),
        )

    async def _try_observe(self) -> Observation | None:
        try:
            return await self._observe()
        except Exception:
            return None

    async def _lost(self, err: BaseException) -> Failure:
        crashed = self._crashed or "crash" in str(err).lower()
        last = self._last_url
        await self._drop()
        if crashed:
            return Failure(
                kind="crashed",
                message="the page's renderer process crashed.",
                browser_closed=True,
                last_url=last,
            )
        return Failure(
            kind="closed", message="the browser process has exited.", browser_closed=True, last_url=last
        )

    # -- actions --------------------------------------------------------------------------------

    async def launch(self, url: str | None) -> Observation | Failure:
        """Open a new session (closing this one first) at ``url`` (a blank page when None).

        Raises :class:`~xmltools.errors.BrowserError` when the browser cannot be
        found, started or reached: that is the host's problem, not the model's.
        """
        return await self._on_pool(self._using(self._launch(url)))

    async def _launch(self, url: str | None) -> Observation | Failure:
        await self._drop()
        self._idle_closed = None
        c = self.config
        t = c.timeouts
        self._crashed = self._disconnected = False
        options: dict[str, Any] = {
            "viewport": {"width": self.viewport.width, "height": self.viewport.height},
            "device_scale_factor": c.device_scale_factor,
            "accept_downloads": True,
        }
        log.debug(
            "opening a session: %s%s",
            f"remote {c.remote}" if c.remote else f"local, executable {c.executable or '(found on its own)'}",
            f", profile folder {c.profile_dir}" if c.profile_dir is not None else "",
        )
        try:
            if c.profile_dir is not None:
                ctx = await self.pool.persistent_context(c.backends, c.profile_dir, t.launch, **options)
            else:
                ctx = await self.pool.new_context(c.backends, t.launch, **options)
        except PoolFullError as e:
            return Failure(kind="launch", message=f"no browser session is free: {e}.", browser_closed=True)
        self._context = ctx
        try:
            async with asyncio.timeout(t.launch):
                browser = ctx.browser
                if browser is not None:
                    self.browser_version = browser.version
                    browser.on("disconnected", self._on_disconnected)
                await ctx.add_init_script(scripts.INIT)
                if c.url_policy.restricts_requests:
                    await ctx.route("**/*", self._route)
                ctx.on("page", self._on_context_page)
                first = [p for p in ctx.pages if not p.is_closed()]  # a persistent context opens with one
                if first:
                    page = first[0]
                else:
                    self._opening = True
                    try:
                        page = await ctx.new_page()
                    finally:
                        self._opening = False
                await self._use_page(page)
        except (TimeoutError, PlaywrightError) as e:
            await self._drop()
            raise BrowserError(f"the browser did not open a page within {t.launch:g} s ({e})") from e
        log.debug("session open (browser version %s)", self.browser_version or "unknown")

        self._blank_start = url is None

        async def body() -> tuple[list[str], str | None]:
            return (await self._goto(url) if url is not None else []), None

        return await self._run("launch", body)

    def _on_disconnected(self, _: object) -> None:
        self._disconnected = True

    async def _goto(self, url: str) -> list[str]:
        page = self._require_page()
        t = self.config.timeouts
        try:
            await self._bounded(
                page.goto(url, wait_until="commit", timeout=t.navigation * 1000), t.navigation + 1
            )
        except PlaywrightError as e:
            if self._classify(e) is not FailureClass.PAGE:
                raise
            refused = self._refused.get(url) or next(iter(self._refused.values()), None)
            if refused and "ERR_ABORTED" in str(e):
                raise _Navigation(f"{url} may not be opened: {refused}") from e
            msg = first_line(e)
            if "Timeout" in msg:
                raise _Navigation(f"{url} sent no answer within {t.navigation:g} s.") from e
            raise _Navigation(f"{url} could not be opened: {msg}") from e
        except _Hung as e:
            raise _Navigation(f"{url} sent no answer within {t.navigation:g} s.") from e
        return []

    async def _describe_point(self, p: Point) -> str:
        """Who is at ``p``: role and accessible name (``link "Docs"``), and the element marked.

        _NoTarget on the page's background.
        """
        page = self._require_page()
        hit = await self._bounded(
            page.evaluate(scripts.HIT, [p.x, p.y, scripts.MARK]), self.config.timeouts.action
        )
        if hit is None or hit == "":
            raise _NoTarget(
                f"nothing is at {p.x},{p.y}: only the page background is there."
                " Look at the screenshot and aim at an element."
            )
        return clip(str(hit), 200)

    async def _click_body(self, p: Point) -> tuple[list[str], str | None]:
        target = await self._describe_point(p)
        page = self._require_page()
        await self._input(page.mouse.click(p.x, p.y), self.config.timeouts.action)
        self.mouse = p
        return [], target

    async def _hover_body(self, p: Point) -> tuple[list[str], str | None]:
        page = self._require_page()
        try:
            target: str | None = await self._describe_point(p)
        except _NoTarget:
            target = None
        await self._bounded(page.mouse.move(p.x, p.y), self.config.timeouts.action)
        self.mouse = p
        return [], target

    async def _type_text(self, page: Page, text: str) -> None:
        t = self.config.timeouts
        if len(text) <= TYPE_KEYS_MAX:
            await self._bounded(page.keyboard.type(text), t.action + len(text) * 0.02)
        else:
            await self._bounded(page.keyboard.insert_text(text), t.action + len(text) * 0.0005)

    async def _scroll_body(self, direction: str) -> tuple[list[str], str | None]:
        page = self._require_page()
        at = self.mouse or Point(x=self.viewport.width // 2, y=self.viewport.height // 2)
        res = await self._bounded(
            page.evaluate(scripts.SCROLL, [at.x, at.y, direction]), self.config.timeouts.action
        )
        what = str(res.get("what", "page")) if isinstance(res, dict) else "page"
        moved = bool(res.get("moved")) if isinstance(res, dict) else False
        edge = {"down": "bottom", "up": "top", "left": "left edge", "right": "right edge"}[direction]
        if what == "modal":
            return [
                "a dialog is open in front of the page and has nothing to scroll; the page behind it"
                " was left as it was"
            ], None
        if not moved:
            return [f"nothing moved: the {'page' if what == 'page' else what} is already at the {edge}"], None
        return ([] if what == "page" else [f"scrolled {what}, the part under the mouse"]), None

    async def click(self, p: Point) -> Observation | Failure:
        return await self._on_pool(self._action(self._run("click", lambda: self._click_body(p))))

    async def hover(self, p: Point) -> Observation | Failure:
        return await self._on_pool(self._action(self._run("hover", lambda: self._hover_body(p))))

    async def type(self, text: str) -> Observation | Failure:
        async def body() -> tuple[list[str], str | None]:
            await self._type_text(self._require_page(), text)
            return [], None

        return await self._on_pool(self._action(self._run("type", body)))

    async def press(self, keys: str) -> Observation | Failure:
        async def body() -> tuple[list[str], str | None]:
            await self._input(self._require_page().keyboard.press(keys), self.config.timeouts.action)
            return [], None

        return await self._on_pool(self._action(self._run("press", body)))

    async def scroll(self, direction: Literal["up", "down", "left", "right"]) -> Observation | Failure:
        name = f"scroll_{direction}" if direction in ("up", "down") else "scroll"
        return await self._on_pool(self._action(self._run(name, lambda: self._scroll_body(direction))))

    async def resize(self, size: Viewport) -> Observation | Failure:
        async def body() -> tuple[list[str], str | None]:
            page = self._require_page()
            await self._bounded(
                page.set_viewport_size({"width": size.width, "height": size.height}),
                self.config.timeouts.action,
            )
            self.viewport = size
            return [], None

        return await self._on_pool(self._action(self._run("resize", body)))

    # -- element targets (the full profile) ---------------------------------------------------

    async def _locate(self, target: Any) -> Locator:
        """The one element a ref or selector names (TargetError otherwise); a point is marked first."""
        page = self._require_page()
        t = self.config.timeouts
        point = getattr(target, "coordinate", None)
        if point is not None:
            await self._describe_point(point)  # marks the element under the point
            return page.locator(f"[{scripts.MARK}]").first
        return await locate(page, target, refs=self._refs, timeout=t.action)

    async def _on_element(
        self,
        target: Any,
        act: Callable[[Locator], Awaitable[Any]],
        *,
        enabled: bool = True,
        visible: bool = True,
    ) -> str:
        """Locate, check, name and act on an element; the target's faults become TargetError."""
        t = self.config.timeouts
        loc = await self._locate(target)
        state = await self._bounded(loc.evaluate(scripts.STATE, timeout=t.action * 1000), t.action + 1)
        if visible and not state.get("visible"):
            raise TargetError(hidden(_shown(target)))
        if enabled and not state.get("enabled"):
            raise TargetError(disabled(_shown(target)))
        named = self._ref_lines.get(getattr(target, "ref", None) or "") or await describe(loc, t.probe)
        try:
            await self._input(act(loc), t.action + 1)
        except PlaywrightError as e:
            why = explain_action_error(e, target)
            if why is not None:
                raise TargetError(why) from e
            raise
        return named

    async def _centre(self, target: Any) -> Point:
        point = getattr(target, "coordinate", None)
        if point is not None:
            return point  # type: ignore[no-any-return]
        loc = await self._locate(target)
        box = await self._bounded(
            loc.bounding_box(timeout=self.config.timeouts.action * 1000), self.config.timeouts.action + 1
        )
        if box is None:
            raise TargetError(f"the element of the {_shown(target)} is not on the screen.")
        return Point(x=int(box["x"] + box["width"] / 2), y=int(box["y"] + box["height"] / 2))

    async def act(self, action: Any) -> Observation | Failure:
        """Run one of the full profile's element actions (a typed action from :mod:`xmltools.tools`)."""
        return await self._on_pool(self._action(self._act(action)))

    async def _act(self, action: Any) -> Observation | Failure:
        name = str(action.action)
        target: Any = getattr(action, "target", None)
        t = self.config.timeouts

        async def body() -> tuple[list[str], str | None]:
            page = self._require_page()
            if name in ("click", "hover"):
                if target.kind == "coordinate":
                    return await (self._click_body if name == "click" else self._hover_body)(
                        target.coordinate
                    )
                if name == "click":
                    return [], await self._on_element(target, lambda loc: loc.click(timeout=t.action * 1000))
                return [], await self._on_element(
                    target, lambda loc: loc.hover(timeout=t.action * 1000), enabled=False
                )
            if name == "fill":
                return [], await self._on_element(
                    target, lambda loc: loc.fill(action.text, timeout=t.action * 1000)
                )
            if name == "select":
                values = list(action.values)
                return [], await self._on_element(
                    target, lambda loc: loc.select_option(values, timeout=t.action * 1000)
                )
            if name == "upload":
                files = [str(p) for p in action.paths]
                return [], await self._on_element(
                    target, lambda loc: loc.set_input_files(files, timeout=t.action * 1000), visible=False
                )
            if name in ("type", "press"):
                named: str | None = None
                if target is not None:

                    async def focus_at_end(loc: Locator) -> None:
                        await loc.focus(timeout=t.action * 1000)
                        if name == "type":  # typing into a field goes after what it holds
                            await loc.evaluate(scripts.CARET_TO_END, timeout=t.action * 1000)

                    named = await self._on_element(target, focus_at_end)
                if name == "type":
                    await self._type_text(page, action.text)
                else:
                    await self._input(page.keyboard.press(action.text), t.action)
                return [], named
            if name == "fill_form":
                filled = []
                for selector, value in action.fields:

                    def fill_with(loc: Locator, v: str = value) -> Awaitable[None]:
                        return loc.fill(v, timeout=t.action * 1000)

                    filled.append(await self._on_element(Target(selector=selector), fill_with))
                return [f"filled {len(filled)} field{'s' if len(filled) != 1 else ''}"], "; ".join(filled)
            if name == "drag":
                start, end = await self._centre(target), await self._centre(action.to)
                await self._input(page.mouse.move(start.x, start.y), t.action)
                await self._input(page.mouse.down(), t.action)
                await self._input(page.mouse.move(end.x, end.y, steps=8), t.action)
                await self._input(page.mouse.up(), t.action)
                self.mouse = end
                return [], f"from {_shown(target)} to {_shown(action.to)}"
            if name == "scroll":
                if target is None:
                    return await self._scroll_body(action.direction)
                loc = await self._locate(target)
                res = await self._bounded(loc.evaluate(scripts.SCROLL_ELEMENT, action.direction), t.action)
                named = self._ref_lines.get(getattr(target, "ref", None) or "") or await describe(
                    loc, t.probe
                )
                return ([] if res == "scrolled" else ["the element was brought into view"]), named
            if name == "snapshot":
                return [], None
            if name in ("navigate", "back", "forward", "reload"):
                return await self._navigation_body(
                    name, getattr(action, "url", None), getattr(action, "wait_until", None)
                )
            if name in ("get_text", "get_html", "get_attribute"):
                extracted[0] = await self._extract(name, target, action)
                return [], None
            if name == "wait":
                return await self._wait_body(action), None
            if name == "open_tab":
                return await self._open_tab(str(action.url)), None
            if name == "switch_tab":
                tab = self._tab(str(action.tab))
                await self._use_page(tab)
                await self._bounded(tab.bring_to_front(), t.action)
                return [], None
            if name == "console_logs":
                entries, cut = self._console_log.take()
                extracted[0] = (
                    "\n".join(e.line() for e in entries) or "(no console entries since the last time)"
                )
                return cut, None
            if name == "evaluate":
                extracted[0] = await self._evaluate(page, str(action.script))
                return [], None
            if name == "screenshot":
                return await self._screenshot_action(page, target, action, shots), None
            if name == "list_tabs":
                extracted[0] = (
                    "\n".join(await self._tab_lines()) or f"one tab: {self._tab_ids.get(page, 't1')}"
                )
                return [], None
            raise ConfigError(f"not an element action: {name!r}")

        extracted: list[str | None] = [None]
        shots: list[Screenshot] = []

        snap = None
        if name == "snapshot":
            snap = _SnapshotRequest(target, getattr(action, "depth", None), getattr(action, "find", None))
        result = await self._run(name, body, snap=snap)
        if isinstance(result, Observation) and extracted[0] is not None:
            result = result.model_copy(update={"extract": extracted[0]})
        if isinstance(result, Observation) and shots:
            result = result.model_copy(update={"screenshot": shots[0]})
        return result

    async def _evaluate(self, page: Page, script: str) -> str:
        """An expression or a function body, run in the page; its result as JSON, capped."""
        t = self.config.timeouts
        body = script.strip()
        wrapped = f"async () => {{ {body} }}" if "return" in body or ";" in body.rstrip(";") else body
        try:
            value = await self._bounded(page.evaluate(wrapped), t.action)
        except PlaywrightError as e:
            if self._classify(e) is not FailureClass.PAGE:
                raise
            return f"the script threw: {clip(first_line(e), 500)}"
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(value)
        return cap(text, self.config.max_extract_chars)

    async def _screenshot_action(
        self, page: Page, target: Any, action: Any, shots: list[Screenshot]
    ) -> list[str]:
        """A full-page or element screenshot; with a path, also saved inside the workspace.

        The model is shown at most the top ``MAX_SHOWN_HEIGHT`` pixels (models refuse taller
        images); the file saved with a path is the whole of it.
        """
        t = self.config.timeouts
        c = self.config
        kind: Literal["png", "jpeg"] = "jpeg" if getattr(action, "format", None) == "jpeg" else "png"
        loc = None
        if target is not None:
            loc = await self._locate(target)
            data = await self._bounded(
                loc.screenshot(type=kind, timeout=t.screenshot * 1000), t.screenshot + 1
            )
        elif getattr(action, "full_page", False):
            data = await self._bounded(
                page.screenshot(type=kind, full_page=True, timeout=t.screenshot * 1000), t.screenshot + 1
            )
        else:
            return []  # the observation's own screenshot is the answer
        w, h = image_size(data)
        notes = [f"the screenshot is {w}x{h} pixels"]
        shown = data
        if h > MAX_SHOWN_HEIGHT:
            left, top = 0.0, 0.0
            if loc is not None:
                box = await self._bounded(loc.bounding_box(timeout=t.action * 1000), t.action + 1)
                sx, sy = await self._bounded(page.evaluate("() => [scrollX, scrollY]"), t.action)
                left, top = (box["x"] + sx, box["y"] + sy) if box else (0.0, 0.0)
            scale = c.device_scale_factor
            area = {"x": left, "y": top, "width": w / scale, "height": MAX_SHOWN_HEIGHT / scale}
            shown = await self._bounded(
                page.screenshot(type=kind, full_page=True, clip=area, timeout=t.screenshot * 1000),  # type: ignore[arg-type]
                t.screenshot + 1,
            )
            notes = [f"the screenshot is {w}x{h} pixels; you are shown its top {MAX_SHOWN_HEIGHT:,} pixels"]
        sw, sh = image_size(shown)
        shots.append(Screenshot(data=shown, format=kind, width=sw, height=sh))
        path = getattr(action, "path", None)
        if path is None:
            return notes
        if c.workspace is None:
            raise TargetError(
                "screenshots can be saved only inside the workspace, and this session has none."
            )
        dest = Path(path) if Path(path).is_absolute() else c.workspace / path
        dest = dest.resolve()
        root = c.workspace.resolve()
        if dest != root and root not in dest.parents:
            raise TargetError(f"{clip(str(path), 120)!r} is outside the workspace ({root}).")
        dest.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(dest.write_bytes, data)
        return [*notes, f"the whole screenshot ({w}x{h} pixels) was saved as {dest}"]

    async def _open_tab(self, url: str) -> list[str]:
        assert self._context is not None
        t = self.config.timeouts
        page = self._require_page()
        blank = self._blank_start and page.url == "about:blank" and len(self._open_tabs()) == 1
        self._blank_start = False
        if blank:  # a browser started with no page: its one blank tab is the first to use
            await self._goto(url)
            return [f"opened {self._tab_ids[page]}, which you now see"]
        self._opening = True
        try:
            page = await self._bounded(self._context.new_page(), t.action)
        finally:
            self._opening = False
        await self._use_page(page)
        self._hook(page)
        await self._goto(url)
        return [f"opened {self._tab_ids[page]}, which you now see"]

    async def select_tab(self, tab_id: str) -> Failure | None:
        """Make ``tab_id`` the current tab (for dialects whose calls name their tab); a Failure if unknown."""
        return await self._on_pool(self._select_tab(tab_id))

    async def _select_tab(self, tab_id: str) -> Failure | None:
        if self._page is None:
            return Failure(kind="closed", message="the browser is not open.", browser_closed=True)
        try:
            page = self._tab(tab_id)
        except TargetError as e:
            return Failure(kind="target", message=str(e), observation=await self._try_observe())
        if page is not self._page:
            await self._use_page(page)
            with contextlib.suppress(PlaywrightError, _Hung):
                await self._bounded(page.bring_to_front(), self.config.timeouts.action)
        return None

    async def close_tab(self, tab_id: str | None = None) -> Observation | Failure | None:
        """Close a tab (the current one by default).  Closing the last tab ends the session: None."""
        return await self._on_pool(self._action(self._close_tab(tab_id)))

    async def _close_tab(self, tab_id: str | None) -> Observation | Failure | None:
        if self._page is None:
            return Failure(kind="closed", message="the browser is not open.", browser_closed=True)
        try:
            page = self._tab(tab_id) if tab_id else self._page
        except TargetError as e:
            return Failure(kind="target", message=str(e), observation=await self._try_observe())
        closing = self._tab_ids[page]
        rest = [p for p in self._open_tabs() if p is not page]
        if not rest:
            await self._drop()
            return None
        if page is self._page:
            await self._use_page(rest[-1])
        with contextlib.suppress(PlaywrightError, _Hung):
            await self._bounded(page.close(), self.config.timeouts.close)

        async def body() -> tuple[list[str], str | None]:
            return [f"closed {closing}; you now see {self._tab_ids[self._require_page()]}"], None

        return await self._run("close_tab", body)

    async def _navigation_body(
        self, name: str, url: str | None, wait_until: str | None
    ) -> tuple[list[str], str | None]:
        page = self._require_page()
        t = self.config.timeouts
        until: Any = wait_until or "commit"
        try:
            if name == "navigate":
                assert url is not None
                await self._bounded(
                    page.goto(url, wait_until=until, timeout=t.navigation * 1000), t.navigation + 1
                )
                return [], None
            if name == "back" and await self._only_blank_behind():
                return ["there is no page to go back to in this tab's history"], None
            step = {"back": page.go_back, "forward": page.go_forward, "reload": page.reload}[name]
            before = page.url
            response = await self._bounded(
                step(wait_until=until, timeout=t.navigation * 1000), t.navigation + 1
            )
        except PlaywrightError as e:
            if self._classify(e) is not FailureClass.PAGE:
                raise
            refused = self._refused.get(url or "") or next(iter(self._refused.values()), None)
            if refused and "ERR_ABORTED" in str(e):
                raise _Navigation(f"{url} may not be opened: {refused}") from e
            raise _Navigation(f"the page could not be loaded: {first_line(e)}") from e
        except _Hung as e:
            raise _Navigation(f"the page sent no answer within {t.navigation:g} s.") from e
        if response is None and name in ("back", "forward") and page.url == before and not self._navigating:
            return [f"there is no page to go {name} to in this tab's history"], None
        return [], None

    async def _only_blank_behind(self) -> bool:
        """True when going back would land on the blank page the tab began on, or on nothing.

        The tab's history comes from the DevTools protocol; where it cannot be
        read (a browser without it), the answer is False and back runs as asked.
        """
        try:
            cdp = await self._ensure_cdp()
            history = await self._bounded(cdp.send("Page.getNavigationHistory"), self.config.timeouts.probe)
        except (PlaywrightError, _Hung):
            return False
        index = int(history.get("currentIndex", 0))
        entries = history.get("entries", [])
        behind = entries[:index]
        return all(str(e.get("url", "")) in ("about:blank", "") for e in behind)

    async def _extract(self, name: str, target: Any, action: Any) -> str:
        """Text, cleaned HTML or an attribute of the page, of a target, or of every match (``all``)."""
        page = self._require_page()
        t = self.config.timeouts
        limit = self.config.max_extract_chars
        every = bool(getattr(action, "all", False))
        if target is None:
            locs = [page.locator("body")] if name != "get_html" else [page.locator("html")]
        elif every and getattr(target, "selector", None):
            scope: Any = page.frame_locator(target.frame) if getattr(target, "frame", None) else page
            try:
                await scope.locator(target.selector).first.wait_for(state="attached", timeout=t.action * 1000)
            except PlaywrightError as e:
                raise TargetError(f"nothing on the page matches the {_shown(target)}.") from e
            locs = await scope.locator(target.selector).all()
        else:
            locs = [await self._locate(target)]

        async def one(loc: Locator) -> str:
            if name == "get_text":
                return normalise_text(await loc.inner_text(timeout=t.action * 1000))
            if name == "get_html":
                html = await loc.evaluate("(el) => el.outerHTML", timeout=t.action * 1000)
                return clean_html(str(html), int(getattr(action, "depth", None) or 4))
            value = await loc.get_attribute(str(action.attribute), timeout=t.action * 1000)
            return "(no such attribute)" if value is None else value

        parts = [await self._bounded(one(loc), t.action + 1) for loc in locs[:200]]
        if every:
            text = "\n".join(f"{i + 1}. {p}" for i, p in enumerate(parts))
            if len(locs) > 200:
                text += f"\n… ({len(locs) - 200} more matches)"
        else:
            text = parts[0] if parts else ""
        return cap(text, limit)

    async def _wait_body(self, action: Any) -> list[str]:
        """Wait for an element, a text, a URL or a time; running out is the page's problem, reported."""
        page = self._require_page()
        bound = self.config.max_wait_seconds
        seconds = getattr(action, "seconds", None)
        try:
            if seconds is not None:
                await asyncio.sleep(min(float(seconds), bound))
                return []
            if getattr(action, "url", None):
                await page.wait_for_url(str(action.url), timeout=bound * 1000, wait_until="commit")
                return []
            if getattr(action, "text", None) and getattr(action, "target", None) is None:
                await page.get_by_text(str(action.text)).first.wait_for(state="visible", timeout=bound * 1000)
                return []
            state: Any = "hidden" if getattr(action, "state", None) == "hidden" else "visible"
            target = action.target
            if getattr(target, "ref", None) and target.ref not in self._refs:
                raise TargetError(f"{target.ref} is not in the latest snapshot. Take a new snapshot.")
            scope: Any = page.frame_locator(target.frame) if getattr(target, "frame", None) else page
            loc = (
                page.locator(f"aria-ref={target.ref}")
                if getattr(target, "ref", None)
                else scope.locator(target.selector)
            )
            await loc.first.wait_for(state=state, timeout=bound * 1000)
            return []
        except PlaywrightError as e:
            if "Timeout" not in str(e):
                raise
            raise _WaitedOut(f"the wait ran out after {bound:g} s: what it waited for did not happen.") from e

    async def run(self, action: object) -> Observation | Failure | None:
        """Run a typed action from :mod:`xmltools.tools`; ``close`` returns None (or a Failure)."""
        if not log.isEnabledFor(logging.DEBUG):
            return await self._dispatch(action)
        inner = action.inner if isinstance(action, InTab) else action
        shown = str(getattr(inner, "action", type(inner).__name__))
        if isinstance(action, InTab):
            shown += f" in tab {action.tab}"
        started = time.monotonic()
        try:
            result = await self._dispatch(action)
        except BaseException as e:
            ms = (time.monotonic() - started) * 1000
            log.debug("%s: raised %s after %.0f ms: %s", shown, type(e).__name__, ms, first_line(e))
            raise
        ms = (time.monotonic() - started) * 1000
        if isinstance(result, Failure):
            closed = ", browser closed" if result.browser_closed else ""
            log.debug("%s: failed (%s%s) in %.0f ms: %s", shown, result.kind, closed, ms, result.message)
        elif result is None:
            log.debug("%s: ok in %.0f ms (closed)", shown, ms)
        else:
            notes = f", {len(result.notes)} note(s)" if result.notes else ""
            log.debug("%s: ok in %.0f ms -> %s%s", shown, ms, result.url, notes)
        return result

    async def _dispatch(self, action: object) -> Observation | Failure | None:
        name = str(getattr(action, "action", ""))
        if isinstance(action, InTab):
            moved = await self.select_tab(action.tab)
            if moved is not None:
                return moved
            action = action.inner
            name = str(getattr(action, "action", ""))
        if name == "launch":
            opened = await self.launch(action.url)  # type: ignore[attr-defined]
            size = getattr(action, "size", None)
            if size is None or not isinstance(opened, Observation):
                return opened
            return await self.resize(size)
        if name == "close":
            return await self.close()
        if name == "resize":
            return await self.resize(action.size)  # type: ignore[attr-defined]
        if name in ("scroll_down", "scroll_up"):
            return await self.scroll("down" if name == "scroll_down" else "up")
        target = getattr(action, "target", None)
        if name in ("click", "hover") and target is None:
            point = action.coordinate  # type: ignore[attr-defined]
            return await (self.click(point) if name == "click" else self.hover(point))
        if name in ("type", "press") and target is None:
            return await (self.type(action.text) if name == "type" else self.press(action.text))  # type: ignore[attr-defined]
        if name == "close_tab":
            return await self.close_tab(getattr(action, "tab", None))
        if name in _ELEMENT_ACTIONS:
            return await self.act(action)
        raise ConfigError(f"not a browser action: {action!r}")


_ELEMENT_ACTIONS = frozenset(
    {
        "navigate",
        "back",
        "forward",
        "reload",
        "get_text",
        "get_html",
        "get_attribute",
        "wait",
        "open_tab",
        "switch_tab",
        "list_tabs",
        "console_logs",
        "evaluate",
        "screenshot",
        "fill_form",
    }
) | frozenset({"click", "hover", "type", "press", "fill", "select", "drag", "upload", "scroll", "snapshot"})


def _shown(target: Any) -> str:
    point = getattr(target, "coordinate", None)
    if point is not None:
        return f"point {point.x},{point.y}"
    return shown(target)


async def _none() -> None:
    return None


def _forget(task: asyncio.Task[Any]) -> None:
    """A background task's end: its failure (a dialog on a page that closed meanwhile) is not news."""
    if not task.cancelled():
        task.exception()


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


def _is_favicon(url: str) -> bool:
    return url.split("?", 1)[0].endswith("/favicon.ico")


_KEPT_NAVIGATING = "the page kept navigating"
MAX_SHOWN_HEIGHT = 7_900  # the tallest screenshot shown to a model (some refuse images over 8,000 pixels)


def _kept_navigating(hops: int) -> str:
    return (
        f"{_KEPT_NAVIGATING} ({hops} times during this action); this is the latest page."
        " It may navigate again by itself."
    )


# The viewport boxes of the elements a locator matched, without the ones with no size.
_BOXES_JS = """
(els) => els.map((e) => e.getBoundingClientRect())
  .filter((r) => r.width > 0 && r.height > 0)
  .map((r) => [r.x, r.y, r.width, r.height])
"""
