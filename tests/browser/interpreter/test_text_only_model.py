"""A text-only model fills and sends a form through refs, reading nothing but the previous result's text."""

from __future__ import annotations

import json

from support.helpers import ba, ref_named

from xmltools import Config, Interpreter


def call(action: str, **params: str) -> str:
    return f"I will {action} now.\n" + ba(action, **params)


def scripted_model(previous: str, step: int, start: str) -> str:
    """The next assistant message, from the text of the previous tool result only."""
    plan = [
        lambda: call("launch", url=start),
        lambda: call("fill", ref=ref_named(previous, '- textbox "Email"'), text="ada@example.com"),
        lambda: call("fill", ref=ref_named(previous, '- textbox "City"'), text="Oslo"),
        lambda: call("select", ref=ref_named(previous, '- combobox "Size"'), value="Large"),
        lambda: call("click", ref=ref_named(previous, '- checkbox "I accept the terms"')),
        lambda: call("click", ref=ref_named(previous, '- button "Send order"')),
        lambda: call("close"),
    ]
    return plan[step]()


def text_of(message: dict[str, object] | None) -> str:
    assert message is not None
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))  # type: ignore[union-attr]


def test_a_text_only_model_fills_and_sends_the_form(site: str) -> None:
    history: list[dict[str, object]] = []
    with Interpreter(Config(profile="full", observe="snapshot")) as it:
        assert "ref" in it.system_prompt()
        previous = ""
        for step in range(7):
            turn = it.handle(scripted_model(previous, step, site + "/forms/order.html"))
            history += turn.messages
            assert turn.ran is not None and turn.ran.status == "ok", turn.parts[0].text
            previous = text_of(turn.result)
        result = turn  # the close
    sent = [text_of(m) for m in history if m["role"] != "assistant"]
    assert any("Order sent" in t for t in sent), sent[-2]
    assert not any("image" in json.dumps(m) for m in history), "a text-only run must hold no image"
    assert result.state.name == "IDLE"
