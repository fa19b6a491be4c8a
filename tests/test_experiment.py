"""Prompt experiments: variants, re-rendering, scoring a corpus, and live trials."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openai_server import ScriptedServer

from xmltools import ConfigError
from xmltools.experiment import Variant, format_scores, load_corpus, rerender, score_corpus
from xmltools.results import Viewport
from xmltools.transcript import load_transcript

ROOT = Path(__file__).parent.parent
CORPUS = ROOT / "fixtures" / "corpus" / "outputs.jsonl"
TERSE = ROOT / "fixtures" / "variants" / "terse"


def ba(action: str, **params: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in {"action": action, **params}.items())
    return f"<browser_action>\n{inner}</browser_action>"


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xmltools.cli", *args], capture_output=True, text=True, timeout=timeout
    )


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


def test_prompt_shows_what_the_model_would_see() -> None:
    r = cli("prompt", "--variant", str(TERSE))
    assert r.returncode == 0 and r.stdout.startswith("# variant: terse")
    assert "Viewport: 1280x800" in r.stdout and "Drive a Chromium browser" in r.stdout


# -- re-rendering -------------------------------------------------------------------------------


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A small recording made offline-ready: the demo's first steps with their observations."""
    from fakes import FakeBrowser

    from xmltools.config import Config
    from xmltools.interpreter import AsyncInterpreter
    from xmltools.transcript import Header, TranscriptWriter

    async def make() -> Path:
        it = AsyncInterpreter(Config(), browser=FakeBrowser())
        out = tmp_path / "run.jsonl"
        with TranscriptWriter(out, Header(templates=it.renderer.template_hashes())) as w:
            for text in (
                ba("launch", url="http://localhost/app"),
                ba("click", coordinate="450,140"),
                ba("click", coordinate="1000,700"),  # outside 900x600, inside 1280x800
                ba("close"),
            ):
                w.turn(await it.handle(text))
        return out

    return asyncio.run(make())


def wording(tmp_path: Path) -> Path:
    d = tmp_path / "wording"
    (d / "result").mkdir(parents=True)
    (d / "result" / "browser.j2").write_text("Done: {{ action }}. {{ obs.title }} at {{ obs.url | page }}.\n")
    (d / "variant.toml").write_text('name = "wording"\n')
    return d


def test_rerender_diffs_turn_by_turn(recorded: Path, tmp_path: Path) -> None:
    diffs = asyncio.run(rerender(recorded, Variant.load(wording(tmp_path))))
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


def test_cli_rerender(recorded: Path, tmp_path: Path) -> None:
    r = cli("rerender", str(recorded), "--variant", str(wording(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert "recorded -> wording" in r.stdout and "--- turn 1 ---" in r.stdout
    assert r.stdout.splitlines()[-1].strip() != ""


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


def test_bad_corpus_lines_are_named(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"content": "ok"}\n{"text": "no content"}\n')
    with pytest.raises(ConfigError, match=":2"):
        load_corpus([p])


# -- live trials -----------------------------------------------------------------------------------


def variant(tmp_path: Path, name: str, marker: str) -> Path:
    d = tmp_path / name
    (d / "system").mkdir(parents=True)
    original = (ROOT / "prompts" / "system" / "browser_action.j2").read_text()
    (d / "system" / "browser_action.j2").write_text(f"{marker}\n{original}")
    (d / "variant.toml").write_text(f'name = "{name}"\n')
    return d


def model_script(site: str) -> Any:
    """A scripted model that behaves well under the CAREFUL prompt and errs under the other."""
    good = [
        ba("launch", url=site + "/form.html"),
        ba("click", coordinate="150,97"),
        ba("type", text="Ada"),
        ba("close"),
        "<attempt_completion><result>typed the name</result></attempt_completion>",
    ]
    sloppy = [
        ba("click", coordinate="150,97"),  # before launch
        ba("launch", url=site + "/form.html"),
        ba("click", coordinate="150,97"),
        ba("type", text="Ada"),
        "<attempt_completion><result>typed the name</result></attempt_completion>",  # browser still open
        ba("close"),
        "<attempt_completion><result>typed the name</result></attempt_completion>",
    ]

    def script(req: dict[str, Any]) -> str:
        replies = good if "CAREFUL" in req["messages"][0]["content"] else sloppy
        n = sum(1 for m in req["messages"] if m["role"] == "assistant")
        return replies[n] if n < len(replies) else "done"

    return script


@pytest.mark.browser
def test_live_trials_show_the_difference_between_variants(site: str, tmp_path: Path) -> None:
    careful = variant(tmp_path, "careful", "CAREFUL: read every rule twice.")
    loose = variant(tmp_path, "loose", "Be quick.")
    out = tmp_path / "exp"
    server = ScriptedServer(model_script(site))
    with server.running() as base:
        r = cli(
            "experiment",
            "--variants", str(careful), str(loose),
            "--task", "Type Ada into the form",
            "--model", "scripted",
            "--base-url", base,
            "--trials", "2",
            "--out", str(out),
        )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads((out / "summary.json").read_text())
    by = {s["variant"]: s for s in summary}
    assert by["careful"]["success_rate"] == 1.0 and by["loose"]["success_rate"] == 1.0
    assert by["careful"]["mistakes"]["mean"] == 0 and by["loose"]["mistakes"]["mean"] == 2
    assert by["careful"]["turns"]["mean"] == 5 and by["loose"]["turns"]["mean"] == 7
    assert by["loose"]["tokens"]["mean"] > by["careful"]["tokens"]["mean"] > 0
    # the stream is cut after each call, before the server's usage: those counts are estimates, marked
    assert by["loose"]["tokens_estimated"] is True
    table = r.stdout[r.stdout.index("variant  ") :]
    assert "careful  2/2" in table and "loose    2/2" in table and "~" in table
    # each trial's transcript is saved, traced to its prompt, and linked from the summary
    t = load_transcript(out / "loose-1.jsonl")
    assert t.header.variant == "loose" and t.header.templates["system/browser_action.j2"]
    assert (
        t.header.templates["system/browser_action.j2"]
        != load_transcript(out / "careful-1.jsonl").header.templates["system/browser_action.j2"]
    )
    html = (out / "summary.html").read_text()
    for name in ("careful-1.html", "careful-2.html", "loose-1.html", "loose-2.html"):
        assert f'href="{name}"' in html and (out / name).exists()
