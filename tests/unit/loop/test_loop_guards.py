"""Long loops: a model going round in circles is nudged and then stopped as stuck; budgets are told to
the model at 80%, and the last turn asks for the answer only, with browser calls refused."""

from __future__ import annotations

import json
from typing import Any

from support.fakes import FakeBrowser
from support.helpers import ba

from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.loop import arun_loop, loop_registry, run_loop
from xmltools.tools import COMPLETION_TOOL, result_tool

START = [{"role": "system", "content": "system"}, {"role": "user", "content": "do it"}]
DONE = "<attempt_completion>\n<result>the answer</result>\n</attempt_completion>"


def interp(config: Config | None = None) -> AsyncInterpreter:
    cfg = config or Config()
    return AsyncInterpreter(cfg, registry=loop_registry(cfg, COMPLETION_TOOL), browser=FakeBrowser())


def model(reply: Any) -> Any:
    def ask(messages: list[dict[str, Any]]) -> str:
        n = sum(1 for m in messages if m["role"] == "assistant")
        return str(reply(n, messages))

    return ask


def said(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages)


async def test_the_same_click_on_an_unchanged_page_is_nudged_then_stopped_as_stuck() -> None:
    def reply(n: int, _: Any) -> str:
        return ba("launch", url="http://127.0.0.1:9/") if n == 0 else ba("click", coordinate="100,100")

    it = interp()
    events: list[str] = []
    res = await arun_loop(
        model(reply), START, interpreter=it, max_turns=30, on_event=lambda e: events.append(e.kind)
    )
    assert res.stop_reason == "stuck" and [n.kind for n in res.nudges] == ["repeat"] * 3
    assert len(res.turns) == 10  # launch, then 3 clicks a nudge, 3 nudges
    assert events.count("nudge") == 3
    assert "You have sent the same click with the same target 3 times, and the page did not change" in said(
        res.messages
    )
    await it.aclose()


async def test_turns_that_change_nothing_are_nudged() -> None:
    moves = [ba("scroll_down"), ba("scroll_up"), ba("click", coordinate="5,5"), ba("hover", coordinate="9,9")]

    def reply(n: int, _: Any) -> str:
        return ba("launch", url="http://127.0.0.1:9/") if n == 0 else moves[n % len(moves)]

    it = interp(Config(stuck_turns=4, stuck_nudges=2))
    res = await arun_loop(model(reply), START, interpreter=it, max_turns=30)
    assert [n.kind for n in res.nudges] == ["stagnant", "stagnant"] and res.stop_reason == "stuck"
    assert "For 4 turns neither the address nor the page has changed" in said(res.messages)
    await it.aclose()


async def test_the_turn_budget_is_told_at_80_percent_and_the_last_turn_gets_the_answer() -> None:
    seen: list[str] = []

    def reply(n: int, messages: list[dict[str, Any]]) -> str:
        seen.append(said(messages))
        if "This is your last turn" in seen[-1]:
            return DONE
        return ba("launch", url="http://127.0.0.1:9/") if n == 0 else ba("click", coordinate=f"{10 * n},10")

    it = interp(Config(stuck_turns=50))
    res = await arun_loop(model(reply), START, interpreter=it, max_turns=5)
    assert res.stop_reason == "max_turns" and len(res.turns) == 5  # answered, but the budget ended it
    assert res.turns[-1].completed
    assert "4 of your 5 turns are used: 1 left" in seen[4] and "4 of your 5" not in seen[3]
    assert "This is your last turn: the run's turns budget is spent" in seen[4]
    assert "with attempt_completion" in seen[4]
    await it.aclose()


async def test_a_browser_call_on_the_last_turn_is_refused_and_the_reason_names_the_budget() -> None:
    def reply(n: int, _: Any) -> str:
        return ba("launch", url="http://127.0.0.1:9/") if n == 0 else ba("click", coordinate=f"{10 * n},10")

    it = interp(Config(stuck_turns=50))
    res = await arun_loop(model(reply), START, interpreter=it, max_turns=3)
    assert res.stop_reason == "max_turns"
    last = res.turns[-1].outcomes[0]
    assert last.status == "denied" and "the run's turns budget is spent" in said(res.messages)
    assert it.approval.closed_reason is None  # the interpreter is the host's again
    await it.aclose()


async def test_token_and_cost_budgets_end_the_run_with_an_answer() -> None:
    def reply(n: int, messages: list[dict[str, Any]]) -> str:
        if "This is your last turn" in said(messages):
            return DONE
        return ba("launch", url="http://127.0.0.1:9/") if n == 0 else ba("click", coordinate=f"{10 * n},10")

    it = interp(Config(stuck_turns=50))
    by_tokens = await arun_loop(model(reply), START, interpreter=it, max_turns=50, max_tokens=1500)
    assert by_tokens.stop_reason == "max_tokens" and by_tokens.usage.total_tokens >= 1500
    assert by_tokens.turns[-1].completed  # the answer it was asked for, on its last turn
    assert "the run's tokens budget is spent" in said(by_tokens.messages)
    await it.aclose()
    it = interp(Config(stuck_turns=50))
    refusing = model(lambda n, m: ba("launch", url="http://127.0.0.1:9/") if n == 0 else ba("scroll_down"))
    by_cost = await arun_loop(
        refusing, START, interpreter=it, max_turns=50, max_cost=0.01, prices=(5.0, 15.0)
    )
    assert by_cost.stop_reason == "max_cost" and by_cost.cost >= 0.01
    await it.aclose()


def answering_on_the_last_turn(answer: str) -> Any:
    """Clicks around until told that its budget is spent, then gives ``answer``."""

    def reply(n: int, messages: list[dict[str, Any]]) -> str:
        if "This is your last turn" in said(messages):
            return answer
        return ba("launch", url="http://127.0.0.1:9/") if n == 0 else ba("click", coordinate=f"{10 * n},10")

    return model(reply)


def test_an_answer_on_a_budgets_last_turn_stops_with_the_budgets_name_and_its_typed_result() -> None:
    """run_loop, the public sync entry point: the stop reason names the budget (not "completed"), and
    the answer's typed result is the output, for each budget."""
    answer = '<attempt_completion><result>{"item": "milk", "amount": 1.25}</result></attempt_completion>'
    shape = {"type": "object", "required": ["item", "amount"]}
    budgets: dict[str, dict[str, Any]] = {
        "max_turns": {"max_turns": 4},
        "max_tokens": {"max_tokens": 1500},
        "max_cost": {"max_cost": 0.005, "prices": (2.0, 8.0)},
        "max_seconds": {"max_seconds": 0.0},
    }
    for name, limits in budgets.items():
        cfg = Config(stuck_turns=50)
        it = AsyncInterpreter(cfg, registry=loop_registry(cfg, result_tool(shape)), browser=FakeBrowser())
        res = run_loop(
            answering_on_the_last_turn(answer),
            START,
            interpreter=it,
            result=shape,
            **{"max_turns": 50, **limits},
        )
        assert res.stop_reason == name, (name, res.stop_reason)
        assert res.turns[-1].completed and res.output == {"item": "milk", "amount": 1.25}, name
        assert f"the run's {name.removeprefix('max_')} budget is spent" in said(res.messages)


async def test_an_answer_without_a_tool_on_the_last_turn_ends_the_run_even_when_the_loop_would_go_on() -> (
    None
):
    """With stop_on_no_tool=False a reply without a tool normally earns a note and another turn; on a
    budget's last turn it is the answer, and the run stops there with the budget's name."""
    it = interp(Config(stuck_turns=50))
    res = await arun_loop(
        answering_on_the_last_turn("Nothing more to do: the list holds milk."),
        START,
        interpreter=it,
        max_turns=3,
        stop_on_no_tool=False,
    )
    assert res.stop_reason == "max_turns" and len(res.turns) == 3
    assert res.messages[-1] == {"role": "assistant", "content": "Nothing more to do: the list holds milk."}
    await it.aclose()


async def test_a_model_that_completes_before_any_budget_runs_out_is_completed() -> None:
    def reply(n: int, _: Any) -> str:
        return ba("launch", url="http://127.0.0.1:9/") if n == 0 else ba("close") if n == 1 else DONE

    it = interp(Config(stuck_turns=50))
    res = await arun_loop(model(reply), START, interpreter=it, max_turns=4)  # the 3rd of 4 turns
    assert res.stop_reason == "completed" and len(res.turns) == 3
    await it.aclose()


async def test_each_turn_reports_its_tokens_cost_and_size_and_the_host_log_has_a_line_a_turn(
    caplog: Any,
) -> None:
    """Per turn: the tokens the server reported for that call, their cost, the characters sent; one INFO
    line a turn in the ``xmltools.loop`` log, and WARNING lines for the budget warning and the nudges."""
    import logging

    import openai
    from support.openai_server import ScriptedServer

    from xmltools.models.adapters import OpenAIModel

    def reply(body: dict[str, Any]) -> str:
        n = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return ba("launch", url="http://127.0.0.1:9/") if n == 0 else ba("click", coordinate="100,100")

    caplog.set_level(logging.INFO, logger="xmltools")
    server = ScriptedServer(reply)
    events: list[Any] = []
    with server.running() as base:
        client = openai.AsyncOpenAI(base_url=base, api_key="k", max_retries=0)
        llm = OpenAIModel(client, "m", stream=False)  # unstreamed: the server reports every call's usage
        it = interp(Config(stuck_repeat=3, stuck_nudges=2))
        res = await arun_loop(
            llm, START, interpreter=it, max_turns=8, prices=(2.0, 8.0), on_event=events.append
        )
        await it.aclose()
    turns = [e for e in events if e.kind == "turn"]
    assert [e.usage for e in turns] == res.turn_usage and len(res.turn_usage) == len(res.turns) == 7
    for used, body in zip(res.turn_usage, server.requests, strict=True):
        prompt = sum(len(json.dumps(m)) // 4 for m in body["messages"])  # what the server reports
        assert (used.prompt_tokens, used.estimated) == (prompt, False)
        assert used.cost == (used.prompt_tokens * 2.0 + used.completion_tokens * 8.0) / 1e6
        texts = []  # the text the request held; a screenshot's data is not text
        for msg in body["messages"]:
            parts = msg["content"] if isinstance(msg["content"], list) else [{"text": msg["content"]}]
            texts += [p["text"] for p in parts if "text" in p]
        assert used.sent_chars == sum(map(len, texts)) < len(json.dumps(body["messages"]))
    assert sum(u.prompt_tokens for u in res.turn_usage) == res.usage.prompt_tokens
    assert res.stop_reason == "stuck"
    info = [r.getMessage() for r in caplog.records if r.name == "xmltools.loop" and r.levelno == logging.INFO]
    assert [m.split(":")[0] for m in info if m.startswith("turn ")] == [f"turn {k}" for k in range(1, 8)]
    assert f"turn 2: {res.turn_usage[1].prompt_tokens} tokens in," in info[1] and ", $0.00" in info[1]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned.count("nudged (repeat): click with the same target") == 2
    assert "budget: 7 of your 8 turns are used: 1 left" in warned
    assert not any(r.name == "xmltools.interpreter" and r.levelno == logging.INFO for r in caplog.records)
