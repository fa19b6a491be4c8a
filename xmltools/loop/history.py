"""What a long loop sends: a history that stays nearly flat, however many turns the run has had.

The loop keeps the whole history (and the transcript records everything);
what it *sends* is :func:`compact` of it:

- only the newest ``keep`` results stay whole (their snapshots, screenshots
  and extracted text); each older result becomes one line saying what the
  action did and where (``[left out] turn 12: browser_action click: ok ->
  http://.../list``);
- beyond the newest ``window`` turns, the older turns fold into one summary
  of fixed size, added to the task's message: how many turns, the actions by
  count, the last addresses visited and the last failures.  One line a turn
  alone would still grow with the run; the summary does not.

Pure: it reads messages and writes new ones; the given history is not changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["TurnMark", "compact"]

KEPT_URLS = 5
KEPT_FAILURES = 3


@dataclass(frozen=True)
class TurnMark:
    """Where a turn stands in the history, and what it did, in one line."""

    assistant_at: int  # the index of its assistant message
    result_at: int | None  # the index of the message with its results, when it had one
    line: str  # what it did: the loop's turn line
    action: str | None  # the action or tool it ran
    url: str | None  # where the page was after it
    failed: str | None  # what went wrong, when it did


def compact(
    history: Sequence[dict[str, Any]], marks: Sequence[TurnMark], *, keep: int = 1, window: int = 20
) -> list[dict[str, Any]]:
    """The messages to send: see the module."""
    out: list[dict[str, Any] | None] = [dict(m) for m in history]
    with_results = [m for m in marks if m.result_at is not None]
    for m in with_results[: max(len(with_results) - keep, 0)]:
        assert m.result_at is not None
        out[m.result_at] = {"role": "user", "content": f"[left out] {m.line}"}
    if len(marks) > window:
        folded = marks[: len(marks) - window]
        start, end = folded[0].assistant_at, marks[len(marks) - window].assistant_at
        before = start - 1
        summary = _summary(folded)
        for k in range(start, end):
            out[k] = None
        if before >= 0 and out[before] is not None and out[before]["role"] == "user":  # type: ignore[index]
            out[before] = _with_text(out[before], summary)  # type: ignore[arg-type]
        else:
            out[start] = {"role": "user", "content": summary}
    return [m for m in out if m is not None]


def _summary(folded: Sequence[TurnMark]) -> str:
    counts = Counter(m.action or "no tool" for m in folded)
    actions = ", ".join(f"{a} {n}×" for a, n in counts.most_common())
    urls = list(dict.fromkeys(m.url for m in reversed(folded) if m.url))[:KEPT_URLS]
    failures = [m.failed for m in reversed(folded) if m.failed][:KEPT_FAILURES]
    lines = [f"(Turns 1–{len(folded)} are folded to keep this conversation short: {actions}.)"]
    if urls:
        lines.append("(The last pages visited then, newest first: " + ", ".join(urls) + ".)")
    if failures:
        lines.append("(The last failures then: " + "; ".join(failures) + ".)")
    return "\n".join(lines)


def _with_text(message: dict[str, Any], text: str) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [*content, {"type": "text", "text": text}]}
    return {**message, "content": f"{content}\n\n{text}"}
