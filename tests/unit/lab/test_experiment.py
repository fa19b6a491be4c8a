"""Prompt experiments: variants, re-rendering, scoring a corpus, and live trials."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.helpers import record_demo_steps, wording_variant

from xmltools import ConfigError
from xmltools.base.results import Viewport
from xmltools.lab.variants import Variant, load_corpus, rerender, score_corpus
from xmltools.record.transcript import load_transcript

ROOT = Path(__file__).parents[3]
CORPUS = ROOT / "fixtures" / "corpus" / "outputs.jsonl"
TERSE = ROOT / "fixtures" / "variants" / "terse"


# -- variants -------------------------------------------------------------------------------


def test_a_variant_is_a_folder_of_overrides_and_config() -> None:
    v = Variant.load(TERSE)
    assert v.name == "terse" and v.config == {"viewport": "1280x800"}
    cfg = v.make_config()
    assert cfg.viewport == Viewport(width=1280, height=800) and cfg.templates == TERSE
    prompt = v.system_prompt()
    assert "Viewport: 1280x800" in prompt and len(prompt) < len(Variant.default().system_prompt()) / 2
    with pytest.raises(ConfigError):
        Variant.load(ROOT / "no-such-variant")


# -- re-rendering -------------------------------------------------------------------------------


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A small recording made offline-ready: the demo's first steps with their observations."""
    return asyncio.run(record_demo_steps(tmp_path / "run.jsonl"))


def test_rerender_diffs_turn_by_turn(recorded: Path, tmp_path: Path) -> None:
    diffs = asyncio.run(rerender(recorded, Variant.load(wording_variant(tmp_path))))
    assert [d.index for d in diffs] == [0, 1, 2, 3, 4]
    assert not diffs[0].changed  # same system prompt
    assert diffs[1].changed and diffs[1].after == "Done: launch. Stand-in at http://localhost/app."
    assert diffs[1].chars[1] < diffs[1].chars[0] and diffs[1].tokens[1] < diffs[1].tokens[0]
    assert (diffs[1].images_before, diffs[1].images_after) == (1, 1)
    assert not diffs[3].changed  # the refused click reads the same
    assert not diffs[4].changed  # so does close
    assert "-The launch action ran." in diffs[1].diff() and "+Done: launch." in diffs[1].diff()


def test_rerender_under_another_viewport_changes_outcomes(recorded: Path) -> None:
    diffs = asyncio.run(rerender(recorded, Variant.load(TERSE)))
    assert diffs[0].changed  # the terse system prompt
    assert "outside the viewport" in diffs[3].before and "The click action ran." in diffs[3].after
    assert diffs[3].images_before == 0 and diffs[3].images_after == 1


def test_templates_are_traced_in_every_transcript(recorded: Path) -> None:
    t = load_transcript(recorded)
    assert len(t.header.templates) >= 15 and all(len(h) == 16 for h in t.header.templates.values())


# -- scoring ------------------------------------------------------------------------------------


def test_the_bundled_corpus_is_scored_exactly() -> None:
    runs = load_corpus([CORPUS])
    assert [len(r) for r in runs] == [5, 9]
    s = asyncio.run(score_corpus(runs)).to_json()
    assert s == {
        "name": "default",
        "runs": 2,
        "messages": 14,
        "complete_call_rate": round(12 / 14, 4),
        "truncated_calls": 1,
        "fenced_calls": 1,
        "prose_mentions": 1,
        "messages_with_several_calls": 1,
        "invalid_parameters": {"invalid_param(coordinate)": 1, "missing_param(coordinate)": 1},
        "protocol_violations": {"close_first": 1, "not_run": 1},
        "mistakes_per_run": 2.0,
        "calls_per_message": 1.0,
    }
    terse = asyncio.run(score_corpus(runs, Variant.load(TERSE))).to_json()
    assert terse["invalid_parameters"] == {"missing_param(coordinate)": 1}  # 1000,700 fits in 1280x800
    assert terse["mistakes_per_run"] == 1.5


def test_bad_corpus_lines_are_named(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"content": "ok"}\n{"text": "no content"}\n')
    with pytest.raises(ConfigError, match=":2"):
        load_corpus([p])
