"""``xmltools run`` with a real Chromium, as a user types it: a served folder recorded as {base_url} and
replayed live on another port with no drift, the run's traces, the answer alone on stdout."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.helpers import SITE, ba
from support.openai_server import ScriptedServer

XMLTOOLS = [sys.executable, "-m", "xmltools.cli"]
DONE = "<attempt_completion>\n<result>Signed in as Ada.</result>\n</attempt_completion>"


def _model() -> ScriptedServer:
    """A model that opens the page the task names, signs in as Ada, closes the browser and answers."""

    def script(req: dict[str, Any]) -> str:
        task = req["messages"][1]["content"]
        page = re.search(r"http://\S+/form\.html", task)
        steps = [
            ba("launch", url=page.group(0) if page else "about:blank"),
            ba("click", coordinate="150,97"),
            ba("type", text="Ada"),
            ba("press", text="Enter"),
            ba("close"),
            DONE,
        ]
        n = sum(1 for m in req["messages"] if m["role"] == "assistant")
        return steps[min(n, len(steps) - 1)]

    return ScriptedServer(script)


@pytest.mark.long
def test_a_run_on_a_served_folder_replays_live_on_another_port(tmp_path: Path) -> None:
    server = _model()
    with server.running() as base:
        r = subprocess.run(
            [
                *XMLTOOLS,
                "run",
                "--base-url",
                base,
                "--model",
                "m",
                "--task",
                "Sign in as Ada at {base_url}/form.html",
                "--serve",
                str(SITE),
                "--record",
                "run.jsonl",
                "--tracing",
                "on",
                "--json",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["answer"] == "Signed in as Ada." and summary["stop_reason"] == "completed"
    served = summary["site_url"]
    assert served.startswith("http://127.0.0.1:") and f"serving {SITE} at {served}" in r.stderr
    assert "turn 1: browser_action launch: ok" in r.stderr
    [trace] = summary["traces"]
    assert (tmp_path / trace).is_file() and f"trace: {trace}" in r.stderr
    recorded = (tmp_path / "run.jsonl").read_text()
    assert "{base_url}/form.html" in recorded and f'"base_url": "{served}"' in recorded
    assert recorded.count(served) == 1  # the header's, and nowhere else

    again = subprocess.run(
        [*XMLTOOLS, "replay", "run.jsonl", "--serve", str(SITE)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    now = re.search(r"serving \S+ at (\S+)", again.stdout)
    assert now is not None and now.group(1) != served  # another port
    assert "6 steps replayed (live): no drift" in again.stdout, again.stdout
