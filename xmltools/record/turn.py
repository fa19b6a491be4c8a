"""What interpreting one assistant message produced: pure data, no behaviour.

:class:`Turn` is the whole answer to one message (the messages to append, the
calls found, what became of each, the protocol state); :class:`CallOutcome` is
what became of one call; :class:`Rendered` is one piece of the user message that
carries results back.  The interpreter makes them, the transcript writes them,
the loop and the reports read them.

Imports only pure modules (parser, protocol, results, approval, tools): never
the interpreter, the renderer, Jinja2 or Playwright.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..base.mistakes import Mistake, WrongTarget
from ..base.progress import TaskProgress
from ..base.results import Failure, Observation
from ..mcp.results import McpResult
from ..parser import Event as ParseEvent
from ..parser import ToolUse
from ..protocol.approval import PendingApproval
from ..protocol.machine import State, Violation
from ..render.messages import Rendered
from ..tools import CallError

__all__ = ["CallOutcome", "CallStatus", "StreamUpdate", "Turn", "turn_summary", "wrong_target"]

CallStatus = Literal["ok", "failed", "invalid", "refused", "denied", "pending", "not_run"]
# the statuses of a call that did not do what it was meant to
NOT_DONE: frozenset[str] = frozenset({"failed", "invalid", "refused", "denied", "pending", "not_run"})


@dataclass(frozen=True)
class CallOutcome:
    """What became of one call of the message."""

    call: ToolUse
    status: CallStatus
    tool: str
    action: str | None = None
    observation: Observation | None = None
    failure: Failure | None = None
    error: CallError | None = None
    violation: str | None = None
    output: str | None = None  # a host tool's result
    mcp: McpResult | None = None  # an MCP server's answer (or why the server was unavailable)
    session: str | None = None  # the named browser session the call acted on (None: the default one)
    text: str = ""  # what was rendered back to the model about this call ("" when an earlier call's
    #                 error or note covers it: the calls not run share one note, repeated errors show once)

    @property
    def mistake(self) -> Mistake | None:
        """The model's mistake in this call, whichever layer found it; None when it made none."""
        if self.status == "invalid":
            return self.error if self.error is not None else Mistake("invalid_call")
        if self.status == "refused":
            return Violation(self.violation or "refused")
        if self.status == "failed" and self.failure is not None and self.failure.kind == "target":
            return WrongTarget("wrong_target", self.failure.message)
        return None


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
    # the model's checklist of its task, when its dialect has one (cline's task_progress) and the
    # message gave it: for the host, never an error
    progress: TaskProgress | None = None

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
    """What one chunk of a streamed message gave: the parser's events, and whether a call is complete."""

    events: list[ParseEvent]
    call_complete: bool  # the first complete call has closed: the host may stop the model's stream


def wrong_target(outcome: CallOutcome) -> bool:
    """A browser failure that is the model's mistake: the element it named could not be acted on."""
    return isinstance(outcome.mistake, WrongTarget)


def turn_summary(turn: Turn) -> str:
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
