"""The browser protocol as a table: states × events → a move or a violation.

``launch`` first, only ``browser_action`` while the browser is open (by
default), ``close`` last, one tool per message.  The table is data; :func:`step`
reads it.  :class:`Session` adds what the protocol remembers between messages:
the state, the consecutive-mistake counter and the time of the last activity.
Time is always passed in: nothing here reads a clock.  Pure: no I/O, and
neither Playwright nor Jinja2 is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar

from ..actions import ACTIONS
from ..base.mistakes import Mistake, MistakeKind
from ..errors import ConfigError
from ..parser import Block, ToolUse

__all__ = [
    "TABLE",
    "Effect",
    "Event",
    "MessagePlan",
    "Move",
    "Policy",
    "Session",
    "State",
    "Violation",
    "mermaid",
    "plan_message",
    "step",
]


class State(StrEnum):
    """A browser session's state in the protocol: idle (no browser open) or active."""

    IDLE = "idle"
    ACTIVE = "active"


class Event(StrEnum):
    LAUNCH = "launch"
    ACTION = "browser action"  # any browser action other than launch and close
    CLOSE = "close"
    OTHER_TOOL = "other tool"


class Policy(StrEnum):
    """What happens to another tool while the browser is open."""

    REJECT = "reject"  # an error: close the browser first (the default)
    AUTO_CLOSE = "auto_close"  # close the browser silently, then run the tool
    ALLOW = "allow"  # run the tool and keep the browser open


class Effect(StrEnum):
    RUN = "run"
    RELAUNCH = "relaunch"  # close the open browser, then launch
    CLOSE_THEN_RUN = "close then run"


@dataclass(frozen=True)
class Move:
    next: State
    effect: Effect = Effect.RUN


@dataclass(frozen=True)
class Violation(Mistake):
    """A move the table refuses (a mistake of kind ``protocol``)."""

    kind: ClassVar[MistakeKind] = "protocol"
    code: str  # launch_first, nothing_to_close, close_first


_OTHER_WHILE_ACTIVE: dict[Policy, Move | Violation] = {
    Policy.REJECT: Violation("close_first"),
    Policy.AUTO_CLOSE: Move(State.IDLE, Effect.CLOSE_THEN_RUN),
    Policy.ALLOW: Move(State.ACTIVE),
}

TABLE: dict[Policy, dict[State, dict[Event, Move | Violation]]] = {
    policy: {
        State.IDLE: {
            Event.LAUNCH: Move(State.ACTIVE),
            Event.ACTION: Violation("launch_first"),
            Event.CLOSE: Violation("nothing_to_close"),
            Event.OTHER_TOOL: Move(State.IDLE),
        },
        State.ACTIVE: {
            Event.LAUNCH: Move(State.ACTIVE, Effect.RELAUNCH),
            Event.ACTION: Move(State.ACTIVE),
            Event.CLOSE: Move(State.IDLE),
            Event.OTHER_TOOL: other,
        },
    }
    for policy, other in _OTHER_WHILE_ACTIVE.items()
}


def step(state: State, event: Event, policy: Policy = Policy.REJECT) -> Move | Violation:
    """The outcome of ``event`` in ``state``: read from the table, nothing else."""
    return TABLE[Policy(policy)][State(state)][Event(event)]


_SESSION_EVENTS = {"open": Event.LAUNCH, "close": Event.CLOSE}


def event_for(tool: str, action: str | None, browser_tool: str = "browser_action") -> Event:
    """The event of a call of ``tool``; a browser action's is what it declares of the session."""
    if tool != browser_tool:
        return Event.OTHER_TOOL
    model = ACTIONS.get(action or "")
    move = model.facts.session if model is not None else None
    return _SESSION_EVENTS[move] if move is not None else Event.ACTION


def mermaid(policy: Policy = Policy.REJECT) -> str:
    """The table as a Mermaid state diagram (violations drawn as refused self-loops)."""
    lines = ["stateDiagram-v2", "    [*] --> idle"]
    for state, row in TABLE[Policy(policy)].items():
        for event, out in row.items():
            if isinstance(out, Move):
                label = event.value if out.effect is Effect.RUN else f"{event.value} ({out.effect.value})"
                lines.append(f"    {state.value} --> {out.next.value}: {label}")
            else:
                lines.append(f"    {state.value} --> {state.value}: {event.value} refused ({out.code})")
    return "\n".join(lines)


# -- one tool per message ----------------------------------------------------------------


@dataclass(frozen=True)
class MessagePlan:
    """Which call of a message runs, and what becomes of the others."""

    run: ToolUse | None  # the first complete call
    broken: tuple[ToolUse, ...]  # malformed or truncated calls before it (or all of them, if none runs)
    not_run: tuple[ToolUse, ...]  # calls after the one that runs

    @property
    def calls(self) -> int:
        return (self.run is not None) + len(self.broken) + len(self.not_run)


def plan_message(blocks: Sequence[Block]) -> MessagePlan:
    """The first complete call runs; earlier broken calls are reported; later calls are not run."""
    run: ToolUse | None = None
    broken: list[ToolUse] = []
    later: list[ToolUse] = []
    for b in blocks:
        if not isinstance(b, ToolUse):
            continue
        if run is not None:
            later.append(b)
        elif b.complete:
            run = b
        else:
            broken.append(b)
    return MessagePlan(run, tuple(broken), tuple(later))


# -- the session ----------------------------------------------------------------------


@dataclass
class Session:
    """What the protocol remembers between messages.  All times are seconds, passed in."""

    policy: Policy = Policy.REJECT
    mistake_limit: int = 3
    idle_timeout: float | None = None
    state: State = State.IDLE
    mistakes: int = 0
    last_activity: float | None = None
    history: list[tuple[State, Event, Move | Violation]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.policy = Policy(self.policy)
        if self.mistake_limit < 1:
            raise ConfigError("mistake_limit must be at least 1")
        if self.idle_timeout is not None and self.idle_timeout <= 0:
            raise ConfigError("idle_timeout must be positive (or None for no timeout)")

    def apply(self, event: Event) -> Move | Violation:
        """Apply an event: a move changes the state; a violation leaves it as it was."""
        out = step(self.state, event, self.policy)
        self.history.append((self.state, event, out))
        if isinstance(out, Move):
            self.state = out.next
        return out

    @property
    def limit_reached(self) -> bool:
        return self.mistakes >= self.mistake_limit

    def mistake(self) -> bool:
        """Count a model mistake; True when this one reaches the limit."""
        self.mistakes += 1
        return self.limit_reached

    def success(self) -> None:
        self.mistakes = 0

    def touch(self, now: float) -> None:
        self.last_activity = now

    def idle_expired(self, now: float) -> bool:
        """True when the browser is open and has been idle past the timeout."""
        return (
            self.state is State.ACTIVE
            and self.idle_timeout is not None
            and self.last_activity is not None
            and now - self.last_activity >= self.idle_timeout
        )

    def browser_lost(self) -> None:
        """The browser died or was closed from outside: nothing is open any more."""
        self.state = State.IDLE
