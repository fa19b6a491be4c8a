"""The pytest plugin's failure message, without pytest or a browser: the first problem leads, the
others follow in step order, a long list is cut, and each line is one line; and how the runner the
plugin and the command share says a transcript cut short."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from support.helpers import ba, scenario

from xmltools.record.reader import TranscriptWarning
from xmltools.record.replayed import Drift, ReplayResult, ReplayStep
from xmltools.record.turn import Turn
from xmltools.replaying.plugin import MAX_PROBLEMS, failure_message
from xmltools.replaying.runner import ReplayOptions, ReplayRunner


def _step(index: int, *, drifts: list[Drift] = (), failures: list[str] = ()) -> ReplayStep:  # type: ignore[assignment]
    turn = Turn(assistant={"role": "assistant", "content": ""}, result=None, blocks=[])
    return ReplayStep(index, "", turn, [], drifts=list(drifts), failures=list(failures))


def test_the_first_step_that_went_wrong_leads_and_the_report_closes() -> None:
    result = ReplayResult(
        steps=[
            _step(1),
            _step(2, drifts=[Drift(2, "url", "{base_url}/a", "{base_url}/b")]),
            _step(3, failures=["browser_action click: failed (target): nothing there"]),
        ],
        mode="live",
    )
    text = failure_message("run.jsonl", result.outcome, result, Path("/out/run.replay.html"))
    assert text.splitlines() == [
        "run.jsonl failed: step 2: url expected '{base_url}/a', got '{base_url}/b'",
        "  step 3: browser_action click: failed (target): nothing there",
        "report: /out/run.replay.html",
    ]


def test_a_long_list_is_cut_and_each_line_stays_one_short_line() -> None:
    many = [_step(k, drifts=[Drift(k, "console", ["x\n" * 400], [])]) for k in range(1, 30)]
    result = ReplayResult(steps=many, mode="live", differences=["viewport: 800x500 from the recording"])
    lines = failure_message("run.jsonl", "drifted", result, None).splitlines()
    assert lines[0].startswith("run.jsonl drifted: step 1: console expected")
    assert lines[MAX_PROBLEMS + 1] == f"  and {29 - MAX_PROBLEMS - 1} more, in the report"
    assert (
        lines[-1] == "settings of the recording that differ from here: viewport: 800x500 from the recording"
    )
    assert len(lines) == MAX_PROBLEMS + 3 and all(len(line) < 300 for line in lines)


def test_drift_that_only_warns_is_not_named_as_the_cause() -> None:
    result = ReplayResult(
        steps=[
            _step(1, drifts=[Drift(1, "title", "A", "B")]),
            _step(2, failures=["browser_action close: refused"]),
        ],
        mode="live",
        drift="warn",
    )
    assert failure_message("run.jsonl", result.outcome, result, None) == (
        "run.jsonl failed: step 2: browser_action close: refused"
    )


def test_a_front_end_says_a_cut_last_record_in_one_line_and_a_library_caller_is_warned(
    tmp_path: Path,
) -> None:
    path = scenario(tmp_path / "s.jsonl", ba("launch", url="http://a/"), ba("close"))
    path.write_text(path.read_text()[:-20])  # the close, cut short
    said: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runner = ReplayRunner(path, ReplayOptions(offline=True), say=said.append)
    assert len(said) == 1 and re.fullmatch(
        rf"warning: {re.escape(str(path))}:3: the last record is incomplete \(cut at \d+ characters\);"
        " the 2 complete records before it are kept",
        said[0],
    )
    assert len(runner.transcript.assistant_messages) == 1
    with pytest.warns(TranscriptWarning, match=r"s\.jsonl:3: the last record is incomplete"):
        ReplayRunner(path, ReplayOptions(offline=True))
