"""The protocol table, driven over every (policy, state, event); the session rules."""

from __future__ import annotations

import itertools
import re

import pytest

from xmltools import ConfigError, parse
from xmltools.protocol.machine import (
    TABLE,
    Effect,
    Event,
    Move,
    Policy,
    Session,
    State,
    Violation,
    event_for,
    mermaid,
    plan_message,
    step,
)

# The expected outcome of every cell, written out independently of TABLE (DESIGN §4).
EXPECTED: dict[tuple[State, Event], Move | Violation | dict[Policy, Move | Violation]] = {
    (State.IDLE, Event.LAUNCH): Move(State.ACTIVE),
    (State.IDLE, Event.ACTION): Violation("launch_first"),
    (State.IDLE, Event.CLOSE): Violation("nothing_to_close"),
    (State.IDLE, Event.OTHER_TOOL): Move(State.IDLE),
    (State.ACTIVE, Event.LAUNCH): Move(State.ACTIVE, Effect.RELAUNCH),
    (State.ACTIVE, Event.ACTION): Move(State.ACTIVE),
    (State.ACTIVE, Event.CLOSE): Move(State.IDLE),
    (State.ACTIVE, Event.OTHER_TOOL): {
        Policy.REJECT: Violation("close_first"),
        Policy.AUTO_CLOSE: Move(State.IDLE, Effect.CLOSE_THEN_RUN),
        Policy.ALLOW: Move(State.ACTIVE),
    },
}

CELLS = list(itertools.product(Policy, State, Event))


def expected(policy: Policy, state: State, event: Event) -> Move | Violation:
    out = EXPECTED[(state, event)]
    return out[policy] if isinstance(out, dict) else out


def test_the_table_covers_every_cell() -> None:
    for policy in Policy:
        assert set(TABLE[policy]) == set(State)
        for state in State:
            assert set(TABLE[policy][state]) == set(Event)


@pytest.mark.parametrize(("policy", "state", "event"), CELLS)
def test_step_follows_the_table(policy: Policy, state: State, event: Event) -> None:
    assert step(state, event, policy) == expected(policy, state, event)


@pytest.mark.parametrize(("policy", "state", "event"), CELLS)
def test_session_applies_moves_and_ignores_violations(policy: Policy, state: State, event: Event) -> None:
    s = Session(policy=policy, state=state)
    out = s.apply(event)
    want = expected(policy, state, event)
    assert out == want
    assert s.state == (want.next if isinstance(want, Move) else state)  # a violation leaves the state alone
    assert s.history[-1] == (state, event, want)


def test_events_of_calls() -> None:
    assert event_for("browser_action", "launch") is Event.LAUNCH
    assert event_for("browser_action", "close") is Event.CLOSE
    assert event_for("browser_action", "click") is Event.ACTION
    assert event_for("write_note", None) is Event.OTHER_TOOL


def test_one_tool_per_message() -> None:
    msg = (
        "<browser_action><action>click</action><x/></browser_action>"  # broken: unknown tag
        "<browser_action><action>launch</action><url>http://a</url></browser_action>"
        "<browser_action><action>close</action></browser_action>"
        "<browser_action><action>scroll_down</action>"
    )
    plan = plan_message(parse(msg))
    assert plan.run is not None and plan.run.params["action"] == "launch"
    assert [b.params["action"] for b in plan.broken] == ["click"]
    assert [b.params["action"] for b in plan.not_run] == ["close", "scroll_down"]
    assert plan.calls == 4
    assert plan_message(parse("just text")).calls == 0
    truncated = plan_message(parse("<browser_action><action>close</action>"))
    assert truncated.run is None and len(truncated.broken) == 1


def test_mistake_counter() -> None:
    s = Session(mistake_limit=3)
    assert not s.mistake() and not s.mistake()
    s.success()
    assert s.mistakes == 0
    assert not s.mistake() and not s.mistake()
    assert s.mistake() and s.limit_reached


def test_idle_timeout_is_a_pure_rule() -> None:
    s = Session(idle_timeout=30.0)
    s.touch(100.0)
    assert not s.idle_expired(1000.0)  # idle: nothing is open
    s.apply(Event.LAUNCH)
    s.touch(100.0)
    assert not s.idle_expired(129.9)
    assert s.idle_expired(130.0)
    assert not Session(idle_timeout=None, state=State.ACTIVE, last_activity=0.0).idle_expired(1e9)


def test_browser_lost_goes_idle() -> None:
    s = Session(state=State.ACTIVE)
    s.browser_lost()
    assert s.state is State.IDLE


def test_bad_settings_are_host_errors() -> None:
    with pytest.raises(ConfigError):
        Session(mistake_limit=0)
    with pytest.raises(ConfigError):
        Session(idle_timeout=0)
    with pytest.raises(ValueError):
        Session(policy="sometimes")  # type: ignore[arg-type]


def test_mermaid_diagram_is_drawn_from_the_table() -> None:
    text = mermaid()
    for state, event in itertools.product(State, Event):
        out = expected(Policy.REJECT, state, event)
        target = out.next.value if isinstance(out, Move) else state.value
        assert re.search(rf"^    {state.value} --> {target}: {re.escape(event.value)}", text, re.M)
    assert "close_first" in text and "auto_close" not in text
    assert "close then run" in mermaid(Policy.AUTO_CLOSE)


def test_the_docs_diagram_matches_the_table() -> None:
    from docgen import part

    page = part("concepts/protocol.md", "xmltools.protocol.mermaid()")
    m = re.search(r"```mermaid\n(.*?)\n```", page, re.S)
    assert m, "docs/concepts/protocol.md has no mermaid block"
    assert m.group(1) == mermaid(), "docs/concepts/protocol.md's diagram drifted: run python tests/docgen.py"
