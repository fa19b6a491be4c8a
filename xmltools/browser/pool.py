"""Browsers and their sessions: one browser per backend, one isolated context per session.

A :class:`BrowserPool` owns a Playwright instance and, lazily, one browser per
:class:`Backend`:

- ``local``: ``chromium.launch(executable_path=…)`` over Playwright's pipe, so
  the browser (and its temporary profile) dies with the host, even on SIGKILL;
- ``cdp``: ``connect_over_cdp`` to a running Chrome (``http://host:9222``, a
  ``ws://…/devtools/browser/…`` URL, or ``auto``); closing only disconnects;
- ``server``: ``chromium.connect`` to a Playwright server (``playwright
  run-server``, a browser grid), any other ``ws://`` or ``wss://`` URL.

Each session gets a fresh ``BrowserContext`` (cookies, storage, downloads of
its own), and nothing of it persists.  A session given a profile folder
(``profile_dir``) gets a persistent context instead
(:meth:`BrowserPool.persistent_context`): a local Chromium of its own, started
on that user data directory, which keeps the cookies and storage for the next
session on the same folder.  Only the local backend can do this, and one
folder serves one open session at a time.  A persistent context takes a
session slot like any other, and releasing it stops its browser.

A pool runs on an event loop of its own, in a daemon thread, so one pool can
serve interpreters on any loop or thread; every public coroutine may be
awaited from anywhere.  :func:`default_pool` is the process-wide pool, made on
first use and closed at exit.

All of start-up (launching or connecting, and making the context) is bounded
by ``launch_timeout``; a session that waits for a free slot waits within the
same bound.  The pool never closes a session by itself: a session with an
``idle_timeout`` gives its context (and its slot) back after that long unused,
through :meth:`BrowserPool.release`, from a timer on the pool's loop.

A pool keeps one spare: a context with a blank page, made with the options of
the last session that ended (or the last that took the spare), ready for the
next session with the same options, which then skips making a context and a
page.  The spare is never a used context: each one is new, so sessions stay
isolated.  It costs one more renderer process while it waits (``make bench``
prints how much memory), takes no session slot, and is closed with the pool or
when a session with other options ends.  A full pool (``max_sessions`` open)
keeps none either: no session could take it before one ends, and that end
makes one.  So a burst of sessions that fills the pool is not slowed by
making a context nobody takes.  ``BrowserPool(spare=False)`` keeps
none, and neither does a remote backend (a Chrome over CDP, a Playwright
server): no context is left waiting in a browser that is someone else's.  A
one-shot process never makes one: the first is made when a session ends while
the pool stays open.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from ..base.threadloop import LoopThread
from ..errors import BrowserError, ConfigError, RemoteBrowserError
from .backends import CHROMIUM_FLAGS, Backend, discover_remote, remote_help, resolve_cdp
from .locate import find_chromium

__all__ = [
    "CHROMIUM_FLAGS",
    "Backend",
    "BrowserPool",
    "PoolFullError",
    "default_pool",
    "discover_remote",
]

T = TypeVar("T")


class PoolFullError(BrowserError):
    """Every session slot of the pool stayed taken for the whole start-up bound."""


@dataclass
class _Slot:
    browser: Browser | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    sessions: int = 0
    opening: int = 0  # contexts being made on it now
    opened: int = 0  # contexts ever made on it: of two as busy, the one used less takes the next
    down_until: float = 0.0  # an endpoint that failed is tried last until then


DOWN_FOR = 10.0  # seconds an unreachable endpoint is skipped while others answer
SPARE_BOUND = 30.0  # seconds for making a spare context and its page; a spare not made is dropped


@dataclass(frozen=True)
class _Wanted:
    """What a session asked the pool for: its backends and its context's options."""

    backends: tuple[Backend, ...]
    options: dict[str, Any] = field(hash=False)


@dataclass
class _Spare:
    wanted: _Wanted
    made: asyncio.Future[tuple[BrowserContext, Backend]]


class BrowserPool:
    """Browsers shared by many sessions.  ``await pool.new_context(backend, …)``; ``await pool.aclose()``.

    ``max_sessions`` bounds the open contexts over all backends; a new session
    waits (within ``launch_timeout``) for a slot, then fails with
    :class:`PoolFullError`.
    """

    def __init__(self, *, max_sessions: int = 16, close_timeout: float = 5.0, spare: bool = True) -> None:
        if max_sessions < 1:
            raise ConfigError("max_sessions must be at least 1")
        self.max_sessions = max_sessions
        self.close_timeout = close_timeout
        self.keep_spare = spare
        self._spare: _Spare | None = None
        self._thread = LoopThread("xmltools-pool")
        self.loop = self._thread.loop
        self._pw: Playwright | None = None
        self._pw_lock: asyncio.Lock | None = None
        self._slots: dict[Backend, _Slot] = {}
        self._contexts: dict[BrowserContext, Backend] = {}
        self._persistent: dict[BrowserContext, Path] = {}  # persistent contexts and their profile folders
        self._profiles: set[Path] = set()  # profile folders open, or being opened
        self._giving_back: dict[Path, asyncio.Event] = {}  # folders whose browser is being stopped
        self._free: asyncio.Condition | None = None
        self._pending = 0
        self._closed = False
        self._closing = False
        self._contexts_made: dict[BrowserContext, _Wanted] = {}  # the options each session's context had
        self._closers: set[asyncio.Future[None]] = set()  # spares being closed

    # -- running on the pool's loop ------------------------------------------------------

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the pool's loop and await it from the caller's loop."""
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self.loop:
            return await coro
        if self._closed:
            coro.close()
            raise BrowserError("this browser pool is closed")
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return await asyncio.wrap_future(fut)

    def run_sync(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return self._thread.call(coro, timeout)

    def backend_of(self, context: BrowserContext | None) -> Backend | None:
        """The backend a session's context came from (None for one not made by this pool)."""
        return self._contexts.get(context) if context is not None else None

    @property
    def sessions(self) -> int:
        """How many contexts are open now (or being made), persistent ones included."""
        return len(self._contexts) + len(self._persistent) + self._pending

    @property
    def spare_context(self) -> BrowserContext | None:
        """The spare context, once made and while it waits (None while it is being made, or with none)."""
        spare = self._spare
        if spare is None or not spare.made.done() or spare.made.cancelled() or spare.made.exception():
            return None
        return spare.made.result()[0]

    def browsers(self) -> dict[Backend, Browser]:
        return {b: s.browser for b, s in self._slots.items() if s.browser is not None}

    # -- the following run on the pool's loop (call them through run()) ---------------------

    async def _playwright(self) -> Playwright:
        if self._pw_lock is None:
            self._pw_lock = asyncio.Lock()
        async with self._pw_lock:
            if self._pw is None:
                manager = async_playwright()
                self._pw = await manager.start()
                _read_the_driver_s_end(manager)
            return self._pw

    async def browser(self, backend: Backend, timeout: float) -> Browser:
        """The backend's browser, started or reached on first use and again after it went away."""
        slot = self._slots.setdefault(backend, _Slot())
        async with slot.lock:
            if slot.browser is not None and slot.browser.is_connected():
                return slot.browser
            slot.browser = None
            pw = await self._playwright()
            slot.browser = await self._start(pw, backend, timeout)
            return slot.browser

    async def _start(self, pw: Playwright, backend: Backend, timeout: float) -> Browser:
        ms = timeout * 1000
        try:
            if backend.kind == "local":
                exe = find_chromium(backend.executable).path
                try:
                    return await pw.chromium.launch(
                        executable_path=exe,
                        headless=backend.headless,
                        args=[*CHROMIUM_FLAGS, *backend.args],
                        timeout=ms,
                    )
                except PlaywrightError as e:
                    raise BrowserError(f"Chromium ({exe}) did not start: {_short(e)}") from e
            assert backend.endpoint is not None
            if backend.kind == "cdp":
                ws = await asyncio.to_thread(resolve_cdp, backend.endpoint, min(timeout, 5.0))
                try:
                    return await pw.chromium.connect_over_cdp(ws, timeout=ms)
                except PlaywrightError as e:
                    raise RemoteBrowserError(remote_help(backend.endpoint) + f"\n({_short(e)})") from e
            options: dict[str, Any] = {"headless": backend.headless, "args": [*CHROMIUM_FLAGS, *backend.args]}
            if backend.executable:
                options["executablePath"] = backend.executable  # the server must run with --unsafe
            try:
                return await pw.chromium.connect(
                    backend.endpoint, timeout=ms, headers={"x-playwright-launch-options": json.dumps(options)}
                )
            except PlaywrightError as e:
                raise RemoteBrowserError(
                    f"no Playwright server answered at {backend.endpoint} ({_short(e)}).\n"
                    "Start one with: python -m playwright run-server --port PORT --host 127.0.0.1"
                ) from e
        except TimeoutError as e:
            raise BrowserError(f"the browser did not start within {timeout:g} s") from e

    def _order(self, backends: Sequence[Backend]) -> list[Backend]:
        """The backends to try, least loaded first (open sessions and those being opened, then the
        fewest made so far, so that sessions in a row alternate); one that failed lately comes last."""
        now = time.monotonic()

        def key(b: Backend) -> tuple[bool, int, int]:
            slot = self._slots.get(b)
            if slot is None:
                return (False, 0, 0)
            return (slot.down_until > now, slot.sessions + slot.opening, slot.opened)

        return sorted(backends, key=key)

    async def new_context(
        self, backend: Backend | Sequence[Backend], timeout: float, **options: Any
    ) -> BrowserContext:
        """A fresh, isolated context on the least-loaded backend's browser.  Bounded by ``timeout``.

        With several backends, one that cannot be reached is skipped for a while
        and the next is tried; the error of the last one is raised if none answers.
        """
        backends = [backend] if isinstance(backend, Backend) else list(backend)
        wanted = _Wanted(tuple(backends), options)

        took_spare = False

        async def make() -> BrowserContext:
            nonlocal took_spare
            made = await self._take_spare(wanted)
            took_spare = made is not None
            ctx, used = made if made is not None else await self._open_on_any(backends, timeout, options)
            self._contexts[ctx] = used
            self._slots[used].sessions += 1
            self._contexts_made[ctx] = wanted
            return ctx

        ctx = await self._in_slot(timeout, make)
        if took_spare:
            self._make_spare(wanted)  # keep one ready for the next session (counted in the slots now)
        return ctx

    # -- the spare -------------------------------------------------------------------------

    async def _take_spare(self, wanted: _Wanted) -> tuple[BrowserContext, Backend] | None:
        """The spare, when it was made for these options and is still whole (waiting for it if being made)."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        if spare.wanted != wanted:
            self._discard(spare)
            return None
        try:
            ctx, used = await asyncio.shield(spare.made)
        except asyncio.CancelledError:
            self._discard(spare)  # this caller gave up: the spare is closed once made
            raise
        except Exception:
            self._discard(spare)
            return None
        browser = ctx.browser
        if browser is None or not browser.is_connected() or not ctx.pages or ctx.pages[0].is_closed():
            self._discard(spare)
            return None
        return ctx, used

    def _make_spare(self, wanted: _Wanted) -> None:
        """Start making a spare for these options, in place of one made for others."""
        if not self.keep_spare or self._closing or self.sessions >= self.max_sessions:
            return  # a full pool keeps none: no session could take it until one ends, which makes one
        spare = self._spare
        if spare is not None:
            if spare.wanted == wanted:
                return
            self._spare = None
            self._discard(spare)
        if any(b.kind != "local" for b in wanted.backends):
            return  # a remote browser is someone else's: no context is left waiting in it

        async def make() -> tuple[BrowserContext, Backend]:
            ctx, used = await self._open_on_any(list(wanted.backends), SPARE_BOUND, wanted.options)
            try:
                await asyncio.wait_for(ctx.new_page(), SPARE_BOUND)
            except BaseException:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ctx.close(), self.close_timeout)
                raise
            return ctx, used

        self._spare = _Spare(wanted, asyncio.ensure_future(make()))

    def _discard(self, spare: _Spare) -> None:
        """Close a spare that will not be used, now or once it is made."""

        async def close() -> None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                ctx, _ = await spare.made
                await asyncio.wait_for(ctx.close(), self.close_timeout)

        self._closers.add(task := asyncio.ensure_future(close()))  # a spare that failed: its error is read
        task.add_done_callback(self._closers.discard)

    async def persistent_context(
        self, backend: Backend | Sequence[Backend], profile_dir: str | Path, timeout: float, **options: Any
    ) -> BrowserContext:
        """A persistent context on ``profile_dir``, in a local Chromium of its own.  Bounded by ``timeout``.

        The cookies and storage stay in the folder (made if missing) for the next
        session opened on it.  The context takes one of the ``max_sessions``
        slots; :meth:`release` closes it, which stops its browser.  ``options``
        are the usual context options (viewport, downloads, ...).  Raises
        ConfigError for a remote backend, and BrowserError when the folder is in
        use by another session or another Chromium.
        """
        backends = [backend] if isinstance(backend, Backend) else list(backend)
        if not backends or any(b.kind != "local" for b in backends):
            raise ConfigError(
                "profile_dir needs a local browser: a remote browser keeps its own profile, so leave"
                " remote unset or drop profile_dir"
            )
        folder = Path(profile_dir).expanduser().resolve()
        given = self._giving_back.get(folder)
        if given is not None:  # the last session on it has ended and its browser is stopping
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(given.wait(), timeout)
        if folder in self._profiles:
            raise BrowserError(_in_use(folder))
        self._profiles.add(folder)  # claimed at once: a second session on it fails now, not after a wait

        async def make() -> BrowserContext:
            ctx = await self._launch_persistent(backends[0], folder, timeout, options)
            self._persistent[ctx] = folder
            return ctx

        try:
            return await self._in_slot(timeout, make)
        except BaseException:
            self._profiles.discard(folder)
            raise

    async def _launch_persistent(
        self, backend: Backend, folder: Path, timeout: float, options: dict[str, Any]
    ) -> BrowserContext:
        pw = await self._playwright()
        exe = find_chromium(backend.executable).path
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise BrowserError(f"the profile folder {folder} cannot be made: {e}") from e
        try:
            return await pw.chromium.launch_persistent_context(
                user_data_dir=folder,
                executable_path=exe,
                headless=backend.headless,
                args=[*CHROMIUM_FLAGS, *backend.args],
                timeout=timeout * 1000,
                **options,
            )
        except PlaywrightError as e:
            if _profile_locked(e):
                raise BrowserError(_in_use(folder)) from e
            raise BrowserError(
                f"Chromium ({exe}) did not start on the profile folder {folder}: {_short(e)}"
            ) from e

    async def _in_slot(self, timeout: float, make: Callable[[], Awaitable[T]]) -> T:
        """Run ``make()`` (which opens and registers a context) in a free session slot, within ``timeout``."""
        if self._free is None:
            self._free = asyncio.Condition()
        try:
            async with asyncio.timeout(timeout):
                async with self._free:
                    await self._free.wait_for(lambda: self.sessions < self.max_sessions)
                    self._pending += 1  # hold the slot while the context is made
                made = False
                try:
                    result = await make()
                    made = True
                    return result
                finally:
                    self._pending -= 1
                    if not made:  # the slot is free again: a session waiting for one may take it
                        async with self._free:
                            self._free.notify_all()
        except TimeoutError as e:
            if self.sessions >= self.max_sessions:
                raise PoolFullError(
                    f"all {self.max_sessions} browser sessions stayed in use for {timeout:g} s"
                ) from e
            raise BrowserError(f"the browser did not open a session within {timeout:g} s") from e

    async def _open_on_any(
        self, backends: list[Backend], timeout: float, options: dict[str, Any]
    ) -> tuple[BrowserContext, Backend]:
        last: Exception | None = None
        for b in self._order(backends):
            slot = self._slots.setdefault(b, _Slot())
            slot.opening += 1
            try:
                browser = await self.browser(b, timeout)
                ctx = await browser.new_context(**options)
                slot.opened += 1
                return ctx, b
            except (BrowserError, PlaywrightError) as e:
                if len(backends) == 1:
                    raise
                slot.down_until = time.monotonic() + DOWN_FOR
                last = e
            finally:
                slot.opening -= 1
        assert last is not None
        raise last

    async def release(self, ctx: BrowserContext) -> None:
        """Close a context made by :meth:`new_context` or :meth:`persistent_context` (bounded); free its slot.

        Closing a persistent context stops its browser, which gives its profile folder back.
        """
        backend = self._contexts.pop(ctx, None)
        wanted = self._contexts_made.pop(ctx, None)
        if backend is not None:
            self._slots[backend].sessions -= 1
        if wanted is not None:
            self._make_spare(wanted)  # the next session is likely to look like this one
        folder = self._persistent.pop(ctx, None)
        if folder is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ctx.close(), self.close_timeout)
        else:
            await self._give_back(ctx, folder)
        if self._free is not None:
            async with self._free:
                self._free.notify_all()

    async def _give_back(self, ctx: BrowserContext, folder: Path) -> None:
        """Close a persistent context and stop its browser (bounded), then free its profile folder; a
        session opening the folder meanwhile waits for this rather than finding it in use."""
        self._giving_back[folder] = given = asyncio.Event()
        try:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ctx.close(), self.close_timeout)
            browser = ctx.browser
            if browser is not None and browser.is_connected():  # the context did not close in time
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(browser.close(), self.close_timeout)
        finally:
            self._profiles.discard(folder)
            self._giving_back.pop(folder, None)
            given.set()

    async def _close_all(self) -> None:
        self._closing = True
        spare, self._spare = self._spare, None
        if spare is not None:
            self._discard(spare)
        for ctx in [*self._contexts, *self._persistent]:
            await self.release(ctx)
        if self._closers:
            await asyncio.wait(list(self._closers), timeout=self.close_timeout + 1)
        for slot in self._slots.values():
            b, slot.browser = slot.browser, None
            if b is not None:
                # a local browser is stopped; a remote one is only disconnected from
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(b.close(), self.close_timeout)
        if self._pw is not None:
            pw, self._pw = self._pw, None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(pw.stop(), self.close_timeout)

    async def aclose(self) -> None:
        """Close every session and browser, then the pool's thread.  Safe to call more than once."""
        if self._closed:
            return
        await self.run(self._close_all())
        self._closed = True
        self._thread.stop()

    def close(self) -> None:
        """The synchronous :meth:`aclose`, for scripts and ``atexit``."""
        if self._closed:
            return
        with contextlib.suppress(Exception):
            self._thread.call(self._close_all(), self.close_timeout * 3 + 5)
        self._closed = True
        self._thread.stop()

    @property
    def closed(self) -> bool:
        return self._closed


_default: BrowserPool | None = None
_default_lock = threading.Lock()


def default_pool() -> BrowserPool:
    """The process-wide pool: made on first use, closed when the process exits."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = BrowserPool()
            atexit.register(_default.close)
        return _default


def _read_the_driver_s_end(manager: object) -> None:
    """Read, once it comes, the error that Playwright's transport keeps for a driver that went away
    before it was asked to stop.

    The driver shares the host's process group, so a Ctrl-C in a terminal stops it too.  Once
    Playwright has started, nobody awaits that future (the calls in flight fail on their own, and
    the host gets its KeyboardInterrupt), so asyncio would print "Future exception was never
    retrieved" when the process exits.  The future is a private attribute of Playwright's client:
    where it is not found, nothing is done.
    """
    transport = getattr(getattr(manager, "_client", None), "_transport", None)
    ended = getattr(transport, "on_error_future", None)
    if isinstance(ended, asyncio.Future):
        ended.add_done_callback(lambda f: None if f.cancelled() else f.exception())


def _in_use(folder: Path) -> str:
    return (
        f"the profile folder {folder} is in use by another browser session;"
        " a profile folder serves one session at a time"
    )


def _profile_locked(e: BaseException) -> bool:
    """Whether Chromium refused the folder because another Chromium holds its profile lock."""
    text = str(e)
    return "ProcessSingleton" in text or "profile is already in use" in text or "SingletonLock" in text


def _short(e: BaseException) -> str:
    text = str(e).strip()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(("=", "Call log"))]
    return lines[0] if lines else type(e).__name__
