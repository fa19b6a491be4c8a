"""What the loop says about its turns: a person's line a turn, what it waits for, the answer.

- :func:`turn_line`: one line a turn, for a person (``turn 2: browser_action click: ok [...]``);
- :func:`waiting_for`: the words for what a loop waits on, which ``on_wait`` is told;
- :func:`final_answer`: the model's answer in the turn that ended a run.

Pure text from the loop's data: nothing here calls the model or the browser.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..record.turn import Turn

__all__ = ["MODEL_REPLY", "Call", "final_answer", "turn_line", "waiting_for"]

MODEL_REPLY = "the model's reply"  # what ``on_wait`` is told before each model call


class Call(Protocol):
    """A call as :func:`waiting_for` reads it (the parser's ``ToolUse`` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> Mapping[str, str]: ...


def turn_line(index: int, turn: Turn) -> str:
    """One line per turn, for progress on the command line."""
    head = f"turn {index + 1}:"
    if not turn.calls:
        return f"{head} no tool call"
    ran = turn.ran
    if ran is not None:
        what = f"{ran.tool} {ran.action}" if ran.action else ran.tool
        if ran.status == "ok":
            where = f" -> {ran.observation.url}" if ran.observation is not None else ""
            status = f"ok{where}"
        else:
            status = f"failed ({ran.failure.kind if ran.failure else 'error'})"
    else:
        first = turn.refused[0] if turn.refused else None
        what = first.tool if first else turn.calls[0].name
        if first is not None and first.action:
            what += f" {first.action}"
        code = (first.error.code if first and first.error else None) or (first.violation if first else None)
        status = f"refused ({code})"
    extra = f", {len(turn.not_run)} not run" if turn.not_run else ""
    cut = ", stream cut" if turn.cut else ""
    return f"{head} {what}: {status}{extra}{cut} [state {turn.state.value}, mistakes {turn.mistakes}]"


def waiting_for(call: Call) -> str:
    """The call a loop is about to run, in a few words: ``browser_action click``,
    ``use_mcp_tool time/get_current_time``, ``attempt_completion``."""
    params = call.params
    if params.get("server_name") and params.get("tool_name"):
        return f"{call.name} {params['server_name'].strip()}/{params['tool_name'].strip()}"
    action = (params.get("action") or "").strip()
    return f"{call.name} {action}" if action else call.name


def final_answer(turn: Turn) -> str | None:
    """The answer in the turn that ended a run: the result the completion tool was given (its output
    for a completing tool without a ``result``), or the reply's text when it used no tool; None when
    the turn did something else (a browser call, a refused call)."""
    if turn.completed:
        for o in turn.outcomes:
            if o.status == "ok" and o.action is None:
                result = o.call.params.get("result")
                return result.strip() if result is not None else o.output
        return None
    if turn.used_tool or turn.too_large:
        return None
    return _text(turn.assistant.get("content")).strip()


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""
