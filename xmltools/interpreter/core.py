"""The asynchronous interpreter: one assistant message in, a :class:`~xmltools.record.turn.Turn` out.

Owns the flow of a message: the calls the parser found, the broken ones
(spelled out or counted), the one that runs (through :mod:`.calls`), the ones
not run, idle sessions, the mistake count, and the call held for the host's
approval.  The browser sessions live in :mod:`.sessions`, secrets in
:mod:`.secrecy`; rendering goes through :class:`~xmltools.render.prompts.Renderer`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..base.expectations import Expectation, ExpectationFailed
from ..base.results import Identity, Viewport
from ..base.secrets import Secret
from ..browser.base import BrowserLike
from ..config.settings import Config
from ..errors import ConfigError, MistakeLimitError, UsageError
from ..mcp.calls import listing, mcp_tools
from ..mcp.hub import McpHub
from ..parser import ToolUse, parse
from ..profiles import DEFAULT_SESSION
from ..protocol.approval import Allow, ApprovalPolicy, Callback, Deny, PendingApproval
from ..protocol.machine import Session, State, plan_message
from ..record.turn import CallOutcome, Turn, turn_summary
from ..render.images import apply_image_budget
from ..render.messages import Rendered, to_message
from ..render.prompts import Renderer
from ..tools import CallError, ToolRegistry, ValidCall
from .calls import CallRunner
from .secrecy import SecretGuard
from .sessions import BrowserSessions
from .stream import TurnStream

if TYPE_CHECKING:
    from pathlib import Path

    from ..browser.pool import BrowserPool
    from ..record.transcript import TranscriptWriter

__all__ = ["AsyncInterpreter", "default_registry"]

log = logging.getLogger("xmltools.interpreter")
logging.getLogger("xmltools").addHandler(logging.NullHandler())  # silent unless the host configures it
NOT_APPROVED = "the user did not approve it"  # the reason a refusal gives when the host gave none
ERRORS_SHOWN = 3  # broken calls in one message whose errors are spelled out; the rest are counted


class AsyncInterpreter:
    """Interprets assistant messages; owns the protocol sessions and (lazily) their browsers."""

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
        secrets: Mapping[str, str | Secret] | None = None,
        mcp: McpHub | None = None,
    ) -> None:
        # no config given: the layered settings every command reads (arguments none, then XMLTOOLS_*,
        # xmltools.toml, [tool.xmltools] in pyproject.toml, the defaults)
        self.config = config if config is not None else Config.load()
        self.registry = registry or default_registry(self.config)
        # the configured MCP servers (or a hub given, as a replay gives its recording's): their two
        # tools join the registry (a given one too); the servers start on first use, or by start_servers()
        self.mcp = (
            mcp
            if mcp is not None
            else McpHub(self.config.mcp_settings(), result_chars=self.config.max_result_chars)
        )
        if self.mcp:
            for t in mcp_tools(self.mcp):
                if self.registry.get(t.name) is None:
                    self.registry.register(t)
        off = set(self.config.disabled_actions) & set(self.registry.actions if self.registry.browser else ())
        if off:
            raise ConfigError(f"the registry given offers the disabled actions {sorted(off)}")
        # a server's autoApprove allows its tools by name; the host's own rules come first
        auto = {f"mcp:{n}/{t}": "allow" for n, s in self.mcp.servers.items() for t in s.settings.auto_approve}
        self.approval = ApprovalPolicy({**auto, **self.config.approval}, approver)
        self.turn_log_level = logging.INFO  # a loop logs its own line a turn, and sets this to DEBUG
        self._held: _Held | None = None
        # the roo profile shows page text HTML-escaped, as it always has; the others escape only
        # what could open or close a tool's tag, so that HTML and selectors read as written
        self.renderer = renderer or Renderer(
            self.config.templates,
            policy=self.config.policy,
            escape="html" if self.registry.profile.name == "roo" else "tools",
        )
        self.renderer.use_profile(self.registry.profile)
        self._sessions = BrowserSessions(self.config, browser=browser, factory=browser_factory, pool=pool)
        self._clock = clock
        self._closed = False
        # {secret:NAME} in a browser call's values is filled in for the browser, and hidden again
        # in everything the model reads back
        self._secrets = SecretGuard(secrets)
        self.secrets = self._secrets.values
        self._calls = CallRunner(
            self.config, self.registry, self.renderer, self.approval, self._sessions, self._secrets, clock
        )
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
            try:
                await self.check_expectations()
            except ExpectationFailed as e:  # a close cannot raise it: the host hears it in the log
                log.warning("not recorded: %s", e)
            self._recorder.close()
        try:
            await self._sessions.shutdown()
        finally:
            await self.mcp.aclose()

    async def start_servers(self) -> None:
        """Start every configured MCP server now, so that the system prompt lists their tools.

        A server that cannot start is raised (:class:`~xmltools.errors.McpServerError`).  Without
        this, a server starts the first time a call names it; the loop calls it before its first
        turn, and so does ``mcp_start = "eager"``.
        """
        await self.mcp.start_all()

    @property
    def sessions(self) -> Mapping[str, Session]:
        """The protocol state of each browser session, by name."""
        return self._sessions.states

    @property
    def session(self) -> Session:
        """The default session's protocol state, which also keeps the count of the model's mistakes."""
        return self._sessions.default

    @property
    def open_sessions(self) -> tuple[str, ...]:
        """The names of the browser sessions open now, in the order they were opened."""
        return self._sessions.open

    @property
    def state(self) -> State:
        """ACTIVE while any browser session is open."""
        return self._sessions.state

    def browser_of(self, session: str = DEFAULT_SESSION) -> BrowserLike | None:
        """The browser of a session, when one was made or given (None before its first launch)."""
        return self._sessions.browsers.get(session)

    @property
    def viewport(self) -> Viewport:
        return self._sessions.viewport_of(DEFAULT_SESSION)

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
            mcp_servers=listing(self.mcp, c.mcp_prompt_chars) if self.mcp else (),
        )

    def trim_history(self, messages: list[dict[str, Any]]) -> int:
        """Keep the newest ``image_budget`` screenshots in ``messages`` (in place); return how many went."""
        return apply_image_budget(messages, self.config.image_budget, self.renderer.image_dropped())

    def record(
        self, path: str | Path, *, append: bool = False, base_url: str | None = None
    ) -> TranscriptWriter:
        """Record every turn from now on to a transcript at ``path`` (screenshots beside it).

        The header holds this interpreter's configuration, its template hashes
        and the standard tools it offers; the system prompt is the first record,
        as :meth:`system_prompt` gives it; while configured MCP servers have not
        all started, it is taken when the next record is written, so that
        servers started after this call (``await start_servers()``) are in it
        with their tools, as in the prompt the model gets.  The file starts afresh
        unless ``append=True``.  Secret values are written as
        ``{secret:NAME}``; with ``base_url``, that address is written as
        ``{base_url}``.  The writer is returned (to add ``message("user", task)``,
        assertions with ``expect_text(...)`` and its kin, or ``end(...)``) and
        closed with the interpreter.  Here the assertions are checked in the
        browser before the next message is interpreted (or by ``await
        check_expectations()``); one that does not hold raises
        :class:`~xmltools.base.expectations.ExpectationFailed` and is not written.
        """
        from ..record.transcript import TranscriptWriter, new_header
        from ..tools import STANDARD_TOOLS

        if self._recorder is not None:
            self._recorder.close()
        tools = [t.name for t in self.registry.host_tools if STANDARD_TOOLS.get(t.name) is t]
        header = new_header(self.config, self.renderer.template_hashes(), tools=tools)
        writer = TranscriptWriter(path, header, append=append, secrets=self.secrets, base_url=base_url)
        if (not append or writer.fresh) and self.mcp and not self.mcp.started:
            writer.system_later(self.system_prompt)  # servers started from now on are in it
        elif not append or writer.fresh:
            writer.message("system", self.system_prompt())
        self._recorder = writer
        writer.defer = True  # checked before the next message, or by check_expectations()
        self.record_identities()
        return writer

    async def close_sessions(self) -> list[str]:
        """Close every open browser session, as the host (the model is not asked); their names."""
        names = list(self._sessions.open)
        for name in names:
            await self._sessions.close(name)
        return names

    async def verify(self, exp: Expectation) -> str | None:
        """None when the assertion holds on its session's page now (waiting as Playwright's
        ``expect`` does); else one line on what is there instead."""
        browser = self.browser_of(exp.session or DEFAULT_SESSION)
        if browser is None or not browser.is_open:
            return f"the browser{f' session {exp.session}' if exp.session else ''} is not open"
        check = getattr(browser, "verify", None)
        if check is None:
            raise UsageError(f"{type(browser).__name__} cannot check assertions: it has no page")
        return await check(exp)  # type: ignore[no-any-return]

    async def check_expectations(self) -> None:
        """Check the assertions the recorder's ``expect_*`` added since the last message, and write
        those that hold; :class:`~xmltools.base.expectations.ExpectationFailed` names the first that
        does not (it is not written).  The async interpreter runs this before each message."""
        writer = self._recorder
        if writer is None:
            return
        pending, writer.pending = writer.pending, []
        for exp in pending:
            problem = await self.verify(exp)
            if problem is not None:
                raise ExpectationFailed(f"{exp.describe()}: {problem}")
            writer.write_expectation(exp)

    def record_identities(self, on: bool = True) -> None:
        """Record who each element acted on is (its role, name and locators) in the observations,
        as :meth:`record` does, for a host that writes its own transcript."""
        self._calls.record_identity = on

    def expect(self, identity: Identity, session: str = DEFAULT_SESSION) -> None:
        """Replay: the next element action of ``session`` must act on this recorded element (found
        again by its identity when its ref, selector or point now reaches another; see
        ``Config.rematch``)."""
        self._calls.expected[session] = identity

    def _recorded(self, turn: Turn, answered: ToolUse | None = None) -> Turn:
        if self._recorder is not None:
            if answered is not None:
                self._recorder.answer(turn, answered)
            else:
                self._recorder.turn(turn)
        return turn

    # -- whole messages -------------------------------------------------------------

    async def handle(self, text: str) -> Turn:
        """Interpret one whole assistant message."""
        if not isinstance(text, str):
            raise UsageError(f"handle() takes the assistant's text as str, not {type(text).__name__}")
        if self._closed:
            raise UsageError("this interpreter is closed")
        await self.check_expectations()
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
        turn.progress = self.registry.progress(blocks)

        changed = await self.mcp.refresh() if self.mcp else []
        if changed:  # a server's tools/list_changed: the prompt's section, again, with a note
            note = self.renderer.mcp_tools_changed(changed, listing(self.mcp, self.config.mcp_prompt_chars))
            parts.append(note)
            turn.notes.append(note.text)

        for name in self._sessions.idle_expired(now):
            await self._sessions.close(name)
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

        mistake = self._broken(plan.broken, turn, parts) or mistake

        if plan.run is not None:
            outcome, rendered, ok = await self._calls.run(plan.run, turn)
            turn.outcomes.append(replace(outcome, text="\n\n".join(p.text for p in rendered)))
            pending = self._calls.pending
            if outcome.status == "pending" and pending is not None:
                turn.approval_required = pending
                self._held = _Held(pending, turn, len(parts), mistake)
            parts.extend(rendered)
            ran_name = plan.run.name if outcome.status in ("ok", "failed") else None
            if outcome.mistake is not None:
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

    def _broken(self, broken: Sequence[ToolUse], turn: Turn, parts: list[Rendered]) -> bool:
        """The broken calls' outcomes and errors; True when there were any (each is a mistake)."""
        ctx = self.config.action_context(self.viewport)
        shown: set[str] = set()
        for n, call in enumerate(broken):
            err = self.registry.validate(call, ctx)
            assert isinstance(err, CallError)
            # the errors of the first few are spelled out, each once; the rest are counted in one note
            r = self.renderer.call_error(err) if n < ERRORS_SHOWN else None
            if r is not None and r.text not in shown:
                shown.add(r.text)
                parts.append(r)
            turn.outcomes.append(
                CallOutcome(
                    call,
                    "invalid",
                    call.name,
                    self.registry.written_action(call),
                    error=err,
                    text=r.text if r else "",
                )
            )
        if len(broken) > len(shown):
            note = self.renderer.more_errors(len(broken) - len(shown))
            parts.append(note)
            turn.notes.append(note.text)
        return bool(broken)

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
        if log.isEnabledFor(self.turn_log_level):
            log.log(self.turn_log_level, "%s", turn_summary(turn))
        if turn.mistake_limit_reached and self.config.on_mistake_limit == "raise":
            raise MistakeLimitError(
                f"the model made {self.session.mistakes} mistakes in a row"
                f" (the limit is {self.session.mistake_limit})",
                turn,
            )
        return turn

    # -- the host's answer to a held call -------------------------------------------------

    async def approve(self, pending: PendingApproval | ToolUse) -> Turn:
        """Run the call held for approval; the returned Turn replaces the one that held it."""
        started = time.perf_counter()
        held = self._take(pending)
        self.renderer.guard(t.name for t in self.registry.vocabulary)
        call = held.pending.call
        turn = replace(held.turn, approval_required=None)
        checked = self._calls.check(call)  # again: the viewport may have changed under a coordinate
        if isinstance(checked, ValidCall):
            outcome, rendered, ok = await self._calls.execute(call, checked, turn)
        else:
            outcome, rendered, ok = checked
        return self._recorded(self._answered(held, turn, outcome, rendered, ok=ok, started=started), call)

    async def answer(self, pending: PendingApproval | ToolUse, answer: bool | str | Allow | Deny) -> Turn:
        """Answer the call held for approval as an approval callback does: ``True`` or
        :class:`Allow` runs it; ``False``, :class:`Deny` or a reason refuses it, with that reason
        (else "the user did not approve it").  The returned Turn replaces the one that held it."""
        if answer is True or isinstance(answer, Allow):
            return await self.approve(pending)
        if isinstance(answer, Deny):
            answer = answer.reason
        return await self.deny(
            pending, answer if isinstance(answer, str) and answer.strip() else NOT_APPROVED
        )

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
        rendered = [self._secrets.rendered(self.renderer.denied(p.tool, p.action, reason))]
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
        mistake = outcome.mistake is not None
        # the asking turn already counted its own mistakes (and noted the limit if it got there):
        # only this call's outcome is new
        if mistake and held.turn.mistake_limit_reached:
            self.session.mistake()
            mistake = False  # the limit is noted already
        return self._finish(turn, parts, mistake=mistake, success=ok and not held.mistake, started=started)


@dataclass(frozen=True)
class _Held:
    """A call waiting for the host: its turn, where its part stands, and whether that turn was a mistake."""

    pending: PendingApproval
    turn: Turn
    index: int
    mistake: bool


def default_registry(config: Config) -> ToolRegistry:
    """The interpreter's own registry: the profile's actions, less the disabled ones."""
    return ToolRegistry(
        profile=config.profile, disabled=config.disabled_actions, capabilities=config.capabilities
    )


def _too_large(blocks: list[Any]) -> bool:
    """The parser marks a message past ``max_message_chars`` with a diagnostic on its last block."""
    last = blocks[-1] if blocks else None
    return last is not None and any(d.code == "message_too_large" for d in last.diagnostics)
