"""A loop over the browser and three real MCP servers (two over stdio, one over HTTP), recorded, then
replayed offline and live.

Offline, no server starts: each call is answered from the recording.  Live, the read-only tools
and the resources are called again and compared; a tool that changes the world (the filesystem
server's write_file) is answered from the recording unless the host asks for every call."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from support.helpers import ba
from support.mcp_servers import everything_over_http, filesystem, guarded_servers, time_server
from support.openai_server import ScriptedServer, by_turn

from xmltools import Config
from xmltools.errors import UsageError
from xmltools.interpreter import Interpreter
from xmltools.loop import run_loop
from xmltools.loop.run import loop_registry
from xmltools.models.adapters import OpenAIModel
from xmltools.record.report import write_report
from xmltools.record.transcript import ToolResultRecord, load_transcript
from xmltools.replaying.run import replay


def use(server: str, tool: str, arguments: dict[str, Any]) -> str:
    return (
        f"<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n"
        f"<arguments>{json.dumps(arguments)}</arguments>\n</use_mcp_tool>"
    )


def read(server: str, uri: str) -> str:
    return f"<access_mcp_resource>\n<server_name>{server}</server_name>\n<uri>{uri}</uri>\n</access_mcp_resource>"


ARCHITECTURE = "demo://resource/static/document/architecture.md"


def servers(root: Path, everything_at: str) -> dict[str, Any]:
    """The time server from PyPI and the filesystem server from npm over stdio, and server-everything
    from npm over streamable HTTP."""
    return {"time": time_server(), "everything": {"url": everything_at}, "files": filesystem(root)}


@pytest.fixture(scope="module")
def everything_at() -> Iterator[str]:
    """server-everything over streamable HTTP, for the module."""
    with everything_over_http() as url:
        yield url


@pytest.fixture(scope="module")
def recorded(
    tmp_path_factory: pytest.TempPathFactory, site: str, everything_at: str
) -> tuple[Path, Path, str]:
    """The run's transcript, the folder the filesystem server writes in (emptied after), and where
    server-everything listens."""
    tmp = tmp_path_factory.mktemp("mcp-run")
    root = tmp / "files"
    root.mkdir()
    note = root / "note.txt"
    replies = [
        "The date first.\n" + use("time", "get_current_time", {"timezone": "UTC"}),
        ba("launch", url=site + "/form.html"),
        ba("close"),
        use("everything", "get-tiny-image", {}),
        use("files", "write_file", {"path": str(note), "content": "seen the form"}),
        read("everything", ARCHITECTURE),
        "<attempt_completion>\n<result>Done.</result>\n</attempt_completion>",
    ]
    path = tmp / "run.jsonl"
    config = Config(mcp_servers=servers(root, everything_at))
    with (
        ScriptedServer(by_turn(replies)).running() as base,
        Interpreter(config, registry=loop_registry(config)) as it,
    ):
        it.record(path, base_url=site)
        client = openai.OpenAI(base_url=base, api_key="test-key", max_retries=0, timeout=60)
        start = [{"role": "system", "content": it.system_prompt()}, {"role": "user", "content": "go"}]
        res = run_loop(OpenAIModel(client, "scripted-model"), start, interpreter=it, max_turns=10)
    assert res.stop_reason == "completed", [(t.outcomes[:1], t.assistant["content"][:80]) for t in res.turns]
    assert note.read_text() == "seen the form"
    note.unlink()
    return path, root, everything_at


@pytest.mark.long
def test_each_call_is_recorded_with_its_answer_and_the_tool_it_called(
    recorded: tuple[Path, Path, str],
) -> None:
    path, _, _ = recorded
    t = load_transcript(path)
    answers = [r.mcp for r in t.records if isinstance(r, ToolResultRecord) and r.mcp is not None]
    assert [(a.server, a.tool or a.uri) for a in answers] == [
        ("time", "get_current_time"),
        ("everything", "get-tiny-image"),
        ("files", "write_file"),
        ("everything", ARCHITECTURE),
    ]
    clock, image, write, doc = answers
    assert clock.read_only and clock.input_schema is not None and "timezone" in json.dumps(clock.input_schema)
    assert '"timezone": "UTC"' in clock.parts[0].text
    pictures = [p for p in image.parts if p.image is not None]
    assert pictures and (path.parent / str(pictures[0].image)).is_file()
    assert not write.read_only and write.destructive is True
    assert doc.read_only and doc.parts[0].kind == "resource" and doc.parts[0].uri == ARCHITECTURE
    # the servers' commands stay on this machine: the header does not carry them
    assert "mcp_servers" not in t.header.config


def test_offline_every_call_is_answered_from_the_recording_and_no_server_starts(
    recorded: tuple[Path, Path, str],
) -> None:
    path, root, _ = recorded
    before = set(guarded_servers(os.getpid()))
    result = asyncio.run(replay(path, offline=True, local=Config()))
    assert result.ok, result.summary()
    assert set(guarded_servers(os.getpid())) == before
    statuses = [o.status for s in result.steps for o in s.turn.outcomes]
    assert statuses == ["ok"] * 7
    mcp = [o.mcp for s in result.steps for o in s.turn.outcomes if o.mcp is not None]
    assert all(m.source == "recording" for m in mcp)
    image = mcp[1]
    assert image.images and image.images[0].format == "png"
    assert not (root / "note.txt").exists()


@pytest.mark.long
def test_live_a_read_only_tool_is_called_again_and_its_changed_answer_is_drift(
    recorded: tuple[Path, Path, str], site: str
) -> None:
    path, root, at = recorded
    local = Config(mcp_servers=servers(root, at))
    result = asyncio.run(replay(path, base_url=site, local=local))
    drifts = [d for d in result.drifts if d.field == "mcp"]
    # the clock has moved on since the recording: its answer drifts, and nothing else does
    assert [str(d).split(":")[0:3] for d in drifts] == [
        ["step 1", " mcp", " time get_current_time answered differently"]
    ], result.summary()
    assert "datetime" in str(drifts[0])
    calm = asyncio.run(replay(path, base_url=site, local=local, settings=_ignoring('"datetime"')))
    assert calm.ok, calm.summary()
    assert calm.summary() == "7 steps replayed (live): no drift, 1 MCP call answered from the recording"
    sources = {(o.mcp.tool or o.mcp.uri): o.mcp.source for s in calm.steps for o in s.turn.outcomes if o.mcp}
    assert sources == {
        "get_current_time": "server",
        "get-tiny-image": "server",
        "write_file": "recording",
        ARCHITECTURE: "server",
    }
    assert not (root / "note.txt").exists()  # the write was not made a second time


@pytest.mark.long
def test_live_with_every_call_the_write_is_made_again(recorded: tuple[Path, Path, str], site: str) -> None:
    path, root, at = recorded
    local = Config(mcp_servers=servers(root, at))
    result = asyncio.run(
        replay(path, base_url=site, local=local, settings=_ignoring('"datetime"'), mcp_calls="all")
    )
    assert result.ok, result.summary()
    assert (root / "note.txt").read_text() == "seen the form"
    (root / "note.txt").unlink()


@pytest.mark.long
def test_live_without_the_server_configured_is_the_hosts_error(
    recorded: tuple[Path, Path, str], site: str
) -> None:
    path, _, _ = recorded
    with pytest.raises(UsageError, match="calls the MCP server 'everything', which is not configured here"):
        asyncio.run(replay(path, base_url=site, local=Config()))
    # answered from the recording, a live replay needs no server
    result = asyncio.run(replay(path, base_url=site, local=Config(), mcp_calls="none"))
    assert result.ok, result.summary()


def _ignoring(pattern: str) -> Any:
    from xmltools.record.transcript import ReplaySettings

    return ReplaySettings(ignore_mcp=[pattern])


@pytest.mark.long
def test_the_report_shows_each_call_beside_the_browser_steps(
    recorded: tuple[Path, Path, str], site: str
) -> None:
    path, root, at = recorded
    again = path.parent / "again.jsonl"
    local = Config(mcp_servers=servers(root, at))
    result = asyncio.run(
        replay(path, base_url=site, local=local, record=again, settings=_ignoring('"datetime"'))
    )
    assert result.ok, result.summary()
    page = write_report(path.parent / "report.html", again, result, embed=True).read_text()
    for label in (
        "use_mcp_tool time get_current_time: ok",
        "browser_action launch: ok",
        "use_mcp_tool everything get-tiny-image: ok",
        "use_mcp_tool files write_file: ok",
        f"access_mcp_resource everything {ARCHITECTURE}: ok",
    ):
        assert label in page, label
    assert page.count("answered from the recording: the server was not called") == 1  # the write
    assert '<figure class="mcp-image"><img src="data:image/png;base64,' in page
    assert (
        "&#34;timezone&#34;: &#34;UTC&#34;" in page
        or "&quot;timezone&quot;" in page
        or '"timezone": "UTC"' in page
    )
