"""Looking at the page: the screenshot, the ARIA snapshot, and the observation built from them, capped.

Owns how a page is captured (over the DevTools protocol, WebP by default,
with Playwright's own screenshot as the fallback), the snapshot with its refs
(handed to :class:`~.targets.Targets`), the capture that is taken again when
the document changes under it, and the :class:`~xmltools.base.results.Observation`
that carries it all with what :class:`~.watch.Watch` collected.  Every text
taken from the page is capped (:class:`~.settings.Caps`).  Must not import the
handlers or the session.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from ..base.results import Observation, Point, Screenshot, Viewport
from . import scripts
from .bounds import MAX_NAVIGATIONS, Bounds, Hung, forget
from .collect import clip
from .failures import FailureClass
from .images import image_size
from .settings import BrowserConfig
from .snapshot import ref_lines, refs_in, shape
from .tabs import Tabs
from .targets import Targets
from .watch import Watch

__all__ = ["Observer", "Seen", "SnapshotRequest"]


@dataclass(frozen=True)
class SnapshotRequest:
    target: Any = None  # a ref or selector target (xmltools.actions.Target), or None for the page
    depth: int | None = None
    find: str | None = None


@dataclass(frozen=True)
class Seen:
    """One capture of the page: what the observation shows of it."""

    page: Page
    shot: Screenshot | None
    title: str
    snapshot: str | None


PROTOCOL_TRIES = 10  # protocol captures tried on a page that keeps moving, before Playwright's own


class _Moved(Exception):
    """The page moved to a new document while it was being looked at."""


class Observer:
    """How one session looks at its current page."""

    def __init__(
        self, config: BrowserConfig, tabs: Tabs, watch: Watch, targets: Targets, bounds: Bounds
    ) -> None:
        self.config = config
        self.tabs = tabs
        self.watch = watch
        self.targets = targets
        self.bounds = bounds
        self.last_url: str | None = None  # the URL of the latest observation, for a relaunch hint
        self._webp = True  # until the browser shows it cannot encode WebP
        self.masking = False  # a field received a secret in this session: screenshots paint such fields over

    async def observe(
        self,
        viewport: Viewport,
        mouse: Point | None,
        extra_notes: list[str] | None = None,
        target: str | None = None,
        captured: Seen | None = None,
    ) -> Observation:
        """The page as it is now, with everything collected since the last observation."""
        caps = self.config.caps
        seen = captured or await self.capture(viewport)
        page = seen.page
        await self.watch.catch_up(self.config.timeouts.probe)
        console, cut = self.watch.console.take()
        self.last_url = page.url
        return Observation(
            url=clip(page.url, caps.url_chars),
            title=clip(seen.title, caps.title_chars),
            console=console,
            screenshot=seen.shot,
            viewport=viewport,
            mouse=mouse,
            notes=self.watch.notes.take([*(extra_notes or []), *cut]),
            target=target,
            snapshot=seen.snapshot,
            tabs=await self.tabs.lines(),
        )

    async def capture(self, viewport: Viewport, snap: SnapshotRequest | None = None) -> Seen:
        """Title, screenshot and snapshot, as the observe mode asks; seen again if the document changes.

        After ``PROTOCOL_TRIES`` documents have changed under the protocol's capture,
        Playwright's own screenshot (PNG) is used: it copes with a page that
        keeps navigating.
        """
        t = self.config.timeouts
        mode = self.config.observe
        if snap is None and mode != "screenshot":
            snap = SnapshotRequest()
        for attempt in range(MAX_NAVIGATIONS):
            page = self.tabs.require_page()
            shoot = self._screenshot if attempt < PROTOCOL_TRIES else self._page_screenshot
            if self.masking:
                shoot = functools.partial(self._masked, page, shoot)
            try:
                title, shot, text = await asyncio.gather(
                    self.bounds.bounded(page.title(), t.action),
                    shoot() if mode != "snapshot" else _none(),
                    self._snapshot_text(page, snap, viewport) if snap is not None else _none(),
                )
                return Seen(page, shot, title, text)
            except (PlaywrightError, _Moved) as e:
                if isinstance(e, PlaywrightError) and self.watch.classify(e) is not FailureClass.TRANSIENT:
                    raise
                await asyncio.sleep(0.02)
        raise Hung("the page kept changing under the screenshot")

    async def _masked(self, page: Page, shoot: Callable[[], Awaitable[Screenshot]]) -> Screenshot:
        """A screenshot with the fields that received a secret painted over (see ``SECRET_MASK``)."""
        probe = self.config.timeouts.probe
        await self.bounds.bounded(page.evaluate(scripts.SECRET_MASK, True), probe)
        try:
            return await shoot()
        finally:
            with contextlib.suppress(PlaywrightError, Hung):
                await self.bounds.bounded(page.evaluate(scripts.SECRET_MASK, False), probe)

    async def boxes(self, selectors: Sequence[str]) -> list[tuple[float, float, float, float]]:
        """The viewport boxes of every element the selectors match; none for a bad selector."""
        page = self.tabs.require_page()
        out: list[tuple[float, float, float, float]] = []
        for sel in selectors:
            try:
                found = await self.bounds.bounded(
                    page.locator(sel).evaluate_all(_BOXES_JS), self.config.timeouts.action
                )
            except PlaywrightError:
                continue
            out.extend((float(x), float(y), float(w), float(h)) for x, y, w, h in found)
        return out

    async def _page_screenshot(self) -> Screenshot:
        """Playwright's own screenshot (PNG or JPEG): slower, but it copes with any page."""
        c = self.config
        t = c.timeouts
        page = self.tabs.require_page()
        kind: Literal["png", "jpeg"] = "jpeg" if c.screenshot_format == "jpeg" else "png"
        quality = c.screenshot_quality if kind == "jpeg" else None
        commits = self.watch.commits
        try:
            data = await self.bounds.bounded(
                page.screenshot(type=kind, quality=quality, scale="device", timeout=t.screenshot * 1000),
                t.screenshot + 1,
            )
        except (PlaywrightError, Hung) as e:
            if self.watch.commits != commits:
                raise _Moved("the page moved to a new document during the screenshot") from e
            raise
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
        cdp = await self.tabs.ensure_cdp()
        commits = self.watch.commits
        capture = asyncio.ensure_future(cdp.send("Page.captureScreenshot", params))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + t.screenshot
        try:
            while not capture.done():
                await asyncio.wait({capture}, timeout=0.02)
                if capture.done():
                    break
                if self.watch.commits != commits:
                    raise _Moved("the page committed a new document during the screenshot")
                if loop.time() >= deadline:
                    raise Hung(f"no screenshot within {t.screenshot:g} s")
            res = capture.result()
        except PlaywrightError as e:
            if self.watch.commits != commits or "unable to capture" in str(e).lower():
                # the document was being replaced (its navigation is not always seen yet): look again
                raise _Moved("the page moved to a new document during the screenshot") from e
            if fmt != "webp" or "format" not in str(e).lower():
                self.tabs.cdp = None  # the next try attaches again
                raise
            self._webp = False  # this browser cannot encode WebP: PNG from now on
            return await self._screenshot()
        finally:
            if not capture.done():
                capture.cancel()
            capture.add_done_callback(forget)
        data = base64.b64decode(res["data"])
        w, h = image_size(data)
        return Screenshot(data=data, format=fmt, width=w, height=h)

    async def page_snapshot(self, viewport: Viewport) -> str:
        """The current page's AI snapshot with its boxes, shaped to fit; its refs are the ones the
        next action may name (a host showing the page to a model outside the conversation)."""
        page = self.tabs.require_page()
        bound = self.config.timeouts.screenshot
        raw = await self.bounds.bounded(
            page.aria_snapshot(mode="ai", boxes=True, timeout=bound * 1000), bound + 1
        )
        self.targets.learn(refs_in(raw), ref_lines(raw), whole=True)
        c = self.config
        return shape(
            raw, max_chars=c.max_snapshot_chars, viewport_height=viewport.height, keep_boxes=True
        ).text

    async def _snapshot_text(self, page: Page, req: SnapshotRequest, viewport: Viewport) -> str:
        """Playwright's AI snapshot of the page or of a target, shaped to fit (see .snapshot)."""
        c = self.config
        bound = c.timeouts.screenshot
        if req.target is not None:
            loc = await self.targets.locate(req.target)
            raw = await self.bounds.bounded(
                loc.aria_snapshot(mode="ai", boxes=True, depth=req.depth, timeout=bound * 1000), bound + 1
            )
            self.targets.learn(refs_in(raw), ref_lines(raw), whole=False)
        else:
            loading = next(iter(self.watch.navigating), None)
            if loading is not None:
                # between two documents, the page it leaves answers no snapshot: say what is coming
                return f"- document: still loading {clip(loading.url, 200)}"
            # boxes only when the page is too long to show whole: they order what is shown, and cost time
            raw = await self.bounds.bounded(
                page.aria_snapshot(mode="ai", depth=req.depth, timeout=bound * 1000), bound + 1
            )
            if len(raw) > c.max_snapshot_chars or c.snapshot_boxes:
                raw = await self.bounds.bounded(
                    page.aria_snapshot(mode="ai", boxes=True, depth=req.depth, timeout=bound * 1000),
                    bound + 1,
                )
            self.targets.learn(refs_in(raw), ref_lines(raw), whole=True)
        shaped = shape(
            raw,
            max_chars=c.max_snapshot_chars,
            viewport_height=viewport.height,
            find=req.find,
            keep_boxes=c.snapshot_boxes,
        )
        return shaped.text


async def _none() -> None:
    return None


# The viewport boxes of the elements a locator matched, without the ones with no size.
_BOXES_JS = """
(els) => els.map((e) => e.getBoundingClientRect())
  .filter((r) => r.width > 0 && r.height > 0)
  .map((r) => [r.x, r.y, r.width, r.height])
"""
