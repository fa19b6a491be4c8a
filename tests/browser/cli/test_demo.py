"""The bundled demo transcript replayed live in Chromium, then from its recording live and offline; and the demo and replay commands."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xmltools.config.settings import Config
from xmltools.record.transcript import AssistantRecord, load_transcript
from xmltools.replaying.run import replay

ROOT = Path(__file__).parents[3]


DEMO = ROOT / "fixtures" / "transcripts" / "demo.jsonl"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """The demo transcript replayed live once, and its recording."""
    from support.helpers import SITE

    from xmltools.base.serve import serve_directory

    out = tmp_path_factory.mktemp("demo") / "run.jsonl"
    with serve_directory(SITE) as base:
        result = asyncio.run(replay(DEMO, base_url=base, record=out))
    return out, result


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


def test_replaying_the_recorded_demo_gives_no_drift(demo_run: tuple[Path, object], site: str) -> None:
    out, _ = demo_run
    result = asyncio.run(replay(out, base_url=site))
    assert result.ok, result.summary()
    shots = [s.comparison for st in result.steps for s in st.shots]
    assert len(shots) == 12 and all(c.ok and not c.size_differs for c in shots)


@pytest.mark.long
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


@pytest.mark.long
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
