"""Transcripts: the format, durable recording, redaction, replay live and offline, the report, the demo."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeBrowser

from xmltools import ConfigError
from xmltools.config import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.replaying import replay
from xmltools.results import ConsoleEntry, Observation, Point
from xmltools.transcript import AssistantRecord, Header, ToolResultRecord, TranscriptWriter, load_transcript

ROOT = Path(__file__).parent.parent
DEMO = ROOT / "fixtures" / "transcripts" / "demo.jsonl"


def ba(action: str, **params: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in {"action": action, **params}.items())
    return f"<browser_action>\n{inner}</browser_action>"


def scenario(path: Path, *messages: str, tools: list[str] | None = None) -> Path:
    lines = [json.dumps({"xmltools_transcript": 1, "tools": tools or []})]
    lines += [json.dumps({"role": "assistant", "content": m}) for m in messages]
    path.write_text("\n".join(lines) + "\n")
    return path


# -- format ---------------------------------------------------------------------------


def test_a_hand_written_scenario_is_valid(tmp_path: Path) -> None:
    t = load_transcript(scenario(tmp_path / "s.jsonl", ba("launch", url="{base_url}/form.html"), ba("close")))
    assert [a.content for a in t.assistant_messages][1] == ba("close")
    assert [len(r) for _, r in t.steps()] == [0, 0]
    t = load_transcript(DEMO)
    assert t.header.title and len(t.assistant_messages) == 15 and t.header.tools == ["attempt_completion"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ('{"role": "assistant", "content": "x"}\n', "header"),
        ('{"xmltools_transcript": 1}\n{"role": "wizard"}\n', ":2"),
        ('{"xmltools_transcript": 1}\nnot json\n', ":2"),
        ('{"xmltools_transcript": 7}\n', "version"),
    ],
)
def test_malformed_transcripts_name_the_line(tmp_path: Path, text: str, match: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_transcript(p)


async def test_recording_writes_every_record_with_screenshots_beside(tmp_path: Path) -> None:
    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    out = tmp_path / "run.jsonl"
    with TranscriptWriter(
        out, Header(templates=it.renderer.template_hashes()), base_url="http://127.0.0.1:9"
    ) as w:
        w.message("user", "do it")
        w.turn(await it.handle("Opening.\n" + ba("launch", url="http://127.0.0.1:9/app") + ba("close")))
        w.turn(await it.handle(ba("click", coordinate="2000,1")))
    t = load_transcript(out)
    assert t.header.templates["result/browser.j2"]
    kinds = [type(r).__name__ for r in t.records]
    assert kinds == [
        "MessageRecord",
        "AssistantRecord",
        "ToolResultRecord",
        "ToolResultRecord",
        "AssistantRecord",
        "ToolResultRecord",
    ]
    launch = t.records[2]
    assert isinstance(launch, ToolResultRecord) and launch.status == "ok" and launch.observation is not None
    assert launch.observation.url == "{base_url}/app"  # the base URL became a placeholder again
    assert launch.observation.screenshot == "run.shots/0001.webp"
    assert (tmp_path / "run.shots" / "0001.webp").read_bytes().startswith(b"RIFF")
    assert "The launch action ran." in launch.text
    not_run = t.records[3]
    assert isinstance(not_run, ToolResultRecord) and not_run.status == "not_run" and not_run.error is not None
    bad = t.records[5]
    assert isinstance(bad, ToolResultRecord) and bad.status == "invalid" and bad.error is not None
    assert bad.error.kind == "invalid_param" and "900x600" in bad.error.message


async def test_secrets_are_redacted_before_writing(tmp_path: Path) -> None:
    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    out = tmp_path / "run.jsonl"
    with TranscriptWriter(out, secrets=["hunter2"]) as w:
        await it.handle(ba("launch", url="http://a/"))
        w.turn(await it.handle(ba("type", text="my password is hunter2")))
    raw = out.read_text()
    assert "hunter2" not in raw and "[redacted]" in raw


def test_a_killed_recorder_loses_nothing_before_the_kill(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    code = textwrap.dedent(
        f"""
        import asyncio, sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from fakes import FakeBrowser
        from xmltools.interpreter import AsyncInterpreter
        from xmltools.transcript import TranscriptWriter

        async def main():
            it = AsyncInterpreter(browser=FakeBrowser())
            w = TranscriptWriter({str(out)!r})
            await it.handle("<browser_action><action>launch</action><url>http://a/</url></browser_action>")
            for i in range(1000):
                w.turn(await it.handle("<browser_action><action>scroll_down</action></browser_action>"))
                print(i, flush=True)
                time.sleep(0.01)

        asyncio.run(main())
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for _ in range(5):
        proc.stdout.readline()  # five turns were recorded
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    t = load_transcript(out)  # every line that was written is whole
    steps = list(t.steps())
    assert len(steps) >= 5
    assert all(len(results) == 1 and results[0].status == "ok" for _, results in steps[:5])


# -- replay ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """The demo transcript replayed live once, and its recording."""
    from conftest import SITE

    from xmltools.serve import serve_directory

    out = tmp_path_factory.mktemp("demo") / "run.jsonl"
    with serve_directory(SITE) as base:
        result = asyncio.run(replay(DEMO, base_url=base, record=out))
    return out, result


@pytest.mark.browser
def test_demo_replays_and_completes(demo_run: tuple[Path, object]) -> None:
    out, result = demo_run
    # a hand-written scenario: the one refusal it shows is the one thing that is not as it should be
    assert not result.drifts and result.outcome == "failed"  # type: ignore[attr-defined]
    assert [f.split(" (")[0] for f in result.failures] == ["step 13: attempt_completion: refused"]  # type: ignore[attr-defined]
    steps = result.steps  # type: ignore[attr-defined]
    assert steps[-1].turn.completed
    refused = [(s.index, o.violation) for s in steps for o in s.turn.outcomes if o.status == "refused"]
    assert refused == [(13, "close_first")]
    assert not [o for s in steps for o in s.turn.outcomes if o.status == "failed"]
    final = steps[11].turn.ran.observation
    assert "added bread" in [c.text for c in final.console]
    t = load_transcript(out)
    assert len(t.assistant_messages) == 15 and t.header.tools == ["attempt_completion"]


@pytest.mark.browser
def test_replaying_the_recorded_demo_gives_no_drift(demo_run: tuple[Path, object], site: str) -> None:
    out, _ = demo_run
    result = asyncio.run(replay(out, base_url=site))
    assert result.ok, result.summary()
    shots = [s.comparison for st in result.steps for s in st.shots]
    assert len(shots) == 12 and all(c.ok and not c.size_differs for c in shots)


@pytest.mark.browser
def test_live_replay_reports_drift(demo_run: tuple[Path, object], site: str, tmp_path: Path) -> None:
    out, _ = demo_run
    # the same recording against a page that behaves differently: the wrong password
    t = load_transcript(out)
    for r in t.records:
        if isinstance(r, AssistantRecord) and "lovelace" in r.content:
            r.content = r.content.replace("lovelace", "babbage")
    result = asyncio.run(replay(t, base_url=site))
    assert not result.ok
    at6 = {d.field: d for d in result.drifts if d.step == 6}
    assert min(d.step for d in result.drifts) == 6  # the sign-in is where the run departs from the recording
    assert at6["title"].expected == "Shopping list" and at6["title"].actual == "Shopping list - sign in"
    assert "sign-in refused" in str(at6["console"].actual)


def test_offline_replay_needs_no_browser(demo_run: tuple[Path, object]) -> None:
    out, _ = demo_run
    start = time.monotonic()
    result = asyncio.run(replay(out, offline=True))
    assert result.ok, result.summary()
    assert time.monotonic() - start < 10
    assert result.steps[-1].turn.completed
    assert result.steps[1].turn.ran.observation.screenshot is not None


def test_offline_replay_catches_a_protocol_change(demo_run: tuple[Path, object]) -> None:
    out, _ = demo_run
    result = asyncio.run(replay(out, offline=True, config=Config(policy="allow")))  # type: ignore[arg-type]
    assert not result.ok
    assert result.drifts[0].step == 13 and result.drifts[0].field == "outcomes"


# the report: tests/test_report.py


# -- the command line ----------------------------------------------------------------------


@pytest.mark.browser
def test_cli_demo_prints_the_run_and_writes_the_report(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "xmltools.cli", "demo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[15/15]" in r.stdout and "task completed" in r.stdout
    assert "refused (close_first)" in r.stdout
    assert f"report: {tmp_path / 'report.html'}" in r.stdout
    assert (tmp_path / "report.html").stat().st_size > 10_000


@pytest.mark.browser
def test_cli_replay_serves_records_and_reports(tmp_path: Path) -> None:
    rec, rep = tmp_path / "r.jsonl", tmp_path / "r.html"
    args = [
        sys.executable,
        "-m",
        "xmltools.cli",
        "replay",
        str(DEMO),
        "--serve",
        str(ROOT / "fixtures" / "site"),
    ]
    r = subprocess.run(
        [*args, "--record", str(rec), "--report", str(rep)], capture_output=True, text=True, timeout=300
    )
    # the demo's step 13 is a protocol mistake the scenario makes on purpose: a failure, exit 1
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed step in 15 steps (live)" in r.stdout and rep.exists()
    assert "FAILED attempt_completion: refused (close_first)" in r.stdout
    r = subprocess.run([*args, "--allow-failures"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "no drift" in r.stdout, r.stdout + r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "xmltools.cli", "replay", str(rec), "--offline"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "15 steps replayed (offline): no drift" in r.stdout


# -- text UTF-8 cannot encode (issue 10, item 7) ------------------------------------------------------


class OddPage(FakeBrowser):
    """A page whose title, console or notes hold what UTF-8 cannot encode (lone surrogates)."""

    def __init__(self, **odd: Any) -> None:
        super().__init__()
        self.odd = odd

    def observation(self, action: Any, mouse: Point | None) -> Observation:
        return super().observation(action, mouse).model_copy(update=self.odd)


ODD = "T\udc00 and \ud83d, one\u2028two\x85three"  # two lone surrogates, and two characters splitlines() cuts at


@pytest.mark.parametrize("where", ["title", "console", "notes", "assistant", "message", "header"])
async def test_lone_surrogates_are_escaped_and_every_record_is_written(tmp_path: Path, where: str) -> None:
    page = {"title": ODD} if where == "title" else {}
    page |= {"console": (ConsoleEntry(type="log", text=ODD),)} if where == "console" else {}
    page |= {"notes": (ODD,)} if where == "notes" else {}
    it = AsyncInterpreter(Config(), browser=OddPage(**page))
    said = [ba("launch", url="http://127.0.0.1:9/"), ba("click", coordinate="1,1")]
    if where == "assistant":
        said[1] = ODD + "\n" + said[1]
    path = tmp_path / "odd.jsonl"
    with TranscriptWriter(path, Header(title=ODD if where == "header" else None)) as w:  # this raised
        w.message("user", ODD if where == "message" else "the task")
        for m in said:
            w.turn(await it.handle(m))
    text = path.read_bytes().decode("utf-8")  # strict: the file is valid UTF-8
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) - 1 == 6  # header, task, and two (assistant, result) pairs
    assert all(isinstance(json.loads(ln), dict) for ln in lines[:-1])
    assert "\\udc00" in text and "\\ud83d" in text
    t = load_transcript(path)  # reads back the very same strings, with no line cut in two
    assert len(t.records) == 5 and [a.content for a in t.assistant_messages] == said
    results = [r for r in t.records if isinstance(r, ToolResultRecord)]
    assert [r.status for r in results] == ["ok", "ok"]
    obs = results[1].observation
    assert obs is not None
    got = {
        "title": obs.title,
        "console": obs.console[0].text,
        "notes": obs.notes[0] if obs.notes else "",
        "assistant": t.assistant_messages[1].content.split("\n")[0],
        "message": t.records[0].content,  # type: ignore[union-attr]
        "header": t.header.title,
    }
    assert got[where] == ODD


async def test_a_line_separator_inside_a_string_does_not_cut_the_record(tmp_path: Path) -> None:
    text = "one\u2028two\u2029three\x85four\x1cfive"  # str.splitlines() cuts at each of these
    it = AsyncInterpreter(Config(), browser=OddPage(title=text))
    with TranscriptWriter(tmp_path / "sep.jsonl") as w:
        w.turn(await it.handle(ba("launch", url="http://127.0.0.1:9/")))
    [_, result] = load_transcript(tmp_path / "sep.jsonl").records
    assert isinstance(result, ToolResultRecord) and result.observation is not None
    assert result.observation.title == text


async def test_a_turn_of_many_calls_is_synced_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    it = AsyncInterpreter(Config(), browser=FakeBrowser())
    t = await it.handle(ba("launch", url="http://127.0.0.1:9/") + ba("close") * 5_000)
    with TranscriptWriter(tmp_path / "many.jsonl") as w:
        synced.clear()
        started = time.perf_counter()
        w.turn(t)
        elapsed = time.perf_counter() - started
    assert len(synced) == 1 and elapsed < 20  # one fsync per record (and a quadratic index) took minutes
    records = load_transcript(tmp_path / "many.jsonl").records
    assert len(records) == 5_002 and [r.call.index for r in records[-3:]] == [4_998, 4_999, 5_000]  # type: ignore[union-attr]
