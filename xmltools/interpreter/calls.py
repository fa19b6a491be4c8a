"""Running the one call of a message: validation, the protocol, approval, then the browser or a host tool.

:class:`CallRunner` owns the path of a single call, and what comes back from
it: a :class:`~xmltools.record.turn.CallOutcome`, the rendered parts the model reads,
and whether it succeeded.  The message-level flow (broken calls, calls not
run, the mistake count) stays in :mod:`.core`.

Two sides, kept apart:

- the model's mistakes (an invalid call, a refused move) are rendered back and
  the session goes on;
- a browser failure is reported honestly, and is never counted as the model's
  mistake (except a wrong target, which :func:`~xmltools.record.turn.wrong_target`
  names); a host error (:class:`~xmltools.errors.BrowserError`) is raised to
  the host, with the protocol state left sound.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from ..actions import InTab, Launch
from ..base.quoting import cut
from ..base.results import Failure, Identity
from ..base.secrets import names_in
from ..config.settings import Config
from ..errors import BrowserError
from ..mcp.results import McpResult
from ..mcp.server import ServerLost
from ..parser import ToolUse
from ..profiles import DEFAULT_SESSION
from ..protocol.approval import Allow, ApprovalPolicy, Ask, PendingApproval
from ..protocol.machine import Effect, Event, Move, State, Violation, event_for, step
from ..record.turn import CallOutcome, Turn
from ..render.messages import Rendered
from ..tools import BROWSER_TOOL, CallError, ToolRegistry, ValidCall
from .secrecy import SecretGuard
from .sessions import BrowserSessions

if TYPE_CHECKING:
    from ..render.prompts import Renderer

__all__ = ["CallResult", "CallRunner"]

log = logging.getLogger("xmltools.interpreter")

CallResult = tuple[CallOutcome, list[Rendered], bool]  # the outcome, what the model reads, success


class CallRunner:
    """Takes one complete call through validation, the protocol table and approval, and runs it."""

    def __init__(
        self,
        config: Config,
        registry: ToolRegistry,
        renderer: Renderer,
        approval: ApprovalPolicy,
        sessions: BrowserSessions,
        secrets: SecretGuard,
        clock: Callable[[], float],
    ) -> None:
        self.config = config
        self.record_identity = False  # a transcript is being written: record who each element acted on is
        self.expected: dict[str, Identity] = {}  # replay: the recorded element of each session's next action
        self.registry = registry
        self.renderer = renderer
        self.approval = approval
        self.sessions = sessions
        self.secrets = secrets
        self._clock = clock
        self.pending: PendingApproval | None = None  # set when the last call was held for the host

    def session_of(self, call: ToolUse) -> str:
        """The browser session a call names (``default`` when it names none, or for other tools)."""
        return self.registry.session_of(call) or DEFAULT_SESSION

    def check(self, call: ToolUse) -> ValidCall | CallResult:
        """The call filled in and validated, or what the model reads about why it is invalid."""
        ctx = self.config.action_context(self.sessions.viewport_of(self.session_of(call)))
        filled = self.secrets.fill(call, self.registry)
        checked = filled if isinstance(filled, CallError) else self.registry.validate(filled, ctx)
        if isinstance(checked, CallError):
            checked = self.secrets.error(checked)
            return (
                CallOutcome(call, "invalid", call.name, self.registry.written_action(call), error=checked),
                [self.secrets.rendered(self.renderer.call_error(checked))],
                False,
            )
        return checked

    async def run(self, call: ToolUse, turn: Turn) -> CallResult:
        """The message's call: checked, allowed by the protocol and the approval policy, then run."""
        self.pending = None
        tool = self.registry.get(call.name)
        if tool is not None and tool.prepare is not None:  # an MCP server starts on its first call
            await tool.prepare(self.registry.call_params(call))
        checked = self.check(call)
        if not isinstance(checked, ValidCall):
            return checked
        closed = self.approval.closed_reason
        if closed is not None and checked.browser:  # the run is over for the browser: said first
            action = checked.written or checked.action
            return (
                CallOutcome(call, "denied", call.name, action, violation="denied"),
                [self.secrets.rendered(self.renderer.denied(call.name, action, closed))],
                False,
            )
        _, out = self._protocol(checked)
        if isinstance(out, Violation):
            return self._refused(call, checked, out)
        held = await self._approve_or_hold(call, checked)
        if held is not None:
            return held
        return await self.execute(call, checked, turn)

    # -- the protocol ---------------------------------------------------------------------

    def _event(self, checked: ValidCall) -> Event:
        """The protocol event of a call: the profile's opener in an idle session is a launch."""
        if not checked.browser:
            return Event.OTHER_TOOL
        event = event_for(BROWSER_TOOL, checked.action)
        if event is Event.ACTION and checked.opens:
            s = self.sessions.states.get(checked.session or DEFAULT_SESSION)
            if s is None or s.state is State.IDLE:
                return Event.LAUNCH
        return event

    def _protocol(self, checked: ValidCall) -> tuple[Event, Move | Violation]:
        """What the protocol says of a call now, without changing any state."""
        event = self._event(checked)
        policy = self.sessions.default.policy
        if not checked.browser:  # another tool: against every browser session at once
            return event, step(self.sessions.state, event, policy)
        s = self.sessions.states.get(checked.session or DEFAULT_SESSION)
        state = s.state if s is not None else State.IDLE
        out = step(state, event, policy)
        limit = self.config.max_sessions_per_interpreter
        if event is Event.LAUNCH and state is State.IDLE and len(self.sessions.open) >= limit:
            return event, Violation("too_many_sessions")
        return event, out

    def _refused(self, call: ToolUse, checked: ValidCall, v: Violation) -> CallResult:
        name = checked.session or DEFAULT_SESSION
        named = None
        if checked.browser:
            named = None if name == DEFAULT_SESSION else name
            s = self.sessions.states.get(name)
            if s is not None and v.code != "too_many_sessions":
                s.apply(self._event(checked))  # the table's refusal, kept in its history
        return (
            CallOutcome(call, "refused", call.name, checked.written, violation=v.code, session=named),
            [
                self.renderer.violation(
                    v, call.name, checked.written, session=named, sessions=self.sessions.open
                )
            ],
            False,
        )

    # -- approval -------------------------------------------------------------------------

    async def _approve_or_hold(self, call: ToolUse, checked: ValidCall) -> CallResult | None:
        """None when the call may run; otherwise what the model reads of a denial or of a held call."""
        action = checked.written
        host = self.registry.get(call.name)
        declared = host.category if host else None
        if host is not None and host.category_for is not None:  # per call: an MCP tool's hints
            declared = host.category_for(checked.args)
        category = self.approval.category_of(call.name, checked.action, declared)
        if category is None:
            return None
        asks = checked.written in self.registry.profile.ask if checked.browser else False
        names = _rule_names(checked.args)
        decision = await self.approval.decide(checked, call.name, action, category, asks=asks, names=names)
        if isinstance(decision, Allow):
            return None
        if isinstance(decision, Ask):
            self.pending = PendingApproval(call, call.name, action, category, decision.prompt)
            return (
                CallOutcome(call, "pending", call.name, action),
                [self.secrets.rendered(self.renderer.approval_required(call.name, action, decision.prompt))],
                False,
            )
        return (
            CallOutcome(call, "denied", call.name, action, violation="denied"),
            [self.secrets.rendered(self.renderer.denied(call.name, action, decision.reason))],
            False,
        )

    # -- running --------------------------------------------------------------------------

    async def execute(self, call: ToolUse, checked: ValidCall, turn: Turn) -> CallResult:
        """Run an allowed call: the protocol is asked again (a held call's state may have changed)."""
        event, out = self._protocol(checked)
        if isinstance(out, Violation):
            return self._refused(call, checked, out)
        parts: list[Rendered] = []
        if not checked.browser:
            if out.effect is Effect.CLOSE_THEN_RUN:
                names = self.sessions.open
                for name in names:
                    await self.sessions.close(name)
                parts.append(self.renderer.auto_closed(call.name, names))
            outcome, rendered, ok = await self._run_host(call, checked, turn)
            return outcome, parts + rendered, ok
        name = checked.session or DEFAULT_SESSION
        move = self.sessions.state_of(name).apply(event)
        assert isinstance(move, Move)
        if event is Event.LAUNCH and not isinstance(checked.args, Launch):  # the dialect's opener
            checked = replace(checked, args=Launch.model_construct(url=getattr(checked.args, "url", None)))
        outcome, rendered, ok = await self._run_browser(call, checked, name)
        dynamic = ok and self.registry.profile.dynamic_tools and self.config.dynamic_tools
        first = event is Event.LAUNCH and self.sessions.open == (name,)
        if dynamic and (first or (event is Event.CLOSE and not self.sessions.open)):
            rendered = [*rendered, self.renderer.tools_changed(self.registry, opened=event is Event.LAUNCH)]
        return outcome, parts + rendered, ok

    async def _run_browser(self, call: ToolUse, checked: ValidCall, name: str) -> CallResult:
        action = checked.written or checked.action or ""
        named = None if name == DEFAULT_SESSION else name
        s = self.sessions.states[name]
        browser = self.sessions.browser(name)
        to_run: object = checked.args if checked.tab is None else InTab(checked.tab, checked.args)  # type: ignore[arg-type]
        used = [n for v in call.params.values() for n in names_in(v)]
        if used:
            why = self.secrets.refusal(used, _destination(checked, browser))
            if why is not None:
                log.warning("refused %s %s: %s", call.name, action, why)  # the host hears of it too
                told = self.secrets.rendered(self.renderer.denied(call.name, action, why))
                refused = CallOutcome(
                    call, "denied", call.name, action, violation="denied", session=named, text=told.text
                )
                return refused, [told], False
        prepare = getattr(browser, "prepare", None)  # a real browser session; stand-ins have none
        if prepare is not None:
            prepare(
                record_identity=self.record_identity,
                expected=self.expected.pop(name, None),
                secret=self.secrets.types_secret(call),
            )
        try:
            result = self.secrets.result(await browser.run(to_run))
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
            # an element hidden, disabled or covered), counted by the message's flow as a mistake
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
                [self.renderer.close_result(name, self.sessions.open)],
                True,
            )
        open_now = self.sessions.open
        if len(open_now) > 1:
            listed = tuple(f"{n} (this one)" if n == name else n for n in open_now)
            result = result.model_copy(update={"sessions": listed})
        return (
            CallOutcome(call, "ok", call.name, action, observation=result, session=named),
            [self._capped(self.renderer.browser_result(action, result))],
            True,
        )

    def _capped(self, r: Rendered) -> Rendered:
        """The last bound on what one result may say: ``max_result_chars``, with the cut stated."""
        limit = self.config.max_result_chars
        return r if len(r.text) <= limit else replace(r, text=cut(r.text, limit, newline=True))

    async def _run_host(self, call: ToolUse, checked: ValidCall, turn: Turn) -> CallResult:
        tool = self.registry.get(call.name)
        assert tool is not None
        refused = self._secret_refused(call, checked)
        if refused is not None:
            return refused
        try:
            out = tool.handler(checked.args)
            if inspect.isawaitable(out):
                out = await out
        except ServerLost as e:  # a server that broke during the call: not the model's mistake
            told = self.secrets.rendered(self.renderer.mcp_unavailable(e.server, e.why))
            lost = McpResult(
                e.server,
                (),
                tool=_stripped(getattr(checked.args, "tool_name", None)),
                uri=_stripped(getattr(checked.args, "uri", None)),
                unavailable=e.why,
            )
            return CallOutcome(call, "failed", call.name, output=told.text, mcp=lost), [told], False
        except Exception as e:  # a host handler's failure goes back to the model as an error result
            msg = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            return (
                CallOutcome(call, "failed", call.name, output=msg),
                [self.renderer.tool_failure(call.name, msg)],
                False,
            )
        if isinstance(out, McpResult):
            rendered = [self.secrets.rendered(self._capped(r)) for r in self.renderer.mcp_result(out)]
            output = self.secrets.hide(out.text()) if self.secrets.hide else out.text()
            status: Literal["ok", "failed"] = "failed" if out.is_error else "ok"
            return CallOutcome(call, status, call.name, output=output, mcp=out), rendered, not out.is_error
        text = out if isinstance(out, str) else _describe(out)
        if tool.completes:
            turn.completed = True
        return (
            CallOutcome(call, "ok", call.name, output=text),
            [self.renderer.tool_result(call.name, text)],
            True,
        )

    def _secret_refused(self, call: ToolUse, checked: ValidCall) -> CallResult | None:
        """An MCP call whose arguments name a secret not bound to its server: refused before it runs."""
        server = getattr(checked.args, "server_name", None)
        if server is None:
            return None
        left = [n for v in checked.args.model_dump().values() if isinstance(v, str) for n in names_in(v)]
        if not left:
            return None
        why = self.secrets.server_refusal(left, server.strip())
        log.warning("refused %s: %s", call.name, why)
        told = self.secrets.rendered(self.renderer.denied(call.name, None, why))
        return CallOutcome(call, "denied", call.name, violation="denied", text=told.text), [told], False


def _rule_names(args: BaseModel) -> tuple[str, ...]:
    """The approval rules' names for an MCP call, most specific first: mcp:SERVER/TOOL, mcp:SERVER."""
    server = str(getattr(args, "server_name", "")).strip()
    if not server:
        return ()
    tool = str(getattr(args, "tool_name", "")).strip()
    return (f"mcp:{server}/{tool}", f"mcp:{server}") if tool else (f"mcp:{server}",)


def _stripped(value: object) -> str | None:
    return value.strip() if isinstance(value, str) else None


def _describe(value: object) -> str:
    if value is None:
        return "(no output)"
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=2)
    return str(value)


def _destination(checked: ValidCall, browser: object) -> str | None:
    """Where a call's secret would go: the address it opens, or the page it acts on."""
    facts = getattr(checked.args, "facts", None)  # none on an action in a named tab: its page is used
    if facts is not None and facts.opens_address:
        url = getattr(checked.args, "url", None)
        if url:
            return str(url)
    current = getattr(browser, "current_url", None) or getattr(browser, "url", None)
    return str(current) if current else None
