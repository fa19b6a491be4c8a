"""Host errors and the command line: what is raised, the one line printed, the exit code, -v, --record."""

from __future__ import annotations

import asyncio
import io
import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fakes import FakeBrowser
from support.helpers import ba, scenario
from support.openai_server import ScriptedServer, by_turn

import xmltools
from xmltools import (
    BrowserError,
    BrowserNotFoundError,
    ConfigError,
    Interpreter,
    MistakeLimitError,
    ModelError,
    RemoteBrowserError,
    UsageError,
    run_loop,
)
from xmltools.browser.pool import BrowserPool
from xmltools.cli import main
from xmltools.config.settings import Config
from xmltools.errors import EXIT_ENVIRONMENT, EXIT_FAILED, EXIT_USAGE, TranscriptError, exit_code
from xmltools.interpreter import AsyncInterpreter
from xmltools.models.adapters import Usage
from xmltools.record.transcript import Header, TranscriptWriter, load_transcript

NO_BROWSER = "/nonexistent/chromium"
DEAD_REMOTE = "http://127.0.0.1:9"  # the discard port: nothing answers there


DONE = "<attempt_completion><result>done</result></attempt_completion>"
LAUNCH = ba("launch", url="http://127.0.0.1:9/")
START = [{"role": "system", "content": "system"}, {"role": "user", "content": "do it"}]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No browser setting from the machine, and no xmltools.toml or pyproject.toml from the folder."""
    for name in ("XMLTOOLS_CHROMIUM", "XMLTOOLS_EXECUTABLE", "XMLTOOLS_REMOTE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


@pytest.fixture
def own_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[BrowserPool]:
    """A pool of this test's own: a browser another test left in the shared pool must not answer here."""
    from xmltools.browser import session

    pool = BrowserPool()
    monkeypatch.setattr(session, "default_pool", lambda: pool)
    yield pool
    pool.close()


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run command's interpreter gets a stand-in browser (no Chromium)."""
    import xmltools.interpreter

    class WithStandIn(AsyncInterpreter):
        def __init__(self, config: Config | None = None, **kw: Any) -> None:
            super().__init__(config, browser=FakeBrowser(), **kw)

    monkeypatch.setattr(xmltools.interpreter, "AsyncInterpreter", WithStandIn)


def one_line(err: str) -> str:
    """The error output must be exactly one line, with no traceback; return it."""
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("xmltools: "), err
    return lines[0]


def toml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "settings.toml"
    path.write_text(text)
    return str(path)


def run_args(base: str, *more: str) -> list[str]:
    return ["run", "--base-url", base, "--model", "m", "--task", "open it", "--retries", "0", *more]


# -- the library raises browser problems to the host -------------------------------------------------


def test_handle_raises_when_the_variable_names_no_browser(
    monkeypatch: pytest.MonkeyPatch, own_pool: BrowserPool
) -> None:
    monkeypatch.setenv("XMLTOOLS_CHROMIUM", NO_BROWSER)
    with Interpreter(Config(), pool=own_pool) as it, pytest.raises(BrowserNotFoundError, match=NO_BROWSER):
        it.handle(LAUNCH)
    assert it.state.value == "idle"  # nothing was told to the model, and the state stayed sound


def test_handle_raises_for_a_configured_path_that_is_no_browser(own_pool: BrowserPool) -> None:
    with (
        Interpreter(Config(executable=NO_BROWSER), pool=own_pool) as it,
        pytest.raises(BrowserNotFoundError, match="configured browser"),
    ):
        it.handle(LAUNCH)


def test_handle_raises_for_a_remote_endpoint_that_does_not_answer(own_pool: BrowserPool) -> None:
    with (
        Interpreter(Config(remote=DEAD_REMOTE), pool=own_pool) as it,
        pytest.raises(RemoteBrowserError, match="no Chrome answered"),
    ):
        it.handle(LAUNCH)


def test_run_loop_raises_the_browser_error(own_pool: BrowserPool) -> None:
    told: list[str] = []

    def model(messages: list[dict[str, Any]]) -> str:
        told.append(str(messages[-1]["content"]))
        return LAUNCH

    it = AsyncInterpreter(Config(executable=NO_BROWSER), pool=own_pool)
    with pytest.raises(BrowserError, match=NO_BROWSER):
        run_loop(model, START, interpreter=it, max_turns=5)
    assert told == ["do it"]  # one model call: the loop stopped at the first launch, the model told nothing


# -- the commands: one line and exit 3 for the environment --------------------------------------------


def test_run_with_no_browser_in_the_variable_is_one_line_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XMLTOOLS_CHROMIUM", NO_BROWSER)
    server = ScriptedServer(by_turn([LAUNCH, DONE]))
    with server.running() as base:
        rc = main(run_args(base))
    out, err = capsys.readouterr()
    assert rc == EXIT_ENVIRONMENT == 3
    assert NO_BROWSER in one_line(err)
    assert "stopped:" not in out and len(server.requests) == 1  # the run ended at the failed launch


def test_run_with_a_config_naming_no_browser_is_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = toml(tmp_path, f'executable = "{NO_BROWSER}"\n')
    server = ScriptedServer(by_turn([LAUNCH, DONE]))
    with server.running() as base:
        rc = main(run_args(base, "--config", config))
    assert rc == 3
    assert f"the configured browser '{NO_BROWSER}' is not an executable file" in one_line(
        capsys.readouterr().err
    )


def test_run_with_an_unreachable_remote_is_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = toml(tmp_path, f'remote = "{DEAD_REMOTE}"\n')
    server = ScriptedServer(by_turn([LAUNCH, DONE]))
    with server.running() as base:
        rc = main(run_args(base, "--config", config))
    line = one_line(capsys.readouterr().err)
    assert rc == 3 and f"no Chrome answered at {DEAD_REMOTE}" in line
    assert line.endswith("(-v shows more)")  # the rest of the help is there with -v


def test_run_with_an_unreachable_model_is_exit_3_and_names_its_address(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc = main(run_args("http://127.0.0.1:9/v1"))
    line = one_line(capsys.readouterr().err)
    assert rc == 3 and line == "xmltools: cannot reach the model at http://127.0.0.1:9/v1: connection refused"


def test_demo_with_no_browser_is_one_line_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XMLTOOLS_CHROMIUM", NO_BROWSER)
    rc = main(["demo", "--out", str(tmp_path / "demo")])
    out, err = capsys.readouterr()
    assert rc == 3 and NO_BROWSER in one_line(err)
    assert "[ 1/" not in out and "refused" not in out  # no step was replayed without a browser


def test_live_replay_with_no_browser_is_exit_3(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XMLTOOLS_CHROMIUM", NO_BROWSER)
    path = scenario(tmp_path / "s.jsonl", ba("launch", url="{base_url}/"), ba("close"))
    rc = main(["replay", str(path), "--base-url", "http://127.0.0.1:9"])
    out, err = capsys.readouterr()
    assert rc == 3 and NO_BROWSER in one_line(err)
    assert "[1/2]" not in out


# -- files: one line naming the file (and the line, and the field), exit 2 ----------------------------

TOOL_RESULT = {"role": "tool_result", "call": {"name": "browser_action", "params": {}, "index": 0}}


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "bad.jsonl: no such file"),
        (b"\x89PNG\r\n\x1a\n\x00\xff", "bad.jsonl: not UTF-8 text (byte 0x89 at offset 0)"),
        (
            b'{"xmltools_transcript": 1}\n{"role": "assistant", "content": "x"}\nnot json\n',
            "bad.jsonl:3: not JSON",
        ),
        (b"[1, 2]\n", "bad.jsonl:1: a raw output is"),  # JSON, but no record: read as raw outputs
        (
            b'{"xmltools_transcript": 1}\n'
            + json.dumps({**TOOL_RESULT, "status": "ok", "colour": "red"}).encode()
            + b"\n",
            "bad.jsonl:2: unknown field 'colour' in a tool_result record",
        ),
        (
            b'{"xmltools_transcript": 1, "colour": "red"}\n',
            "bad.jsonl:1: unknown field 'colour' in the header",
        ),
        (
            b'{"xmltools_transcript": 1}\n' + json.dumps({**TOOL_RESULT, "status": "great"}).encode() + b"\n",
            "bad.jsonl:2: field 'status' of a tool_result record",
        ),
    ],
)
def test_score_names_what_is_wrong_with_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, said: str
) -> None:
    path = tmp_path / "bad.jsonl"
    if content is not None:
        path.write_bytes(content)
    rc = main(["score", str(path)])
    assert rc == EXIT_USAGE == 2
    line = one_line(capsys.readouterr().err)
    assert said in line and str(tmp_path) in line


def test_score_of_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(tmp_path)]) == 2
    assert f"{tmp_path}: is a folder" in one_line(capsys.readouterr().err)


def test_replay_and_rerender_name_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "nope.jsonl", "--offline"]) == 2
    assert one_line(capsys.readouterr().err) == "xmltools: nope.jsonl: no such file"
    variant = tmp_path / "v"
    variant.mkdir()
    assert main(["rerender", "nope.jsonl", "--variant", str(variant)]) == 2
    assert one_line(capsys.readouterr().err) == "xmltools: nope.jsonl: no such file"


def test_load_transcript_says_which_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    record = {**TOOL_RESULT, "status": "ok", "colour": "red"}
    path.write_text(json.dumps({"xmltools_transcript": 1}) + "\n\n" + json.dumps(record) + "\n")
    with pytest.raises(TranscriptError) as e:
        load_transcript(path)
    assert str(e.value) == f"{path}:3: unknown field 'colour' in a tool_result record"
    assert (e.value.line, e.value.field) == (3, "colour")
    assert isinstance(e.value, ConfigError)  # hosts that caught ConfigError still do


async def recorded_run(path: Path) -> Path:
    """A short transcript with screenshots, recorded with a stand-in browser."""
    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    with TranscriptWriter(path, Header(templates=it.renderer.template_hashes())) as w:
        w.message("user", "do it")
        w.turn(await it.handle(ba("launch", url="http://127.0.0.1:9/app")))
        w.turn(await it.handle(ba("click", coordinate="10,10")))
        w.turn(await it.handle(ba("close")))
    return path


def test_a_transcript_moved_away_from_its_screenshots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = asyncio.run(recorded_run(tmp_path / "rec" / "run.jsonl"))
    assert (tmp_path / "rec" / "run.shots").is_dir()
    moved = tmp_path / "elsewhere" / "run.jsonl"
    moved.parent.mkdir()
    shutil.move(recorded, moved)
    # offline, screenshots are not needed: the replay works and says none drifted
    assert main(["replay", str(moved), "--offline"]) == 0
    assert "no drift" in capsys.readouterr().out
    # live, they are: one line names the first that is missing, before any browser starts
    assert main(["replay", str(moved), "--base-url", "http://127.0.0.1:9"]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"{moved}: the screenshot run.shots/0001.webp is missing" in line and "(and 1 more)" in line


# -- --version, -v, exit codes ---------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"xmltools {xmltools.__version__}"


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.usefixtures("stand_in")
def test_verbose_shows_one_info_line_a_turn(capsys: pytest.CaptureFixture[str], where: str) -> None:
    server = ScriptedServer(by_turn([LAUNCH, ba("close"), DONE]))
    with server.running() as base:
        args = run_args(base)
        rc = main(["-v", *args] if where == "before" else [*args, "-v"])
    err = capsys.readouterr().err
    assert rc == 0, err
    turns = [
        re.sub(r"~\d+", "~N", re.sub(r"\d+ characters", "N characters", ln))
        for ln in err.splitlines()
        if ln.startswith("INFO xmltools.loop: turn ")
    ]
    assert turns == [
        "INFO xmltools.loop: turn 1: ~N tokens in, ~N out, N characters sent; browser_action launch: ok"
        " -> http://127.0.0.1:9/ [state active, mistakes 0, stream cut]",
        "INFO xmltools.loop: turn 2: ~N tokens in, ~N out, N characters sent; browser_action close: ok"
        " [state idle, mistakes 0, stream cut]",
        "INFO xmltools.loop: turn 3: ~N tokens in, ~N out, N characters sent; attempt_completion: ok"
        " [state idle, mistakes 0, completed, stream cut]",
    ]
    assert "INFO xmltools.interpreter: turn:" not in err  # the loop's line is the one a turn
    assert "DEBUG" not in err  # -v is INFO only
    assert "INFO xmltools.loop: loop stopped: completed after 3 turns" in err


@pytest.mark.usefixtures("stand_in")
def test_no_log_without_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    server = ScriptedServer(by_turn([LAUNCH, ba("close"), DONE]))
    with server.running() as base:
        assert main(run_args(base)) == 0
    err = capsys.readouterr().err
    assert "INFO" not in err and "xmltools.loop" not in err  # the run's own lines, and no log
    assert err.splitlines()[0].startswith("turn 1: browser_action launch: ok")


def test_very_verbose_shows_the_browser_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = toml(tmp_path, f'executable = "{NO_BROWSER}"\n')
    server = ScriptedServer(by_turn([LAUNCH, DONE]))
    with server.running() as base:
        rc = main(["-vv", *run_args(base, "--config", config)])
    err = capsys.readouterr().err
    assert rc == 3
    assert f"DEBUG xmltools.browser: opening a session: local, executable {NO_BROWSER}" in err
    assert "DEBUG xmltools.browser: launch: raised BrowserNotFoundError after" in err
    assert "DEBUG xmltools.interpreter: browser_action launch raised BrowserNotFoundError" in err
    assert f"xmltools: the configured browser '{NO_BROWSER}' is not an executable file" in err


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (BrowserNotFoundError("x"), 3),
        (RemoteBrowserError("x"), 3),
        (ModelError("x"), 3),
        (UsageError("x"), 2),
        (ConfigError("x"), 2),
        (TranscriptError("x"), 2),
        (FileNotFoundError(2, "No such file or directory", "out.html"), 2),
        (MistakeLimitError("x"), 1),
    ],
)
def test_exit_codes(error: Exception, code: int) -> None:
    assert exit_code(error) == code


@pytest.mark.usefixtures("stand_in")
def test_a_run_stopped_at_the_mistake_limit_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    server = ScriptedServer(by_turn([], after=ba("click", coordinate="1,1")))  # a click before any launch
    with server.running() as base:
        rc = main(run_args(base))
    out, err = capsys.readouterr()
    assert rc == EXIT_FAILED == 1
    assert "stopped: mistake_limit after 3 turns" in err and out == ""  # no answer was given


def test_a_file_that_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stand_in: None
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    server = ScriptedServer(by_turn([DONE]))
    with server.running() as base:
        rc = main(run_args(base, "--record", str(blocker / "run.jsonl")))
    assert rc == 2 and str(blocker) in one_line(capsys.readouterr().err)


# -- run --record --report, and the token counts --------------------------------------------------------


@pytest.mark.usefixtures("stand_in")
def test_run_records_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record, report = tmp_path / "out" / "run.jsonl", tmp_path / "out" / "run.html"
    server = ScriptedServer(by_turn([LAUNCH, ba("click", coordinate="10,20"), ba("close"), DONE]))
    with server.running() as base:
        rc = main(run_args(base, "--record", str(record), "--report", str(report)))
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert f"recording: {record}" in err and f"report: {report}" in err and out == "done\n"
    t = load_transcript(record)
    assert [r.content for r in t.records if r.role == "user"] == ["open it"]  # type: ignore[union-attr]
    assert len(t.assistant_messages) == 4 and t.header.tools == ["attempt_completion"]
    assert t.header.description == "open it" and len(list((tmp_path / "out" / "run.shots").iterdir())) == 2
    assert t.end is not None and (t.end.outcome, t.end.reason) == ("completed", "completed")
    assert t.message("system") is not None and t.header.config["viewport"] == {"width": 900, "height": 600}
    html = report.read_text()
    assert "data:image/webp;base64," not in html and "attempt_completion" in html
    assert len(list((tmp_path / "out" / "run.files").iterdir())) == 2  # the screenshots, beside it
    # the recording replays offline with no drift
    assert main(["replay", str(record), "--offline"]) == 0
    assert "4 steps replayed (offline): no drift" in capsys.readouterr().out


@pytest.mark.usefixtures("stand_in")
def test_run_report_without_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "only.html"
    server = ScriptedServer(by_turn([LAUNCH, ba("close"), DONE]))
    with server.running() as base:
        assert main(run_args(base, "--report", str(report), "--embed")) == 0
    assert report.is_file() and "recording:" not in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [report]  # one file: the images are in it
    assert "data:image/webp;base64," in report.read_text()


@pytest.mark.usefixtures("stand_in")
def test_estimated_tokens_are_marked(capsys: pytest.CaptureFixture[str]) -> None:
    # a stream cut after its call never hears the server's count: those calls are estimated
    server = ScriptedServer(by_turn([LAUNCH, ba("close"), DONE]))
    with server.running() as base:
        assert main(run_args(base)) == 0
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.startswith("stopped: completed after 3 turns; tokens: ~")
    assert line.endswith("(estimated for 3 of 3 calls)")
    # whole replies come with the server's count: exact, no ~
    with server.running() as base:
        assert main(run_args(base, "--no-stream")) == 0
    line = capsys.readouterr().err.splitlines()[-1]
    assert "; tokens: " in line and "~" not in line and "estimated" not in line


def test_usage_describe() -> None:
    assert Usage(1234, 56, calls=3).describe() == "tokens: 1,234 in, 56 out"
    assert (
        Usage(1234, 56, calls=3, estimated_calls=2).describe()
        == "tokens: ~1,234 in, ~56 out (estimated for 2 of 3 calls)"
    )
    assert Usage(9, 1, calls=1, estimated_calls=1).describe().endswith("(estimated for 1 of 1 call)")


@pytest.mark.usefixtures("stand_in")
def test_a_run_that_fails_midway_keeps_its_recording_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record, report = tmp_path / "run.jsonl", tmp_path / "run.html"
    replies = by_turn([LAUNCH, ba("close"), DONE])
    server = ScriptedServer(replies)

    def script(req: dict[str, Any]) -> str:
        server.fail_next.append("500")  # the next request fails
        return replies(req)

    server.script = script
    with server.running() as base:
        rc = main(run_args(base, "--record", str(record), "--report", str(report)))
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines()[0].startswith("turn 1: browser_action launch: ok")
    assert f"report (up to the failure): {report}" in err and report.is_file()
    assert rc == 3 and "the model endpoint failed" in one_line(err.splitlines()[-1])
    t = load_transcript(record)
    assert len(t.assistant_messages) == 1
    assert t.end is not None and t.end.outcome == "failed" and t.end.reason == "ModelError"


@pytest.mark.parametrize("extra", [["--offline"], ["--record", "out.jsonl"], ["--report", "r.html"]])
def test_update_refuses_what_does_not_apply_to_it(
    extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"xmltools_transcript": 1}\n')
    assert main(["replay", str(path), "--update", *extra]) == 2
    err = capsys.readouterr().err
    assert "--update replays live and rewrites the transcript" in err and err.count("\n") == 1


@pytest.mark.usefixtures("stand_in")
def test_a_recorded_run_keeps_its_nudges_and_each_calls_tokens_for_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model that repeats one click: the nudges are note records in the transcript, each step keeps
    its call's tokens, and the report shows both; the sent history is what the report counts."""
    from xmltools.record.transcript import NoteRecord, load_transcript

    click = ba("click", coordinate="100,100")
    server = ScriptedServer(by_turn([LAUNCH, *[click] * 20]))
    record, report = tmp_path / "run.jsonl", tmp_path / "run.html"
    with server.running() as base:
        rc = main(run_args(base, "--max-turns", "30", "--record", str(record), "--report", str(report)))
    err = capsys.readouterr().err
    assert rc == 1 and "stopped: stuck after" in err and err.count("  nudge: ") == 3
    t = load_transcript(record)
    notes = [r for r in t.records if isinstance(r, NoteRecord)]
    assert [n.kind for n in notes] == ["nudge"] * 3 and "the same click" in notes[0].text
    assert sorted(t.notes()) == [4, 7, 10]  # each after the step that drew it
    used = [a.usage for a in t.assistant_messages]
    assert all(u is not None and u.prompt_tokens > 0 and u.estimated for u in used)  # the stream was cut
    html = report.read_text()
    assert html.count("told to the model after this step") == 3 and "3 nudges" in html
    assert f"~{used[0].prompt_tokens:,} tokens in" in html  # type: ignore[union-attr]
    assert main(["replay", str(record), "--offline"]) == 0  # a replay passes the notes by
    assert "no drift" in capsys.readouterr().out
    from xmltools.replaying.run import replay

    again = tmp_path / "again.jsonl"  # a rewrite (update's) keeps them, and each call's usage
    asyncio.run(replay(record, offline=True, record=again, keep_header=True))
    kept = load_transcript(again)
    assert kept.notes() == t.notes() and [a.usage for a in kept.assistant_messages] == used
