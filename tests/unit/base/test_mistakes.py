"""The model's mistake has one shape, whichever layer finds it: a kind and a code."""

from __future__ import annotations

import pytest

from xmltools.base.mistakes import Mistake, WrongTarget
from xmltools.base.results import Failure
from xmltools.parser import ToolUse
from xmltools.protocol.machine import Violation
from xmltools.record.turn import CallOutcome, wrong_target
from xmltools.tools import CallError

CALL = ToolUse(name="browser_action", params={"action": "click"})


def test_each_layer_s_mistake_is_a_mistake_of_its_kind() -> None:
    error = CallError("missing_param", "the click action needs <coordinate>", "browser_action", "coordinate")
    assert isinstance(error, Mistake) and error.kind == "call" and error.code == "missing_param"
    assert isinstance(Violation("launch_first"), Mistake) and Violation("launch_first").kind == "protocol"
    assert WrongTarget("wrong_target", "no element").kind == "target"


def test_an_outcome_says_the_model_s_mistake_in_it() -> None:
    error = CallError("unknown_action", "…", "browser_action")
    invalid = CallOutcome(CALL, "invalid", "browser_action", error=error)
    assert invalid.mistake is error
    refused = CallOutcome(CALL, "refused", "browser_action", "click", violation="launch_first")
    assert refused.mistake == Violation("launch_first")
    target = Failure(kind="target", message="the ref e9 is not on the page")
    missed = CallOutcome(CALL, "failed", "browser_action", "click", failure=target)
    assert missed.mistake == WrongTarget("wrong_target", "the ref e9 is not on the page")
    assert wrong_target(missed)


@pytest.mark.parametrize(
    "outcome",
    [
        CallOutcome(CALL, "ok", "browser_action", "click"),
        CallOutcome(
            CALL, "failed", "browser_action", "click", failure=Failure(kind="timeout", message="slow")
        ),
        CallOutcome(CALL, "denied", "browser_action", "click", violation="denied"),
        CallOutcome(CALL, "pending", "browser_action", "click"),
        CallOutcome(CALL, "not_run", "browser_action", "click"),
    ],
    ids=["ok", "browser failure", "denied", "held", "not run"],
)
def test_a_browser_failure_a_refusal_by_the_host_or_a_held_call_is_no_mistake(outcome: CallOutcome) -> None:
    assert outcome.mistake is None
    assert not wrong_target(outcome)
