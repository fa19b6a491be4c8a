"""A real MCP server (mcp-server-time, from PyPI): the system prompt a run sends, and the one recorded,
list its tools, whether it starts lazily or eagerly and whatever the order of record() and
system_prompt().  No browser: the scripted model only calls the server and answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.mcp_servers import time_server
from support.openai_server import ScriptedServer, by_turn

from xmltools import Config, Interpreter
from xmltools.cli import main
from xmltools.record.transcript import load_transcript

LISTED = "`get_current_time`"  # the tool, as the prompt lists it
NOT_LISTED = "Its tools are listed once it starts"
NOW = (
    "<use_mcp_tool>\n<server_name>time</server_name>\n<tool_name>get_current_time</tool_name>\n"
    '<arguments>{"timezone": "UTC"}</arguments>\n</use_mcp_tool>'
)
DONE = "<attempt_completion>\n<result>It is some time in UTC.</result>\n</attempt_completion>"


def settings(tmp_path: Path, start: str) -> str:
    """A settings file naming the time server, started ``start`` (lazy or eager)."""
    servers = {"mcpServers": {"time": time_server()}}
    (tmp_path / "mcp.json").write_text(json.dumps(servers))
    path = tmp_path / "settings.toml"
    path.write_text(f'mcp_servers = "{tmp_path / "mcp.json"}"\nmcp_start = "{start}"\n')
    return str(path)


@pytest.mark.parametrize("start", ["lazy", "eager"])
def test_run_sends_and_records_a_prompt_that_lists_the_servers_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], start: str
) -> None:
    server = ScriptedServer(by_turn([NOW, DONE]))
    record = tmp_path / "run.jsonl"
    with server.running() as base:
        argv = ["run", "--base-url", base, "--model", "m", "--task", "What time is it?", "--retries", "0"]
        rc = main([*argv, "--config", settings(tmp_path, start), "--record", str(record)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert out == "It is some time in UTC.\n"
    assert "turn 1: use_mcp_tool: ok" in err
    sent = server.requests[0]["messages"][0]["content"]
    assert "### time" in sent and LISTED in sent and NOT_LISTED not in sent
    recorded = load_transcript(record).message("system")
    assert recorded == sent  # the prompt the model was given


def _record_then_prompt(it: Interpreter, path: Path) -> tuple[str, str | None]:
    it.record(path)
    return it.system_prompt(), load_transcript(path).message("system")


def _prompt_then_record(it: Interpreter, path: Path) -> tuple[str, str | None]:
    prompt = it.system_prompt()
    it.record(path)
    return prompt, load_transcript(path).message("system")


@pytest.mark.parametrize("order", [_record_then_prompt, _prompt_then_record])
def test_record_keeps_the_prompt_the_model_gets_whatever_the_order(tmp_path: Path, order: Any) -> None:
    config = Config(mcp_servers={"mcpServers": {"time": time_server()}})
    with Interpreter(config) as it:
        prompt, recorded = order(it, tmp_path / "run.jsonl")
    assert LISTED in prompt and NOT_LISTED not in prompt
    assert recorded == prompt


async def test_the_async_interpreter_records_the_prompt_of_servers_started_after_record(
    tmp_path: Path,
) -> None:
    """record() first, then start_servers(), then the task: the system prompt recorded lists the
    server's tools, as the one the model is given does."""
    from xmltools import AsyncInterpreter

    path = tmp_path / "run.jsonl"
    config = Config(mcp_servers={"mcpServers": {"time": time_server()}})
    async with AsyncInterpreter(config) as it:
        writer = it.record(path)
        await it.start_servers()
        prompt = it.system_prompt()
        writer.message("user", "What time is it?")
        assert LISTED in prompt
        t = load_transcript(path)
        assert t.message("system") == prompt and t.message("user") == "What time is it?"
        assert [r.role for r in t.records[:2]] == ["system", "user"]  # type: ignore[union-attr]
