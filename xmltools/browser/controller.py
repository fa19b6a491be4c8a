"""The browser controller: runs each action in a real Chromium and observes the page.

This package is the only place that imports Playwright.  The core is async;
:class:`~xmltools.browser.sync.SyncBrowser` wraps it for scripts.

Local mode starts Chromium itself (a fresh profile in a temporary folder,
headless, with the flags a closed network needs) and connects to it over the
DevTools protocol, so that the process is ours to stop or kill.  Remote mode
connects to a running Chrome and only ever disconnects from it.

Honesty rules: every wait has a bound; hitting a bound is reported (as a note
in the observation, or as a :class:`~xmltools.results.Failure`), never
swallowed; a failed action is never reported as a success.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from playwright.async_api import (
    Browser,
    BrowserContext,
    CDPSession,
    ConsoleMessage,
    Dialog,
    Download,
    Page,
    Playwright,
    Request,
    Response,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError

from ..errors import BrowserError, ConfigError, RemoteBrowserError
from ..results import ConsoleEntry, Failure, Observation, Point, Screenshot, Viewport
from ..tools import DEFAULT_VIEWPORT
from .images import image_size
from .locate import find_chromium

__all__ = [
    "CHROMIUM_FLAGS",
    "BrowserConfig",
    "BrowserSession",
    "Timeouts",
    "discover_remote",
]

T = TypeVar("T")

# Flags for a closed network and a quiet, reproducible browser.
CHROMIUM_FLAGS = (
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-quic",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--enable-features=CDPScreenshotNewSurface",  # faster screenshots over the DevTools protocol
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    "--hide-scrollbars",
    "--mute-audio",
    # an automated browser must not slow down pages it thinks nobody looks at
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--disable-ipc-flooding-protection",
    "--disable-hang-monitor",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-prompt-on-repost",
    "--disable-back-forward-cache",
    "--force-color-profile=srgb",
)

_DEVTOOLS_RE = re.compile(r"DevTools listening on (ws://\S+)")

# Installed in every page before its own scripts: the time of the last DOM
# mutation, and the short timers the page has scheduled (so that the settle
# step can wait for work the page announced it will do).
_INIT_SCRIPT = """
(() => {
  if (window.__xt) return;
  const st = window.__xt = { last: 0, timers: new Map(), st: window.setTimeout.bind(window) };
  const ct = window.clearTimeout.bind(window);
  window.setTimeout = function (fn, delay, ...args) {
    let id;
    const d = Number(delay) || 0;
    if (typeof fn !== 'function' || d > 1000) return st.st(fn, delay, ...args);
    id = st.st(function () { st.timers.delete(id); return fn.apply(this, arguments); }, delay, ...args);
    st.timers.set(id, performance.now() + d);
    return id;
  };
  window.clearTimeout = function (id) { st.timers.delete(id); return ct(id); };
  new MutationObserver(() => { st.last = performance.now(); })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  // new tabs the page asks for: window.open, and links with a target
  st.popups = 0;
  const open = window.open;
  window.open = function (...args) { st.popups++; return open.apply(this, args); };
  st.downloads = 0;
  document.addEventListener('click', (e) => {
    const a = e.target && e.target.closest ? e.target.closest('a[href]') : null;
    if (!a) return;
    if (a.hasAttribute('download')) st.downloads++;
    else if (!['', '_self', '_parent', '_top'].includes(a.target)) st.popups++;
  }, true);
})();
"""

# Resolves when the timers pending at the start have run and the DOM has been
# quiet for `quiet` ms, or when `max` ms have passed.
_SETTLE_JS = """
async ([quiet, max]) => {
  const st = window.__xt;
  const t0 = performance.now();
  if (!st) return { settled: true, waited: 0, popups: 0, downloads: 0 };
  const popups = st.popups, downloads = st.downloads;
  st.popups = 0;
  st.downloads = 0;
  const ids = [...st.timers.entries()].filter(([, due]) => due <= t0 + max).map(([id]) => id);
  for (;;) {
    const now = performance.now();
    if (now - t0 >= max) return { settled: false, waited: now - t0, popups, downloads };
    const pending = ids.some((id) => st.timers.has(id));
    const idle = now - st.last;
    if (!pending && idle >= quiet) return { settled: true, waited: now - t0, popups, downloads };
    await new Promise((r) => st.st(r, pending ? 10 : Math.max(1, quiet - idle)));
  }
}
"""

# Decodes two images in the browser and returns their similarity: 1 - mean absolute
# channel difference / 255 (0 when the sizes differ).
_SIMILARITY_JS = """
async ([a, b]) => {
  const load = async (url) => createImageBitmap(await (await fetch(url)).blob());
  const [ia, ib] = await Promise.all([load(a), load(b)]);
  if (ia.width !== ib.width || ia.height !== ib.height) return 0;
  const px = (img) => {
    const c = new OffscreenCanvas(img.width, img.height);
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    return g.getImageData(0, 0, img.width, img.height).data;
  };
  const da = px(ia), db = px(ib);
  let sum = 0;
  for (let i = 0; i < da.length; i += 4) {
    sum += Math.abs(da[i] - db[i]) + Math.abs(da[i + 1] - db[i + 1]) + Math.abs(da[i + 2] - db[i + 2]);
  }
  return 1 - sum / (da.length / 4 * 3 * 255);
}
"""

_SCROLL_JS = """
(sign) => {
  const y = window.scrollY;
  window.scrollBy({ top: sign * window.innerHeight, behavior: 'instant' });
  return window.scrollY - y;
}
"""

_HIT_JS = """
([x, y]) => {
  const el = document.elementFromPoint(x, y);
  if (!el) return null;
  if (el === document.documentElement || el === document.body) return '';
  const tag = el.tagName.toLowerCase();
  const text = (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().slice(0, 40);
  return text ? `${tag} "${text}"` : tag;
}
"""


@dataclass(frozen=True)
class Timeouts:
    """Every bound, in seconds."""

    launch: float = 30.0  # start Chromium and connect to it
    navigation: float = 15.0  # a page load
    action: float = 5.0  # one input action or protocol call
    settle: float = 3.0  # the longest extra wait for a page to settle after an action
    dom_quiet: float = 0.1  # the DOM must be still this long to count as settled
    network_quiet: float = 0.25  # no request in flight for this long after an action that made requests
    screenshot: float = 10.0
    close: float = 5.0
    discovery: float = 1.0  # asking a remote Chrome for its endpoint


@dataclass(frozen=True)
class BrowserConfig:
    """How to start (or reach) the browser, and what to observe."""

    executable: str | None = None  # local mode: a path; None finds one
    remote: str | None = None  # remote mode: an endpoint (http://host:9222 or ws://...), or "auto"
    headless: bool = True
    viewport: Viewport = DEFAULT_VIEWPORT
    screenshot_format: Literal["webp", "png", "jpeg"] = "webp"
    screenshot_quality: int = 75
    device_scale_factor: float = 1.0
    downloads_dir: Path | None = None  # the session's folder; a temporary one by default
    extra_args: tuple[str, ...] = ()
    timeouts: Timeouts = field(default_factory=Timeouts)

    def __post_init__(self) -> None:
        if not 0 <= self.screenshot_quality <= 100:
            raise ConfigError("screenshot_quality must be 0 to 100")
        if self.device_scale_factor <= 0:
            raise ConfigError("device_scale_factor must be positive")


class _Hung(Exception):
    """A protocol call passed its bound: the page or the browser stopped answering."""


def discover_remote(
    hosts: tuple[str, ...] = ("127.0.0.1", "localhost"), port: int = 9222, timeout: float = 1.0
) -> str:
    """The DevTools WebSocket URL of a Chrome listening on ``port``, or RemoteBrowserError."""
    tried = []
    for host in hosts:
        url = f"http://{host}:{port}/json/version"
        tried.append(url)
        with (
            contextlib.suppress(OSError, ValueError),
            urllib.request.urlopen(url, timeout=timeout) as r,  # loopback only
        ):
            ws = json.loads(r.read().decode()).get("webSocketDebuggerUrl")
            if ws:
                return str(ws)
    raise RemoteBrowserError(_remote_help(", ".join(tried)))


def _remote_help(where: str) -> str:
    return (
        f"no Chrome answered at {where}.\n"
        "Start one with remote debugging, using a profile folder of its own (Chrome refuses"
        " remote debugging on its default profile):\n"
        "  chromium --remote-debugging-port=9222 --user-data-dir=/tmp/xmltools-chrome\n"
        "or use local mode, which starts a browser by itself."
    )


def _resolve_endpoint(endpoint: str, timeout: float) -> str:
    if endpoint == "auto":
        return discover_remote(timeout=timeout)
    if endpoint.startswith(("ws://", "wss://")):
        return endpoint
    m = re.fullmatch(r"(https?://[^/]+)/?", endpoint)
    if not m:
        raise ConfigError(f"remote endpoint {endpoint!r}: use http://HOST:PORT, ws://..., or 'auto'")
    try:
        with urllib.request.urlopen(m.group(1) + "/json/version", timeout=timeout) as r:
            ws = json.loads(r.read().decode()).get("webSocketDebuggerUrl")
    except (OSError, ValueError) as e:
        raise RemoteBrowserError(_remote_help(endpoint) + f"\n({e})") from e
    if not ws:
        raise RemoteBrowserError(f"{endpoint} answered, but gave no webSocketDebuggerUrl")
    return str(ws)


class BrowserSession:
    """One isolated browser session.  Use ``async with BrowserSession(cfg) as b:``.

    Every action method returns an :class:`Observation` on success or a
    :class:`Failure`; ``close()`` returns None or a Failure.  Nothing here
    raises for a page that misbehaves; host mistakes (a missing browser, an
    unreachable remote) raise :class:`~xmltools.errors.BrowserError` from
    ``launch`` only when ``raise_launch_errors`` is set, and are otherwise
    reported as a Failure of kind ``launch``.
    """

    def __init__(self, config: BrowserConfig | None = None) -> None:
        self.config = config or BrowserConfig()
        self.viewport = self.config.viewport
        self.mouse: Point | None = None
        self._pw: Playwright | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._profile: str | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._cdp: CDPSession | None = None
        self._console: list[ConsoleEntry] = []
        self._notes: list[str] = []
        self._inflight: set[Request] = set()
        self._last_net = 0.0
        self._loading = False
        self._crashed = False
        self._disconnected = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._own_page = False
        self._hooked: list[Page] = []  # pages whose events this session listens to
        self._downloads_seen = 0
        self._action_started = 0.0
        self._scratch: Page | None = None
        self._own_downloads = self.config.downloads_dir is None
        self.downloads_dir: Path | None = self.config.downloads_dir
        self.browser_version = ""
        self.mode: Literal["local", "remote"] = "remote" if self.config.remote else "local"

    # -- lifecycle -----------------------------------------------------------------

    async def __aenter__(self) -> BrowserSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    @property
    def is_open(self) -> bool:
        return self._page is not None and not self._disconnected and not self._crashed

    @property
    def pid(self) -> int | None:
        """The local browser's process id (None in remote mode or when closed)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def page(self) -> Page | None:
        return self._page

    async def _playwright(self) -> Playwright:
        if self._pw is None:
            self._pw = await async_playwright().start()
        return self._pw

    async def _start_local(self) -> str:
        t = self.config.timeouts
        exe = find_chromium(self.config.executable).path
        self._profile = tempfile.mkdtemp(prefix="xmltools-profile-")
        args = [
            exe,
            "--remote-debugging-port=0",
            f"--user-data-dir={self._profile}",
            *CHROMIUM_FLAGS,
            *self.config.extra_args,
        ]
        if self.config.headless:
            args.append("--headless=new")
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        args.append("about:blank")
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + t.launch
        stderr = self._proc.stderr
        assert stderr is not None
        os.set_blocking(stderr.fileno(), False)
        seen = b""
        while loop.time() < deadline:
            with contextlib.suppress(BlockingIOError, TypeError):
                chunk = stderr.read()
                if chunk:
                    seen += chunk
            m = _DEVTOOLS_RE.search(seen.decode(errors="replace"))
            if m:
                self._drain_stderr()
                return m.group(1)
            if self._proc.poll() is not None:
                tail = seen.decode(errors="replace").strip().splitlines()[-5:]
                raise BrowserError(
                    f"Chromium ({exe}) exited at start-up with code {self._proc.returncode}: "
                    + (" | ".join(tail) or "no output")
                )
            await asyncio.sleep(0.02)
        raise BrowserError(f"Chromium ({exe}) did not open its DevTools port within {t.launch:g} s")

    def _drain_stderr(self) -> None:
        """Keep reading the browser's stderr so that it can never block on a full pipe."""
        proc = self._proc
        if proc is None or proc.stderr is None:
            return
        fd = proc.stderr.fileno()
        loop = asyncio.get_running_loop()

        def reader() -> None:
            try:
                if not os.read(fd, 65536):
                    loop.remove_reader(fd)
            except OSError:
                loop.remove_reader(fd)

        loop.add_reader(fd, reader)

    async def _open(self) -> None:
        t = self.config.timeouts
        pw = await self._playwright()
        if self.config.remote:
            endpoint = await asyncio.to_thread(_resolve_endpoint, self.config.remote, t.discovery)
            is_local = False
        else:
            endpoint = await self._start_local()
            is_local = True
        self._browser = await self._bounded(
            pw.chromium.connect_over_cdp(endpoint, timeout=t.launch * 1000, is_local=is_local), t.launch
        )
        self.browser_version = self._browser.version
        self._browser.on("disconnected", self._on_disconnected)
        if self.downloads_dir is None:
            self.downloads_dir = Path(tempfile.mkdtemp(prefix="xmltools-session-"))
        self.downloads_dir.mkdir(parents=True, exist_ok=True)
        self._context = await self._bounded(
            self._browser.new_context(
                viewport={"width": self.viewport.width, "height": self.viewport.height},
                device_scale_factor=self.config.device_scale_factor,
                accept_downloads=True,
            ),
            t.action,
        )
        await self._bounded(self._context.add_init_script(_INIT_SCRIPT), t.action)
        self._context.on("page", self._on_new_page)
        self._own_page = True
        page = await self._bounded(self._context.new_page(), t.action)
        self._own_page = False
        await self._use_page(page)
        self._crashed = False
        self._disconnected = False

    async def _use_page(self, page: Page) -> None:
        self._page = page
        self._loading = False
        self._inflight.clear()
        if page not in self._hooked:
            self._hooked.append(page)
            page.on("console", self._on_console)
            page.on("pageerror", self._on_pageerror)
            page.on("request", self._on_request)
            page.on("requestfinished", self._on_request_done)
            page.on("requestfailed", self._on_request_failed)
            page.on("response", self._on_response)
            page.on("dialog", self._on_dialog)
            page.on("download", self._on_download)
            page.on("crash", self._on_crash)
            page.on("load", self._on_load)
            page.on("close", self._on_page_close)
        assert self._context is not None
        self._cdp = await self._bounded(self._context.new_cdp_session(page), self.config.timeouts.action)

    async def close(self) -> Failure | None:
        """Close the browser (local) or our context in it (remote).  Bounded; kills if it must."""
        failure: Failure | None = None
        if self._disconnected and self._page is not None:
            failure = Failure(
                kind="closed", message="the browser had already gone away.", browser_closed=True
            )
        await self._teardown()
        return failure

    async def _teardown(self) -> None:
        t = self.config.timeouts
        for task in list(self._tasks):
            task.cancel()
        ctx, browser = self._context, self._browser
        self._page = self._cdp = self._scratch = None
        self._hooked.clear()
        self._context = self._browser = None
        if ctx is not None and not self._disconnected:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ctx.close(), t.close)
        if browser is not None:
            # over CDP this disconnects; a remote Chrome keeps running, a local one is stopped below
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), t.close)
        await self._stop_process()
        self._inflight.clear()
        self._loading = False
        self.mouse = None

    async def _stop_process(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stderr is not None:
                with contextlib.suppress(Exception):
                    asyncio.get_running_loop().remove_reader(proc.stderr.fileno())
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                for _ in range(50):
                    if proc.poll() is not None:
                        break
                    await asyncio.sleep(0.05)
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    await asyncio.to_thread(proc.wait, 5)
            if proc.stderr is not None:
                proc.stderr.close()
        if self._profile:
            await asyncio.to_thread(shutil.rmtree, self._profile, True)
            self._profile = None

    async def shutdown(self) -> None:
        """Close the browser and stop Playwright.  Safe to call more than once."""
        await self._teardown()
        if self._pw is not None:
            pw, self._pw = self._pw, None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(pw.stop(), self.config.timeouts.close)
        if self._own_downloads and self.downloads_dir is not None and not any(self.downloads_dir.iterdir()):
            shutil.rmtree(self.downloads_dir, ignore_errors=True)

    # -- events -------------------------------------------------------------------

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_disconnected(self, _: Browser) -> None:
        self._disconnected = True

    def _on_console(self, msg: ConsoleMessage) -> None:
        if str(msg.type) == "verbose":
            return  # the browser's own advice (such as "[DOM] Password field is not contained in a form")
        self._console.append(ConsoleEntry(type=msg.type, text=msg.text))

    def _on_pageerror(self, err: Exception) -> None:
        text = getattr(err, "message", None) or str(err)
        self._console.append(ConsoleEntry(type="pageerror", text=str(text)))

    def _on_request(self, req: Request) -> None:
        self._inflight.add(req)
        self._last_net = time.monotonic()
        if req.is_navigation_request() and self._page is not None and req.frame == self._page.main_frame:
            self._loading = True

    def _on_request_done(self, req: Request) -> None:
        self._inflight.discard(req)
        self._last_net = time.monotonic()

    def _on_request_failed(self, req: Request) -> None:
        self._inflight.discard(req)
        self._last_net = time.monotonic()
        failure = req.failure or "failed"
        if "ERR_ABORTED" in failure and req.is_navigation_request():
            return  # a navigation replaced by another one, or a download
        self._console.append(ConsoleEntry(type="requestfailed", text=f"{req.method} {req.url}: {failure}"))
        if req.is_navigation_request() and self._page is not None and req.frame == self._page.main_frame:
            self._loading = False

    def _on_response(self, resp: Response) -> None:
        if resp.status >= 400:
            self._console.append(
                ConsoleEntry(
                    type="httperror",
                    text=f"{resp.status} {resp.status_text} {resp.request.method} {resp.url}",
                )
            )

    def _on_load(self, page: Page) -> None:
        if page is self._page:
            self._loading = False

    def _on_dialog(self, dialog: Dialog) -> None:
        self._notes.append(f"a {dialog.type} dialog was dismissed: {dialog.message!r}")
        self._spawn(dialog.dismiss())

    def _on_download(self, download: Download) -> None:
        self._downloads_seen += 1
        self._spawn(self._save_download(download))

    async def _save_download(self, download: Download) -> None:
        assert self.downloads_dir is not None
        name = Path(download.suggested_filename).name or "download"
        target = self.downloads_dir / name
        n = 1
        while target.exists():
            target = self.downloads_dir / f"{Path(name).stem}-{n}{Path(name).suffix}"
            n += 1
        try:
            await asyncio.wait_for(download.save_as(target), self.config.timeouts.navigation)
        except Exception as e:
            self._notes.append(f"a download of {name!r} failed: {e}")
            return
        self._notes.append(f"a file was downloaded and saved as {target} ({target.stat().st_size} bytes)")

    def _on_crash(self, page: Page) -> None:
        if page is self._page:
            self._crashed = True

    def _on_new_page(self, page: Page) -> None:
        if self._own_page:
            return  # the page this session opened itself, not a popup
        self._spawn(self._follow(page))

    async def _follow(self, page: Page) -> None:
        await self._use_page(page)
        self._loading = True
        self._notes.append("a new tab opened, and you now see it (the earlier tab stays open behind it)")

    def _on_page_close(self, page: Page) -> None:
        if page is self._page and self._context is not None:
            rest = [p for p in self._context.pages if not p.is_closed() and p is not page]
            if rest:
                self._notes.append("the tab closed itself; you now see the previous tab")
                self._spawn(self._use_page(rest[-1]))

    # -- helpers ------------------------------------------------------------------

    async def _bounded(self, aw: Awaitable[T], seconds: float) -> T:
        try:
            return await asyncio.wait_for(aw, seconds)
        except TimeoutError as e:
            raise _Hung(f"no answer within {seconds:g} s") from e

    def _require_page(self) -> Page:
        if self._page is None:
            raise _Hung("no page is open")
        return self._page

    async def _settle(self) -> list[str]:
        """Wait, within bounds, until the page has loaded, the network is quiet and the DOM is still.

        If the page asked for a new tab, wait for that tab and settle it too.
        """
        notes: list[str] = []
        for _ in range(3):  # the page, then at most two new tabs in a row
            page = self._require_page()
            popups = await self._settle_page(notes)
            if not popups:
                break
            deadline = asyncio.get_running_loop().time() + self.config.timeouts.settle
            while self._page is page and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
                if self._tasks:
                    await asyncio.wait(list(self._tasks), timeout=self.config.timeouts.settle)
            if self._page is page:
                notes.append("the page asked for a new tab, but none opened")
                break
        return notes

    async def _settle_page(self, notes: list[str]) -> int:
        t = self.config.timeouts
        loop = asyncio.get_running_loop()
        await asyncio.sleep(0)
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=t.settle)
        if self._loading:
            deadline = loop.time() + t.navigation
            while self._loading and loop.time() < deadline and not self._crashed:
                await asyncio.sleep(0.01)
            if self._loading:
                notes.append(
                    f"the page had not finished loading after {t.navigation:g} s; this is how it looked then"
                )
        deadline = loop.time() + t.settle
        if self._inflight or self._last_net >= self._action_started:
            while loop.time() < deadline:
                if not self._inflight and time.monotonic() - self._last_net >= t.network_quiet:
                    break
                await asyncio.sleep(0.02)
            else:
                notes.append(f"{len(self._inflight)} network requests were still open after {t.settle:g} s")
        page = self._require_page()
        budget = max(0.05, deadline - loop.time())
        res = await self._bounded(
            page.evaluate(_SETTLE_JS, [t.dom_quiet * 1000, budget * 1000]), budget + t.action
        )
        if not isinstance(res, dict):
            return 0
        if not res.get("settled", True):
            notes.append(f"the page was still changing after {t.settle:g} s; this is how it looked then")
        expected = int(res.get("downloads") or 0)
        if expected:
            # the page started a download: wait (bounded) until the browser reports it and it is saved
            limit = loop.time() + t.settle
            while self._downloads_seen < expected and loop.time() < limit:
                await asyncio.sleep(0.01)
            self._downloads_seen = 0
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=t.navigation)
        return int(res.get("popups") or 0)

    async def _screenshot(self) -> Screenshot:
        fmt = self.config.screenshot_format
        t = self.config.timeouts
        cdp = self._cdp
        if cdp is None:
            raise _Hung("no page is open")
        params: dict[str, Any] = {"format": fmt, "captureBeyondViewport": False, "fromSurface": True}
        if fmt != "png":
            params["quality"] = self.config.screenshot_quality
        if self.config.device_scale_factor != 1:
            # A clipped protocol capture would drop this page's emulated pixel ratio, so Playwright's
            # own screenshot takes this case; it has no WebP, which then falls back to PNG.
            page = self._require_page()
            kind: Literal["png", "jpeg"] = "jpeg" if fmt == "jpeg" else "png"
            quality = self.config.screenshot_quality if kind == "jpeg" else None
            data = await self._bounded(
                page.screenshot(type=kind, quality=quality, scale="device", timeout=t.screenshot * 1000),
                t.screenshot + 1,
            )
            w, h = image_size(data)
            return Screenshot(data=data, format=kind, width=w, height=h)
        try:
            res = await self._bounded(cdp.send("Page.captureScreenshot", params), t.screenshot)
        except PlaywrightError:
            if fmt == "png":
                raise
            fmt = "png"  # this browser cannot encode the chosen format: fall back to PNG
            params = {k: v for k, v in params.items() if k != "quality"} | {"format": "png"}
            res = await self._bounded(cdp.send("Page.captureScreenshot", params), t.screenshot)
        data = base64.b64decode(res["data"])
        w, h = image_size(data)
        return Screenshot(data=data, format=fmt, width=w, height=h)

    async def similarity(self, a: Screenshot, b: Screenshot) -> float:
        """How alike two screenshots are, from 0 to 1, decoded by the browser itself.

        Runs in a scratch context of its own, so the page under test is not touched.
        Needs an open browser.
        """
        if self._browser is None or self._disconnected:
            raise BrowserError("comparing screenshots needs an open browser")
        if self._scratch is None or self._scratch.is_closed():
            ctx = await self._bounded(self._browser.new_context(), self.config.timeouts.action)
            self._scratch = await self._bounded(ctx.new_page(), self.config.timeouts.action)
        res = await self._bounded(
            self._scratch.evaluate(_SIMILARITY_JS, [a.data_url(), b.data_url()]),
            self.config.timeouts.screenshot,
        )
        return float(res)

    async def observe(self, extra_notes: list[str] | None = None) -> Observation:
        page = self._require_page()
        t = self.config.timeouts
        # the title's round trip overlaps the screenshot's encoding
        shot, title = await asyncio.gather(self._screenshot(), self._bounded(page.title(), t.action))
        console, self._console = self._console, []
        notes = [*self._notes, *(extra_notes or [])]
        self._notes = []
        return Observation(
            url=page.url,
            title=title,
            console=tuple(console),
            screenshot=shot,
            viewport=self.viewport,
            mouse=self.mouse,
            notes=tuple(notes),
        )

    async def _run(self, name: str, body: Callable[[], Awaitable[list[str] | None]]) -> Observation | Failure:
        """Run an action's body, settle, observe; turn every way of failing into an honest Failure."""
        if self._page is None:
            return Failure(kind="closed", message="the browser is not open.", browser_closed=True)
        if self._disconnected:
            await self._teardown()
            return Failure(kind="closed", message="the browser process has exited.", browser_closed=True)
        self._action_started = time.monotonic()
        try:
            pre = await body()
            if self._crashed:
                raise PlaywrightError("Target crashed")
            notes = await self._settle()
            return await self.observe([*(pre or []), *notes])
        except _NoTarget as e:
            return Failure(kind="no_target", message=str(e), observation=await self._try_observe())
        except _Navigation as e:
            return Failure(kind="navigation", message=str(e), observation=await self._try_observe())
        except _Hung as e:
            return await self._recover(
                name, f"the page stopped answering ({e}); a script may be stuck in a loop."
            )
        except PlaywrightError as e:
            return await self._lost(name, e)

    async def _try_observe(self) -> Observation | None:
        try:
            return await self.observe()
        except Exception:
            return None

    async def _recover(self, name: str, message: str) -> Failure:
        if self._crashed or self._disconnected:
            return await self._lost(name, PlaywrightError(message))
        await self._teardown()
        return Failure(kind="timeout", message=f"the {name} action got {message}", browser_closed=True)

    async def _lost(self, name: str, err: Exception) -> Failure:
        crashed = self._crashed or "crash" in str(err).lower()
        gone = self._disconnected or (self._proc is not None and self._proc.poll() is not None)
        await self._teardown()
        if crashed:
            return Failure(
                kind="crashed", message="the page's renderer process crashed.", browser_closed=True
            )
        if gone:
            return Failure(kind="closed", message="the browser process has exited.", browser_closed=True)
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return Failure(
            kind="internal", message=f"the browser reported an error: {first}", browser_closed=True
        )

    # -- actions ------------------------------------------------------------------

    async def launch(self, url: str) -> Observation | Failure:
        """Open the browser (closing an open one first) at ``url``."""
        if self._browser is not None or self._proc is not None:
            await self._teardown()
        try:
            await self._open()
        except (BrowserError, ConfigError) as e:
            await self._teardown()
            return Failure(kind="launch", message=str(e), browser_closed=True)
        except _Hung as e:
            await self._teardown()
            return Failure(
                kind="launch", message=f"the browser did not answer at start-up ({e}).", browser_closed=True
            )
        except PlaywrightError as e:
            await self._teardown()
            return Failure(
                kind="launch", message=f"could not connect to the browser: {e}", browser_closed=True
            )

        async def body() -> list[str]:
            return await self._goto(url)

        return await self._run("launch", body)

    async def _goto(self, url: str) -> list[str]:
        page = self._require_page()
        t = self.config.timeouts
        try:
            await self._bounded(
                page.goto(url, wait_until="commit", timeout=t.navigation * 1000), t.navigation + 1
            )
        except PlaywrightError as e:
            msg = str(e).splitlines()[0]
            if "Timeout" in msg:
                raise _Navigation(f"{url} sent no answer within {t.navigation:g} s.") from e
            raise _Navigation(f"{url} could not be opened: {msg.removeprefix('Page.goto: ')}") from e
        except _Hung as e:
            raise _Navigation(f"{url} sent no answer within {t.navigation:g} s.") from e
        self._loading = True
        notes: list[str] = []
        try:
            await self._bounded(
                page.wait_for_load_state("load", timeout=t.navigation * 1000), t.navigation + 1
            )
            self._loading = False
        except (PlaywrightError, _Hung):
            if self._crashed:
                raise
            self._loading = False
            notes.append(
                f"the page had not finished loading after {t.navigation:g} s; this is how it looked then"
            )
        return notes

    async def _point_check(self, p: Point) -> str:
        page = self._require_page()
        hit = await self._bounded(page.evaluate(_HIT_JS, [p.x, p.y]), self.config.timeouts.action)
        if hit is None or hit == "":
            raise _NoTarget(
                f"nothing is at {p.x},{p.y}: only the page background is there."
                " Look at the screenshot and aim at an element."
            )
        return str(hit)

    async def click(self, p: Point) -> Observation | Failure:
        async def body() -> list[str]:
            await self._point_check(p)
            page = self._require_page()
            await self._bounded(page.mouse.click(p.x, p.y), self.config.timeouts.action)
            self.mouse = p
            return []

        return await self._run("click", body)

    async def hover(self, p: Point) -> Observation | Failure:
        async def body() -> list[str]:
            page = self._require_page()
            await self._bounded(page.mouse.move(p.x, p.y), self.config.timeouts.action)
            self.mouse = p
            return []

        return await self._run("hover", body)

    async def type(self, text: str) -> Observation | Failure:
        async def body() -> list[str]:
            page = self._require_page()
            await self._bounded(page.keyboard.type(text), self.config.timeouts.action + len(text) * 0.01)
            return []

        return await self._run("type", body)

    async def press(self, keys: str) -> Observation | Failure:
        async def body() -> list[str]:
            page = self._require_page()
            await self._bounded(page.keyboard.press(keys), self.config.timeouts.action)
            return []

        return await self._run("press", body)

    async def scroll(self, direction: Literal["up", "down"]) -> Observation | Failure:
        sign = 1 if direction == "down" else -1

        async def body() -> list[str]:
            page = self._require_page()
            moved = await self._bounded(
                page.evaluate(_SCROLL_JS, sign),
                self.config.timeouts.action,
            )
            return (
                []
                if moved
                else [f"the page did not move: it is already at the {'bottom' if sign > 0 else 'top'}"]
            )

        return await self._run(f"scroll_{direction}", body)

    async def resize(self, size: Viewport) -> Observation | Failure:
        async def body() -> list[str]:
            page = self._require_page()
            await self._bounded(
                page.set_viewport_size({"width": size.width, "height": size.height}),
                self.config.timeouts.action,
            )
            self.viewport = size
            return []

        return await self._run("resize", body)

    async def run(self, action: object) -> Observation | Failure | None:
        """Run a typed action from :mod:`xmltools.tools`; ``close`` returns None (or a Failure)."""
        from ..tools import Click, Close, Hover, Launch, Press, Resize, ScrollDown, ScrollUp, Type

        if isinstance(action, Launch):
            return await self.launch(action.url)
        if isinstance(action, Hover):
            return await self.hover(action.coordinate)
        if isinstance(action, Click):
            return await self.click(action.coordinate)
        if isinstance(action, Type):
            return await self.type(action.text)
        if isinstance(action, Press):
            return await self.press(action.text)
        if isinstance(action, ScrollDown):
            return await self.scroll("down")
        if isinstance(action, ScrollUp):
            return await self.scroll("up")
        if isinstance(action, Resize):
            return await self.resize(action.size)
        if isinstance(action, Close):
            return await self.close()
        raise ConfigError(f"not a browser action: {action!r}")


class _NoTarget(Exception):
    pass


class _Navigation(Exception):
    pass
