"""The experiment commands in a subprocess: prompt, rerender and score."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.helpers import record_demo_steps, wording_variant

from xmltools.lab.variants import format_scores, load_corpus, score_corpus

ROOT = Path(__file__).parents[2]


CORPUS = ROOT / "fixtures" / "corpus" / "outputs.jsonl"


TERSE = ROOT / "fixtures" / "variants" / "terse"


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xmltools.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def test_prompt_shows_what_the_model_would_see() -> None:
    r = cli("prompt", "--variant", str(TERSE))
    assert r.returncode == 0 and r.stdout.startswith("# variant: terse")
    assert "Viewport: 1280x800" in r.stdout and "Drive a Chromium browser" in r.stdout


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A small recording made offline-ready: the demo's first steps with their observations."""
    return asyncio.run(record_demo_steps(tmp_path / "run.jsonl"))


def test_cli_rerender(recorded: Path, tmp_path: Path) -> None:
    r = cli("rerender", str(recorded), "--variant", str(wording_variant(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert "recorded -> wording" in r.stdout and "--- turn 1 ---" in r.stdout
    assert r.stdout.splitlines()[-1].strip() != ""


def test_scoring_transcripts_and_the_cli_table_and_json(recorded: Path) -> None:
    runs = load_corpus([recorded, CORPUS])
    assert len(runs) == 3 and len(runs[0]) == 4
    r = cli("score", str(CORPUS), "--variant", str(TERSE))
    assert r.returncode == 0
    assert "invalid: missing_param(coordinate)" in r.stdout and "terse" in r.stdout.splitlines()[0]
    r = cli("score", str(CORPUS), "--json")
    assert json.loads(r.stdout)[0]["truncated_calls"] == 1
    table = format_scores([asyncio.run(score_corpus(load_corpus([CORPUS])))])
    assert "complete call rate" in table and "85.7%" in table


def test_a_mistaken_experiment_file_is_a_line_a_mistake_in_a_process_of_its_own(tmp_path: Path) -> None:
    """In a real process: the first line counts the mistakes, a line each follows (the first 20, -v
    all of them), no traceback, exit 2."""
    path = tmp_path / "experiment.toml"
    path.write_text(
        'trails = 3\n[[variants]]\nname = "A"\n[[models]]\nname = "m"\n[[tasks]]\nid = "t"\n'
        'instruction = "x"\nchecks = [{ kind = "ulr", value = "/done.html" }]\n'
    )
    r = cli("experiment", "run", str(path), "--dry-run")
    assert r.returncode == 2 and r.stdout == ""
    listed = [
        f"    {path}: trails: not a field; did you mean 'trials'?",
        f"    {path}: tasks[0].checks[0].kind: no check named 'ulr'; did you mean 'url'?",
    ]
    head = f"xmltools: {path}: 2 mistakes: trails: not a field; did you mean 'trials'? (and 1 more)"
    assert r.stderr.splitlines() == [head, *listed]
    r = cli("experiment", "run", str(path), "-v")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[1:] == listed
    many = "".join(f"tirals{i} = 3\n" for i in range(25))  # 25 unknown fields: 20 listed, -v for the rest
    path.write_text(many + path.read_text())
    r = cli("experiment", "run", str(path), "--dry-run")
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 21 and lines[0].endswith("(and 26 more) (-v shows more)")
