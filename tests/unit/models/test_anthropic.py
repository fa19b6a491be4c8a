"""AnthropicModel: the real anthropic SDK against a local Anthropic-compatible Messages server."""

from __future__ import annotations

import base64
import io
import json
import sys
from types import SimpleNamespace
from typing import Any, ClassVar

import anthropic
import pytest
from support.anthropic_server import AnthropicServer, by_turn
from support.fakes import SHOT, FakeBrowser
from support.helpers import ba

from xmltools import ModelError, UsageError
from xmltools.cli import main
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.loop import arun_loop, loop_registry, run_loop
from xmltools.models.adapters import AnthropicModel, anthropic_messages

DONE = "<attempt_completion>\n<result>opened and closed the page</result>\n</attempt_completion>"
SCRIPT = [
    "I'll open the page.\n" + ba("launch", url="http://127.0.0.1:9/"),
    "Now I click.\n" + ba("click", coordinate="100,100"),
    ba("close"),
    DONE,
]
SYSTEM = "You drive a browser."
START = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "do it"}]


def interp(shape: str = "anthropic", completion: bool = True) -> AsyncInterpreter:
    # every result sent whole: these tests look at each result's images in what is sent
    config = Config(shape=shape, keep_observations=20)  # type: ignore[arg-type]
    registry = loop_registry(config) if completion else None
    return AsyncInterpreter(config, registry=registry, browser=FakeBrowser())


def client(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base, api_key="test", max_retries=0, timeout=30)


def aclient(base: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=base, api_key="test", max_retries=0, timeout=30)


def images(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [b for b in content if b["type"] == "image"] if isinstance(content, list) else []


def check_requests(server: AnthropicServer) -> None:
    """What every request should be: accepted, system apart, roles alternating from the user."""
    assert server.requests and server.rejected == []
    for req in server.requests:
        assert req["system"] == SYSTEM
        roles = [m["role"] for m in req["messages"]]
        assert "system" not in roles
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)


# -- the loop, streamed and not ---------------------------------------------------------------------


def test_streamed_loop_to_completion() -> None:
    server = AnthropicServer(by_turn(SCRIPT))
    with server.running() as base:
        model = AnthropicModel(client(base), "claude-scripted", max_tokens=1000, temperature=0.5)
        res = run_loop(model, START, interpreter=interp())
    assert res.stop_reason == "completed" and len(res.turns) == 4
    assert [t.ran.action for t in res.turns[:3] if t.ran] == ["launch", "click", "close"]
    assert len(server.requests) == 4
    check_requests(server)
    first = server.requests[0]
    assert first["model"] == "claude-scripted" and first["max_tokens"] == 1000
    assert first["temperature"] == 0.5 and first["stream"] is True
    assert first["messages"] == [{"role": "user", "content": [{"type": "text", "text": "do it"}]}]
    # the second request carries the launch's result: its text, then the screenshot as an image block
    result = server.requests[1]["messages"][2]
    assert result["role"] == "user"
    kinds = [b["type"] for b in result["content"]]
    assert kinds == ["text", "image"], kinds
    assert "Stand-in" in result["content"][0]["text"] or "did launch" in result["content"][0]["text"]
    assert result["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/webp",
        "data": base64.b64encode(SHOT.data).decode(),
    }
    assert server.requests[1]["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": SCRIPT[0]}],
    }
    # the history the loop returns keeps the caller's shape: the system message first
    assert res.messages[0] == START[0] and res.messages[-1]["role"] == "user"
    assert "marked as complete" in res.messages[-1]["content"][0]["text"]


def test_not_streamed() -> None:
    server = AnthropicServer(by_turn(SCRIPT))
    with server.running() as base:
        model = AnthropicModel(client(base), "m", stream=False)
        res = run_loop(model, START, interpreter=interp())
    assert res.stop_reason == "completed" and len(res.turns) == 4
    assert all("stream" not in r for r in server.requests)
    check_requests(server)
    assert [len(images(m)) for m in server.requests[3]["messages"]] == [0, 0, 1, 0, 1, 0, 0]
    u = res.usage
    assert u.calls == 4 and u.estimated_calls == 0
    assert u.prompt_tokens == sum(i for i, _ in server.usages)
    assert u.completion_tokens == sum(o for _, o in server.usages)


async def test_async_client() -> None:
    server = AnthropicServer(by_turn(SCRIPT), chunk=5)
    with server.running() as base:
        model = AnthropicModel(aclient(base), "m")
        res = await arun_loop(model, START, interpreter=interp())
    assert res.stop_reason == "completed" and len(res.turns) == 4
    check_requests(server)
    assert server.api_keys[0] == "test" and server.headers[0]["anthropic-version"]
    assert len(images(server.requests[2]["messages"][-1])) == 1


# -- the cut, and usage ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_the_cut_reaches_the_server(kind: str) -> None:
    reply = ba("launch", url="http://127.0.0.1:9/") + "\nAfter that I would go on writing for a while. " * 30
    server = AnthropicServer(by_turn([reply]), chunk=8, delay=0.003)
    with server.running() as base:
        model = AnthropicModel(client(base) if kind == "sync" else aclient(base), "m")
        res = await arun_loop(model, START, interpreter=interp(), max_turns=1)
        cut = server.wait_for_cut()
    turn = res.turns[0]
    assert turn.cut and turn.assistant["content"].endswith("</browser_action>")
    assert cut == 1 and server.finished_streams == 0  # the server saw the connection close early
    assert res.usage.estimated_calls == 1


@pytest.mark.parametrize("stream", [True, False])
async def test_a_sync_client_waits_off_the_event_loop(stream: bool) -> None:
    """Two loops at once through one sync ``anthropic.Anthropic`` client, against a server that
    answers each request after 1 s: both are in flight together, and they end in about 1 s, not 2."""
    import asyncio
    import time

    server = AnthropicServer(by_turn([DONE]), latency=1.0)
    with server.running() as base:
        shared = client(base)
        started = time.monotonic()
        runs = await asyncio.gather(
            *(
                arun_loop(AnthropicModel(shared, "m", stream=stream), START, interpreter=interp())
                for _ in "ab"
            )
        )
        took = time.monotonic() - started
    assert [r.stop_reason for r in runs] == ["completed", "completed"]
    assert server.most_in_flight == 2 and took < 1.8, (server.most_in_flight, took)


def test_usage_from_the_stream_events() -> None:
    call = "Opening.\n" + ba("launch", url="http://127.0.0.1:9/")  # the reply ends with its call
    server = AnthropicServer(by_turn([call], after="Nothing more to do."))
    with server.running() as base:
        model = AnthropicModel(client(base), "m")
        res = run_loop(model, START, interpreter=interp())
    assert res.stop_reason == "no_tool" and [t.cut for t in res.turns] == [True, False]
    (in1, _), (in2, out2) = server.usages
    u = res.usage
    assert u.calls == 2 and u.estimated_calls == 1
    # message_start told both prompts; the first stream was cut before message_delta, so its
    # completion is estimated from its text; the second's is the server's own count
    assert u.prompt_tokens == in1 + in2
    assert u.completion_tokens == (len(call) + 3) // 4 + out2
    assert out2 != (len("Nothing more to do.") + 3) // 4  # the server's count is not the estimate


def test_usage_of_a_stream_cut_before_message_start() -> None:
    """No usage event at all: the whole call is estimated, as OpenAIModel does."""
    delta = SimpleNamespace(
        type="content_block_delta", delta=SimpleNamespace(type="text_delta", text=ba("close"))
    )
    fake = SimpleNamespace(messages=SimpleNamespace(create=lambda **kw: iter([delta])))
    res = run_loop(AnthropicModel(fake, "m"), START, interpreter=interp(), max_turns=1)
    assert res.turns[0].cut and res.usage.estimated_calls == 1
    assert res.usage.prompt_tokens == (len(SYSTEM) + len("do it") + 3) // 4
    assert res.usage.completion_tokens == (len(ba("close")) + 3) // 4


# -- failures -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        ("529", "HTTP 529 (overloaded_error: Overloaded)"),
        ("500", "HTTP 500 (api_error"),
        ("drop", "the model's stream broke off"),
        ("error_event", "an error event (overloaded_error"),
    ],
)
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_failures_raise_model_error_with_the_history(failure: str, said: str, kind: str) -> None:
    thinking = "Let me think about what to do next. " * 10 + ba("scroll_down")
    server = AnthropicServer(by_turn([ba("launch", url="http://a/"), thinking]))
    with server.running() as base:

        def arm(event: Any) -> None:
            server.fail_next.append(failure)  # the first request went through; the next one fails

        model = AnthropicModel(client(base) if kind == "sync" else aclient(base), "m")
        with pytest.raises(ModelError) as e:
            await arun_loop(model, START, interpreter=interp(), on_event=arm)
    assert said in str(e.value)
    result = e.value.result  # type: ignore[attr-defined]
    assert len(result.turns) == 1
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "user"]
    assert result.messages[2]["content"] == ba("launch", url="http://a/")
    assert len(server.requests) == 2


def test_a_stream_ending_without_message_stop_is_an_error() -> None:
    text = SimpleNamespace(
        type="content_block_delta", delta=SimpleNamespace(type="text_delta", text="I was about to")
    )
    start = SimpleNamespace(
        type="message_start", message=SimpleNamespace(usage=SimpleNamespace(input_tokens=9))
    )
    fake = SimpleNamespace(messages=SimpleNamespace(create=lambda **kw: iter([start, text])))
    model = AnthropicModel(fake, "m")
    with pytest.raises(ModelError, match="without message_stop") as e:
        run_loop(model, START, interpreter=interp())
    assert e.value.result.messages == START  # type: ignore[attr-defined]
    assert model.usage.prompt_tokens == 9 and model.usage.estimated_calls == 1


# -- the shape of the messages --------------------------------------------------------------------


def test_an_openai_shaped_history_is_converted() -> None:
    """The interpreter renders results in OpenAI's shape (the default); the model sends image blocks."""
    server = AnthropicServer(by_turn(SCRIPT))
    with server.running() as base:
        res = run_loop(AnthropicModel(client(base), "m"), START, interpreter=interp(shape="openai"))
    assert res.stop_reason == "completed"
    assert res.messages[3]["content"][1]["type"] == "image_url"  # the history keeps its own shape
    check_requests(server)
    sent = server.requests[1]["messages"][2]["content"]
    assert [b["type"] for b in sent] == ["text", "image"]
    assert sent[1]["source"] == {
        "type": "base64",
        "media_type": "image/webp",
        "data": base64.b64encode(SHOT.data).decode(),
    }


def test_anthropic_messages_merges_and_converts() -> None:
    png = "data:image/png;base64,iVBORw0KGgo="
    history: list[dict[str, Any]] = [
        {"role": "system", "content": [{"type": "text", "text": "part one"}]},
        {"role": "system", "content": "part two"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": ""},  # an empty reply: dropped, which joins the users
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "result one"},
                {"type": "image_url", "image_url": {"url": png}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "result two"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
                {"type": "text", "text": "   "},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "assistant", "content": "and more"},
    ]
    before = json.dumps(history)
    system, out = anthropic_messages(history)
    assert json.dumps(history) == before  # not changed
    assert system == "part one\n\npart two"
    assert out == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "task"},
                {"type": "text", "text": "result one"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
                {"type": "text", "text": "result two"},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}, {"type": "text", "text": "and more"}],
        },
    ]


def test_anthropic_messages_refuses_what_it_cannot_send() -> None:
    with pytest.raises(UsageError, match="role 'tool'"):
        anthropic_messages([{"role": "tool", "content": "x"}])
    with pytest.raises(UsageError, match="data URL"):
        anthropic_messages(
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,x"}}]}]
        )
    with pytest.raises(UsageError, match="only text"):
        anthropic_messages([{"role": "system", "content": [{"type": "image", "source": {}}]}])
    with pytest.raises(UsageError, match="one way"):
        AnthropicModel(None, "m", system="given twice").request(START)
    with pytest.raises(UsageError, match="max_tokens"):
        AnthropicModel(None, "m", max_tokens=0)


# -- the command line ---------------------------------------------------------------------------


class Recorder(AsyncInterpreter):
    """The CLI's interpreter, with a stand-in browser and a record of its config."""

    configs: ClassVar[list[Config]] = []

    def __init__(self, config: Config | None = None, **kw: Any) -> None:
        Recorder.configs.append(config or Config())
        super().__init__(config, browser=FakeBrowser(), **kw)


def cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    import xmltools.interpreter

    Recorder.configs = []
    monkeypatch.setattr(xmltools.interpreter, "AsyncInterpreter", Recorder)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    return main(
        ["run", "--provider", "anthropic", "--model", "m", "--task", "open it", "--retries", "0", *args]
    )


def test_cli_run_with_anthropic(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    server = AnthropicServer(by_turn([ba("launch", url="http://127.0.0.1:9/"), ba("close"), DONE]))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-the-env")
    with server.running() as base:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base)  # the SDK reads both
        rc = cli(monkeypatch, "--temperature", "0.25", "--max-tokens", "300", "--extra", '{"top_k": 5}')
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "turn 3: attempt_completion: ok" in err and "stopped: completed after 3 turns" in err
    assert out == "opened and closed the page\n"  # the answer, alone
    assert [c.shape for c in Recorder.configs] == ["anthropic"]
    req = server.requests[0]
    assert (req["temperature"], req["max_tokens"], req["top_k"], req["stream"]) == (0.25, 300, 5, True)
    assert "<attempt_completion>" in req["system"] and req["messages"][0]["content"][0]["text"] == "open it"
    assert server.api_keys[0] == "from-the-env"
    assert server.rejected == []


def test_cli_run_without_the_completion_tool(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = AnthropicServer(by_turn([], after="There is nothing to do."))
    monkeypatch.setenv("MY_KEY", "mine")
    with server.running() as base:
        rc = cli(
            monkeypatch, "--base-url", base, "--api-key-env", "MY_KEY", "--no-completion-tool", "--no-stream"
        )
    out, err = capsys.readouterr()
    assert rc == 0 and "stopped: no_tool" in err and out == "There is nothing to do.\n"
    req = server.requests[0]
    assert "attempt_completion" not in req["system"] and "stream" not in req and req["max_tokens"] == 4096
    assert server.api_keys[0] == "mine"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ("{top_k: 5}", "--extra is not valid JSON"),
        ("[1, 2]", "--extra must be a JSON object"),
        ('{"system": "x"}', "--extra may not set 'system'"),
    ],
)
def test_cli_bad_extra_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], extra: str, said: str
) -> None:
    rc = cli(monkeypatch, "--extra", extra)
    err = capsys.readouterr().err
    assert rc == 2 and said in err and err.count("\n") == 1
    assert Recorder.configs == []  # refused before anything was built
