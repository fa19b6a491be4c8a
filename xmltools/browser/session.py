"""One browser session: its lifecycle, closing when unused, and the run pipeline (handler, settle, observe).

A :class:`BrowserSession` is one isolated ``BrowserContext`` taken from a
:class:`~.pool.BrowserPool` (the process-wide one unless the host passes its
own); with ``profile_dir`` set it is a persistent context on that folder
instead, whose cookies and storage outlive the session.  Every public
coroutine runs on the pool's event loop, so a session may be used from any
loop or thread.  With ``idle_timeout`` set, a session left unused that long
closes itself, and its next action says so.

The session is composed of parts that own their state, each knowing only the
ones before it: :class:`~.watch.Watch` (what the pages report),
:class:`~.bounds.Bounds`, :class:`~.tabs.Tabs`, :class:`~.guard.Guard` (the
URL policy), :class:`~.targets.Targets`, :class:`~.observe.Observer`,
:class:`~.settle.Settler` and :class:`~.recover.Recovery` (how a failed step
is told).  An action is looked up in the one table,
``HANDLERS[type(action)]`` (:mod:`.perform`); its handler fills an
:class:`~.perform.Act`, then the page is settled and captured once.

Honesty rules:

- every wait has a bound, and hitting it is reported (as a note in the
  observation, or as a :class:`~xmltools.base.results.Failure`), never swallowed;
- a navigation during or after an action is normal: it is followed to the new
  document, which is waited for, settled and shown;
- browser failures are classified once (:mod:`.failures`): a transient one is
  retried on the new document, a page's problem is reported with the session
  kept, and only a lost browser, context or renderer ends the session;
- "a script may be stuck" is said only after the page failed to answer a
  trivial evaluation;
- the URL policy is enforced on every request the browser makes, not only on
  the URL the model wrote.

Host errors (no browser, a bad path, an unreachable endpoint) are raised as
:class:`~xmltools.errors.BrowserError` from :meth:`BrowserSession.launch`;
they are never told to the model.  Must not import ``config``, ``tools``,
``profiles``, ``render`` or ``interpreter``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from ..actions import ACTIONS, InTab, Target
from ..base.expectations import Expectation
from ..base.results import Failure, Identity, Observation, Point, Viewport
from ..errors import BrowserError, ConfigError
from . import scripts
from .bounds import Bounds, DialogStorm, Hung
from .failures import ActionError, first_line, to_failure
from .guard import Guard
from .idle import Idle
from .observe import Observer, Seen, SnapshotRequest
from .perform import HANDLERS, Act, Handler, Scope
from .pool import BrowserPool, PoolFullError, default_pool
from .recover import Recovery
from .settings import BrowserConfig
from .settle import KEPT_NAVIGATING, STILL_WAITING, Settler
from .tabs import Tabs
from .targets import TargetError, Targets
from .tracing import Tracer
from .verify import verify
from .watch import Watch

__all__ = ["BrowserSession"]

T = TypeVar("T")
log = logging.getLogger("xmltools.browser")


class BrowserSession:
    """One isolated browser session.  ``async with BrowserSession(cfg) as b: await b.launch(url)``.

    Every action returns an :class:`Observation` on success or a
    :class:`Failure`; ``close()`` returns None or a Failure.  Nothing here
    raises for a page that misbehaves.
    """

    def __init__(self, config: BrowserConfig | None = None, *, pool: BrowserPool | None = None) -> None:
        self.config = c = config or BrowserConfig()
        self.pool = pool or default_pool()
        self.viewport = c.viewport
        self.mouse: Point | None = None
        self.browser_version = ""
        self.mode: Literal["local", "remote"] = "remote" if c.remote else "local"
        self.watch = watch = Watch(c)
        self.bounds = Bounds(c.timeouts, watch.dialog_times)
        self.tabs = Tabs(watch, self.bounds)
        self.guard = Guard(c.url_policy, c.timeouts, watch, dict(c.host_map))
        self.targets = Targets(self.tabs, watch, self.bounds)
        self.targets.rematch_mode = c.rematch
        self._secret_next = False  # the next action types a secret
        self.observer = Observer(c, self.tabs, watch, self.targets, self.bounds)
        self.settler = Settler(c.timeouts, self.tabs, watch, self.bounds)
        self.tracer = Tracer(c.trace_dir, c.timeouts.launch)
        self.idle = Idle(c.idle_timeout, lambda: self.tabs.context is not None, self._close)
        self.recovery = Recovery(watch, self.settler, self.observer, self._drop, self._try_observe)
        self._control = _Control(self)

    def _on_pool(self, coro: Coroutine[Any, Any, T]) -> Awaitable[T]:
        return self.pool.run(coro)

    async def __aenter__(self) -> BrowserSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    @property
    def is_open(self) -> bool:
        return self.tabs.page is not None and not self.watch.disconnected and not self.watch.crashed

    @property
    def page(self) -> Page | None:
        """The current page.  Playwright objects belong to the pool's loop: use :meth:`on_page`."""
        return self.tabs.page

    @property
    def current_url(self) -> str | None:
        """The current page's address (None when no page is open)."""
        page = self.tabs.page
        return page.url if page is not None else None

    @property
    def downloads_dir(self) -> Path | None:
        return self.watch.downloads_dir

    @property
    def where(self) -> str | None:
        """Where the session's browser runs (``local``, or a remote endpoint); None with no page."""
        backend = self.pool.backend_of(self._context)
        return backend.where if backend is not None else None

    @property
    def _context(self) -> BrowserContext | None:
        return self.tabs.context

    @property
    def _cdp(self) -> CDPSession | None:
        return self.tabs.cdp

    @property
    def _idle_timer(self) -> asyncio.TimerHandle | None:
        return self.idle.timer

    async def on_page(self, fn: Callable[[Page], Awaitable[T]]) -> T:
        """Run ``fn(page)`` on the pool's loop (for tests and host scripts)."""

        async def body() -> T:
            return await fn(self.tabs.require_page())

        return await self._on_pool(self.idle.using(body()))

    async def browser_pid(self) -> int | None:
        """The process id of the local browser behind this session (None when not local or closed)."""
        return await self._on_pool(self.tabs.browser_pid()) if self.mode == "local" else None

    # -- lifecycle ----------------------------------------------------------------------

    async def close(self) -> Failure | None:
        """Close this session's context (bounded).  Returns a Failure if the browser had gone."""
        return await self._on_pool(self._control.end())

    async def _close(self) -> Failure | None:
        failure: Failure | None = None
        if self.tabs.page is not None and (self.watch.disconnected or self.watch.crashed):
            failure = Failure(
                kind="closed",
                message="the browser had already gone away.",
                browser_closed=True,
                last_url=self.observer.last_url,
            )
        await self._drop()
        return failure

    async def _drop(self) -> None:
        """Forget everything of this session and give its context back.  Safe to call more than once."""
        self.watch.reset()
        self.idle.disarm()
        ctx = self.tabs.reset()
        self.guard.reset()
        self.targets.forget()
        self.observer.masking = False
        self.mouse = None
        if ctx is not None:
            await self.tracer.stop()
            self.guard.uninstall(ctx)
            await self.pool.release(ctx)
        await self.watch.remove_downloads()

    async def shutdown(self) -> None:
        """Close the session.  The pool (and its browser) stays for other sessions.  Idempotent."""

        async def body() -> None:
            self.idle.closed_after = None
            await self._drop()

        await self._on_pool(body())

    async def _open(self) -> Failure | None:
        """A new context and its first page, this session's (closing the last one first)."""
        await self._drop()
        self.idle.closed_after = None
        c = self.config
        t = c.timeouts
        self.watch.revive()
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
        self.tabs.adopt(ctx)
        try:
            async with asyncio.timeout(t.launch):
                browser = ctx.browser
                if browser is not None:
                    self.browser_version = browser.version
                    self.watch.attach(browser)
                await ctx.add_init_script(scripts.INIT)
                await self.tracer.start(ctx)
                await self.guard.install(ctx)
                await self.tabs.start()
                await self.guard.ready()
        except (TimeoutError, PlaywrightError) as e:
            await self._drop()
            raise BrowserError(f"the browser did not open a page within {t.launch:g} s ({e})") from e
        log.debug("session open (browser version %s)", self.browser_version or "unknown")
        return None

    async def _action(self, coro: Coroutine[Any, Any, T]) -> T | Failure:
        """One public action; on a session closed for being unused, the Failure that says so."""
        if self.idle.closed_after is not None and self.tabs.page is None:
            coro.close()
            return Failure(
                kind="closed",
                message=f"the browser was closed after {self.idle.closed_after:g} s unused;"
                " launch it again to go on.",
                browser_closed=True,
                last_url=self.observer.last_url,
            )
        return await self.idle.using(coro)

    # -- the run pipeline ---------------------------------------------------------------------------

    async def run(self, action: object) -> Observation | Failure | None:
        """Run a typed action from :mod:`xmltools.actions`; ``close`` returns None (or a Failure)."""
        if not log.isEnabledFor(logging.DEBUG):
            return await self._on_pool(self._dispatch(action))
        inner = action.inner if isinstance(action, InTab) else action
        shown = str(getattr(inner, "action", type(inner).__name__))
        if isinstance(action, InTab):
            shown += f" in tab {action.tab}"
        started = time.monotonic()
        try:
            result = await self._on_pool(self._dispatch(action))
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
        """The one dispatcher: a tab named by the call is selected, then the action's handler runs."""
        if isinstance(action, InTab):
            moved = await self._select_tab(action.tab)
            if moved is not None:
                return moved
            action = action.inner
        action = _typed(action)
        handler = HANDLERS.get(type(action))  # type: ignore[arg-type]
        if handler is None:
            raise ConfigError(f"not a browser action: {action!r}")
        if handler.flow == "session":
            act = Act()
            await handler.fn(action, self._scope(), act)
            return act.closed
        if handler.flow == "open":
            return await self.idle.using(self._launch(handler, action))
        return await self._action(self._run(handler, action))

    async def _launch(self, handler: Handler, action: object) -> Observation | Failure | None:
        opened = await self._open()
        return opened or await self._run(handler, action)

    def _scope(self) -> Scope:
        return Scope(
            settings=self.config,
            bounds=self.bounds,
            watch=self.watch,
            tabs=self.tabs,
            guard=self.guard,
            targets=self.targets,
            viewport=self.viewport,
            mouse=self.mouse,
            control=self._control,
        )

    async def _run(self, handler: Handler, action: Any) -> Observation | Failure | None:
        """Run a handler, settle, capture once, observe; turn every way of failing into an honest Failure."""
        if self.tabs.page is None:
            return Failure(kind="closed", message="the browser is not open.", browser_closed=True)
        if not self.watch.alive():
            return await self.recovery.lost(PlaywrightError("the browser has disconnected"))
        self.settler.begin()
        self.targets.begin()
        secret, self._secret_next = self._secret_next, False
        act = Act()
        try:
            await handler.fn(action, self._scope(), act)
            if act.ended:
                return act.closed
            if secret:
                await self._mark_secret()
            if act.mouse is not None:
                self.mouse = act.mouse
            if act.viewport is not None:
                self.viewport = act.viewport
            if self.watch.crashed:
                raise PlaywrightError("Target crashed")
            notes = await self.settler.settle(act.navigates, self._early_capture(act.snapshot))
            if await self.watch.storming():
                raise DialogStorm("the page is still raising dialogs: it cannot be captured")
            early = self.settler.early
            captured = early if isinstance(early, Seen) and early.page is self.tabs.page else None
            for _ in range(3 if captured is None else 0):
                before = (self.tabs.page, self.watch.commits, self.watch.nav_requests)
                captured = await self.observer.capture(self.viewport, act.snapshot)
                now = (captured.page, self.watch.commits, self.watch.nav_requests)
                if (now == before and not self.watch.navigating) or any(
                    n.startswith((KEPT_NAVIGATING, STILL_WAITING)) for n in notes
                ):
                    break
                notes += await self.settler.settle()  # a navigation began while the page was being looked at
            seen = await self._observe([*act.notes, *notes], act.target, captured)
        except ActionError as e:
            return self.recovery.with_dialogs(to_failure(e, await self._try_observe()))
        except (Hung, PlaywrightError) as e:
            return await self.recovery.failed(str(action.action), e)
        if act.extract is not None:
            seen = seen.model_copy(update={"extract": act.extract})
        if self.targets.identity is not None or self.targets.rematched is not None:
            seen = seen.model_copy(
                update={"identity": self.targets.identity, "rematch": self.targets.rematched}
            )
        if act.screenshot is not None:
            seen = seen.model_copy(update={"screenshot": act.screenshot})
        if act.then is not None:
            return await self._action(self._run(HANDLERS[type(act.then)], act.then))
        return seen

    def _early_capture(self, snap: SnapshotRequest | None) -> Callable[[], Awaitable[Seen]] | None:
        """The capture the settle may take while it waits (see ``settle._Early``), when one fits: not
        while secret fields are painted over (painting them changes the page), nor for a snapshot
        of one element (its refs are added to the known ones, not replacing them)."""
        if self.observer.masking or (snap is not None and snap.target is not None):
            return None
        return functools.partial(self.observer.capture, self.viewport, snap)

    async def _mark_secret(self) -> None:
        """The field that just received a secret is painted over in this session's screenshots."""
        page = self.tabs.require_page()
        with contextlib.suppress(PlaywrightError, Hung):  # a page that moved on took the field with it
            if await self.bounds.bounded(page.evaluate(scripts.SECRET_MARK), self.config.timeouts.probe):
                self.observer.masking = True

    async def _observe(
        self, extra_notes: list[str] | None = None, target: str | None = None, captured: Seen | None = None
    ) -> Observation:
        return await self.observer.observe(self.viewport, self.mouse, extra_notes, target, captured)

    async def _try_observe(self) -> Observation | None:
        try:
            return await self._observe()
        except Exception:
            return None

    # -- the host's conveniences: thin ways into the same dispatcher --------------------------------

    def prepare(
        self, *, record_identity: bool, expected: Identity | None = None, secret: bool = False
    ) -> None:
        """Before the next action: whether to record who its element is (while a transcript is
        written); on replay, the recorded element it must act on (see :mod:`.identity`); and
        whether it types a secret, whose field is then painted over in every screenshot."""
        self.targets.record_identity = record_identity
        self.targets.expected = expected
        self._secret_next = secret

    async def launch(self, url: str | None) -> Observation | Failure:
        """Open a new session (closing this one first) at ``url`` (a blank page when None).

        Raises :class:`~xmltools.errors.BrowserError` when the browser cannot be
        found, started or reached: that is the host's problem, not the model's.
        """
        return _seen(await self._do("launch", url=url))

    async def click(self, p: Point) -> Observation | Failure:
        return _seen(await self._do("click", target=_at(p)))

    async def hover(self, p: Point) -> Observation | Failure:
        return _seen(await self._do("hover", target=_at(p)))

    async def type(self, text: str) -> Observation | Failure:
        return _seen(await self._do("type", text=text))

    async def press(self, keys: str) -> Observation | Failure:
        return _seen(await self._do("press", text=keys))

    async def scroll(self, direction: Literal["up", "down", "left", "right"]) -> Observation | Failure:
        if direction in ("up", "down"):
            return _seen(await self._do(f"scroll_{direction}"))
        return _seen(await self._do("scroll", direction=direction))

    async def resize(self, size: Viewport) -> Observation | Failure:
        return _seen(await self._do("resize", size=size))

    async def close_tab(self, tab_id: str | None = None) -> Observation | Failure | None:
        """Close a tab (the current one by default).  Closing the last tab ends the session: None."""
        return await self._do("close_tab", tab=tab_id)

    async def act(self, action: object) -> Observation | Failure | None:
        """The same as :meth:`run`: any typed action."""
        return await self.run(action)

    def _do(self, name: str, **fields: Any) -> Awaitable[Observation | Failure | None]:
        """The action ``name`` with these fields (given by the host, so taken as they are), dispatched."""
        return self._on_pool(self._dispatch(ACTIONS[name].model_construct(**fields)))

    async def select_tab(self, tab_id: str) -> Failure | None:
        """Make ``tab_id`` the current tab (for dialects whose calls name their tab); a Failure if unknown."""
        return await self._on_pool(self._select_tab(tab_id))

    async def _select_tab(self, tab_id: str) -> Failure | None:
        if self.tabs.page is None:
            return Failure(kind="closed", message="the browser is not open.", browser_closed=True)
        try:
            await self.tabs.select(tab_id)
        except TargetError as e:
            return to_failure(e, await self._try_observe())
        return None

    async def observe(self, extra_notes: list[str] | None = None) -> Observation:
        return await self._on_pool(self.idle.using(self._observe(extra_notes)))

    async def page_snapshot(self) -> str:
        """The current page as an AI snapshot with refs and boxes (``[box=x,y,w,h]``); an action
        that follows may name its refs."""
        if not self.is_open:
            raise BrowserError("the browser is not open: there is no page to show")
        return await self._on_pool(self.idle.using(self.observer.page_snapshot(self.viewport)))

    async def verify(self, exp: Expectation, timeout: float | None = None) -> str | None:
        """None when the assertion holds on the current page within ``timeout`` (the action bound by
        default), retried as Playwright's ``expect`` does; else one line on what is there instead."""
        if not self.is_open:
            return "the browser is not open"
        seconds = self.config.timeouts.action if timeout is None else timeout

        async def body() -> str | None:
            page = self.tabs.require_page()
            try:
                return await self.bounds.bounded(
                    verify(page, exp, seconds), seconds + self.config.timeouts.probe
                )
            except Hung:
                return f"the page did not answer within {seconds:g} s"

        return await self._on_pool(self.idle.using(body()))

    async def boxes(self, selectors: Sequence[str]) -> list[tuple[float, float, float, float]]:
        """The viewport boxes (x, y, width, height, CSS pixels) of every element the selectors match
        in the current page; a selector that matches nothing, or is not valid, gives none."""
        return await self._on_pool(self.idle.using(self.observer.boxes(selectors)))

    async def secret_boxes(self) -> list[tuple[float, float, float, float]]:
        """The viewport boxes of the fields painted over in this session's screenshots because they
        received a secret (none when no field did)."""
        if not self.observer.masking:
            return []
        return await self.boxes([f"[{scripts.SECRET}]"])


class _Control:
    """What a handler may do to its session: end it (as close() does), or drop it (its last tab closed)."""

    def __init__(self, session: BrowserSession) -> None:
        self._session = session

    async def end(self) -> Failure | None:
        self._session.idle.closed_after = None
        return await self._session._close()

    async def drop(self) -> None:
        await self._session._drop()


def _typed(action: object) -> object:
    """A typed action as it is; an object that only names its action and fields (as a host's or a
    test's stand-in may) made into that action's model, with the fields it has and the defaults."""
    if type(action) in HANDLERS:
        return action
    model = ACTIONS.get(str(getattr(action, "action", "")))
    if model is None:
        return action
    fields = {f: getattr(action, f) for f in model.model_fields if f != "action" and hasattr(action, f)}
    return model.model_construct(**fields)


def _at(p: Point) -> Target:
    return Target.model_construct(coordinate=p)


def _seen(result: Observation | Failure | None) -> Observation | Failure:
    assert result is not None, "only close and closing the last tab end without an observation"
    return result
