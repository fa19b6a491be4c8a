"""One loop, a real Chromium and two MCP servers: a scripted model over the OpenAI wire format uses them all."""

from __future__ import annotations

import openai
import pytest
from support.helpers import ba
from support.mcp_servers import everything, time_server
from support.openai_server import ScriptedServer, by_turn

from xmltools import Config
from xmltools.loop import loop_system_prompt, run_loop
from xmltools.models.adapters import OpenAIModel


def use(server: str, tool: str, arguments: str) -> str:
    return (
        f"<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n"
        f"<arguments>{arguments}</arguments>\n</use_mcp_tool>"
    )


@pytest.mark.long
def test_the_browser_and_two_servers_in_one_loop(site: str) -> None:
    config = Config(mcp_servers={"time": time_server(), "everything": everything()})
    prompt = loop_system_prompt(config)
    assert "### time" in prompt and "`get_current_time`" in prompt and "`get-tiny-image`" in prompt
    replies = [
        "First the date.\n" + use("time", "get_current_time", '{"timezone": "UTC"}'),
        ba("launch", url=site + "/form.html"),
        # the browser is open: only browser_action runs (the default policy refuses the rest)
        use("everything", "echo", '{"message": "too early"}'),
        ba("close"),
        use("everything", "get-tiny-image", "{}"),
        "<attempt_completion>\n<result>Done: the date, the form, the logo.</result>\n</attempt_completion>",
    ]
    server = ScriptedServer(by_turn(replies))
    start = [{"role": "system", "content": prompt}, {"role": "user", "content": "do it"}]
    with server.running() as base:
        client = openai.OpenAI(base_url=base, api_key="test-key", max_retries=0, timeout=60)
        res = run_loop(OpenAIModel(client, "scripted-model"), start, config=config, max_turns=10)
    assert res.stop_reason == "completed", res.stop_reason
    statuses = [(t.outcomes[0].tool, t.outcomes[0].status) for t in res.turns]
    assert statuses == [
        ("use_mcp_tool", "ok"),
        ("browser_action", "ok"),
        ("use_mcp_tool", "refused"),
        ("browser_action", "ok"),
        ("use_mcp_tool", "ok"),
        ("attempt_completion", "ok"),
    ]
    assert '"timezone": "UTC"' in (res.turns[0].outcomes[0].output or "")
    images = [
        p["image_url"]["url"]
        for m in res.messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert any(u.startswith("data:image/png;base64,") for u in images)  # the server's logo
    assert any(u.startswith("data:image/webp;base64,") for u in images)  # the browser's screenshot
