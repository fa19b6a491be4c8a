"""The seeds' dialects scored and re-rendered from their transcripts, without a browser.

Scoring answers every call, in every named session too, with a stand-in: this
folder's guard fails any test that starts a browser, so a real session opened
for a named one (forge's) fails here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.fakes import FakeBrowser
from support.helpers import DIALECT_STEPS as EXPECTED
from support.helpers import TRANSCRIPTS

from xmltools import Interpreter
from xmltools.lab.variants import load_corpus, score_corpus
from xmltools.profiles import PROFILES


@pytest.mark.parametrize("dialect", ["aleph", "fractal", "forge"])
def test_score_reads_each_transcript_in_its_own_dialect(dialect: str) -> None:
    runs = load_corpus([TRANSCRIPTS / f"{dialect}.jsonl"])
    s = asyncio.run(score_corpus(runs)).to_json()
    assert s["complete_call_rate"] == 1.0
    refusals = sum(1 for status, v in EXPECTED[dialect] if v == "launch_first")
    assert s["protocol_violations"] == {"launch_first": refusals}, s


@pytest.mark.parametrize("dialect", ["aleph", "fractal", "forge"])
def test_experiments_rerender_and_score_transcripts_of_any_dialect(dialect: str, tmp_path: Path) -> None:
    from xmltools.lab.variants import Variant, rerender

    transcript = TRANSCRIPTS / f"{dialect}.jsonl"
    same = asyncio.run(rerender(transcript, Variant.default()))
    assert same and all(d.after for d in same)  # every turn renders again in its own dialect
    (tmp_path / "variant.toml").write_text(f'name = "as-{dialect}"\n[config]\nprofile = "{dialect}"\n')
    variant = Variant.load(tmp_path)
    s = asyncio.run(score_corpus(load_corpus([transcript]), variant)).to_json()
    assert s["name"] == f"as-{dialect}" and s["complete_call_rate"] == 1.0
    it = Interpreter(variant.make_config(), browser=FakeBrowser())
    assert PROFILES[dialect].opener in it.system_prompt()
