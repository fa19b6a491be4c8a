"""The cline profile: Cline's six actions and its trimming, and task_progress given to the host.

task_progress is the model's checklist, which Cline's prompt asks for on every
tool: the cline profile takes it on every call (the host's tools too) and hands
it to the host on the turn, as a loop event, in the transcript and in the
report, never as an error; the roo profile keeps refusing it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from support.fakes import FakeBrowser

from xmltools import (
    Config,
    Interpreter,
    LoopEvent,
    ParamDelta,
    StreamParser,
    TaskProgress,
    Tool,
    ToolRegistry,
    ToolUse,
    load_transcript,
    parse,
    run_loop,
)
from xmltools.actions import Launch, Type
from xmltools.profiles import CLINE, PROFILES, ROO, get_profile
from xmltools.record.report import build_report
from xmltools.tools import COMPLETION_TOOL, CallError, ValidCall

CHECKLIST = "- [x] Read the issue\n- [ ] Reproduce it\n- [ ] Fix it"


def call(tool: str = "browser_action", progress: str | None = CHECKLIST, **params: str) -> str:
    """A call as Cline's models write it, with its checklist last."""
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in params.items())
    if progress is not None:
        inner += f"<task_progress>\n{progress}\n</task_progress>\n"
    return f"<{tool}>\n{inner}</{tool}>"


LAUNCH = "Opening the app.\n" + call(action="launch", url="http://127.0.0.1:9/")


def registry(profile: str = "cline") -> ToolRegistry:
    reg = ToolRegistry(profile=profile)  # type: ignore[arg-type]
    reg.register(COMPLETION_TOOL)
    return reg


def only_call(text: str, reg: ToolRegistry) -> ToolUse:
    [found] = [b for b in parse(text, tools=reg) if isinstance(b, ToolUse)]
    return found


# -- the profile -----------------------------------------------------------------------------------


def test_the_profile_is_cline_s_browser() -> None:
    assert get_profile("cline") is CLINE and PROFILES["cline"] is CLINE
    assert CLINE.names == ("launch", "click", "type", "scroll_down", "scroll_up", "close")
    assert CLINE.syntax.params == ("action", "url", "coordinate", "text", "task_progress")
    assert CLINE.syntax.raw == frozenset()  # every value trimmed, the text to type too
    assert CLINE.progress_param == "task_progress" and ROO.progress_param is None
    assert Config(profile="cline").profile == "cline"


def test_every_tool_takes_task_progress_in_cline_and_none_in_roo() -> None:
    for name in ("browser_action", "attempt_completion"):
        assert "task_progress" in registry().vocabulary[name].params
        assert "task_progress" not in registry("roo").vocabulary[name].params


def test_cline_trims_the_text_to_type_where_roo_keeps_its_spaces() -> None:
    text = call(action="type", text="  two spaces  ", progress=None)
    cline = registry().validate(only_call(text, registry()))
    roo = registry("roo").validate(only_call(text, registry("roo")))
    assert isinstance(cline, ValidCall) and isinstance(cline.args, Type) and cline.args.text == "two spaces"
    assert isinstance(roo, ValidCall) and isinstance(roo.args, Type) and roo.args.text == "  two spaces  "


def test_actions_roo_has_and_cline_has_not_are_refused() -> None:
    err = registry().validate(only_call(call(action="hover", coordinate="1,1", progress=None), registry()))
    assert isinstance(err, CallError) and err.code == "unknown_action"
    assert "launch, click, type, scroll_down, scroll_up, close" in err.message


# -- task_progress: accepted by cline, refused by roo -------------------------------------------------


def test_cline_accepts_task_progress_and_finds_the_checklist() -> None:
    reg = registry()
    found = only_call(LAUNCH, reg)
    checked = reg.validate(found)
    assert isinstance(checked, ValidCall) and isinstance(checked.args, Launch)
    assert reg.call_params(found) == {"action": "launch", "url": "http://127.0.0.1:9/"}
    progress = reg.progress([found])
    assert progress == TaskProgress(CHECKLIST, "browser_action", 0)
    assert [(i.done, i.label) for i in progress.items] == [
        (True, "Read the issue"),
        (False, "Reproduce it"),
        (False, "Fix it"),
    ]
    assert progress.summary() == "1 of 3 done"


def test_roo_refuses_task_progress_as_it_always_has() -> None:
    reg = registry("roo")
    found = only_call(LAUNCH, reg)
    err = reg.validate(found)
    assert isinstance(err, CallError) and err.code == "malformed_call"
    assert "<task_progress> is not a parameter of <browser_action>" in err.message
    assert reg.progress([found]) is None


def test_the_host_gets_the_checklist_on_the_turn_never_an_error() -> None:
    with Interpreter(Config(profile="cline"), browser=FakeBrowser()) as it:
        turn = it.handle(LAUNCH)
    assert [o.status for o in turn.outcomes] == ["ok"] and turn.mistakes == 0
    assert turn.progress is not None and turn.progress.text == CHECKLIST
    assert "task_progress" not in json.dumps(turn.result)  # the model is told nothing of it
    with Interpreter(Config(profile="roo"), browser=FakeBrowser()) as it:
        refused = it.handle(LAUNCH)
    assert [o.status for o in refused.outcomes] == ["invalid"] and refused.progress is None


def test_a_host_tool_takes_it_too() -> None:
    with Interpreter(Config(profile="cline"), registry=registry(), browser=FakeBrowser()) as it:
        turn = it.handle(call("attempt_completion", "- [x] All of it", result="Fixed."))
    assert [o.status for o in turn.outcomes] == ["ok"] and turn.completed
    assert turn.progress == TaskProgress("- [x] All of it", "attempt_completion", 0)


class Plan(BaseModel):
    task_progress: str


def test_a_host_tool_that_declares_it_keeps_it_as_its_own() -> None:
    reg = registry()
    reg.register(Tool("plan", Plan, lambda p: p.task_progress))
    found = only_call(call("plan", "- [ ] mine"), reg)
    checked = reg.validate(found)
    assert isinstance(checked, ValidCall) and checked.args == Plan(task_progress="- [ ] mine")
    assert reg.progress([found]) is None


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # the run call's checklist
        (call(action="close", progress="- [x] b"), "- [x] b"),
        # a broken call before the one that runs, and the one that runs: the last wins
        (
            call(action="close", progress="- [x] a", bogus="1") + call(action="close", progress="- [x] b"),
            "- [x] b",
        ),
        # a call after the first complete one is not run: its checklist does not count
        (call(action="close", progress="- [x] a") + call(action="close", progress="- [x] b"), "- [x] a"),
        # a call cut short counts for nothing
        (call(action="close", progress="- [x] a")[:-5], None),
        # an empty checklist is none
        (call(action="close", progress="  "), None),
    ],
)
def test_which_checklist_a_message_gives(message: str, expected: str | None) -> None:
    reg = registry()
    progress = reg.progress(parse(message, tools=reg))
    assert (progress.text if progress is not None else None) == expected


def test_a_checklist_without_boxes_is_kept_as_written() -> None:
    p = TaskProgress("1. read\n2) fix [x] later\n* [X] shipped")
    assert [(i.done, i.label) for i in p.items] == [(True, "shipped")]
    assert TaskProgress("just a note").summary() == "a checklist without checkboxes"


def test_while_streaming_the_checklist_arrives_as_parameter_deltas() -> None:
    sp = StreamParser(registry())
    got = ""
    for i in range(0, len(LAUNCH), 7):
        got += "".join(
            e.text
            for e in sp.feed(LAUNCH[i : i + 7])
            if isinstance(e, ParamDelta) and e.name == "task_progress"
        )
    sp.close()
    assert got.strip() == CHECKLIST


# -- in the loop, the transcript and the report ------------------------------------------------------


def test_a_loop_tells_the_host_a_progress_event_after_the_turn() -> None:
    replies = [
        LAUNCH,
        call(action="close", progress="- [x] Read the issue\n- [x] Reproduce it\n- [ ] Fix it"),
    ]

    def model(messages: list[dict[str, Any]]) -> str:
        n = sum(1 for m in messages if m["role"] == "assistant")
        return replies[n] if n < len(replies) else "Done."

    events: list[LoopEvent] = []
    with Interpreter(Config(profile="cline"), browser=FakeBrowser()) as it:
        run_loop(model, [{"role": "user", "content": "fix it"}], interpreter=it, on_event=events.append)
    kinds = [(e.kind, e.index) for e in events]
    assert kinds[:4] == [("turn", 0), ("progress", 0), ("turn", 1), ("progress", 1)]
    assert [e.note for e in events if e.kind == "progress"][1].endswith("- [ ] Fix it")
    assert all(e.turn is not None for e in events if e.kind == "progress")


def test_the_transcript_keeps_it_and_the_report_shows_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Interpreter(Config(profile="cline"), browser=FakeBrowser()) as it:
        it.record(path)
        it.handle(LAUNCH)
        it.handle(call(action="close", progress=None))
    t = load_transcript(path)
    assert [a.progress for a in t.assistant_messages] == [CHECKLIST, None]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["progress"] for r in lines if r.get("role") == "assistant" and "progress" in r] == [CHECKLIST]
    html = build_report(t)
    step = html[html.index('id="step-1"') : html.index('id="step-2"')]
    assert "Task progress" in step and "1 of 3 done" in step
    assert '<li class="done">&#9745; Read the issue</li>' in step
    assert '<li class="todo">&#9744; Fix it</li>' in step
    assert "Task progress" not in html[html.index('id="step-2"') :]
