"""The interpreter: parser + protocol + controller + renderer, for one assistant message at a time.

``AsyncInterpreter`` is the core; ``Interpreter`` is its synchronous twin (it
runs the same core on a loop thread of its own, so it also works where an event
loop is already running).  Each takes one assistant message, whole or as a
stream, and returns a :class:`Turn`: the messages to append, the calls found,
what ran, what was refused and why, and the protocol state.

The browser is behind a seam (:class:`BrowserLike`): by default a real
:class:`~xmltools.browser.session.BrowserSession`, started on the first
``launch``; tests and offline replays pass their own (``browser=``, or
``browser_factory=`` for named sessions).

Named sessions (profiles with sessions, such as ``full``): a browser call may
name a ``<session>``; the protocol state is kept per session, each session has
a browser of its own (an isolated context of the same pool), at most
``max_sessions_per_interpreter`` are open at once, and other tools wait until
every session is closed.

Approval (:mod:`xmltools.approval`): after the protocol allows a call, its
category's rule (and the host's callback) decides whether it runs; a call the
host must answer is held in ``Turn.approval_required`` until :meth:`approve`
or :meth:`deny`.  Neither a denial nor a held call is the model's mistake.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

from . import secrets as secret_values
from ._loop import LoopThread
from .actions import InTab, Launch
from .approval import Allow, ApprovalPolicy, Ask, Callback, PendingApproval
from .browser.base import BrowserLike
from .config import Config
from .errors import BrowserError, ConfigError, MistakeLimitError, UsageError
from .parser import Event as ParseEvent
from .parser import StreamParser, ToolCompleted, ToolUse, parse
from .profiles import DEFAULT_SESSION, get_profile
from .protocol import Effect, Event, Move, Session, State, Violation, event_for, plan_message, step
from .render import Rendered, Renderer, apply_image_budget, to_message
from .results import Failure, Observation, Viewport
from .tools import BROWSER_TOOL, CallError, ToolRegistry, ValidCall

if TYPE_CHECKING:
    from pathlib import Path

    from .browser.pool import BrowserPool
    from .transcript import TranscriptWriter

__all__ = [
    "AsyncInterpreter",
    "CallOutcome",
    "Interpreter",
    "StreamUpdate",
    "Turn",
    "TurnStream",
]

T = TypeVar("T")
log = logging.getLogger(__name__)
logging.getLogger("xmltools").addHandler(logging.NullHandler())  # silent unless the host configures it
ERRORS_SHOWN = 3  # broken calls in one message whose errors are spelled out; the rest are counted


@dataclass(frozen=True)
class CallOutcome:
    """What became of one call of the message."""

    call: ToolUse
    status: Literal["ok", "failed", "invalid", "refused", "denied", "pending", "not_run"]
    tool: str
    action: str | None = None
    observation: Observation | None = None
    failure: Failure | None = None
    error: CallError | None = None
    violation: str | None = None
    output: str | None = None  # a host tool's result
    session: str | None = None  # the named browser session the call acted on (None: the default one)
    text: str = ""  # what was rendered back to the model about this call ("" when an earlier call's
    #                 error or note covers it: the calls not run share one note, repeated errors show once)


@dataclass
class Turn:
    """The result of interpreting one assistant message."""

    assistant: dict[str, Any]  # the assistant message as it should stand in the history
    result: dict[str, Any] | None  # the user message carrying results and errors (None if nothing to say)
    blocks: list[Any]
    outcomes: list[CallOutcome] = field(default_factory=list)
    parts: list[Rendered] = field(default_factory=list)
    state: State = State.IDLE
    mistakes: int = 0
    mistake_limit_reached: bool = False
    completed: bool = False  # a host tool marked as completing ran
    cut: bool = False  # the assistant's stream was stopped after its first complete call
    idle_closed: bool = False
    too_large: bool = False  # the message passed max_message_chars: the model is told, as a mistake
    notes: list[str] = field(default_factory=list)  # rendered notes that belong to no single call
    # a call the approval policy holds for the host: answer with approve() or deny()
    approval_required: PendingApproval | None = None
    sessions: tuple[str, ...] = ()  # the browser sessions open after this turn, by name
    duration: float = 0.0  # seconds the interpreter took on this message (the browser's work included)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [self.assistant] + ([self.result] if self.result is not None else [])

    @property
    def calls(self) -> list[ToolUse]:
        return [b for b in self.blocks if isinstance(b, ToolUse)]

    @property
    def ran(self) -> CallOutcome | None:
        return next((o for o in self.outcomes if o.status in ("ok", "failed")), None)

    @property
    def refused(self) -> list[CallOutcome]:
        return [o for o in self.outcomes if o.status in ("invalid", "refused")]

    @property
    def not_run(self) -> list[CallOutcome]:
        return [o for o in self.outcomes if o.status == "not_run"]

    @property
    def used_tool(self) -> bool:
        return bool(self.calls)


@dataclass(frozen=True)
class StreamUpdate:
    events: list[ParseEvent]
    call_complete: bool  # the first complete call has closed: the host may stop the model's stream


class AsyncInterpreter:
    """Interprets assistant messages; owns the protocol session and (lazily) the browser."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        registry: ToolRegistry | None = None,
        renderer: Renderer | None = None,
        browser: BrowserLike | None = None,
        clock: Callable[[], float] = time.monotonic,
        pool: BrowserPool | None = None,
        approver: Callback | None = None,
        browser_factory: Callable[[str], BrowserLike] | None = None,
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        # no config given: the layered settings every command reads (arguments none, then XMLTOOLS_*,
        # xmltools.toml, [tool.xmltools] in pyproject.toml, the defaults)
        self.config = config if config is not None else Config.load()
        self.pool = pool  # None: the process-wide pool
        self.registry = registry or _registry(self.config)
        off = set(self.config.disabled_actions) & set(self.registry.actions if self.registry.browser else ())
        if off:
            raise ConfigError(f"the registry given offers the disabled actions {sorted(off)}")
        self.approval = ApprovalPolicy(self.config.approval, approver)
        self._held: _Held | None = None
        self._pending: PendingApproval | None = None
        # the roo profile shows page text HTML-escaped, as it always has; the others escape only
        # what could open or close a tool's tag, so that HTML and selectors read as written
        self.renderer = renderer or Renderer(
            self.config.templates,
            policy=self.config.policy,
            escape="html" if self.registry.profile.name == "roo" else "tools",
        )
        self.renderer.use_profile(self.registry.profile)
        # the protocol state of each browser session by name; the default one also counts mistakes
        self.sessions: dict[str, Session] = {DEFAULT_SESSION: self._new_session()}
        self._browsers: dict[str, BrowserLike] = {DEFAULT_SESSION: browser} if browser is not None else {}
        self._browser_factory = browser_factory
        self._clock = clock
        self._closed = False
        # {secret:NAME} in a browser call's values is filled in for the browser, and hidden again
        # in everything the model reads back
        self.secrets: dict[str, str] = dict(secrets or {})
        secret_values.check_secret_names(self.secrets)
        self._hide = secret_values.Hider(self.secrets)
        self._recorder: TranscriptWriter | None = None

    # -- lifecycle ----------------------------------------------------------------

    async def __aenter__(self) -> AsyncInterpreter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every browser session and release everything.  Safe to call more than once."""
        self._closed = True
        self._held = None
        if self._recorder is not None:
            self._recorder.close()
        for browser in list(self._browsers.values()):
            await browser.shutdown()
        for s in self.sessions.values():
            s.browser_lost()

    def _new_session(self) -> Session:
        return Session(
            policy=self.config.policy,
            mistake_limit=self.config.mistake_limit,
            idle_timeout=self.config.idle_timeout,
        )

    @property
    def session(self) -> Session:
        """The default session's protocol state, which also keeps the count of the model's mistakes."""
        return self.sessions[DEFAULT_SESSION]

    @property
    def _browser(self) -> BrowserLike | None:
        """The default session's browser, when one was made or given."""
        return self._browsers.get(DEFAULT_SESSION)

    @property
    def open_sessions(self) -> tuple[str, ...]:
        """The names of the browser sessions open now, in the order they were opened."""
        return tuple(n for n, s in self.sessions.items() if s.state is State.ACTIVE)

    @property
    def state(self) -> State:
        """ACTIVE while any browser session is open."""
        return State.ACTIVE if self.open_sessions else State.IDLE

    @property
    def viewport(self) -> Viewport:
        return self._viewport_of(DEFAULT_SESSION)

    def _viewport_of(self, name: str) -> Viewport:
        browser = self._browsers.get(name)
        return browser.viewport if browser is not None else self.config.viewport

    def system_prompt(self) -> str:
        c = self.config
        files = bool(c.allowed_file_roots) or "file" in c.allowed_schemes
        return self.renderer.system_prompt(
            self.registry,
            self.viewport,
            file_urls=files,
            observe=c.observe,
            upload_folders=c.action_context().upload_roots,
            workspace=c.workspace is not None,
            max_wait_seconds=c.max_wait_seconds,
            script_rule=self.approval.rules["script"],
            max_sessions=c.max_sessions_per_interpreter,
            open_sessions=self.open_sessions,
            dynamic_tools=c.dynamic_tools,
            opener_asks=self.registry.profile.opener in self.registry.profile.ask
            and "navigate" not in self.approval.given,
        )

    def trim_history(self, messages: list[dict[str, Any]]) -> int:
        """Keep the newest ``image_budget`` screenshots in ``messages`` (in place); return how many went."""
        return apply_image_budget(messages, self.config.image_budget, self.renderer.image_dropped())

    def record(
        self, path: str | Path, *, append: bool = False, base_url: str | None = None
    ) -> TranscriptWriter:
        """Record every turn from now on to a transcript at ``path`` (screenshots beside it).

        The header holds this interpreter's configuration, its template hashes
        and the standard tools it offers; the system prompt is the first record.
        The file starts afresh unless ``append=True``.  Secret values are written
        as ``{secret:NAME}``; with ``base_url``, that address is written as
        ``{base_url}``.  The writer is returned (to add ``message("user", task)``
        or ``end(...)``) and closed with the interpreter.
        """
        from .tools import STANDARD_TOOLS
        from .transcript import Header, TranscriptWriter

        if self._recorder is not None:
            self._recorder.close()
        header = Header(
            config=self.config.model_dump(mode="json"),
            templates=self.renderer.template_hashes(),
            tools=[t.name for t in self.registry.host_tools if STANDARD_TOOLS.get(t.name) is t],
        )
        writer = TranscriptWriter(path, header, append=append, secrets=self.secrets, base_url=base_url)
        if not append or writer.fresh:
            writer.message("system", self.system_prompt())
        self._recorder = writer
        return writer

    def _recorded(self, turn: Turn, answered: ToolUse | None = None) -> Turn:
        if self._recorder is not None:
            if answered is not None:
                self._recorder.answer(turn, answered)
            else:
                self._recorder.turn(turn)
        return turn

    def _filled(self, call: ToolUse) -> ToolUse | CallError:
        """The browser call with its ``{secret:NAME}`` placeholders filled in, or an error for a bad name."""
        if not self.registry.is_browser(call.name) or not any("{secret:" in v for v in call.params.values()):
            return call
        for param, value in call.params.items():
            unknown = [n for n in secret_values.names_in(value) if n not in self.secrets]
            if unknown:
                known = ", ".join(sorted(self.secrets)) or "none"
                return CallError(
                    "invalid_param",
                    f"there is no secret named {unknown[0]} (the secrets you may use: {known})",
                    call.name,
                    param,
                )
        params = {k: secret_values.fill(v, self.secrets) for k, v in call.params.items()}
        return replace(call, params=params)

    def _hidden(self, result: Observation | Failure | None) -> Observation | Failure | None:
        """The result with every secret's value replaced by its placeholder (all but the screenshot)."""
        if not self._hide or result is None:
            return result
        h = self._hide

        if isinstance(result, Failure):
            obs = self._hidden(result.observation)
            return result.model_copy(
                update={
                    "message": h(result.message),
                    "observation": obs,
                    "last_url": h(result.last_url) if result.last_url else result.last_url,
                }
            )
        return result.model_copy(
            update={
                "url": h(result.url),
                "title": h(result.title),
                "console": tuple(c.model_copy(update={"text": h(c.text)}) for c in result.console),
                "notes": tuple(h(n) for n in result.notes),
                "target": h(result.target) if result.target else result.target,
                "snapshot": h(result.snapshot) if result.snapshot else result.snapshot,
                "extract": h(result.extract) if result.extract else result.extract,
                "tabs": tuple(h(t) for t in result.tabs),
            }
        )

    def _browser_session(self, name: str = DEFAULT_SESSION) -> BrowserLike:
        browser = self._browsers.get(name)
        if browser is None:
            if self._browser_factory is not None:
                browser = self._browser_factory(name)
            else:
                from .browser.session import BrowserSession

                cfg = self.config.browser_settings()
                if cfg.profile_dir is not None and name != DEFAULT_SESSION:
                    # each named session keeps its own user data, beside the default one's
                    cfg = dataclasses.replace(cfg, profile_dir=cfg.profile_dir / "xmltools-sessions" / name)
                browser = BrowserSession(cfg, pool=self.pool)
            self._browsers[name] = browser
        return browser

    # -- whole messages -------------------------------------------------------------

    async def handle(self, text: str) -> Turn:
        """Interpret one whole assistant message."""
        if not isinstance(text, str):
            raise UsageError(f"handle() takes the assistant's text as str, not {type(text).__name__}")
        if self._closed:
            raise UsageError("this interpreter is closed")
        c = self.config
        blocks = parse(text, tools=self.registry, compat=c.compat, fenced=c.fenced, limits=c.limits())
        return self._recorded(await self._interpret(text, blocks, cut=False))

    def stream(self) -> TurnStream:
        """Interpret a message as it streams in: ``feed()`` chunks, then ``await finish()``."""
        if self._closed:
            raise UsageError("this interpreter is closed")
        return TurnStream(self)

    async def _interpret(self, text: str, blocks: list[Any], *, cut: bool) -> Turn:
        started = time.perf_counter()
        now = self._clock()
        self._held = None  # a new message: a call still waiting for approval is dropped
        self.renderer.guard(t.name for t in self.registry.vocabulary)
        parts: list[Rendered] = []
        too_large = _too_large(blocks)
        if too_large:  # the history keeps what was read, as it does for a stream
            text = text[: self.config.max_message_chars]
        turn = Turn(assistant={"role": "assistant", "content": text}, result=None, blocks=blocks, cut=cut)
        turn.too_large = too_large

        for name, s in list(self.sessions.items()):
            if not s.idle_expired(now):
                continue
            browser = self._browsers.get(name)
            if browser is not None:
                await browser.close()
            s.browser_lost()
            turn.idle_closed = True
            others = len(self.sessions) > 1  # name the default session too when there are others
            note = self.renderer.idle_closed(
                self.config.idle_timeout or 0, None if name == DEFAULT_SESSION and not others else name
            )
            parts.append(note)
            turn.notes.append(note.text)

        plan = plan_message(blocks)
        mistake = False
        success = False
        ran_name: str | None = None

        if too_large:
            note = self.renderer.message_too_large(self.config.max_message_chars)
            parts.append(note)
            turn.notes.append(note.text)
            mistake = True

        ctx = self.config.action_context(self.viewport)
        shown: set[str] = set()
        for n, broken in enumerate(plan.broken):
            err = self.registry.validate(broken, ctx)
            assert isinstance(err, CallError)
            # the errors of the first few are spelled out, each once; the rest are counted in one note
            r = self.renderer.call_error(err) if n < ERRORS_SHOWN else None
            if r is not None and r.text not in shown:
                shown.add(r.text)
                parts.append(r)
            turn.outcomes.append(
                CallOutcome(
                    broken,
                    "invalid",
                    broken.name,
                    self.registry.written_action(broken),
                    error=err,
                    text=r.text if r else "",
                )
            )
            mistake = True
        if len(plan.broken) > len(shown):
            note = self.renderer.more_errors(len(plan.broken) - len(shown))
            parts.append(note)
            turn.notes.append(note.text)

        if plan.run is not None:
            outcome, rendered, ok = await self._run_call(plan.run, turn)
            turn.outcomes.append(replace(outcome, text="\n\n".join(p.text for p in rendered)))
            if outcome.status == "pending" and self._pending is not None:
                turn.approval_required = self._pending
                self._held = _Held(self._pending, turn, len(parts), mistake)
            parts.extend(rendered)
            ran_name = plan.run.name if outcome.status in ("ok", "failed") else None
            if outcome.status in ("invalid", "refused") or _wrong_target(outcome):
                mistake = True
            success = ok

        if plan.not_run:
            # one note for all of them, however many: it is the first one's text; the rest have none
            r = self.renderer.not_run(
                [(c.name, self.registry.written_action(c)) for c in plan.not_run], ran_name
            )
            parts.append(r)
            for k, later in enumerate(plan.not_run):
                turn.outcomes.append(
                    CallOutcome(
                        later,
                        "not_run",
                        later.name,
                        self.registry.written_action(later),
                        text="" if k else r.text,
                    )
                )

        return self._finish(turn, parts, mistake=mistake, success=success, started=started)

    def _finish(
        self, turn: Turn, parts: list[Rendered], *, mistake: bool, success: bool, started: float
    ) -> Turn:
        """Count the turn (a success resets the mistakes), note the limit, and put the result together."""
        turn.duration = time.perf_counter() - started
        if success and not mistake:
            self.session.success()
        elif mistake:
            self.session.mistake()
        if mistake and self.session.limit_reached:
            turn.mistake_limit_reached = True
            note = self.renderer.mistake_limit(self.session.mistakes, self.session.mistake_limit)
            parts.append(note)
            turn.notes.append(note.text)

        turn.parts = parts
        turn.state = self.state
        turn.sessions = self.open_sessions
        turn.mistakes = self.session.mistakes
        turn.result = to_message(parts, self.config.shape) if parts else None
        if log.isEnabledFor(logging.INFO):
            log.info("%s", _turn_summary(turn))
        if turn.mistake_limit_reached and self.config.on_mistake_limit == "raise":
            raise MistakeLimitError(
                f"the model made {self.session.mistakes} mistakes in a row"
                f" (the limit is {self.session.mistake_limit})",
                turn,
            )
        return turn

    def _session_of(self, call: ToolUse) -> str:
        """The browser session a call names (``default`` when it names none, or for other tools)."""
        return self.registry.session_of(call) or DEFAULT_SESSION

    def _event(self, checked: ValidCall) -> Event:
        """The protocol event of a call: the profile's opener in an idle session is a launch."""
        if not checked.browser:
            return Event.OTHER_TOOL
        event = event_for(BROWSER_TOOL, checked.action)
        if event is Event.ACTION and checked.opens:
            s = self.sessions.get(checked.session or DEFAULT_SESSION)
            if s is None or s.state is State.IDLE:
                return Event.LAUNCH
        return event

    def _protocol(self, call: ToolUse, checked: ValidCall) -> tuple[Event, Move | Violation]:
        """What the protocol says of a call now, without changing any state."""
        event = self._event(checked)
        policy = self.session.policy
        if not checked.browser:  # another tool: against every browser session at once
            return event, step(self.state, event, policy)
        name = checked.session or DEFAULT_SESSION
        s = self.sessions.get(name)
        state = s.state if s is not None else State.IDLE
        out = step(state, event, policy)
        limit = self.config.max_sessions_per_interpreter
        if event is Event.LAUNCH and state is State.IDLE and len(self.open_sessions) >= limit:
            return event, Violation("too_many_sessions")
        return event, out

    def _refused(
        self, call: ToolUse, checked: ValidCall, v: Violation
    ) -> tuple[CallOutcome, list[Rendered], bool]:
        name = checked.session or DEFAULT_SESSION
        named = None
        if checked.browser:
            named = None if name == DEFAULT_SESSION else name
            s = self.sessions.get(name)
            if s is not None and v.code != "too_many_sessions":
                s.apply(self._event(checked))  # the table's refusal, kept in its history
        return (
            CallOutcome(call, "refused", call.name, checked.written, violation=v.code, session=named),
            [
                self.renderer.violation(
                    v, call.name, checked.written, session=named, sessions=self.open_sessions
                )
            ],
            False,
        )

    async def _run_call(self, call: ToolUse, turn: Turn) -> tuple[CallOutcome, list[Rendered], bool]:
        self._pending = None
        ctx = self.config.action_context(self._viewport_of(self._session_of(call)))
        filled = self._filled(call)
        checked = filled if isinstance(filled, CallError) else self.registry.validate(filled, ctx)
        if isinstance(checked, CallError):
            checked = self._hide_error(checked)
            return (
                CallOutcome(call, "invalid", call.name, self.registry.written_action(call), error=checked),
                [self._hide_rendered(self.renderer.call_error(checked))],
                False,
            )
        _, out = self._protocol(call, checked)
        if isinstance(out, Violation):
            return self._refused(call, checked, out)
        held = await self._approve_or_hold(call, checked)
        if held is not None:
            return held
        return await self._execute(call, checked, turn)

    async def _approve_or_hold(
        self, call: ToolUse, checked: ValidCall
    ) -> tuple[CallOutcome, list[Rendered], bool] | None:
        """None when the call may run; otherwise what the model reads of a denial or of a held call."""
        action = checked.written
        host = self.registry.get(call.name)
        category = self.approval.category_of(call.name, checked.action, host.category if host else None)
        if category is None:
            return None
        asks = checked.written in self.registry.profile.ask if checked.browser else False
        decision = await self.approval.decide(checked, call.name, action, category, asks=asks)
        if isinstance(decision, Allow):
            return None
        if isinstance(decision, Ask):
            self._pending = PendingApproval(call, call.name, action, category, decision.prompt)
            return (
                CallOutcome(call, "pending", call.name, action),
                [self._hide_rendered(self.renderer.approval_required(call.name, action, decision.prompt))],
                False,
            )
        return (
            CallOutcome(call, "denied", call.name, action, violation="denied"),
            [self._hide_rendered(self.renderer.denied(call.name, action, decision.reason))],
            False,
        )

    async def _execute(
        self, call: ToolUse, checked: ValidCall, turn: Turn
    ) -> tuple[CallOutcome, list[Rendered], bool]:
        event, out = self._protocol(call, checked)  # again: the state may have changed since it was held
        if isinstance(out, Violation):
            return self._refused(call, checked, out)
        parts: list[Rendered] = []
        if not checked.browser:
            if out.effect is Effect.CLOSE_THEN_RUN:
                names = self.open_sessions
                for name in names:
                    browser = self._browsers.get(name)
                    if browser is not None:
                        await browser.close()
                    self.sessions[name].browser_lost()
                parts.append(self.renderer.auto_closed(call.name, names))
            outcome, rendered, ok = await self._run_host(call, checked, turn)
            return outcome, parts + rendered, ok
        name = checked.session or DEFAULT_SESSION
        move = self.sessions.setdefault(name, self._new_session()).apply(event)
        assert isinstance(move, Move)
        if event is Event.LAUNCH and not isinstance(checked.args, Launch):  # the dialect's opener
            checked = replace(checked, args=Launch.model_construct(url=getattr(checked.args, "url", None)))
        outcome, rendered, ok = await self._run_browser(call, checked, name)
        dynamic = ok and self.registry.profile.dynamic_tools and self.config.dynamic_tools
        first = event is Event.LAUNCH and self.open_sessions == (name,)
        if dynamic and (first or (event is Event.CLOSE and not self.open_sessions)):
            rendered = [*rendered, self.renderer.tools_changed(self.registry, opened=event is Event.LAUNCH)]
        return outcome, parts + rendered, ok

    # -- the host's answer to a held call -------------------------------------------------

    async def approve(self, pending: PendingApproval | ToolUse) -> Turn:
        """Run the call held for approval; the returned Turn replaces the one that held it."""
        started = time.perf_counter()
        held = self._take(pending)
        self.renderer.guard(t.name for t in self.registry.vocabulary)
        call = held.pending.call
        turn = replace(held.turn, approval_required=None)
        ctx = self.config.action_context(self._viewport_of(self._session_of(call)))
        filled = self._filled(call)
        checked = filled if isinstance(filled, CallError) else self.registry.validate(filled, ctx)
        if isinstance(checked, CallError):  # the viewport changed under a coordinate, say
            checked = self._hide_error(checked)
            outcome = CallOutcome(
                call, "invalid", call.name, self.registry.written_action(call), error=checked
            )
            rendered = [self._hide_rendered(self.renderer.call_error(checked))]
            return self._recorded(
                self._answered(held, turn, outcome, rendered, ok=False, started=started), call
            )
        outcome, rendered, ok = await self._execute(call, checked, turn)
        return self._recorded(self._answered(held, turn, outcome, rendered, ok=ok, started=started), call)

    async def deny(
        self, pending: PendingApproval | ToolUse, reason: str = "the user did not approve it"
    ) -> Turn:
        """Refuse the call held for approval; the returned Turn replaces the one that held it."""
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError("deny() needs a reason the model can read")
        held = self._take(pending)
        p = held.pending
        outcome = CallOutcome(p.call, "denied", p.tool, p.action, violation="denied")
        turn = replace(held.turn, approval_required=None)
        rendered = [self._hide_rendered(self.renderer.denied(p.tool, p.action, reason))]
        answered = self._answered(held, turn, outcome, rendered, ok=False, started=time.perf_counter())
        return self._recorded(answered, p.call)

    def _take(self, pending: PendingApproval | ToolUse) -> _Held:
        if self._closed:
            raise UsageError("this interpreter is closed")
        held = self._held
        if held is None:
            raise UsageError(
                "no call is waiting for approval (a newer message, or an earlier answer, ended the wait)"
            )
        if pending is not held.pending and pending is not held.pending.call:  # the very objects: a stale
            raise UsageError(
                "that call is not the one waiting for approval"
            )  # copy must not run a newer call
        self._held = None
        return held

    def _answered(
        self,
        held: _Held,
        turn: Turn,
        outcome: CallOutcome,
        rendered: list[Rendered],
        *,
        ok: bool,
        started: float,
    ) -> Turn:
        parts = list(held.turn.parts)
        parts[held.index : held.index + 1] = rendered
        text = "\n\n".join(p.text for p in rendered)
        turn.outcomes = [
            replace(outcome, text=text) if o.status == "pending" else o for o in held.turn.outcomes
        ]
        mistake = outcome.status in ("invalid", "refused") or _wrong_target(outcome)
        # the asking turn already counted its own mistakes (and noted the limit if it got there):
        # only this call's outcome is new
        if mistake and held.turn.mistake_limit_reached:
            self.session.mistake()
            mistake = False  # the limit is noted already
        return self._finish(turn, parts, mistake=mistake, success=ok and not held.mistake, started=started)

    async def _run_browser(
        self, call: ToolUse, checked: ValidCall, name: str
    ) -> tuple[CallOutcome, list[Rendered], bool]:
        action = checked.written or checked.action or ""
        named = None if name == DEFAULT_SESSION else name
        s = self.sessions[name]
        browser = self._browser_session(name)
        to_run: object = checked.args if checked.tab is None else InTab(checked.tab, checked.args)  # type: ignore[arg-type]
        try:
            result = self._hidden(await browser.run(to_run))
        except BrowserError as e:
            s.browser_lost()  # the host's problem: raised to the host, the state stays sound
            log.debug("%s %s raised %s to the host: %s", call.name, action, type(e).__name__, e)
            raise
        s.touch(self._clock())
        if isinstance(result, Failure):
            if result.browser_closed or not browser.is_open:
                s.browser_lost()
            # a browser failure is not the model's mistake: it neither counts nor resets the count;
            # the one exception is kind "target" (a stale ref, a selector matching nothing or several,
            # an element hidden, disabled or covered), counted by _interpret as a mistake
            return (
                CallOutcome(call, "failed", call.name, action, failure=result, session=named),
                [self._capped(self.renderer.browser_failure(action, result))],
                False,
            )
        if result is None:  # close, or close_tab of the last tab
            if not browser.is_open:
                s.browser_lost()
            return (
                CallOutcome(call, "ok", call.name, action, session=named),
                [self.renderer.close_result(name, self.open_sessions)],
                True,
            )
        open_now = self.open_sessions
        if len(open_now) > 1:
            listed = tuple(f"{n} (this one)" if n == name else n for n in open_now)
            result = result.model_copy(update={"sessions": listed})
        return (
            CallOutcome(call, "ok", call.name, action, observation=result, session=named),
            [self._capped(self.renderer.browser_result(action, result))],
            True,
        )

    def _hide_rendered(self, r: Rendered) -> Rendered:
        return replace(r, text=self._hide(r.text)) if self._hide else r

    def _hide_error(self, e: CallError) -> CallError:
        """A validation error about a filled-in call, with the secret values it quotes hidden."""
        return replace(e, message=self._hide(e.message), example=self._hide(e.example)) if self._hide else e

    def _capped(self, r: Rendered) -> Rendered:
        """The last bound on what one result may say: ``max_result_chars``, with the cut stated."""
        limit = self.config.max_result_chars
        if len(r.text) <= limit:
            return r
        cut = len(r.text) - (limit - 80)
        return replace(
            r, text=f"{r.text[: limit - 80]}\n… ({cut:,} more characters of this result were left out)"
        )

    async def _run_host(
        self, call: ToolUse, checked: ValidCall, turn: Turn
    ) -> tuple[CallOutcome, list[Rendered], bool]:
        tool = self.registry.get(call.name)
        assert tool is not None
        try:
            out = tool.handler(checked.args)
            if inspect.isawaitable(out):
                out = await out
        except Exception as e:  # a host handler's failure goes back to the model as an error result
            msg = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            return (
                CallOutcome(call, "failed", call.name, output=msg),
                [self.renderer.tool_failure(call.name, msg)],
                False,
            )
        text = out if isinstance(out, str) else _describe(out)
        if tool.completes:
            turn.completed = True
        return (
            CallOutcome(call, "ok", call.name, output=text),
            [self.renderer.tool_result(call.name, text)],
            True,
        )


class TurnStream:
    """One streaming assistant message.  Feed chunks; stop when ``call_complete``; then ``finish()``."""

    def __init__(self, interp: AsyncInterpreter) -> None:
        c = interp.config
        self._interp = interp
        self._parser = StreamParser(interp.registry, compat=c.compat, fenced=c.fenced, limits=c.limits())
        self._complete: ToolUse | None = None
        self._finished = False

    @property
    def call_complete(self) -> bool:
        return self._complete is not None

    def feed(self, chunk: str) -> StreamUpdate:
        if self._finished:
            raise UsageError("this stream is finished")
        events = self._parser.feed(chunk)
        if self._complete is None:
            for e in events:
                if isinstance(e, ToolCompleted) and e.block.complete:
                    self._complete = e.block
                    break
        return StreamUpdate(events, self._complete is not None)

    async def finish(self, *, stopped: bool = False) -> Turn:
        """End the message.  ``stopped=True`` says the host stopped reading the model's stream.

        When stopped after the first complete call, the assistant message in the
        history ends where that call ends, and the turn is marked ``cut``.
        """
        if self._finished:
            raise UsageError("finish() was already called")
        self._finished = True
        self._parser.close()
        text = self._parser.text
        blocks = self._parser.blocks()
        cut = False
        if stopped and self._complete is not None:
            end = self._complete.span[1]
            cut = True
            text = text[:end]
            blocks = [b for b in blocks if b.span[0] < end]
        return self._interp._recorded(await self._interp._interpret(text, blocks, cut=cut))


@dataclass(frozen=True)
class _Held:
    """A call waiting for the host: its turn, where its part stands, and whether that turn was a mistake."""

    pending: PendingApproval
    turn: Turn
    index: int
    mistake: bool


def _registry(config: Config) -> ToolRegistry:
    """The interpreter's own registry: the profile's actions, less the disabled ones."""
    profile = get_profile(config.profile)
    unknown = [a for a in config.disabled_actions if a not in profile.actions]
    if unknown:
        raise ConfigError(
            f"disabled_actions names {unknown}, which the {profile.name} profile does not have;"
            f" its actions are: {', '.join(profile.names)}"
        )
    return ToolRegistry(
        profile=profile.name, actions=[a for a in profile.names if a not in config.disabled_actions]
    )


def _too_large(blocks: list[Any]) -> bool:
    """The parser marks a message past ``max_message_chars`` with a diagnostic on its last block."""
    last = blocks[-1] if blocks else None
    return last is not None and any(d.code == "message_too_large" for d in last.diagnostics)


def _wrong_target(outcome: CallOutcome) -> bool:
    """A browser failure that is the model's mistake: the element it named could not be acted on."""
    return outcome.status == "failed" and outcome.failure is not None and outcome.failure.kind == "target"


def _turn_summary(turn: Turn) -> str:
    """One line for the log: what each call became, then the protocol state."""
    if not turn.outcomes:
        what = "no tool call"
    else:
        shown = []
        for o in turn.outcomes:
            name = f"{o.tool} {o.action}" if o.action else o.tool
            if o.session:
                name += f" [{o.session}]"
            detail = ""
            if o.status == "ok" and o.observation is not None:
                detail = f" -> {o.observation.url}"
            elif o.failure is not None:
                detail = f" ({o.failure.kind})"
            elif o.error is not None or o.violation is not None:
                detail = f" ({o.error.code if o.error is not None else o.violation})"
            shown.append(f"{name}: {o.status}{detail}")
        what = "; ".join(shown)
    flags = [
        flag
        for flag, on in (
            ("completed", turn.completed),
            ("stream cut", turn.cut),
            ("mistake limit reached", turn.mistake_limit_reached),
            ("awaiting approval", turn.approval_required is not None),
        )
        if on
    ]
    tail = f", {', '.join(flags)}" if flags else ""
    return f"turn: {what} [state {turn.state.value}, mistakes {turn.mistakes}{tail}]"


def _describe(value: object) -> str:
    if value is None:
        return "(no output)"
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=2)
    return str(value)


# -- the synchronous twin -------------------------------------------------------------


class Interpreter:
    """The synchronous interpreter: the same behaviour as :class:`AsyncInterpreter`.

    ``with Interpreter(config) as it: turn = it.handle(text)``.  The browser is
    closed when the block exits, also on an exception.
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        registry: ToolRegistry | None = None,
        renderer: Renderer | None = None,
        browser: BrowserLike | None = None,
        clock: Callable[[], float] = time.monotonic,
        pool: BrowserPool | None = None,
        approver: Callback | None = None,
        browser_factory: Callable[[str], BrowserLike] | None = None,
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        self._loop = LoopThread("xmltools-interpreter")
        self.core = AsyncInterpreter(
            config,
            registry=registry,
            renderer=renderer,
            browser=browser,
            clock=clock,
            pool=pool,
            approver=approver,
            browser_factory=browser_factory,
            secrets=secrets,
        )

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.call(coro)

    def __enter__(self) -> Interpreter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def config(self) -> Config:
        return self.core.config

    @property
    def registry(self) -> ToolRegistry:
        return self.core.registry

    def record(
        self, path: str | Path, *, append: bool = False, base_url: str | None = None
    ) -> TranscriptWriter:
        """Record every turn from now on (see :meth:`AsyncInterpreter.record`)."""
        return self.core.record(path, append=append, base_url=base_url)

    @property
    def state(self) -> State:
        return self.core.state

    @property
    def open_sessions(self) -> tuple[str, ...]:
        return self.core.open_sessions

    @property
    def session(self) -> Session:
        return self.core.session

    def system_prompt(self) -> str:
        return self.core.system_prompt()

    def trim_history(self, messages: list[dict[str, Any]]) -> int:
        return self.core.trim_history(messages)

    def handle(self, text: str) -> Turn:
        return self._call(self.core.handle(text))

    def stream(self) -> SyncTurnStream:
        return SyncTurnStream(self, self.core.stream())

    def approve(self, pending: PendingApproval | ToolUse) -> Turn:
        """Run the call held for approval (see :meth:`AsyncInterpreter.approve`)."""
        return self._call(self.core.approve(pending))

    def deny(self, pending: PendingApproval | ToolUse, reason: str = "the user did not approve it") -> Turn:
        """Refuse the call held for approval (see :meth:`AsyncInterpreter.deny`)."""
        return self._call(self.core.deny(pending, reason))

    def close(self) -> None:
        try:
            self._call(self.core.aclose())
        finally:
            self._loop.stop()


class SyncTurnStream:
    def __init__(self, owner: Interpreter, inner: TurnStream) -> None:
        self._owner = owner
        self._inner = inner

    @property
    def call_complete(self) -> bool:
        return self._inner.call_complete

    def feed(self, chunk: str) -> StreamUpdate:
        return self._inner.feed(chunk)

    def finish(self, *, stopped: bool = False) -> Turn:
        return self._owner._call(self._inner.finish(stopped=stopped))
