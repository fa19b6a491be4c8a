"""The chat-completion loop: model adapters, stop reasons, image budget, and the real OpenAI SDK."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import pytest
from pydantic import BaseModel
from support.fakes import FakeBrowser
from support.helpers import ba
from support.openai_server import ScriptedServer, by_turn

from xmltools import ModelError, UsageError
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter, Interpreter
from xmltools.loop import arun_loop, loop_system_prompt, run_loop, turn_line
from xmltools.models.adapters import OpenAIModel
from xmltools.render.images import apply_image_budget
from xmltools.tools import Tool, ToolRegistry

SCRIPT = [
    "I'll open the page.\n" + ba("launch", url="http://127.0.0.1:9/"),
    "Now I click.\n" + ba("click", coordinate="100,100"),
    ba("close"),
]
START = [{"role": "system", "content": "system"}, {"role": "user", "content": "do it"}]


def scripted(replies: list[str]) -> Any:
    def model(messages: list[dict[str, Any]]) -> str:
        n = sum(1 for m in messages if m["role"] == "assistant")
        return replies[n] if n < len(replies) else "All done."

    return model


def interp(config: Config | None = None, tools: list[Tool] | None = None) -> AsyncInterpreter:
    return AsyncInterpreter(config or Config(), registry=ToolRegistry(tools or []), browser=FakeBrowser())


async def test_plain_callable_until_no_tool() -> None:
    res = await arun_loop(scripted(SCRIPT), START, interpreter=interp())
    assert res.stop_reason == "no_tool" and len(res.turns) == 4
    roles = [m["role"] for m in res.messages]
    assert roles == ["system", "user"] + ["assistant", "user"] * 3 + ["assistant"]
    assert res.messages[-1]["content"] == "All done."
    assert START == [
        {"role": "system", "content": "system"},
        {"role": "user", "content": "do it"},
    ]  # not mutated


async def test_async_and_streaming_callables() -> None:
    async def amodel(messages: list[dict[str, Any]]) -> str:
        return scripted(SCRIPT)(messages)  # type: ignore[no-any-return]

    def streaming(messages: list[dict[str, Any]]) -> Iterator[str]:
        text: str = scripted(SCRIPT)(messages)
        for i in range(0, len(text), 3):
            yield text[i : i + 3]

    async def astreaming(messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        for piece in streaming(messages):
            yield piece

    for model in (amodel, streaming, astreaming):
        res = await arun_loop(model, START, interpreter=interp())
        assert res.stop_reason == "no_tool" and len(res.turns) == 4, model


async def test_stream_is_cut_after_the_first_call() -> None:
    pulled: list[str] = []

    def streaming(messages: list[dict[str, Any]]) -> Iterator[str]:
        text = (
            ba("launch", url="http://127.0.0.1:9/")
            + "\nand then I would click "
            + ba("click", coordinate="1,1")
        )
        for i in range(0, len(text), 4):
            pulled.append(text[i : i + 4])
            yield text[i : i + 4]

    res = await arun_loop(streaming, START, interpreter=interp(), max_turns=1)
    turn = res.turns[0]
    assert turn.cut and turn.assistant["content"].endswith("</browser_action>")
    assert "click" not in turn.assistant["content"] and not turn.not_run
    assert "".join(pulled).count("</browser_action>") == 1  # the rest was never pulled


async def test_stop_reasons() -> None:
    class P(BaseModel):
        summary: str

    done = Tool("attempt_completion", P, lambda p: "ok", completes=True)
    res = await arun_loop(
        scripted(["<attempt_completion><summary>x</summary></attempt_completion>"]),
        START,
        interpreter=interp(tools=[done]),
    )
    assert res.stop_reason == "completed"
    res = await arun_loop(scripted([ba("click", coordinate="1,1")] * 5), START, interpreter=interp())
    assert res.stop_reason == "mistake_limit" and len(res.turns) == 3
    res = await arun_loop(
        scripted([ba("launch", url="http://a/")] + [ba("scroll_down")] * 50),
        START,
        interpreter=interp(),
        max_turns=4,
    )
    assert res.stop_reason == "max_turns" and len(res.turns) == 4
    res = await arun_loop(
        scripted(["thinking...", *SCRIPT]), START, interpreter=interp(), stop_on_no_tool=False, max_turns=3
    )
    assert res.stop_reason == "max_turns"
    assert "used no tool" in res.messages[3]["content"][0]["text"]
    with pytest.raises(UsageError):
        await arun_loop(scripted([]), START, interpreter=interp(), max_turns=0)


def test_sync_run_loop_and_progress_events() -> None:
    lines: list[str] = []
    res = run_loop(
        scripted(SCRIPT),
        START,
        interpreter=interp(),
        on_event=lambda e: lines.append(turn_line(e.index, e.turn)) if e.turn else None,
    )
    assert res.stop_reason == "no_tool"
    assert lines[0].startswith("turn 1: browser_action launch: ok -> http://127.0.0.1:9/")
    assert lines[-1] == "turn 4: no tool call"


def test_image_budget_keeps_the_newest() -> None:
    def img(n: int) -> dict[str, Any]:
        return {
            "role": "user",
            "content": [
                {"type": "text", "text": f"r{n}"},
                {"type": "image_url", "image_url": {"url": f"data:{n}"}},
            ],
        }

    history = [img(i) for i in range(6)]
    assert apply_image_budget(history, 2, "[gone]") == 4
    kept = [p["image_url"]["url"] for m in history for p in m["content"] if p["type"] == "image_url"]
    assert kept == ["data:4", "data:5"]
    assert history[0]["content"][1] == {"type": "text", "text": "[gone]"}
    anth = [{"role": "user", "content": [{"type": "image", "source": {}}]} for _ in range(3)]
    assert apply_image_budget(anth, 0, "-") == 3


async def test_loop_applies_the_budget_to_what_the_model_sees() -> None:
    seen: list[int] = []

    def model(messages: list[dict[str, Any]]) -> str:
        seen.append(
            sum(
                1
                for m in messages
                if isinstance(m["content"], list)
                for p in m["content"]
                if p["type"] == "image_url"
            )
        )
        return scripted([ba("launch", url="http://a/")] + [ba("scroll_down")] * 6)(messages)  # type: ignore[no-any-return]

    res = await arun_loop(
        model, START, interpreter=interp(Config(image_budget=2, keep_observations=3)), max_turns=7
    )
    assert max(seen) == 2
    placeholder = "[an older screenshot was removed to save space]"
    assert any(
        p.get("text") == placeholder
        for m in res.messages
        if isinstance(m["content"], list)
        for p in m["content"]
    )


async def test_model_errors_keep_the_history() -> None:
    def model(messages: list[dict[str, Any]]) -> str:
        if any(m["role"] == "assistant" for m in messages):
            raise ConnectionError("the network went away")
        return ba("launch", url="http://a/")

    with pytest.raises(ModelError) as e:
        await arun_loop(model, START, interpreter=interp())
    result = e.value.result  # type: ignore[attr-defined]
    assert len(result.turns) == 1 and result.messages[2]["role"] == "assistant"


# -- the real openai SDK against a local OpenAI-compatible server -----------------------------------


def client(base: str, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=base, api_key="test-key", max_retries=0, timeout=30, **kw)


async def test_openai_stream_is_cut_on_the_wire() -> None:
    reply = (
        ba("launch", url="http://127.0.0.1:9/") + "\nNext I will click somewhere else and keep talking " * 20
    )
    server = ScriptedServer(by_turn([reply]), chunk=8, delay=0.002)
    with server.running() as base:
        model = OpenAIModel(openai.AsyncOpenAI(base_url=base, api_key="k", max_retries=0), "m")
        res = await arun_loop(model, START, interpreter=interp(), max_turns=1)
    turn = res.turns[0]
    assert turn.cut and turn.assistant["content"].endswith("</browser_action>")
    import time

    for _ in range(100):  # the server notices the closed connection on its next write
        if server.cut_streams:
            break
        time.sleep(0.02)
    assert server.cut_streams == 1


@pytest.mark.parametrize("failure", ["500", "drop"])
def test_openai_server_errors_surface_with_the_history(failure: str) -> None:
    server = ScriptedServer(
        by_turn(
            [ba("launch", url="http://a/"), "Let me think about what to do next. " * 10 + ba("scroll_down")]
        )
    )
    with server.running() as base:
        it = interp()

        def arm(event: Any) -> None:
            server.fail_next.append(failure)  # the first request went through; the next one fails

        with pytest.raises(ModelError) as e:
            run_loop(OpenAIModel(client(base), "m"), START, interpreter=it, on_event=arm)
    assert "model" in str(e.value)
    result = e.value.result  # type: ignore[attr-defined]
    assert len(result.turns) == 1 and result.messages[-1]["role"] == "user"


# -- the completion tool, registered by default ------------------------------------------------------

DONE = "<attempt_completion><result>done</result></attempt_completion>"


@pytest.fixture
def made_browsers(monkeypatch: pytest.MonkeyPatch) -> list[FakeBrowser]:
    """The browsers an interpreter makes on its own are stand-ins here (no Chromium)."""
    from xmltools.browser import session

    made: list[FakeBrowser] = []

    def make(config: Any, pool: Any = None) -> FakeBrowser:
        made.append(FakeBrowser())
        return made[-1]

    monkeypatch.setattr(session, "BrowserSession", make)
    return made


def test_completed_with_the_defaults(made_browsers: list[FakeBrowser]) -> None:
    start = [{"role": "system", "content": loop_system_prompt()}, {"role": "user", "content": "do it"}]
    res = run_loop(scripted([ba("launch", url="http://127.0.0.1:9/"), ba("close"), DONE]), start)
    assert res.stop_reason == "completed" and len(res.turns) == 3
    last = res.turns[-1]
    assert last.completed and last.ran is not None and last.ran.tool == "attempt_completion"
    assert "Result: done" in res.messages[-1]["content"][0]["text"]
    assert len(made_browsers) == 1
    assert [getattr(a, "action", a) for a in made_browsers[0].actions] == ["launch", "close"]
    assert made_browsers[0].shutdowns == 1  # the loop closed the interpreter it made


def test_the_completion_tool_respects_disabled_actions(made_browsers: list[FakeBrowser]) -> None:
    config = Config(disabled_actions=["hover"])
    res = run_loop(scripted([ba("hover", coordinate="1,1"), DONE]), START, config=config)
    assert res.stop_reason == "completed"
    refused = res.turns[0].refused[0]
    assert refused.error is not None and refused.error.code in ("disabled_action", "unknown_action")
    prompt = loop_system_prompt(config)
    assert "hover" not in prompt and "hover" in loop_system_prompt() and "<attempt_completion>" in prompt


def test_without_the_completion_tool(made_browsers: list[FakeBrowser]) -> None:
    assert "<attempt_completion>" in loop_system_prompt()
    assert "attempt_completion" not in loop_system_prompt(completion_tool=None)
    res = run_loop(
        scripted([ba("launch", url="http://127.0.0.1:9/"), ba("close"), DONE]), START, completion_tool=None
    )
    # unknown to the parser, the call is only text: the model used no tool
    assert res.stop_reason == "no_tool" and len(res.turns) == 3
    assert not res.turns[2].calls and not res.turns[2].completed
    assert res.messages[-1] == {"role": "assistant", "content": DONE}


def test_another_completion_tool(made_browsers: list[FakeBrowser]) -> None:
    class P(BaseModel):
        answer: str

    finish = Tool("finish", P, lambda p: f"noted: {p.answer}", completes=True)
    assert "<finish>" in loop_system_prompt(completion_tool=finish)
    res = run_loop(scripted(["<finish><answer>42</answer></finish>"]), START, completion_tool=finish)
    assert res.stop_reason == "completed" and "noted: 42" in res.messages[-1]["content"][0]["text"]


def test_a_given_interpreter_keeps_its_own_tools() -> None:
    res = run_loop(scripted([DONE]), START, interpreter=interp())  # its registry has no host tools
    assert res.stop_reason == "no_tool" and len(res.turns) == 1 and not res.turns[0].calls


# -- the synchronous Interpreter ---------------------------------------------------------------------


class ThreadBrowser(FakeBrowser):
    """Records the thread each action ran on."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    async def run(self, action: Any) -> Any:
        self.threads.append(threading.current_thread().name)
        return await super().run(action)


def test_run_loop_with_a_sync_interpreter() -> None:
    browser = ThreadBrowser()
    seen: list[int] = []
    with Interpreter(Config(), registry=ToolRegistry([]), browser=browser) as it:
        res = run_loop(scripted(SCRIPT), START, interpreter=it, on_event=lambda e: seen.append(e.index))
        assert res.stop_reason == "no_tool" and len(res.turns) == 4
        assert [t.ran.action for t in res.turns[:3] if t.ran] == ["launch", "click", "close"]
        assert seen == [0, 1, 2, 3, 4]
        # the loop ran on the interpreter's own loop thread, where its methods always run
        assert set(browser.threads) == {"xmltools-interpreter"}
        assert browser.shutdowns == 0  # the loop leaves an interpreter it was given open
        turn = it.handle(ba("launch", url="http://127.0.0.1:9/"))
        assert turn.ran is not None and turn.ran.status == "ok"
    assert browser.shutdowns == 1
    with pytest.raises(UsageError, match="closed"):
        run_loop(scripted(SCRIPT), START, interpreter=it)


async def test_run_loop_with_a_sync_interpreter_inside_an_event_loop() -> None:
    with Interpreter(Config(), registry=ToolRegistry([]), browser=FakeBrowser()) as it:
        res = run_loop(scripted(SCRIPT), START, interpreter=it)
        assert res.stop_reason == "no_tool" and len(res.turns) == 4
        with pytest.raises(UsageError, match=r"run_loop.*\.core"):
            await arun_loop(scripted(SCRIPT), START, interpreter=it)  # type: ignore[arg-type]


# -- the run command's model options and completion tool (OpenAI) ------------------------------------


def test_cli_run_passes_model_options(capsys: pytest.CaptureFixture[str]) -> None:
    from xmltools.cli import main

    server = ScriptedServer(by_turn([DONE]))
    with server.running() as base:
        args = ["run", "--base-url", base, "--model", "m", "--task", "t", "--retries", "0"]
        rc = main(
            [
                *args,
                "--temperature",
                "0.5",
                "--max-tokens",
                "200",
                "--extra",
                '{"top_p": 0.5, "seed": 7, "top_k": 3}',
            ]
        )
    out, err = capsys.readouterr()
    assert rc == 0 and "turn 1: attempt_completion: ok" in err and "stopped: completed after 1 turns" in err
    assert out == "done\n"
    req = server.requests[0]
    assert (req["temperature"], req["max_tokens"], req["top_p"], req["seed"]) == (0.5, 200, 0.5, 7)
    assert req["top_k"] == 3  # not an OpenAI option: sent in the body all the same (vLLM knows it)
    assert "<attempt_completion>" in req["messages"][0]["content"]


def test_cli_run_without_the_completion_tool(capsys: pytest.CaptureFixture[str]) -> None:
    from xmltools.cli import main

    server = ScriptedServer(by_turn([DONE]))
    with server.running() as base:
        rc = main(["run", "--base-url", base, "--model", "m", "--task", "t", "--no-completion-tool"])
    out, err = capsys.readouterr()
    assert rc == 0 and "turn 1: no tool call" in err and "stopped: no_tool after 1 turns" in err
    assert out == DONE + "\n"  # no completion tool: the reply is the answer, as written
    assert "attempt_completion" not in server.requests[0]["messages"][0]["content"]
    assert "temperature" not in server.requests[0]


def test_cli_run_openai_needs_a_base_url(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xmltools.cli import main

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["run", "--model", "m", "--task", "t"]) == 2
    assert "--base-url (or OPENAI_BASE_URL) is needed" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # read as the SDK reads it: nobody there
    assert main(["run", "--model", "m", "--task", "t", "--max-turns", "1"]) == 3
    assert "model" in capsys.readouterr().err


def test_cli_run_that_answers_on_its_last_turn_names_the_budget_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    """``--max-turns 2``: a mistake first (a close with nothing open: no browser needed), then the
    answer the last turn asks for.  The run did not finish on its own: ``stopped: max_turns``, the
    recording ends as stopped, and the exit code is 1."""
    from xmltools.cli import main
    from xmltools.record.transcript import load_transcript

    server = ScriptedServer(by_turn([ba("close"), DONE]))
    record = tmp_path / "run.jsonl"
    with server.running() as base:
        args = ["run", "--base-url", base, "--model", "m", "--task", "t", "--max-turns", "2"]
        rc = main([*args, "--retries", "0", "--record", str(record)])
    out, err = capsys.readouterr()
    assert "This is your last turn" in json.dumps(server.requests[1]["messages"])
    assert "turn 2: attempt_completion: ok" in err and "stopped: max_turns after 2 turns" in err, err
    assert out == "done\n"  # the answer the last turn asked for
    assert rc == 1
    end = load_transcript(record).end
    assert end is not None and (end.outcome, end.reason) == ("stopped", "max_turns")


# -- a sync client never blocks the event loop ----------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_a_sync_client_waits_off_the_event_loop(stream: bool) -> None:
    """Two completes at once through a sync ``openai.OpenAI`` client, against a server that answers
    each after 1 s: both requests are in flight together, they end in about 1 s (not 2), and the
    event loop keeps ticking meanwhile."""
    import asyncio
    import time

    from xmltools.models.adapters import model_chunks

    server = ScriptedServer(by_turn([DONE]), latency=1.0)
    gaps: list[float] = []

    async def ticker(done: asyncio.Event) -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.02)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    async def ask(model: OpenAIModel) -> str:
        return "".join([c async for c in model_chunks(model, [{"role": "user", "content": "x"}])])

    with server.running() as base:
        sync_client = client(base)
        models = [OpenAIModel(sync_client, "m", stream=stream) for _ in range(2)]
        done = asyncio.Event()
        tick = asyncio.ensure_future(ticker(done))
        started = time.monotonic()
        replies = await asyncio.gather(*(ask(m) for m in models))
        took = time.monotonic() - started
        done.set()
        await tick
    assert replies == [DONE, DONE]
    assert server.most_in_flight == 2
    assert took < 1.8, took  # one at a time: 2 s and more
    assert max(gaps) < 0.5, max(gaps)  # the loop was never held for a request
