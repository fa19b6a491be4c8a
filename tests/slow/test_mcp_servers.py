"""MCP servers nobody here wrote, through the interpreter: server-everything and server-filesystem
from npm, mcp-server-time from PyPI; over stdio and streamable HTTP; their faults, and their end."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.helpers import ba
from support.mcp_servers import (
    NPM,
    everything,
    everything_over_http,
    filesystem,
    guarded_servers,
    marked,
    need,
    time_server,
)

from xmltools import AsyncInterpreter, Config, McpServerError, Secret, StubBrowser, exit_code
from xmltools.errors import EXIT_ENVIRONMENT

pytestmark = pytest.mark.long  # make test-long's: see the Makefile


def use(server: str, tool: str, arguments: str = "{}") -> str:
    return (
        f"<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n"
        f"<arguments>\n{arguments}\n</arguments>\n</use_mcp_tool>"
    )


def access(server: str, uri: str) -> str:
    return f"<access_mcp_resource>\n<server_name>{server}</server_name>\n<uri>{uri}</uri>\n</access_mcp_resource>"


def interp(servers: dict[str, Any], **kw: Any) -> AsyncInterpreter:
    secrets = kw.pop("secrets", None)
    return AsyncInterpreter(Config(mcp_servers={"mcpServers": servers}, **kw), secrets=secrets)


def text_of(turn: Any) -> str:
    content = turn.result["content"]
    return (
        content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")
    )


async def test_a_stdio_server_from_pypi_is_listed_in_the_prompt_and_runs() -> None:
    async with interp({"time": time_server()}) as it:
        before = it.system_prompt()
        assert "### time" in before and "Its tools are listed once it starts" in before
        await it.start_servers()
        prompt = it.system_prompt()
        assert "`get_current_time`" in prompt and '"required":["timezone"]' in prompt
        assert "## use_mcp_tool" in prompt and "## access_mcp_resource" in prompt
        turn = await it.handle(use("time", "get_current_time", '{"timezone": "Europe/Paris"}'))
        ran = turn.ran
        assert ran is not None and ran.status == "ok" and ran.tool == "use_mcp_tool"
        assert '"timezone": "Europe/Paris"' in (ran.output or "")
        assert ran.call.params["tool_name"] == "get_current_time"  # what the transcript will record
        assert text_of(turn).startswith("The time server's get_current_time tool ran.")


async def test_arguments_that_break_the_schema_come_back_with_it_and_count_as_a_mistake() -> None:
    async with interp({"time": time_server()}) as it:
        turn = await it.handle(use("time", "get_current_time", '{"tz": "UTC"}'))
        said = text_of(turn)
        assert turn.outcomes[0].status == "invalid" and it.session.mistakes == 1
        assert "'timezone' is a required property" in said and "the tool's input schema" in said
        assert '<arguments>{"timezone": "..."}</arguments>' in said
        wrong_tool = await it.handle(use("time", "get_time"))
        assert "its tools are: get_current_time, convert_time" in text_of(wrong_tool)
        error = await it.handle(use("time", "get_current_time", '{"timezone": "Mars/Olympus"}'))
        assert error.outcomes[0].status == "failed" and "reported an error" in text_of(error)


async def test_server_everything_gives_an_image_a_resource_and_a_link() -> None:
    async with interp({"everything": everything()}) as it:
        turn = await it.handle(use("everything", "get-tiny-image"))
        images = [p for p in turn.result["content"] if p["type"] == "image_url"]
        assert len(images) == 1 and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
        assert "(an image, 20x20)" in text_of(turn)
        doc = "demo://resource/static/document/architecture.md"
        read = await it.handle(access("everything", doc))
        assert read.ran is not None and read.ran.status == "ok"
        assert f"The resource {doc} of the everything server" in text_of(read)
        links = await it.handle(use("everything", "get-resource-links", '{"count": 2}'))
        assert text_of(links).count("A linked resource: demo://") == 2


async def test_streamable_http() -> None:
    with everything_over_http() as url:
        async with interp({"web": {"url": url}}) as it:
            turn = await it.handle(use("web", "echo", '{"message": "over HTTP"}'))
            assert turn.ran is not None and turn.ran.status == "ok" and "over HTTP" in text_of(turn)
            assert "`get-sum`" in it.system_prompt()


async def test_a_long_tool_list_is_listed_by_name_and_a_wrong_call_gets_the_schema() -> None:
    async with interp({"everything": everything()}, mcp_prompt_chars=500) as it:
        await it.start_servers()
        prompt = it.system_prompt()
        assert (
            "Tools, by name only" in prompt and "get-sum" in prompt and '"required":["a","b"]' not in prompt
        )
        turn = await it.handle(use("everything", "get-sum", '{"a": 1}'))
        assert '"required":["a","b"]' in text_of(turn)


async def test_a_tools_list_changed_updates_the_prompt_on_the_next_turn() -> None:
    # server-everything registers its client-dependent tools once initialized (and says list_changed)
    async with interp({"everything": everything()}) as it:
        await it.start_servers()
        server = it.mcp.servers["everything"]
        deadline = time.monotonic() + 10
        while not server.changed and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert server.changed
        turn = await it.handle(use("everything", "echo", '{"message": "hi"}'))
        assert turn.notes and turn.notes[0].startswith("The tools of everything changed.")
        assert "`get-roots-list`" in turn.notes[0] and "`get-roots-list`" in it.system_prompt()
        again = await it.handle(use("everything", "echo", '{"message": "hi"}'))
        assert not again.notes


async def test_a_server_killed_mid_call_is_unavailable_and_starts_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with interp({"everything": everything()}) as it:
        await it.start_servers()
        (guard,) = guarded_servers(os.getpid())
        asyncio.get_running_loop().call_later(1.0, os.killpg, guard, signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="xmltools.mcp"):
            turn = await it.handle(
                use("everything", "trigger-long-running-operation", '{"duration": 20, "steps": 2}')
            )
        assert turn.outcomes[0].status == "failed" and it.session.mistakes == 0
        assert "The MCP server everything is unavailable: Connection closed" in text_of(turn)
        assert "MCP server everything is unavailable" in caplog.text
        back = await it.handle(use("everything", "echo", '{"message": "back"}'))
        assert back.ran is not None and back.ran.status == "ok"


async def test_a_server_that_never_answers_times_out() -> None:
    async with interp({"everything": everything(timeout=5)}) as it:
        await it.start_servers()
        started = time.monotonic()
        turn = await it.handle(
            use("everything", "trigger-long-running-operation", '{"duration": 30, "steps": 1}')
        )
        assert time.monotonic() - started < 15
        assert "The MCP server everything is unavailable: It did not answer within 5 s" in text_of(turn)


async def test_a_missing_command_is_the_host_s_error_with_one_line() -> None:
    async with interp({"gone": {"command": "no-such-mcp-server"}}) as it:
        with pytest.raises(McpServerError) as e:
            await it.handle(use("gone", "anything"))
    assert str(e.value) == "MCP server gone: the command 'no-such-mcp-server' was not found"
    assert exit_code(e.value) == EXIT_ENVIRONMENT
    async with interp(
        {"dies": {"command": sys.executable, "args": ["-c", "raise SystemExit('broken')"]}}
    ) as it:
        with pytest.raises(McpServerError, match=r"could not be started .* it said: broken"):
            await it.start_servers()


async def test_a_filesystem_server_reads_inside_its_root_and_refuses_outside(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("milk, eggs")
    async with interp({"fs": filesystem(tmp_path)}) as it:
        read = await it.handle(use("fs", "read_text_file", f'{{"path": "{tmp_path / "notes.txt"}"}}'))
        assert "milk, eggs" in text_of(read)
        outside = await it.handle(use("fs", "read_text_file", '{"path": "/etc/hostname"}'))
        assert outside.outcomes[0].status == "failed" and "reported an error" in text_of(outside)


async def test_a_secret_goes_only_to_the_server_it_is_bound_to_and_is_hidden_in_the_result() -> None:
    secrets = {
        "TOKEN": Secret("s3cr3t-value", origins=["mcp:everything"]),
        "OTHER": Secret("x", origins=["mcp:fs"]),
    }
    async with interp({"everything": everything()}, secrets=secrets) as it:
        turn = await it.handle(use("everything", "echo", '{"message": "{secret:TOKEN}"}'))
        assert turn.ran is not None and turn.ran.status == "ok"
        assert "s3cr3t-value" not in text_of(turn) and "{secret:TOKEN}" in text_of(turn)
        assert "s3cr3t-value" not in (turn.ran.output or "")
        refused = await it.handle(use("everything", "echo", '{"message": "{secret:OTHER}"}'))
        assert refused.outcomes[0].status == "denied"
        assert "the secret OTHER is not for the MCP server everything" in text_of(refused)


async def test_while_the_browser_is_open_an_mcp_call_follows_the_policy() -> None:
    it = AsyncInterpreter(Config(mcp_servers={"time": time_server()}), browser=StubBrowser())
    async with it:
        await it.handle(ba("launch", url="http://127.0.0.1:1/"))
        refused = await it.handle(use("time", "get_current_time", '{"timezone": "UTC"}'))
        assert refused.outcomes[0].status == "refused" and refused.outcomes[0].violation == "close_first"
    it = AsyncInterpreter(
        Config(mcp_servers={"time": time_server()}, policy="auto_close"), browser=StubBrowser()
    )
    async with it:
        await it.handle(ba("launch", url="http://127.0.0.1:1/"))
        ran = await it.handle(use("time", "get_current_time", '{"timezone": "UTC"}'))
        assert ran.ran is not None and ran.ran.status == "ok" and not it.open_sessions


async def test_approval_covers_mcp_calls_by_their_hints_and_auto_approve() -> None:
    async with interp({"time": time_server()}, approval={"read": "deny"}) as it:
        denied = await it.handle(use("time", "get_current_time", '{"timezone": "UTC"}'))
        assert denied.outcomes[0].status == "denied"  # the tool says readOnlyHint: the read rule
    async with interp(
        {"time": time_server(autoApprove=["get_current_time"])}, approval={"read": "deny"}
    ) as it:
        ran = await it.handle(use("time", "get_current_time", '{"timezone": "UTC"}'))
        assert ran.ran is not None and ran.ran.status == "ok"
        args = '{"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"}'
        converted = await it.handle(use("time", "convert_time", args))
        assert converted.outcomes[0].status == "denied"  # not in autoApprove: the read rule


async def test_approval_rules_by_server_and_tool_come_before_the_category() -> None:
    rules = {"read": "allow", "mcp:time": "deny", "mcp:time/get_current_time": "ask"}
    async with interp({"time": time_server()}, approval=rules) as it:
        held = await it.handle(use("time", "get_current_time", '{"timezone": "UTC"}'))
        assert held.outcomes[0].status == "pending" and held.approval_required is not None
        answered = await it.approve(held.approval_required)
        assert answered.ran is not None and answered.ran.status == "ok"
        args = '{"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"}'
        denied = await it.handle(use("time", "convert_time", args))
        assert "time is not allowed in this session" in text_of(denied)


def test_no_server_outlives_a_sigkilled_host_grandchildren_included(tmp_path: Path) -> None:
    need(NPM / "node_modules" / ".bin" / "mcp-server-everything")
    mark = f"XMLTOOLS_TEST_MARK_{uuid.uuid4().hex}"
    # npx starts node under it: the server's process is a grandchild of the guard
    servers = {
        "viaNpx": {
            "command": "npx",
            "args": ["--no-install", "mcp-server-everything"],
            "cwd": str(NPM),
            "env": {mark: "1"},
        }
    }
    script = textwrap.dedent(
        f"""
        import sys, time
        from xmltools import Interpreter, Config
        it = Interpreter(Config(mcp_servers={servers!r}, mcp_start="eager"))
        print("started", flush=True)
        time.sleep(600)
        """
    )
    host = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None and host.stdout.readline().strip() == "started"
        alive = marked(mark)
        assert len(alive) >= 2, alive  # npx and the node under it
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait(10)
    deadline = time.monotonic() + 10
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not marked(mark), "an MCP server outlived its SIGKILLed host"


async def test_a_transcript_records_each_mcp_call_s_server_tool_arguments_and_result(tmp_path: Path) -> None:
    async with interp({"time": time_server()}) as it:
        it.record(tmp_path / "run.jsonl")
        await it.handle(use("time", "get_current_time", '{"timezone": "UTC"}'))
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    (result,) = [r for r in records if r.get("role") == "tool_result"]
    assert result["status"] == "ok" and result["call"]["name"] == "use_mcp_tool"
    params = result["call"]["params"]
    assert (params["server_name"], params["tool_name"], json.loads(params["arguments"])) == (
        "time",
        "get_current_time",
        {"timezone": "UTC"},
    )
    assert '"timezone": "UTC"' in result["text"]


async def test_closing_the_interpreter_ends_the_server_and_what_it_started() -> None:
    mark = f"XMLTOOLS_TEST_MARK_{uuid.uuid4().hex}"
    npx = {
        "command": "npx",
        "args": ["--no-install", "mcp-server-everything"],
        "cwd": str(NPM),
        "env": {mark: "1"},
    }
    need(NPM / "node_modules" / ".bin" / "mcp-server-everything")
    async with interp({"viaNpx": npx}) as it:
        await it.start_servers()
        assert len(marked(mark)) >= 2
    deadline = time.monotonic() + 5
    while marked(mark) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not marked(mark)
