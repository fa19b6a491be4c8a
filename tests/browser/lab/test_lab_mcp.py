"""MCP servers in experiments: named per task and for the whole file, started before the prompt is
written (so that it lists their tools), one process per trial unless the file shares the server, and
checks that read what a server says after the trial."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mcp_servers import guarded_servers
from support.openai_server import ScriptedServer

from xmltools.errors import ConfigError
from xmltools.lab import load_experiment, run_experiment
from xmltools.lab.plan import ModelSpec
from xmltools.lab.runner import default_model
from xmltools.record.transcript import ToolResultRecord, load_transcript

pytestmark = pytest.mark.long  # make test-long's: see the Makefile

COUNTER = Path(__file__).parents[2] / "support" / "counter_server.py"
TRIALS = 3


def use(server: str, tool: str) -> str:
    return (
        f"<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n"
        "<arguments>{}</arguments>\n</use_mcp_tool>"
    )


def reply(body: dict[str, Any]) -> str:
    steps = [
        use("counter", "bump"),
        use("shared", "bump"),
        "<attempt_completion><result>bumped both</result></attempt_completion>",
    ]
    n = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return steps[n] if n < len(steps) else "done"


def experiment(tmp_path: Path, checks: str = "") -> Path:
    path = tmp_path / "exp.toml"
    own = f"{{ counter = {{ command = {json.dumps(sys.executable)}, args = [{json.dumps(str(COUNTER))}] }} }}"
    path.write_text(
        f"""
trials = {TRIALS}
concurrency = 3
shared_servers = ["shared"]

[mcp_servers.shared]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(COUNTER))}]

[[variants]]
name = "plain"

[[models]]
name = "scripted"
base_url = "http://127.0.0.1:9/v1"

[[tasks]]
id = "own"
instruction = "Bump both counters."
mcp_servers = {own}
checks = [
  {{ kind = "mcp", server = "counter", uri = "counter://count", value = "count 1" }},
  {{ kind = "mcp", server = "counter", tool = "count", value = "^count 1$", regex = true }},
]

[[tasks]]
id = "wrong"
instruction = "Bump both counters."
mcp_servers = {own}
checks = [{{ kind = "mcp", server = "counter", tool = "count", value = "count 2" }}{checks}]
"""
    )
    return path


def maker(base: str) -> Any:
    def make(spec: ModelSpec, cell: tuple[str, str, str, int]) -> Any:
        return default_model(spec.model_copy(update={"base_url": base}), cell)

    return make


def answers(path: Path, server: str) -> list[str]:
    t = load_transcript(path)
    return [
        r.mcp.parts[0].text
        for r in t.records
        if isinstance(r, ToolResultRecord) and r.mcp is not None and r.mcp.server == server
    ]


def test_each_trial_has_its_own_server_and_shares_the_shared_one(tmp_path: Path) -> None:
    exp = load_experiment(experiment(tmp_path))
    with ScriptedServer(reply).running() as base:
        summary = asyncio.run(run_experiment(exp, tmp_path / "out", make_model=maker(base)))
    assert guarded_servers(os.getpid()) == []  # every trial's server and the shared one closed
    passed = {r.key: r.passed for r in summary.rows}
    assert passed == {
        **{("plain", "scripted", "own", k): True for k in range(1, TRIALS + 1)},
        **{("plain", "scripted", "wrong", k): False for k in range(1, TRIALS + 1)},
    }
    trials = sorted((tmp_path / "out" / "trials").glob("*.jsonl"))
    assert len(trials) == 2 * TRIALS
    system = load_transcript(trials[0]).records[0]
    assert "`bump`" in getattr(system, "content", ""), "the prompt lists the servers' tools"
    own = [answers(p, "counter") for p in trials]
    shared = [answers(p, "shared") for p in trials]
    # each trial's own counter: bumped once, by a process of its own
    assert all(len(a) == 1 and a[0].startswith("count 1 pid ") for a in own)
    assert len({a[0].split()[-1] for a in own}) == 2 * TRIALS
    # the shared one: one process, bumped once by each trial
    pids = {a[0].split()[-1] for a in shared}
    counts = sorted(int(re.match(r"count (\d+)", a[0]).group(1)) for a in shared)  # type: ignore[union-attr]
    assert len(pids) == 1 and counts == list(range(1, 2 * TRIALS + 1))


def test_a_check_may_not_call_a_tool_that_changes_the_world(tmp_path: Path) -> None:
    more = ', { kind = "mcp", server = "counter", tool = "bump", value = "count" }'
    exp = load_experiment(experiment(tmp_path, more))
    exp = exp.model_copy(update={"tasks": exp.tasks[1:], "trials": 1})
    with (
        ScriptedServer(reply).running() as base,
        pytest.raises(ConfigError, match="does not mark it read-only"),
    ):
        asyncio.run(run_experiment(exp, tmp_path / "out", make_model=maker(base)))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('shared_servers = ["nope"]', "shared_servers: 'nope' is not one of the experiment's mcp_servers"),
        (
            "[mcp_servers.bad]\nurl = 'ftp://x'",
            "mcp_servers: mcpServers.bad.url: an http:// or https:// address",
        ),
    ],
)
def test_a_bad_server_entry_is_one_line_naming_it(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(
        f"""{text}
[[variants]]
name = "v"
[[models]]
name = "m"
[[tasks]]
id = "t"
instruction = "x"
"""
    )
    with pytest.raises(ConfigError, match=re.escape(said)):
        load_experiment(path)
