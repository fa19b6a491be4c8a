"""An offline replay of MCP calls from a transcript alone: no server, no browser, each call answered
as it was recorded, a server that broke then breaking again now."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from xmltools import Config
from xmltools.replaying.run import replay

CALL = (
    "<use_mcp_tool>\n<server_name>time</server_name>\n<tool_name>get_current_time</tool_name>\n"
    '<arguments>{"timezone": "UTC"}</arguments>\n</use_mcp_tool>'
)
PARAMS = {"server_name": "time", "tool_name": "get_current_time", "arguments": '{"timezone": "UTC"}'}


def result(status: str, mcp: dict[str, Any]) -> dict[str, Any]:
    call = {"name": "use_mcp_tool", "params": PARAMS, "index": 0}
    return {"role": "tool_result", "call": call, "status": status, "text": "", "mcp": mcp}


def write(path: Path, *records: dict[str, Any]) -> Path:
    header = {"xmltools_transcript": 1, "config": {"profile": "roo"}, "tools": []}
    lines = [header, {"role": "system", "content": "tools"}, *records]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_each_call_is_answered_as_recorded_and_a_broken_server_breaks_again(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.jsonl",
        {"role": "assistant", "content": CALL},
        result("failed", {"server": "time", "tool": "get_current_time", "unavailable": "it exited (code 1)"}),
        {"role": "assistant", "content": CALL},
        result(
            "ok",
            {
                "server": "time",
                "tool": "get_current_time",
                "read_only": True,
                "input_schema": {"type": "object", "required": ["timezone"]},
                "parts": [{"kind": "text", "text": '{"datetime": "2026-11-27T10:00:00+00:00"}'}],
            },
        ),
    )
    got = asyncio.run(replay(path, offline=True, local=Config()))
    assert got.ok, got.summary()
    first, second = (s.turn.outcomes[0] for s in got.steps)
    assert (
        first.status == "failed" and first.mcp is not None and first.mcp.unavailable == "it exited (code 1)"
    )
    assert "time" in (first.output or "") and "unavailable" in (first.output or "")
    assert second.status == "ok" and second.mcp is not None and second.mcp.source == "recording"
    assert "2026-11-27T10:00:00" in (second.output or "")


def test_arguments_that_break_the_recorded_schema_are_refused_offline_too(tmp_path: Path) -> None:
    wrong = CALL.replace('"timezone"', '"tz"')
    path = write(
        tmp_path / "run.jsonl",
        {"role": "assistant", "content": wrong},
        result(
            "ok",
            {
                "server": "time",
                "tool": "get_current_time",
                "input_schema": {"type": "object", "required": ["timezone"]},
                "parts": [{"kind": "text", "text": "fine"}],
            },
        ),
    )
    got = asyncio.run(replay(path, offline=True, local=Config()))
    outcome = got.steps[0].turn.outcomes[0]
    assert outcome.status == "invalid" and outcome.error is not None and outcome.error.param == "arguments"
    assert not got.ok and "outcomes" in got.summary()


def test_a_tool_known_only_from_a_call_whose_server_broke_is_still_a_tool(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.jsonl",
        {"role": "assistant", "content": CALL},
        result("failed", {"server": "time", "tool": "get_current_time", "unavailable": "it timed out"}),
    )
    got = asyncio.run(replay(path, offline=True, local=Config()))
    assert got.ok and got.steps[0].turn.outcomes[0].status == "failed", got.summary()
