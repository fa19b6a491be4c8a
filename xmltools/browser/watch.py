"""What one session's pages report while nobody asks: console, errors, requests, dialogs, downloads, crash.

Owns the listeners on every page of the session and what they collect: the
console and the notes since the last observation (capped, see
:mod:`.collect`), the requests in flight and the main-frame navigations of
the page it follows (counted, for :mod:`.settle`), the page's latest signs of
life, the downloads (saved into the session's folder) and whether the
renderer crashed or the browser disconnected.  It follows one page, the one
:mod:`.tabs` says is current, and judges failures with the table of
:mod:`.failures` from what it knows of the session's health.  Must not import
the tabs, the targets, the handlers or the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, ConsoleMessage, Dialog, Download, Frame, Page, Request, Response
from playwright.async_api import Error as PlaywrightError

from . import scripts
from .bounds import DIALOG_GAP, DIALOG_STORM, forget
from .collect import ConsoleCollector, NoteCollector
from .failures import FailureClass, classify, first_line
from .settings import BrowserConfig

__all__ = ["MUTE_AFTER", "Watch"]

MUTE_AFTER = scripts.CONSOLE_FORWARDED  # console lines between two observations before a page counts its own


class Watch:
    """The listeners of one session's pages, and everything they collect."""

    def __init__(self, config: BrowserConfig) -> None:
        self.timeouts = config.timeouts
        self.console = ConsoleCollector(config.caps)  # since the last observation
        self.console_log = ConsoleCollector(config.caps)  # everything since the last console_logs
        self.notes = NoteCollector(config.caps)
        self.downloads_dir: Path | None = config.downloads_dir
        self._own_downloads = config.downloads_dir is None
        self.page: Page | None = None  # the page followed: the session's current tab
        self.browser: Browser | None = None
        self.inflight: set[Request] = set()
        self.navigating: set[Request] = set()  # main-frame navigation requests in flight
        self.nav_requests = 0  # main-frame navigation requests seen
        self.commits = 0  # main-frame documents committed (and same-document changes)
        self.last_net = 0.0  # the latest event of any request
        self.last_sub = 0.0  # the same, leaving out the main frame's documents (see _heard)
        self.last_dialog = 0.0
        self._dialogs_since = 0.0  # when the current run of dialogs began
        self.last_event = 0.0  # the page's latest sign of life (a console line, a request, a dialog)
        self.crashed = False
        self.disconnected = False
        self.downloads_seen = 0
        # main-frame navigations answered as an attachment: each is a download on its way, whose
        # event may come after the page has gone quiet
        self.downloads_expected = 0
        self.tasks: set[asyncio.Task[Any]] = set()
        self._silenced: set[str] = set()  # failed requests already reported another way (refused ones)
        self._listening: list[Page] = []
        self._lines = 0  # console lines heard since the last observation
        # console lines heard from each page since its document began or since the last catch_up
        self._counted: dict[Page, int] = {}
        self._muted: set[Page] = set()  # flooding pages no longer listened to for console lines

    # -- what the session asks ----------------------------------------------------------------

    def follow(self, page: Page) -> None:
        """Count the navigations of ``page`` from now on (it became the current tab)."""
        self.page = page
        self.navigating.clear()

    def revive(self) -> None:
        """A new session is opening: the last one's crash or disconnection is forgotten."""
        self.crashed = self.disconnected = False

    def attach(self, browser: Browser) -> None:
        """The session runs on ``browser``: its disconnection ends the session."""
        self.browser = browser
        browser.on("disconnected", self._on_disconnected)

    def silence(self, url: str) -> None:
        """A request to ``url`` was refused and said so: its failure is not reported again."""
        self._silenced.add(url)

    def alive(self) -> bool:
        browser = self.browser
        return not self.crashed and not self.disconnected and (browser is None or browser.is_connected())

    def classify(self, err: BaseException) -> FailureClass:
        page = self.page
        return classify(str(err), alive=self.alive(), page_open=page is not None and not page.is_closed())

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        task.add_done_callback(forget)

    def listen(self, page: Page) -> None:
        if page in self._listening:
            return
        self._listening.append(page)
        for event, handler in self._handlers().items():
            page.on(event, handler)  # type: ignore[call-overload]

    def reset(self) -> None:
        """Stop listening and forget all: nothing a closing page still reports may reach the next session."""
        for task in list(self.tasks):
            task.cancel()
        for page in self._listening:
            for event, handler in self._handlers().items():
                with contextlib.suppress(Exception):
                    page.remove_listener(event, handler)
        self._listening.clear()
        self._muted.clear()
        self._counted.clear()
        self._lines = 0
        self.page = self.browser = None
        self.console.clear()
        self.console_log.clear()
        self.notes.clear()
        self.inflight.clear()
        self.navigating.clear()
        self._silenced.clear()
        self.downloads_seen = self.downloads_expected = 0
        self.last_dialog = self._dialogs_since = 0.0

    async def remove_downloads(self) -> None:
        """The session's own (temporary) downloads folder goes, with what it holds."""
        if self._own_downloads and self.downloads_dir is not None:
            await asyncio.to_thread(shutil.rmtree, self.downloads_dir, True)
            self.downloads_dir = None

    # -- the listeners (all on the pool's loop) --------------------------------------------------

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
        }

    def _on_console(self, msg: ConsoleMessage) -> None:
        kind = str(msg.type)
        if kind == "verbose":
            return  # the browser's own advice, such as "[DOM] Password field is not contained in a form"
        self.last_event = time.monotonic()
        text = msg.text
        if kind == "error" and text.startswith("Failed to load resource"):
            return  # the same failure is reported once, with its URL, from the network events
        self.console.add(kind, text)
        self.console_log.add(kind, text)
        page = msg.page
        if page is None:
            return
        self._counted[page] = self._counted.get(page, 0) + 1
        self._lines += 1
        if self._lines >= MUTE_AFTER and page not in self._muted:
            # a flood: every line is a round trip through the driver; the page counts the rest itself
            self._muted.add(page)
            page.remove_listener("console", self._on_console)

    async def catch_up(self, bound: float) -> None:
        """Before the console is reported: what the flooding pages wrote while not listened to, read
        from the pages' own count (the last lines, and how many were left out); then listen again."""
        self._lines = 0
        for page in list(self._muted):
            self._muted.discard(page)
            if page.is_closed():
                continue
            try:
                got = await asyncio.wait_for(page.evaluate(scripts.CONSOLE_TAIL), bound)
            except (PlaywrightError, TimeoutError):
                got = None
            finally:
                page.on("console", self._on_console)
            if not got:
                self.notes.add("the page wrote console lines too fast to be counted; some were left out")
                continue
            total, tail = got
            unheard = max(0, total - self._counted.get(page, 0))
            self._counted[page] = 0  # both counts start afresh
            for collector in (self.console, self.console_log):
                collector.skip(max(0, unheard - len(tail)))
                for kind, text in tail[max(0, len(tail) - unheard) :]:
                    collector.add(kind, text)

    def _on_pageerror(self, err: Exception) -> None:
        text = str(getattr(err, "message", None) or err)
        self.console.add("pageerror", text)
        self.console_log.add("pageerror", text)

    def _main_navigation(self, req: Request) -> bool:
        page = self.page
        if page is None or not req.is_navigation_request():
            return False
        try:
            return req.frame == page.main_frame
        except PlaywrightError:
            return False  # a request of a service worker has no frame

    def _heard(self, req: Request) -> bool:
        """Time an event of ``req``; whether it is a main-frame document's.  Such a document is
        followed to its load and its DOM's quiet window, which begins once it is parsed, so its
        events do not restart the network's quiet window (``last_sub``)."""
        self.last_net = now = time.monotonic()
        main = self._main_navigation(req)
        if not main:
            self.last_sub = now
        return main

    def _on_request(self, req: Request) -> None:
        self.last_event = time.monotonic()
        self.inflight.add(req)
        if self._heard(req):
            self.navigating.add(req)
            self.nav_requests += 1

    def _on_request_done(self, req: Request) -> None:
        self.inflight.discard(req)
        self.navigating.discard(req)
        self._heard(req)

    def _on_request_failed(self, req: Request) -> None:
        self.inflight.discard(req)
        self.navigating.discard(req)
        self._heard(req)
        failure = req.failure or "failed"
        if req.url in self._silenced or _is_favicon(req.url):
            return
        if "ERR_ABORTED" in failure and req.is_navigation_request():
            return  # a navigation replaced by another one, or a download
        self.console.add("requestfailed", f"{req.method} {req.url}: {failure}")

    def _on_response(self, resp: Response) -> None:
        # answered: a body nobody reads (an unread fetch, an event stream) must not hold the page open
        self.inflight.discard(resp.request)
        main = self._heard(resp.request)
        attachment = resp.headers.get("content-disposition", "").lower().startswith("attachment")
        if attachment and main:
            self.downloads_expected += 1
        if resp.status >= 400 and not _is_favicon(resp.url):
            self.console.add(
                "httperror", f"{resp.status} {resp.status_text} {resp.request.method} {resp.url}"
            )

    def _on_framenavigated(self, frame: Frame) -> None:
        if frame.parent_frame is None:
            self._counted[frame.page] = 0  # a new document counts its console lines from naught
        if self.page is not None and frame == self.page.main_frame:
            self.commits += 1  # a new page (or view): the refs of its last snapshot are gone with it
            self.navigating.clear()  # the navigation committed; any earlier one was replaced

    def dialog_times(self) -> tuple[float, float]:
        """When the current (or last) run of dialogs began, and when its latest dialog came."""
        return self._dialogs_since, self.last_dialog

    async def storming(self) -> bool:
        """Whether the page is still raising dialogs after a run of :data:`DIALOG_STORM`: one more
        comes before the run's gap passes (so this takes at most :data:`DIALOG_GAP`)."""
        seen = self.last_dialog
        if seen - self._dialogs_since < DIALOG_STORM:
            return False
        while time.monotonic() - self.last_dialog < DIALOG_GAP:
            if self.last_dialog != seen:
                return True
            await asyncio.sleep(0.02)
        return False

    def _on_dialog(self, dialog: Dialog) -> None:
        now = time.monotonic()
        if now - self.last_dialog >= DIALOG_GAP:
            self._dialogs_since = now
        self.last_dialog = self.last_event = now
        self.notes.dialog(dialog.type, dialog.message)
        self.spawn(dialog.dismiss())

    def _on_download(self, download: Download) -> None:
        self.downloads_seen += 1
        self.spawn(self._save_download(download))

    async def _save_download(self, download: Download) -> None:
        folder = self._downloads_folder()
        name = Path(download.suggested_filename).name or "download"
        target = folder / name
        n = 1
        while target.exists():
            target = folder / f"{Path(name).stem}-{n}{Path(name).suffix}"
            n += 1
        try:
            await asyncio.wait_for(download.save_as(target), self.timeouts.navigation)
        except Exception as e:
            self.notes.add(f"a download of {name!r} failed: {first_line(e)}")
            return
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(download.delete(), self.timeouts.close)
        self.notes.add(f"a file was downloaded and saved as {target} ({target.stat().st_size:,} bytes)")

    def _downloads_folder(self) -> Path:
        if self.downloads_dir is None:
            self.downloads_dir = Path(tempfile.mkdtemp(prefix="xmltools-session-"))
        self.downloads_dir.mkdir(parents=True, exist_ok=True)
        return self.downloads_dir

    def _on_crash(self, page: Page) -> None:
        if page is self.page:
            self.crashed = True

    def _on_disconnected(self, _: object) -> None:
        self.disconnected = True


def _is_favicon(url: str) -> bool:
    return url.split("?", 1)[0].endswith("/favicon.ico")
