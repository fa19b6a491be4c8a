"""Healing with a scripted model on a loopback OpenAI-compatible server: a step whose recorded element
is gone is shown to the model once, its call runs in the step's place and the step is reported healed;
an update writes it back; an answer of another action is refused before anything acts."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path
from typing import Any

import openai
import pytest
from support.helpers import SITE, ba, scenario
from support.openai_server import ScriptedServer

from xmltools.base.serve import serve_directory
from xmltools.cli import main
from xmltools.models.adapters import OpenAIModel
from xmltools.record.transcript import load_transcript
from xmltools.replaying.run import replay

_BOX = re.compile(r'button "Store" \[ref=\w+\] \[box=(\d+),(\d+),(\d+),(\d+)\]')


def healer(action: str = "click") -> Any:
    """A model that clicks the centre of the button now called Store, as its snapshot shows it."""

    def script(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        assert 'It acted on button "Save"' in prompt and 'testid="save"' in prompt, prompt
        m = _BOX.search(prompt)
        assert m is not None, prompt
        x, y, w, h = (int(v) for v in m.groups())
        if action != "click":
            return "I will type instead.\n" + ba("type", text="oops")
        return "The Save button is now called Store.\n" + ba("click", coordinate=f"{x + w // 2},{y + h // 2}")

    return script


def recorded(tmp_path: Path) -> tuple[Path, Path]:
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    flow = scenario(
        tmp_path / "flow.jsonl", ba("launch", url="{base_url}/order.html"), ba("click", coordinate="100,110")
    )
    path = tmp_path / "rec" / "flow.jsonl"
    with serve_directory(site) as base:
        assert asyncio.run(replay(flow, base_url=base, record=path)).ok
    (site / "order.html").write_text((site / "renamed.html").read_text())
    return site, path


def model(base: str) -> OpenAIModel:
    return OpenAIModel(openai.OpenAI(base_url=base, api_key="k", max_retries=0, timeout=30), "healer")


@pytest.mark.long
def test_a_lost_element_is_healed_by_the_model_and_an_update_writes_it_back(tmp_path: Path) -> None:
    site, path = recorded(tmp_path)
    with serve_directory(site) as base:
        plain = asyncio.run(replay(path, base_url=base))
        assert plain.failures and 'the recorded element button "Save" was not found' in plain.failures[0]
        server = ScriptedServer(healer())
        with server.running() as model_base:
            healed = asyncio.run(
                replay(path, base_url=base, heal=model(model_base), overrides={"drift": "warn"})
            )
            assert len(server.requests) == 1  # asked once, for the one lost step
            assert healed.ok and not healed.failures, healed.summary()
            click = healed.steps[1]
            assert click.healed is not None and "<coordinate>" in click.healed
            assert [c.text for c in click.turn.outcomes[0].observation.console] == ["STORE"]  # type: ignore[union-attr]
            assert "1 healed" in healed.summary() and "step 2: healed: The Save button" in healed.summary()
            heal = ["--heal", "healer", "--heal-base-url", model_base]
            rc = main(["replay", str(path), "--base-url", base, "--update", "--drift", "warn", *heal])
        assert rc == 0
        again = asyncio.run(replay(path, base_url=base))
    assert again.ok and not again.rematched and not again.healed, again.summary()
    content = load_transcript(path).assistant_messages[1].content
    assert content.startswith("The Save button is now called Store.")


def test_an_answer_of_another_action_is_refused_before_it_acts(tmp_path: Path) -> None:
    site, path = recorded(tmp_path)
    server = ScriptedServer(healer(action="type"))
    with serve_directory(site) as base, server.running() as model_base:
        result = asyncio.run(replay(path, base_url=base, heal=model(model_base)))
    assert result.outcome == "failed", result.summary()
    assert "step 2: not healed: the model answered with type, not the recorded click: nothing was run" in (
        result.failures
    )
    assert all(o.action != "type" for s in result.steps for o in s.turn.outcomes)
