"""The chat loop end to end in a real Chromium: the openai SDK and the command line against a local scripted server."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import openai
import pytest
from support.helpers import ba
from support.openai_server import ScriptedServer, by_turn

from xmltools.loop import run_loop
from xmltools.models.adapters import OpenAIModel

START = [{"role": "system", "content": "system"}, {"role": "user", "content": "do it"}]


def client(base: str, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=base, api_key="test-key", max_retries=0, timeout=30, **kw)


@pytest.mark.parametrize("stream", [True, False])
def test_openai_sdk_end_to_end_in_chromium(site: str, stream: bool) -> None:
    replies = [
        "I'll open the form.\n" + ba("launch", url=site + "/form.html"),
        "<thinking>The name field is near the top.</thinking>\n" + ba("click", coordinate="150,97"),
        ba("type", text="Ada"),
        ba("press", text="Enter"),
        "Signed in. Closing.\n" + ba("close"),
        "The form greets Ada. Done.",
    ]
    server = ScriptedServer(by_turn(replies))
    with server.running() as base:
        model = OpenAIModel(client(base), "scripted-model", stream=stream)
        res = run_loop(model, START, max_turns=10)
    assert res.stop_reason == "no_tool" and len(res.turns) == 6
    assert [t.ran.action for t in res.turns[:5] if t.ran] == ["launch", "click", "type", "press", "close"]
    press = res.turns[3].ran
    assert press is not None and press.observation is not None and press.observation.title == "Welcome"
    images = [
        p
        for m in res.messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert len(images) == 4 and all(
        p["image_url"]["url"].startswith("data:image/webp;base64,") for p in images
    )
    assert res.usage.calls == 6 and res.usage.prompt_tokens > 0 and res.usage.completion_tokens > 0
    assert (
        server.requests[0]["model"] == "scripted-model" and bool(server.requests[0].get("stream")) is stream
    )


@pytest.mark.long
def test_cli_run_against_the_local_server(site: str) -> None:
    replies = [ba("launch", url=site + "/form.html"), ba("close"), "Finished."]
    server = ScriptedServer(by_turn(replies))
    with server.running() as base:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "xmltools.cli",
                "run",
                "--base-url",
                base,
                "--model",
                "m",
                "--api-key-env",
                "MY_KEY",
                "--task",
                "open the form",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "MY_KEY": "secret-value"},
        )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Finished.\n"  # the answer alone; the turns and the stop on stderr
    assert "turn 1: browser_action launch: ok" in r.stderr and "turn 3: no tool call" in r.stderr
    assert "stopped: no_tool" in r.stderr
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system" and "browser_action" in system["content"]
    assert server.requests[0]["messages"][1] == {"role": "user", "content": "open the form"}
