"""Experiments live: trials of two prompt variants against a scripted model server, in a real Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import ba
from openai_server import ScriptedServer

from xmltools.transcript import load_transcript

ROOT = Path(__file__).parents[2]


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
