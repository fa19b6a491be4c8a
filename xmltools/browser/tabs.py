"""The tabs of one session: its context's pages, their short ids, the current one, and popups.

Owns the browser context of the session, the tab ids (``t1``, ``t2``, …:
short and stable within the session), which tab is current (and its DevTools
session), and following the tabs the page opens or closes by itself.  Every
page is handed to :class:`~.watch.Watch` to listen on.  Must not import the
targets' resolution, the observer, the handlers or the session.
"""

from __future__ import annotations

import contextlib
import time

from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from .bounds import Bounds, Hung
from .collect import clip
from .failures import TargetError
from .watch import Watch

__all__ = ["MAX_TABS", "Tabs"]

MAX_TABS = 20  # the open tabs of one session; a tab the page opens beyond them is closed at once


class Tabs:
    """The context of one session and its pages; ``page`` is the current tab."""

    def __init__(self, watch: Watch, bounds: Bounds) -> None:
        self.watch = watch
        self.bounds = bounds
        self.context: BrowserContext | None = None
        self.page: Page | None = None
        self.cdp: CDPSession | None = None
        self.ids: dict[Page, str] = {}  # t1, t2, …: short and stable within the session
        self.blank_start = False  # launched with no page: the first open_tab uses the blank tab
        self._opening = False  # a page this session opens itself is not a popup
        self._hooked: list[Page] = []

    def adopt(self, context: BrowserContext) -> None:
        """The context of a new session: its pages are this session's tabs."""
        self.context = context

    async def start(self) -> None:
        """Follow the pages the context opens, and take its first (a persistent context opens with one)."""
        assert self.context is not None
        self.context.on("page", self._on_context_page)
        first = [p for p in self.context.pages if not p.is_closed()]
        await self.use_page(first[0] if first else await self.new_page())

    async def new_page(self, bound: float | None = None) -> Page:
        """A new page of the context (not taken for a popup), bounded when ``bound`` is given."""
        assert self.context is not None
        self._opening = True
        try:
            made = self.context.new_page()
            return await (made if bound is None else self.bounds.bounded(made, bound))
        finally:
            self._opening = False

    def require_page(self) -> Page:
        if self.page is None:
            raise Hung("no page is open")
        return self.page

    def hook(self, page: Page) -> None:
        if page in self._hooked:
            return
        self._hooked.append(page)
        self.ids.setdefault(page, f"t{len(self.ids) + 1}")
        self.watch.listen(page)
        page.on("close", self._on_page_close)

    def open_tabs(self) -> list[Page]:
        return [p for p in self.ids if not p.is_closed()]

    def tab(self, tab_id: str) -> Page:
        """The open tab with this id; the model's mistake (TargetError) when there is none."""
        for p in self.open_tabs():
            if self.ids[p] == tab_id:
                return p
        known = ", ".join(self.ids[p] for p in self.open_tabs()) or "none"
        raise TargetError(f"there is no open tab {clip(tab_id, 40)!r}; the open tabs are {known}.")

    async def lines(self) -> tuple[str, ...]:
        """The open tabs with their titles, the current one marked; empty with one tab."""
        tabs = self.open_tabs()
        if len(tabs) < 2:
            return ()
        lines = []
        for p in tabs:
            try:
                title = await self.bounds.bounded(p.title(), self.bounds.timeouts.probe)
            except (PlaywrightError, Hung):
                title = ""
            mark = " (current)" if p is self.page else ""
            lines.append(f'{self.ids[p]} "{clip(title, 80)}" {clip(p.url, 200)}{mark}')
        return tuple(lines)

    async def select(self, tab_id: str) -> None:
        """Make the tab ``tab_id`` current and bring it to the front (TargetError: no such tab)."""
        page = self.tab(tab_id)
        if page is not self.page:
            await self.use_page(page)
            with contextlib.suppress(PlaywrightError, Hung):
                await self.bounds.bounded(page.bring_to_front(), self.bounds.timeouts.action)

    async def browser_pid(self) -> int | None:
        """The process id of the browser behind the context (None when closed)."""
        ctx = self.context
        if ctx is None or ctx.browser is None:
            return None
        cdp = await ctx.browser.new_browser_cdp_session()
        try:
            info = await cdp.send("SystemInfo.getProcessInfo")
        finally:
            with contextlib.suppress(Exception):
                await cdp.detach()
        for proc in info.get("processInfo", []):
            if proc.get("type") == "browser":
                return int(proc["id"])
        return None

    async def use_page(self, page: Page) -> None:
        """Make ``page`` the current tab."""
        self.page = page
        self.hook(page)
        self.watch.follow(page)
        self.cdp = None
        with contextlib.suppress(PlaywrightError, Hung):
            await self.ensure_cdp()

    async def ensure_cdp(self) -> CDPSession:
        """The DevTools session of the current tab, attached on first use."""
        if self.cdp is None:
            if self.context is None or self.page is None:
                raise Hung("no page is open")
            self.cdp = await self.bounds.bounded(
                self.context.new_cdp_session(self.page), self.bounds.timeouts.action
            )
        return self.cdp

    def reset(self) -> BrowserContext | None:
        """Forget every tab; the context is given back to the caller, to release."""
        ctx = self.context
        self.context = None
        self.page = self.cdp = None
        for page in self._hooked:
            with contextlib.suppress(Exception):
                page.remove_listener("close", self._on_page_close)
        self._hooked.clear()
        self.ids.clear()
        return ctx

    # -- tabs the page opens or closes by itself (on the pool's loop) ---------------------------

    def _on_context_page(self, page: Page) -> None:
        if self._opening:
            return  # the page this session opened itself
        self.watch.last_event = time.monotonic()  # a page opening tabs is busy, not stuck
        if len(self.open_tabs()) >= MAX_TABS:
            self.watch.notes.add(
                f"the page opened a tab beyond the {MAX_TABS} a session keeps open; it was closed at once"
            )
            self.watch.spawn(page.close())
            return
        self.hook(page)  # counted among the open tabs from now on
        self.watch.spawn(self._follow(page))

    async def _follow(self, page: Page) -> None:
        await self.use_page(page)
        self.watch.notes.add("a new tab opened, and you now see it (the earlier tab stays open behind it)")

    def _on_page_close(self, page: Page) -> None:
        if page is not self.page or self.context is None:
            return
        rest = [p for p in self.context.pages if not p.is_closed() and p is not page]
        if rest:
            self.watch.notes.add("the tab closed itself; you now see the previous tab")
            self.watch.spawn(self.use_page(rest[-1]))
