"""What the loop says of its turns: the model's final answer, and what it waits for (``on_wait``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from support.fakes import FakeBrowser
from support.helpers import ba

from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter, Interpreter
from xmltools.loop import LoopEvent, arun_loop, run_loop
from xmltools.loop.lines import waiting_for
from xmltools.parser import ToolUse
from xmltools.tools import COMPLETION_TOOL, Tool, ToolRegistry

START = [{"role": "system", "content": "system"}, {"role": "user", "content": "do it"}]
LAUNCH = ba("launch", url="http://127.0.0.1:9/")


def scripted(replies: list[str]) -> Any:
    def model(messages: list[dict[str, Any]]) -> str:
        n = sum(1 for m in messages if m["role"] == "assistant")
        return replies[n] if n < len(replies) else replies[-1]

    return model


def interp(*tools: Tool) -> AsyncInterpreter:
    return AsyncInterpreter(Config(), registry=ToolRegistry(list(tools)), browser=FakeBrowser())


async def test_the_answer_is_the_completion_tools_result() -> None:
    done = "<attempt_completion>\n<result>\n  Milk is on the list.\n</result>\n</attempt_completion>"
    res = await arun_loop(scripted([LAUNCH, ba("close"), done]), START, interpreter=interp(COMPLETION_TOOL))
    assert res.stop_reason == "completed" and res.answer == "Milk is on the list."


async def test_the_answer_is_the_last_reply_when_it_used_no_tool() -> None:
    res = await arun_loop(scripted([LAUNCH, "The list holds milk."]), START, interpreter=interp())
    assert res.stop_reason == "no_tool" and res.answer == "The list holds milk."


async def test_a_completing_tool_without_a_result_gives_its_output() -> None:
    class Summary(BaseModel):
        summary: str

    done = Tool("finish", Summary, lambda p: f"finished: {p.summary}", completes=True)
    res = await arun_loop(
        scripted(["<finish><summary>x</summary></finish>"]), START, interpreter=interp(done)
    )
    assert res.stop_reason == "completed" and res.answer == "finished: x"


async def test_no_answer_when_the_loop_stopped_the_run() -> None:
    clicks = scripted([ba("click", coordinate="1,1")])  # before any launch: a mistake each time
    res = await arun_loop(clicks, START, interpreter=interp())
    assert res.stop_reason == "mistake_limit" and res.answer is None
    scrolls = scripted([LAUNCH, ba("scroll_down")])
    res = await arun_loop(scrolls, START, interpreter=interp(), max_turns=3)
    assert res.stop_reason == "max_turns" and res.answer is None  # its last turn scrolled


async def test_on_wait_says_the_model_then_the_call_before_each_turn() -> None:
    told: list[str] = []

    def event(e: LoopEvent) -> None:
        if e.kind == "turn":
            told.append(f"turn {e.index + 1}")

    cut_short = "<browser_action>\n<action>click</action>\n<coordinate>5,5"  # never closed
    replies = [LAUNCH, ba("click", coordinate="5,5"), cut_short, "Done."]
    await arun_loop(scripted(replies), START, interpreter=interp(), on_event=event, on_wait=told.append)
    model = "the model's reply"
    assert told == [
        model,
        "browser_action launch",
        "turn 1",
        model,
        "browser_action click",
        "turn 2",
        model,  # a call never closed is no complete call: nothing runs
        "turn 3",
        model,
        "turn 4",
    ]


def test_what_a_call_is_waited_for_as() -> None:
    assert waiting_for(ToolUse("browser_action", {"action": " click ", "coordinate": "1,1"})) == (
        "browser_action click"
    )
    mcp = ToolUse("use_mcp_tool", {"server_name": "time", "tool_name": "get_current_time"})
    assert waiting_for(mcp) == "use_mcp_tool time/get_current_time"
    assert waiting_for(ToolUse("attempt_completion", {"result": "x"})) == "attempt_completion"


def test_on_wait_through_the_synchronous_interpreter_and_an_async_callback() -> None:
    told: list[str] = []

    async def wait(what: str) -> None:
        told.append(what)

    with Interpreter(Config(), registry=ToolRegistry([]), browser=FakeBrowser()) as it:
        res = run_loop(scripted([LAUNCH, "Done."]), START, interpreter=it, on_wait=wait)
    assert res.answer == "Done."
    assert told == ["the model's reply", "browser_action launch", "the model's reply"]
