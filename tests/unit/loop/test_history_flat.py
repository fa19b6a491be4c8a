"""A history that stays flat: 200 turns on a large page, text only, and what is sent at call 200 is
at most twice what is sent at call 10; the full history is kept all the same."""

from __future__ import annotations

import json
from typing import Any

from support.fakes import FakeBrowser
from support.helpers import ba

from xmltools.base.results import Observation, Point
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.loop import arun_loop, loop_registry
from xmltools.loop.history import TurnMark, compact
from xmltools.tools import COMPLETION_TOOL

BIG = "\n".join(
    f'- listitem "Row {i}: a long line of the table, with its price and its state" [ref=e{i}]'
    for i in range(300)
)


class LongPage(FakeBrowser):
    """A text-only page of 300 rows, its snapshot shown with every observation."""

    def observation(self, action: Any, mouse: Point | None) -> Observation:
        step = len(self.actions)
        return Observation(
            url=f"{self.url}#row{step}",
            title=f"Rows ({step})",
            viewport=self.viewport,
            mouse=mouse,
            snapshot=BIG,
        )


def size(messages: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages, ensure_ascii=False))


async def test_two_hundred_turns_send_at_most_twice_what_ten_turns_send() -> None:
    sent: list[int] = []

    def model(messages: list[dict[str, Any]]) -> str:
        sent.append(size(messages))
        n = sum(1 for m in messages if m["role"] == "assistant")
        if n == 0 or len(sent) == 1:
            return ba("launch", url="http://127.0.0.1:9/rows")
        return ba("scroll_down") if len(sent) % 2 else ba("scroll_up")

    cfg = Config(observe="snapshot", stuck_nudges=1000, stuck_turns=1000)
    it = AsyncInterpreter(cfg, registry=loop_registry(cfg, COMPLETION_TOOL), browser=LongPage())
    res = await arun_loop(
        model, [{"role": "user", "content": "read every row"}], interpreter=it, max_turns=200
    )
    await it.aclose()
    assert len(sent) == 200 and res.stop_reason == "max_turns"
    assert sent[199] <= 2 * sent[9], (sent[9], sent[199])
    assert size(res.messages) > 50 * sent[9]  # the history itself keeps everything
    print(f"characters sent: call 10 {sent[9]:,}, call 100 {sent[99]:,}, call 200 {sent[199]:,}")


def test_older_results_become_one_line_and_old_turns_one_summary() -> None:
    history: list[dict[str, Any]] = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    marks = []
    for k in range(6):
        at = len(history)
        history += [
            {"role": "assistant", "content": f"call {k}"},
            {"role": "user", "content": f"BIG RESULT {k}"},
        ]
        marks.append(
            TurnMark(
                at, at + 1, f"turn {k + 1}: click ok", "click", f"http://a/{k}", "timeout" if k == 1 else None
            )
        )
    out = compact(history, marks, keep=1, window=3)
    assert [m["role"] for m in out] == ["system", "user"] + ["assistant", "user"] * 3
    assert out[1]["content"].startswith(
        "task\n\n(Turns 1–3 are folded to keep this conversation short: click 3×.)"
    )
    assert (
        "newest first: http://a/2, http://a/1, http://a/0" in out[1]["content"]
        and "timeout" in out[1]["content"]
    )
    assert [m["content"] for m in out[2:]] == [
        "call 3", "[left out] turn 4: click ok", "call 4", "[left out] turn 5: click ok", "call 5", "BIG RESULT 5",
    ]  # fmt: skip
    assert history[3]["content"] == "BIG RESULT 0"  # the history is not changed
