"""Typed results: the completion tool takes the result as JSON of a pydantic model (or a JSON Schema);
an invalid one goes back to the model as its mistake, a valid one ends the loop as a typed object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from support.fakes import FakeBrowser

from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.loop import arun_loop, loop_registry
from xmltools.tools import result_tool

START = [{"role": "system", "content": "system"}, {"role": "user", "content": "find the price"}]


class Price(BaseModel):
    amount: float
    currency: str


def done(result: str) -> str:
    return f"<attempt_completion>\n<result>{result}</result>\n</attempt_completion>"


def scripted(replies: list[str]) -> Any:
    def model(messages: list[dict[str, Any]]) -> str:
        n = sum(1 for m in messages if m["role"] == "assistant")
        return replies[n] if n < len(replies) else "I give up."

    return model


def interp(tool: Any) -> AsyncInterpreter:
    cfg = Config()
    registry = loop_registry(cfg, tool)
    return AsyncInterpreter(cfg, registry=registry, browser=FakeBrowser())


async def test_an_invalid_result_is_a_mistake_and_a_valid_one_is_typed() -> None:
    replies = [
        done('{"amount": "twelve", "currency": "EUR"}'),
        done("not json"),
        done('{"amount": 12.5, "currency": "EUR"}'),
    ]
    it = interp(result_tool(Price))
    res = await arun_loop(scripted(replies), START, interpreter=it, result=Price)
    assert res.stop_reason == "completed" and res.output == Price(amount=12.5, currency="EUR")
    first, second, _ = res.turns
    assert first.outcomes[0].status == "invalid" and first.mistakes == 1
    said = json.dumps(res.messages[3]["content"])
    assert "amount: Input should be a valid number" in said
    assert second.outcomes[0].status == "invalid" and "the result is not JSON" in json.dumps(res.messages[5])
    await it.aclose()


async def test_the_loop_s_own_interpreter_offers_the_typed_tool_and_shows_the_schema() -> None:
    replies = [done('{"amount": 3}'), done('{"amount": 3, "currency": "NOK"}')]
    res = await arun_loop(
        scripted(replies), [{"role": "user", "content": "go"}], config=Config(), result=Price
    )
    assert [t.outcomes[0].status for t in res.turns] == ["invalid", "ok"]  # the typed tool refused the first
    assert res.output == Price(amount=3, currency="NOK")
    field = result_tool(Price).params.model_fields["result"]
    assert field.description is not None and '"required":["amount","currency"]' in field.description


async def test_a_json_schema_result(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "required": ["names"],
        "properties": {"names": {"type": "array", "items": {"type": "string"}}},
    }
    it = interp(result_tool(schema))
    res = await arun_loop(
        scripted([done('{"names": ["Ada", 7]}'), done('{"names": ["Ada", "Alan"]}')]),
        START,
        interpreter=it,
        result=schema,
    )
    assert res.output == {"names": ["Ada", "Alan"]}
    assert "the result.names[1] is not of type string" in json.dumps(res.messages[3])
    await it.aclose()


def test_a_result_schema_that_is_not_json_is_one_line(tmp_path: Path, capsys: Any) -> None:
    from xmltools.cli import main

    bad = tmp_path / "schema.json"
    bad.write_text("{not json")
    argv = ["run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--task", "t", "--result-schema"]
    assert main([*argv, str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"--result-schema {bad}: not a JSON file" in err and err.count("\n") == 1
    assert main([*argv, str(tmp_path / "none.json")]) == 2
    assert "no such file" in capsys.readouterr().err
