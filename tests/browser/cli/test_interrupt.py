"""Ctrl-C and SIGTERM in the long commands: one line on stderr, exit 130 or 143, and what was done kept.

Each command runs in a session of its own, as a terminal's foreground job.  A
Ctrl-C goes to the whole group, as a terminal sends it (Playwright's driver
gets it too, and closes its browsers itself); a SIGTERM goes to the command's
process alone, as ``kill PID`` or a CI's timeout sends it, so that only
xmltools' own cleanup can close the browser.  After the command has ended, no
process it started is left, wherever it went (Chromium leaves the session):
not Chromium, the driver or an MCP server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.helpers import SITE, ba
from support.openai_server import ScriptedServer, by_turn

from xmltools.record.transcript import load_transcript
from xmltools.replaying.run import replay

ROOT = Path(__file__).parents[3]
DEMO = ROOT / "fixtures" / "transcripts" / "demo.jsonl"
XMLTOOLS = [sys.executable, "-m", "xmltools.cli"]


def _interrupt(
    cmd: list[str],
    cwd: Path,
    when: Callable[[str], bool],
    *,
    sig: int = signal.SIGINT,
    again: bool = False,
    env: dict[str, str] | None = None,
    watch: str = "stdout",
) -> tuple[int, str, str]:
    """Start ``cmd`` in a session of its own, send ``sig`` once ``when(...)`` holds of what it wrote
    to ``watch`` (stdout or stderr; twice, 0.2 s apart, with ``again``): SIGINT to its group, SIGTERM
    to its process alone.  Its exit code, stdout and what it wrote to stderr after the signal, once
    no process it had started by then is left."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    watched = out if watch == "stdout" else err
    with out.open("wb") as o, err.open("wb") as e:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=o, stderr=e, start_new_session=True, env=env)
        deadline = time.monotonic() + 90
        while not when(watched.read_text(errors="replace")):
            assert p.poll() is None, f"ended before the signal: {err.read_text()}"
            assert time.monotonic() < deadline, watched.read_text()
            time.sleep(0.05)
        before = err.stat().st_size  # what the command said on stderr before the signal (run's turns)
        started = _descendants(p.pid)
        assert any("chromium" in name for name in started.values()), started  # a browser is open
        send = os.killpg if sig == signal.SIGINT else os.kill
        send(p.pid, sig)
        if again:
            time.sleep(0.2)
            send(p.pid, sig)
        rc = p.wait(60)
    _wait_until_gone(started)
    return rc, out.read_text(), err.read_bytes()[before:].decode(errors="replace")


def _processes() -> dict[int, tuple[int, str, str]]:
    """Every process of the machine: its parent, its state and its name, from /proc."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # it ended while we looked
        name = text[text.index("(") + 1 : text.rindex(")")]
        state, parent = text[text.rindex(")") + 2 :].split()[:2]
        found[int(stat.parent.name)] = (int(parent), state, name)
    return found


def _descendants(pid: int) -> dict[int, str]:
    """The processes ``pid`` started, and theirs, wherever their session: pid -> name."""
    procs = _processes()
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, _, name) in procs.items():
            if ppid == parent and child not in found:
                found[child] = name
                todo.append(child)
    return found


def _wait_until_gone(started: dict[int, str]) -> None:
    """None of these processes is alive any more (within 10 s; a zombie counts as gone)."""
    deadline = time.monotonic() + 10
    while True:
        procs = _processes()
        left = {pid: name for pid, name in started.items() if pid in procs and procs[pid][1] != "Z"}
        if not left:
            return
        assert time.monotonic() < deadline, f"left running: {left}"
        time.sleep(0.2)


def _one_line(err: str, *, code: str = "Ctrl-C") -> str:
    """The stderr of an interrupted command: at most 3 lines, no traceback, the interrupt said."""
    lines = err.strip().splitlines()
    assert 1 <= len(lines) <= 3, err
    assert "Traceback" not in err and "Error" not in err, err
    assert lines[-1].startswith("xmltools: ") and code in lines[-1], err
    return lines[-1]


def _ended_as_interrupted(path: Path) -> int:
    """The transcript loads, its last record says it was interrupted; its assistant messages."""
    t = load_transcript(path)
    assert t.end is not None and t.end.outcome == "interrupted", t.end
    return len(t.assistant_messages)


def test_ctrl_c_in_demo_keeps_the_steps_done_and_the_report(tmp_path: Path) -> None:
    rc, _, err = _interrupt([*XMLTOOLS, "demo", "--out", "out"], tmp_path, lambda s: "[ 3/15]" in s)
    assert rc == 130
    line = _one_line(err)
    assert "out/run.jsonl" in line and "report.html" in line
    done = _ended_as_interrupted(tmp_path / "out" / "run.jsonl")
    assert 3 <= done < 15
    assert (tmp_path / "out" / "report.html").is_file()
    offline = asyncio.run(replay(tmp_path / "out" / "run.jsonl", offline=True))
    assert len(offline.steps) == done and not offline.drifts


def _slow_model() -> ScriptedServer:
    """A model that opens the site and clicks about for a while, a second to each reply."""
    replies = [ba("launch", url="{site}/app/index.html")] + [ba("scroll_down")] * 30
    return ScriptedServer(by_turn(replies), latency=1.0)


def _run(base: str, site: str, *extra: str) -> list[str]:
    return [
        *XMLTOOLS,
        "run",
        "--base-url",
        base,
        "--model",
        "m",
        "--task",
        f"Look around {site}.",
        "--max-turns",
        "30",
        *extra,
    ]


@pytest.mark.long
def test_ctrl_c_in_run_ends_the_transcript_and_writes_the_report(tmp_path: Path, site: str) -> None:
    """With an MCP server from PyPI configured, started eagerly: it is gone too once the run has ended."""
    time_server = Path(sys.executable).parent / "mcp-server-time"
    servers = {"mcpServers": {"time": {"command": str(time_server)}}}
    (tmp_path / "mcp.json").write_text(json.dumps(servers))
    (tmp_path / "xmltools.toml").write_text('mcp_servers = "mcp.json"\nmcp_start = "eager"\n')
    server = _slow_model()
    server.script = _filled(server.script, site)
    with server.running() as base:
        rc, _, err = _interrupt(
            _run(base, site, "--record", "run.jsonl", "--report", "run.html"),
            tmp_path,
            lambda s: s.count("scroll_down") >= 1,
            watch="stderr",  # the run's turns are said on stderr
        )
    assert rc == 130, err
    line = _one_line(err)
    assert "run.jsonl" in line and "run.html" in line
    assert _ended_as_interrupted(tmp_path / "run.jsonl") >= 2
    assert "<html" in (tmp_path / "run.html").read_text()
    assert "get_current_time" in server.requests[0]["messages"][0]["content"]  # the server did run


def test_sigterm_in_replay_exits_143_and_keeps_the_recording(tmp_path: Path) -> None:
    rc, _, err = _interrupt(
        [*XMLTOOLS, "replay", str(DEMO), "--serve", str(SITE), "--record", "again.jsonl"],
        tmp_path,
        lambda s: "[3/15]" in s,
        sig=signal.SIGTERM,
    )
    assert rc == 143
    assert "SIGTERM" in _one_line(err, code="SIGTERM")
    assert 3 <= _ended_as_interrupted(tmp_path / "again.jsonl") < 15


@pytest.mark.long
def test_a_second_ctrl_c_ends_at_once_without_a_traceback(tmp_path: Path) -> None:
    rc, _, err = _interrupt(
        [*XMLTOOLS, "demo", "--out", "out"], tmp_path, lambda s: "[ 2/15]" in s, again=True
    )
    assert rc == 130
    _one_line(err)


def _filled(script: Callable[[dict[str, object]], str], site: str) -> Callable[[dict[str, object]], str]:
    return lambda req: script(req).replace("{site}", site)


EXPERIMENT = """
trials = 6

[[variants]]
name = "A"

[[models]]
name = "scripted"
base_url = "{base}"

[[tasks]]
id = "open"
serve = "{site}"
start = "app/index.html"
instruction = "Open the app."
checks = [{{ kind = "url", value = "/app/index.html" }}]
"""


@pytest.mark.long
def test_ctrl_c_in_an_experiment_keeps_the_finished_trials_and_a_rerun_resumes(tmp_path: Path) -> None:
    """Trials of three turns, a quarter of a second a reply: interrupted once two trials are in the
    database, the run says how many it kept; the same command runs only the others."""
    import sqlite3

    def reply(body: dict[str, object]) -> str:
        messages = body["messages"]
        assert isinstance(messages, list)
        start = messages[1]["content"].rsplit("Start at ", 1)[1].strip()
        steps = [
            ba("launch", url=start),
            ba("close"),
            "<attempt_completion><result>open</result></attempt_completion>",
        ]
        n = sum(1 for m in messages if m["role"] == "assistant")
        return steps[n] if n < len(steps) else "done"

    def finished(db: Path) -> int:
        try:
            with sqlite3.connect(db) as c:
                return int(c.execute("select count(*) from trials").fetchone()[0])
        except sqlite3.Error:
            return 0

    db = tmp_path / "out" / "results.sqlite"
    with ScriptedServer(reply, latency=0.25).running() as base:
        (tmp_path / "exp.toml").write_text(EXPERIMENT.format(base=base, site=SITE))
        cmd = [*XMLTOOLS, "experiment", "run", "exp.toml", "--out", "out", "--concurrency", "1"]
        rc, _, err = _interrupt(cmd, tmp_path, lambda s: finished(db) >= 2)
        assert rc == 130
        kept = finished(db)
        assert f"{kept} finished trials in out/results.sqlite" in _one_line(err), err
        assert 2 <= kept < 6
        again = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"resumed: {kept} trials were already in" in again.stdout
    assert finished(db) == 6


LIBRARY_HOST = """
import asyncio, sys
from xmltools import replay
from xmltools.base.serve import serve_directory

with serve_directory(sys.argv[2]) as base:
    asyncio.run(replay(sys.argv[1], base_url=base, on_step=lambda s: print(s.index, flush=True)))
"""


@pytest.mark.long
def test_the_library_gives_its_host_the_keyboard_interrupt_with_everything_closed(tmp_path: Path) -> None:
    (tmp_path / "host.py").write_text(LIBRARY_HOST)
    cmd = [sys.executable, "host.py", str(DEMO), str(SITE)]
    rc, _, err = _interrupt(cmd, tmp_path, lambda s: "3\n" in s)
    assert rc != 0 and err.rstrip().endswith("KeyboardInterrupt"), err  # the host's to handle
