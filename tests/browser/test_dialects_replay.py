"""The seeds' dialects (aleph, fractal, forge): their transcripts in fixtures/transcripts replay in a real Chromium
against fixtures/site, and again from their recording; and they are scored and re-rendered.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakes import FakeBrowser
from helpers import DIALECT_STEPS as EXPECTED
from helpers import TRANSCRIPTS, said

from xmltools import Interpreter, State
from xmltools.experiment import load_corpus, score_corpus
from xmltools.profiles import PROFILES
from xmltools.replaying import replay


@pytest.mark.parametrize("dialect", ["aleph", "fractal", "forge"])
def test_each_dialects_transcript_replays_green_and_again_from_its_recording(
    dialect: str, site: str, tmp_path: Path
) -> None:
    recorded = tmp_path / f"{dialect}.jsonl"
    first = asyncio.run(replay(TRANSCRIPTS / f"{dialect}.jsonl", base_url=site, record=recorded))
    got = [(s.turn.outcomes[0].status, s.turn.outcomes[0].violation) for s in first.steps]
    assert got == EXPECTED[dialect], [said(s.turn)[:300] for s in first.steps]
    assert first.steps[-1].turn.state is State.IDLE
    if dialect == "aleph":  # start opened no page: the first open_tab took its blank tab
        assert "opened t1, which you now see" in said(first.steps[2].turn)
        assert "There is no open tab 't3'; the open tabs are t1, t2" in said(first.steps[6].turn)
    again = asyncio.run(replay(recorded, base_url=site))
    assert not [d for s in again.steps for d in s.drifts], [d for s in again.steps for d in s.drifts]
    offline = asyncio.run(replay(recorded, offline=True))
    assert [(s.turn.outcomes[0].status, s.turn.outcomes[0].violation) for s in offline.steps] == got


# scoring and re-rendering replay the calls; the forge transcript opens a real session to do it
@pytest.mark.parametrize("dialect", ["aleph", "fractal", "forge"])
def test_score_reads_each_transcript_in_its_own_dialect(dialect: str) -> None:
    runs = load_corpus([TRANSCRIPTS / f"{dialect}.jsonl"])
    s = asyncio.run(score_corpus(runs)).to_json()
    assert s["complete_call_rate"] == 1.0
    refusals = sum(1 for status, v in EXPECTED[dialect] if v == "launch_first")
    assert s["protocol_violations"] == {"launch_first": refusals}, s


@pytest.mark.parametrize("dialect", ["aleph", "fractal", "forge"])
def test_experiments_rerender_and_score_transcripts_of_any_dialect(dialect: str, tmp_path: Path) -> None:
    from xmltools.experiment import Variant, rerender

    transcript = TRANSCRIPTS / f"{dialect}.jsonl"
    same = asyncio.run(rerender(transcript, Variant.default()))
    assert same and all(d.after for d in same)  # every turn renders again in its own dialect
    (tmp_path / "variant.toml").write_text(f'name = "as-{dialect}"\n[config]\nprofile = "{dialect}"\n')
    variant = Variant.load(tmp_path)
    s = asyncio.run(score_corpus(load_corpus([transcript]), variant)).to_json()
    assert s["name"] == f"as-{dialect}" and s["complete_call_rate"] == 1.0
    it = Interpreter(variant.make_config(), browser=FakeBrowser())
    assert PROFILES[dialect].opener in it.system_prompt()
