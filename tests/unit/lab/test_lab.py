"""Experiments without a browser: the file, the database, the cache and the matrix."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from xmltools.cli import main
from xmltools.errors import UsageError
from xmltools.lab.cache import CachedModel
from xmltools.lab.matrix import format_matrix
from xmltools.lab.plan import load_experiment
from xmltools.lab.store import Store, TrialRow

GOOD = """
trials = 3
[[variants]]
name = "A"
[[variants]]
name = "B"
[[models]]
name = "m"
price_in = 2.0
price_out = 8.0
[[tasks]]
id = "t"
url = "http://127.0.0.1:9/"
instruction = "do it"
checks = [{ kind = "url", value = "/done.html" }]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


def test_an_experiment_file_is_read_and_its_cells_counted(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, GOOD))
    assert len(exp.cells()) == 2 * 1 * 1 * 3 and exp.cells()[0] == ("A", "m", "t", 1)
    assert exp.model("m").cost(1_000_000, 500_000) == 2.0 + 4.0
    assert exp.fingerprint() == exp.model_copy(update={"trials": 9}).fingerprint()  # more trials: same run


def row(v: str, k: int, passed: bool, claimed: bool = True) -> TrialRow:
    return TrialRow(v, "m", "t", k, passed, claimed, "completed", 4, 1000, 100, False, False, 0.01, 1.0,
                    "ok", [{"check": "url '/done.html'", "problem": None if passed else "the address is 'x'"}],
                    None, None, "2026-01-01T00:00:00+00:00")  # fmt: skip


def test_the_store_resumes_and_refuses_another_experiment(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite")
    store.start("abc")
    store.add(row("A", 1, True))
    store.add(row("A", 1, True))  # written twice: one row
    again = Store(tmp_path / "r.sqlite")
    again.start("abc")
    assert again.done() == {("A", "m", "t", 1)} and len(again.trials()) == 1
    with pytest.raises(UsageError, match="holds the results of another experiment"):
        Store(tmp_path / "r.sqlite").start("xyz")


def test_the_matrix_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path / "r.sqlite")
    for k in range(1, 9):
        store.add(row("A", k, k <= 2))
        store.add(row("B", k, k <= 7))
    text = format_matrix(store.trials())
    assert "2/8 = 25% (95% CI 7%–59%)" in text and "6/8" in text  # false claims of A
    # the bootstrap interval leaves out zero, but McNemar's exact test (p = 0.0625) does not agree
    assert "no difference detected between B and A at n=8 (+62 points, 95% CI 25–88; McNemar p=0.06)" in text
    assert main(["experiment", "show", str(tmp_path / "r.sqlite"), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 16 and sum(r["false_claim"] for r in records) == 7
    assert main(["experiment", "show", str(tmp_path / "r.sqlite"), "--csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("variant,model,task,idx,passed")
    assert main(["experiment", "show", str(tmp_path / "none.sqlite")]) == 2


def test_the_cache_answers_a_repeat_with_no_call_and_its_address_in_place(tmp_path: Path) -> None:
    asked: list[Any] = []

    def model(messages: list[dict[str, Any]]) -> str:
        asked.append(messages)
        return (
            "<browser_action><action>launch</action><url>http://127.0.0.1:1111/a.html</url></browser_action>"
        )

    def msgs(port: int, image: str) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": f"Start at http://127.0.0.1:{port}/a.html"},
            {"role": "user", "content": [{"type": "text", "text": "page"}, {"type": "image_url", "image_url": {"url": image}}]},
        ]  # fmt: skip

    first = CachedModel(model, {"model": "x"}, "1", tmp_path, base_url="http://127.0.0.1:1111")
    assert "1111" in asyncio.run(first(msgs(1111, "data:a")))
    later = CachedModel(model, {"model": "x"}, "1", tmp_path, base_url="http://127.0.0.1:2222")
    reply = asyncio.run(later(msgs(2222, "data:b")))  # another port, another screenshot: a hit
    assert len(asked) == 1 and later.hits == 1 and "http://127.0.0.1:2222/a.html" in reply
    other = CachedModel(model, {"model": "x"}, "2", tmp_path, base_url="http://127.0.0.1:2222")
    asyncio.run(other(msgs(2222, "data:b")))  # another trial index: its own draw
    assert len(asked) == 2 and other.usage.estimated_calls == 1  # a callable reports no usage


def test_experiment_needs_a_file_or_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["experiment", "run"], ["experiment"]):
        assert main(command) == 2
        assert "give an experiment file (experiment run FILE.toml) or one task's flags; missing --task," in (
            capsys.readouterr().err
        )
    assert main(["experiment", "--task", "x"]) == 2
    assert "missing --model" in capsys.readouterr().err


def test_a_dry_run_counts_and_prices_with_no_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD)
    assert main(["experiment", "run", str(path), "--dry-run", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "6 trials: 2 variants × 1 models × 1 tasks × 3; at most 20 turns a trial"
    assert out[1].startswith("variant A: system prompt ") and "tokens" in out[1]
    assert out[3].startswith("model m: at least $0.") and "if every trial used every turn" in out[3]
    assert not (tmp_path / "o").exists()  # nothing ran


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("PASS\nThe page greets Ada.", None),
        ("**pass** - it does", None),
        ("FAIL\n\nThe page greets Bob.\nmore", "the judge failed it: The page greets Bob."),
        ("Fail: wrong page", "the judge failed it: wrong page"),
        ("FAIL", "the judge failed it"),
        ("Verdict: PASS", None),
        ("**Grade:** FAIL\nThe page greets Bob.", "the judge failed it: The page greets Bob."),
        ("<think>PASS? no.</think>\nFAIL - wrong page", "the judge failed it: wrong page"),
        ("PASS.", None),
        ("I think it passes", "judge error: its reply is not a grade: 'I think it passes'"),
        ("PASSABLE", "judge error: its reply is not a grade: 'PASSABLE'"),
        ("PASS or FAIL: FAIL", "judge error: its reply is not a grade: 'PASS or FAIL: FAIL'"),
        ("PASS/FAIL: FAIL", "judge error: its reply is not a grade: 'PASS/FAIL: FAIL'"),
        ("PASS FAIL", "judge error: its reply is not a grade: 'PASS FAIL'"),
        ("", "judge error: its reply is not a grade: ''"),
    ],
)
def test_a_judges_first_word_is_the_verdict(reply: str, problem: str | None) -> None:
    from xmltools.lab.checks import judge_verdict

    assert judge_verdict(reply) == problem


def test_a_database_an_earlier_version_wrote_resumes(tmp_path: Path) -> None:
    """The fingerprint of an experiment without the newer fields is the one earlier versions wrote,
    and their trials table gains the newer columns when opened: the run resumes, rows and all."""
    import sqlite3

    from xmltools.lab.store import SCHEMA

    exp = load_experiment(write(tmp_path, GOOD))
    assert exp.fingerprint() == "7c5e16c0bab4b05d"  # what this file hashed to before judges and remotes
    db = tmp_path / "results.sqlite"
    old = SCHEMA.replace("    browser TEXT,\n", "")
    assert old != SCHEMA
    with sqlite3.connect(db) as c:
        c.executescript(old)
        c.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (exp.fingerprint(),))
        kept = row("A", 1, True)
        data = {k: v for k, v in kept.__dict__.items() if k not in ("turn_rows", "browser")}
        data["checks"] = json.dumps(data["checks"])
        c.execute(
            f"INSERT INTO trials ({', '.join(data)}) VALUES ({', '.join('?' * len(data))})",
            tuple(data.values()),
        )
    store = Store(db)
    store.start(exp.fingerprint())  # the same experiment: no --fresh needed
    assert store.done() == {("A", "m", "t", 1)} and store.trials()[0].browser is None
    store.add(row("B", 1, False))
    assert [r.browser for r in Store(db).trials()] == [None, None]


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (RuntimeError("page.evaluate: Target crashed\n=== logs ==="), "page.evaluate: Target crashed)"),
        (TimeoutError(), "the page did not answer within 5 s)"),
    ],
    ids=["crashed", "no-answer"],
)
def test_a_judge_is_told_when_the_last_page_cannot_be_read(error: Exception, said: str) -> None:
    """A page whose text cannot be read (a crashed tab, a page that does not answer within the
    session's action bound) is said to the judge in one line; the check does not raise, which would
    stop every other trial of the run."""
    from xmltools.browser.settings import BrowserConfig
    from xmltools.lab.checks import CHECKS, CheckContext
    from xmltools.lab.plan import CheckSpec

    class Unreadable:
        has_page = True
        current_url = "http://127.0.0.1:9/scan.pdf"
        config = BrowserConfig()

        async def on_page(self, fn: Any) -> Any:
            raise error

    asked: list[str] = []

    async def judge(prompt: str) -> str:
        asked.append(prompt)
        return "FAIL\nNothing on the page can be read."

    ctx = CheckContext(Unreadable(), "done", True, "Open the scan.", judge)  # type: ignore[arg-type]
    problem = asyncio.run(CHECKS["judge"](CheckSpec(kind="judge", value="The scan is open."), ctx))
    assert problem == "the judge failed it: Nothing on the page can be read."
    assert f"(http://127.0.0.1:9/scan.pdf):\n(the page's text could not be read: {said}" in asked[0]


def test_an_answer_a_spent_budget_asked_for_is_kept_but_is_not_a_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``xmltools experiment run`` with two turns a trial and no browser: on task "late" the model errs
    first (a close with nothing open) and answers on the last turn it is given; on task "early" it
    answers at once.  The late trials stop as max_turns with their answer checked, and claim nothing;
    the early ones completed, and claim."""
    from support.openai_server import ScriptedServer

    close = "<browser_action><action>close</action></browser_action>"
    done = "<attempt_completion><result>42</result></attempt_completion>"

    def reply(body: dict[str, Any]) -> str:
        n = sum(1 for m in body["messages"] if m["role"] == "assistant")
        late = "late" in body["messages"][1]["content"]
        return close if late and n == 0 else done

    server = ScriptedServer(reply)
    with server.running() as base:
        path = write(
            tmp_path,
            f"""
trials = 2
[[variants]]
name = "A"
[[models]]
name = "m"
base_url = "{base}"
[[tasks]]
id = "early"
instruction = "Six times seven, early?"
checks = [{{ kind = "answer", value = "42" }}]
[[tasks]]
id = "late"
instruction = "Six times seven, late?"
checks = [{{ kind = "answer", value = "42" }}]
[limits]
turns = 2
""",
        )
        assert main(["experiment", "run", str(path), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    rows = {r.task: r for r in Store(tmp_path / "out" / "results.sqlite").trials()}
    late, early = rows["late"], rows["early"]
    assert (late.stop_reason, late.turns, late.answer, late.passed) == ("max_turns", 2, "42", True)
    assert not late.claimed and not late.false_claim
    assert (early.stop_reason, early.turns, early.answer, early.claimed, early.passed) == (
        "completed",
        1,
        "42",
        True,
        True,
    )


def test_a_page_check_waits_as_long_as_the_limits_say(tmp_path: Path) -> None:
    """``[limits] check_seconds`` is how long a text, element or aria check waits for what it looks
    for on the last page (5 s unless the file says)."""
    import xmltools.lab.checks as checks
    from xmltools.lab.checks import CHECKS, CheckContext
    from xmltools.lab.plan import CheckSpec

    waited: list[float] = []

    async def verify(page: Any, exp: Any, timeout: float) -> str | None:
        waited.append(timeout)
        return "no such text"

    class Kept:
        has_page = True

        async def on_page(self, fn: Any) -> Any:
            return await fn("the page")

    spec = CheckSpec(kind="text", value="Welcome")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checks, "verify", verify)
        for ctx in (CheckContext(Kept(), None, False), CheckContext(Kept(), None, False, wait=0.5)):  # type: ignore[arg-type]
            assert asyncio.run(CHECKS["text"](spec, ctx)) == "no such text"
    assert waited == [5.0, 0.5]
    exp = load_experiment(
        write(tmp_path, GOOD.replace("trials = 3", "trials = 3\n[limits]\ncheck_seconds = 0.5"))
    )
    assert exp.limits.check_seconds == 0.5
    assert (
        exp.fingerprint() == load_experiment(write(tmp_path, GOOD)).fingerprint()
    )  # a resume is the same run
