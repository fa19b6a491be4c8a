"""The seeds' dialects (aleph, fractal, forge): their transcripts in fixtures/transcripts replay in a real Chromium
against fixtures/site, and again from their recording (their scoring and re-rendering need no browser:
tests/unit/lab/test_dialect_scores.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.helpers import DIALECT_STEPS as EXPECTED
from support.helpers import TRANSCRIPTS, said

from xmltools import State
from xmltools.replaying.run import replay


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
