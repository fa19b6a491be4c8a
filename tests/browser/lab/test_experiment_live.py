"""Experiments live: trials of two prompt variants against a scripted model server, in a real Chromium."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.helpers import ba
from support.openai_server import ScriptedServer

from xmltools.lab.store import Store
from xmltools.record.transcript import load_transcript

pytestmark = pytest.mark.long  # make test-long's: see the Makefile

ROOT = Path(__file__).parents[3]


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xmltools.cli", *args], capture_output=True, text=True, timeout=timeout
    )


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
            "--check", "url=/form.html",
            "--out", str(out),
        )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {(row.variant, row.idx): row for row in Store(out / "results.sqlite").trials()}
    assert sorted(rows) == [("careful", 1), ("careful", 2), ("loose", 1), ("loose", 2)]
    assert all(row.passed and row.claimed for row in rows.values())  # the check holds for both
    assert {row.turns for (v, _), row in rows.items() if v == "careful"} == {5}
    assert {row.turns for (v, _), row in rows.items() if v == "loose"} == {7}
    loose = rows[("loose", 1)]
    assert (loose.first_error or "").startswith("browser_action click: "), loose.first_error  # before launch
    assert rows[("careful", 1)].first_error is None
    assert all(row.checks == [{"check": "url '/form.html'", "problem": None}] for row in rows.values())
    table = r.stdout[r.stdout.index("variant  ") :]
    assert "careful  scripted  task" in table and "2/2 = 100%" in table
    assert "no difference detected between loose and careful at n=2" in table
    # each trial's transcript is saved, traced to its prompt
    t = load_transcript(out / loose.transcript)  # type: ignore[operator]
    assert t.header.variant == "loose" and t.header.templates["system/browser_action.j2"]
    careful = load_transcript(out / rows[("careful", 1)].transcript)  # type: ignore[operator]
    assert (
        t.header.templates["system/browser_action.j2"] != careful.header.templates["system/browser_action.j2"]
    )
