"""``xmltools run`` as a script and a person use it: the answer alone on stdout (or --json), the turns on
stderr once each, a spinner on a terminal only, the site's address (--site-url, --serve) recorded as
{base_url}, a headed browser without a display and an unreachable model each said in one line."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.fakes import FakeBrowser
from support.helpers import SITE, ba
from support.openai_server import ScriptedServer, by_turn

from xmltools.cli import build_parser, main
from xmltools.cli.status import Status
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.record.transcript import load_transcript

LAUNCH = ba("launch", url="http://127.0.0.1:9/")
DONE = "<attempt_completion>\n<result>\nMilk is on the list.\n</result>\n</attempt_completion>"


@pytest.fixture(autouse=True)
def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No settings from the machine or the folder, and a stand-in browser (no Chromium)."""
    import xmltools.interpreter

    for name in ("XMLTOOLS_CHROMIUM", "XMLTOOLS_EXECUTABLE", "XMLTOOLS_REMOTE", "XMLTOOLS_HEADLESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)

    class WithStandIn(AsyncInterpreter):
        def __init__(self, config: Config | None = None, **kw: Any) -> None:
            super().__init__(config, browser=FakeBrowser(), **kw)

    monkeypatch.setattr(xmltools.interpreter, "AsyncInterpreter", WithStandIn)


def run_args(base: str, *more: str, task: str = "Add milk to the list") -> list[str]:
    return ["run", "--base-url", base, "--model", "m", "--task", task, "--retries", "0", *more]


def test_stdout_holds_the_answer_alone_and_stderr_the_turns(capsys: pytest.CaptureFixture[str]) -> None:
    server = ScriptedServer(by_turn([LAUNCH, ba("close"), DONE]))
    with server.running() as base:
        assert main(run_args(base)) == 0
    out, err = capsys.readouterr()
    assert out == "Milk is on the list.\n"
    lines = err.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["turn 1", "turn 2", "turn 3", "stopped"]
    assert lines[2].startswith("turn 3: attempt_completion: ok")


def test_an_answer_without_a_tool_is_printed_and_a_stopped_run_prints_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = ScriptedServer(by_turn([LAUNCH, "Milk is on the list."]))
    with server.running() as base:
        assert main(run_args(base)) == 0
    assert capsys.readouterr().out == "Milk is on the list.\n"
    server = ScriptedServer(by_turn([LAUNCH], after=ba("scroll_down")))
    with server.running() as base:
        assert main(run_args(base, "--max-turns", "3")) == 1
    out, err = capsys.readouterr()
    assert out == "" and "stopped: max_turns after 3 turns" in err


def test_json_is_one_object_a_script_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = ScriptedServer(by_turn([LAUNCH, ba("close"), DONE]))
    record, report = tmp_path / "run.jsonl", tmp_path / "run.html"
    with server.running() as base:
        rc = main(run_args(base, "--json", "--record", str(record), "--report", str(report)))
    out, err = capsys.readouterr()
    assert rc == 0 and len(out.splitlines()) == 1
    summary = json.loads(out)
    usage = summary.pop("usage")
    assert summary == {
        "stop_reason": "completed",
        "turns": 3,
        "cost": 0.0,
        "answer": "Milk is on the list.",
        "site_url": None,
        "recording": str(record),
        "report": str(report),
        "traces": [],
    }
    assert usage["calls"] == 3 and usage["estimated_calls"] == 3 and usage["prompt_tokens"] > 0
    assert "stopped: completed after 3 turns" in err  # the person's lines stay on stderr


def test_a_typed_result_is_printed_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"item": {"type": "string"}}}))
    typed = '<attempt_completion>\n<result>{"item":  "milk"}</result>\n</attempt_completion>'
    server = ScriptedServer(by_turn([typed]))
    with server.running() as base:
        assert main(run_args(base, "--result-schema", str(schema))) == 0
        assert capsys.readouterr().out == '{"item": "milk"}\n'
        assert main(run_args(base, "--result-schema", str(schema), "--json")) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["result"] == {"item": "milk"} and summary["answer"] == '{"item":  "milk"}'


def test_verbose_shows_each_turn_once(capsys: pytest.CaptureFixture[str]) -> None:
    click = ba("click", coordinate="100,100")
    server = ScriptedServer(by_turn([LAUNCH, *[click] * 6]))  # the same click: nudged after 3
    with server.running() as base:
        assert main(["-v", *run_args(base, "--max-turns", "5")]) == 1
    out, err = capsys.readouterr()
    both = out + err
    assert both.count("turn 1:") == 1 and both.count("turn 5:") == 1
    assert both.count("nudge") == 1  # the log's line, not the run's as well
    assert "INFO xmltools.loop: turn 1:" in err and out == ""


@pytest.mark.parametrize("how", ["--headed", "XMLTOOLS_HEADLESS=false"])
def test_a_headed_browser_without_a_display_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    if how.startswith("XMLTOOLS_"):
        monkeypatch.setenv("XMLTOOLS_HEADLESS", "false")
    server = ScriptedServer(by_turn([LAUNCH, DONE]))
    with server.running() as base:
        rc = main(run_args(base, *([how] if how == "--headed" else [])))
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
    said = "--headed" if how == "--headed" else "the setting headless = false"
    assert err.startswith(f"xmltools: {said} shows the browser window, and this machine has no display")
    assert server.requests == []  # said before the model was asked anything


def test_the_site_url_fills_the_task_and_is_recorded_as_base_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = "http://127.0.0.1:9"
    server = ScriptedServer(by_turn([ba("launch", url=f"{site}/list.html"), ba("close"), DONE]))
    record = tmp_path / "run.jsonl"
    with server.running() as base:
        task = "Add milk at {base_url}/list.html"
        assert main(run_args(base, "--site-url", site + "/", "--record", str(record), task=task)) == 0
    assert server.requests[0]["messages"][1]["content"] == f"Add milk at {site}/list.html"
    t = load_transcript(record)
    assert t.header.base_url == site and t.message("user") == "Add milk at {base_url}/list.html"
    launch = t.assistant_messages[0].content
    assert "<url>{base_url}/list.html</url>" in launch and site not in launch
    capsys.readouterr()
    # a task that does not name the site is told where it is
    with server.running() as base:
        assert main(run_args(base, "--site-url", site, task="Add milk to the list")) == 0
    assert server.requests[-1]["messages"][1]["content"] == f"Add milk to the list\n\nThe site is at {site}/."


def test_serve_gives_the_site_a_served_folders_address(capsys: pytest.CaptureFixture[str]) -> None:
    server = ScriptedServer(by_turn([DONE]))
    with server.running() as base:
        assert main(run_args(base, "--serve", str(SITE), task="Open {base_url}/form.html")) == 0
    sent = server.requests[0]["messages"][1]["content"]
    err = capsys.readouterr().err
    assert sent.startswith("Open http://127.0.0.1:") and sent.endswith("/form.html")
    assert f"serving {SITE} at {sent.split()[1].removesuffix('/form.html')}" in err


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (["--serve", str(SITE), "--site-url", "http://127.0.0.1:9"], "--serve gives the site its address"),
        (["--site-url", "127.0.0.1:9"], "--site-url 127.0.0.1:9: give an address such as http://"),
        ([], "the task names {base_url}: give the site's address with --site-url or --serve"),
    ],
)
def test_a_site_given_wrong_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], more: list[str], said: str
) -> None:
    server = ScriptedServer(by_turn([DONE]))
    with server.running() as base:
        assert main(run_args(base, *more, task="Open {base_url}/")) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"xmltools: {said}") and len(err.splitlines()) == 1
    assert server.requests == []


class Terminal(io.StringIO):
    """What a terminal is to the status line: a stream that says it is a TTY."""

    def isatty(self) -> bool:
        return True


def test_the_spinner_shows_what_the_run_waits_for_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    server = ScriptedServer(by_turn([LAUNCH, DONE]), latency=0.4)  # each reply takes a while
    with server.running() as base:
        assert main(run_args(base, "--max-turns", "2")) == 1
    shown = terminal.getvalue()
    assert "turn 1: waiting for the model's reply (0." in shown
    assert "turn 1: waiting for browser_action launch" in shown
    assert "turn 2: waiting for attempt_completion" in shown
    # each line of the run's own starts where the status line was cleared, and ends the line
    assert "\rturn 1: browser_action launch: ok" in shown and "\rstopped: max_turns" in shown
    said = [ln.rsplit("\r", 1)[-1] for ln in shown.split("\n")]
    assert [ln.split(":")[0] for ln in said if ln] == ["turn 1", "  budget", "turn 2", "stopped"]


def test_the_status_line_is_silent_when_not_a_terminal() -> None:
    stream = io.StringIO()
    with Status(stream) as status:
        assert not status.live
        status.wait("the model's reply")
        status.tick()
        status.say("turn 1: browser_action launch: ok")
        status.done()
    assert stream.getvalue() == "turn 1: browser_action launch: ok\n"


def test_the_status_line_on_a_terminal_is_cleared_for_each_line_said() -> None:
    terminal = Terminal()
    with Status(terminal) as status:
        status.wait("turn 1: waiting for the model's reply")
        status.tick()
        status.say("turn 1: no tool call")
    shown = terminal.getvalue()
    assert "| turn 1: waiting for the model's reply (0.0 s)" in shown
    assert "/ turn 1: waiting for the model's reply" in shown  # the next frame
    assert "\rturn 1: no tool call\n" in shown.replace("\x1b[A", "").replace("\x1b[K", "")


def test_every_option_of_run_says_what_it_does() -> None:
    import argparse

    ap = build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    run = sub.choices["run"]
    silent = [a.dest for a in run._actions if not a.help and a.dest != "help"]
    assert silent == []
    help_text = run.format_help()
    assert "(default: 20)" in help_text and "(default: 2)" in help_text and "(default: traces)" in help_text


@pytest.mark.parametrize(
    ("mode", "ok", "kept"), [("on", True, 1), ("retain-on-failure", True, 0), ("retain-on-failure", False, 1)]
)
def test_the_traces_a_run_keeps(tmp_path: Path, mode: str, ok: bool, kept: int) -> None:
    import argparse

    from xmltools.cli.run import _Traces

    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "trace-1.zip").write_bytes(b"an earlier run's")
    traces = _Traces.begin(argparse.Namespace(tracing=mode, trace_dir=str(folder)))
    (folder / "trace-2.zip").write_bytes(b"this run's")  # as the browser writes it when it closes
    assert traces.kept(ok=ok) == [str(folder / "trace-2.zip")] * kept
    assert (folder / "trace-2.zip").exists() == bool(kept) and (folder / "trace-1.zip").exists()


def test_with_verbose_the_log_takes_the_status_lines_place(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    server = ScriptedServer(by_turn([LAUNCH, ba("close"), DONE]), latency=0.3)
    with server.running() as base:
        assert main(["-v", *run_args(base)]) == 0
    shown = terminal.getvalue()
    assert "waiting for" not in shown and "\r" not in shown  # the log's lines run into nothing
    assert shown.count("INFO xmltools.loop: turn ") == 3
