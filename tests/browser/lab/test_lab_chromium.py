"""Prompt experiments in a real Chromium against a scripted, seeded OpenAI-compatible server: variant A
signs in 30% of the time and B 80%, and a failed trial sometimes claims success on the wrong page.  The
checks catch the false claims; parallel and serial runs agree; a cached rerun makes no request; costs
are the server's usage times the prices; a killed run resumes with no trial recorded twice."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.helpers import SITE, ba
from support.openai_server import ScriptedServer

from xmltools.base.results import Observation
from xmltools.base.serve import serve_directory
from xmltools.browser.session import BrowserSession
from xmltools.lab import Experiment, load_experiment, run_experiment
from xmltools.lab.matrix import cells, comparisons, format_matrix
from xmltools.lab.plan import ModelSpec
from xmltools.lab.report import write_experiment_report
from xmltools.lab.runner import default_model

pytestmark = pytest.mark.long  # make test-long's: see the Makefile

TRIALS = 4
PRICE_IN, PRICE_OUT = 1.5, 6.0  # dollars per million tokens
DONE = "<attempt_completion><result>signed in as Ada</result></attempt_completion>"


def script(site: str) -> Any:
    """Each conversation draws its fate from the trial's seed (the request's ``user``): A succeeds with
    probability 0.3, B with 0.8; half the failures sign in as Bob and claim success anyway, the other
    half open the wrong page and claim success there."""

    def reply(body: dict[str, Any]) -> str:
        rng = random.Random(body.get("user", "one fate for all"))  # the CLI run sends no user
        p = 0.8 if "PLAN-B" in body["messages"][0]["content"] else 0.3
        fate = "good" if rng.random() < p else rng.choice(["bob", "lost"])
        start = body["messages"][1]["content"].rsplit("Start at ", 1)[1].strip()
        steps = {
            "good": [ba("launch", url=start), ba("click", coordinate="150,97"), ba("type", text="Ada")],
            "bob": [ba("launch", url=start), ba("click", coordinate="150,97"), ba("type", text="Bob")],
            "lost": [ba("launch", url=start.replace("form.html", "index.html"))],
        }[fate]
        if fate != "lost":
            steps.append(ba("press", text="Enter"))
        steps += [ba("close"), DONE]
        n = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return steps[n] if n < len(steps) else "done"

    return reply


def experiment_file(tmp_path: Path) -> Path:
    for name in ("a", "b"):
        folder = tmp_path / "variants" / name / "system"
        folder.mkdir(parents=True)
        original = (SITE.parents[1] / "prompts" / "system" / "browser_action.j2").read_text()
        (folder / "browser_action.j2").write_text(f"PLAN-{name.upper()}\n{original}")
    path = tmp_path / "exp.toml"
    path.write_text(
        f"""
trials = {TRIALS}

[limits]
check_seconds = 1.0  # a failed trial's page check waits no longer than that

[[variants]]
name = "A"
templates = "variants/a"

[[variants]]
name = "B"
templates = "variants/b"

[[models]]
name = "scripted"
base_url = "http://127.0.0.1:9/v1"
price_in = {PRICE_IN}
price_out = {PRICE_OUT}
max_requests = 4

[[tasks]]
id = "sign-in"
serve = "{SITE}"
start = "form.html"
instruction = "Sign in as Ada: type the name and press Enter."
checks = [{{ kind = "url", value = "/form.html" }}, {{ kind = "text", value = "Welcome, Ada!" }}]
"""
    )
    return path


def maker(base: str) -> Any:
    """The model ``xmltools experiment run`` makes, for the scripted server at ``base``, with the
    trial's seed in the request's ``user`` (the script draws each trial's fate from it)."""

    def make(spec: ModelSpec, cell: tuple[str, str, str, int]) -> Any:
        options = {**spec.options, "user": "-".join(map(str, cell))}
        return default_model(spec.model_copy(update={"base_url": base, "options": options}), cell)

    return make


def outcomes(rows: list[Any], tokens: bool = False) -> dict[tuple[str, str, str, int], tuple[Any, ...]]:
    """Each trial's verdict; with ``tokens``, its prompt's token count too (a screenshot's size, and so
    the prompt's, varies a little from run to run: only a cached rerun repeats it exactly)."""
    return {
        r.key: (r.passed, r.claimed, r.stop_reason, r.turns, r.completion_tokens)
        + ((r.prompt_tokens,) if tokens else ())
        for r in rows
    }


def test_a_matrix_is_verified_parallel_as_serial_cached_and_priced(tmp_path: Path) -> None:
    exp: Experiment = load_experiment(experiment_file(tmp_path))
    server = ScriptedServer(script(""))
    with server.running() as base:
        serial = asyncio.run(
            run_experiment(exp, tmp_path / "serial", concurrency=1, cache=False, make_model=maker(base))
        )
        asked = len(server.requests)
        parallel = asyncio.run(
            run_experiment(exp, tmp_path / "parallel", concurrency=4, make_model=maker(base))
        )
        assert len(server.requests) == 2 * asked  # the same conversations, asked again
        again = asyncio.run(
            run_experiment(exp, tmp_path / "parallel", concurrency=4, fresh=True, make_model=maker(base))
        )
        assert len(server.requests) == 2 * asked  # every reply from the cache: no request
    assert outcomes(serial.rows) == outcomes(parallel.rows)
    assert outcomes(parallel.rows, tokens=True) == outcomes(again.rows, tokens=True)
    assert sum(r.cost for r in again.rows) == sum(r.cost for r in parallel.rows)
    assert all(r.cached for r in again.rows) and not any(r.cached for r in parallel.rows)

    # the checks, not the claims, decide; every failure here claimed success
    rows = serial.rows
    assert all(r.claimed for r in rows)
    false = [r for r in rows if r.false_claim]
    assert false and all(not r.passed for r in false)
    lost = [r for r in false if any("the address is" in (c["problem"] or "") for c in r.checks)]
    assert lost, "a false claim on the wrong page is caught by the url check"

    # costs: the server's reported usage times the prices
    prompt = sum(sum(len(json.dumps(m)) // 4 for m in q["messages"]) for q in server.requests[:asked])
    assert sum(r.prompt_tokens for r in rows) == prompt
    total = sum(r.cost for r in rows)
    expected = (prompt * PRICE_IN + sum(r.completion_tokens for r in rows) * PRICE_OUT) / 1e6
    assert abs(total - expected) < 1e-6 and not any(r.estimated for r in rows)

    # the matrix: rates with intervals that hold the true rates, and the comparison in words
    by = {c.variant: c for c in cells(rows)}
    assert by["A"].rate.low <= 0.3 <= by["A"].rate.high and by["B"].rate.low <= 0.8 <= by["B"].rate.high
    (comparison,) = comparisons(rows)
    assert comparison.a == "A" and comparison.b == "B" and comparison.pairs == TRIALS
    text = format_matrix(rows)
    assert "pass@1" in text and comparison.sentence() in text

    # the report, looked at in Chromium: a whisker per cell, a link per trial that opens its report
    report = write_experiment_report(tmp_path / "serial", rows)
    with serve_directory(report.parent) as site:
        seen = asyncio.run(_look(f"{site}/report.html"))
    assert seen["whiskers"] == 2 and seen["trials"] == 2 * TRIALS and seen["false"] == len(false)
    assert seen["opened"].startswith("A × scripted × sign-in, trial 1"), seen


def test_a_killed_run_resumes_and_no_trial_is_recorded_twice(tmp_path: Path) -> None:
    path = experiment_file(tmp_path)
    out = tmp_path / "out"
    server = ScriptedServer(script(""), delay=0.01)
    with server.running() as base:
        text = path.read_text().replace("http://127.0.0.1:9/v1", base)
        path.write_text(text)
        cmd = [sys.executable, "-m", "xmltools.cli", "experiment", "run", str(path), "--out", str(out)]
        cmd += ["--concurrency", "2", "--no-cache"]
        run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        db = out / "results.sqlite"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and _count(db) < 4:
            time.sleep(0.1)
        run.kill()
        run.wait(timeout=30)
        before = {r[0]: r[1] for r in _rows(db)}
        assert 4 <= len(before) < 2 * TRIALS, before
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    after = _rows(db)
    assert len(after) == 2 * TRIALS and len({r[0] for r in after}) == 2 * TRIALS
    assert all(dict(after)[k] == v for k, v in before.items())  # the finished trials were not run again
    assert f"resumed: {len(before)} trials were already in" in done.stdout


async def _look(url: str) -> dict[str, Any]:
    async with BrowserSession() as b:
        assert isinstance(await b.launch(url), Observation)

        async def read(page: Any) -> dict[str, Any]:
            out = {
                "whiskers": await page.locator("svg circle").count(),
                "trials": await page.locator("a.trial").count(),
                "false": await page.locator("a.trial.claim").count(),
            }
            await page.locator("a.trial").first.click()
            await page.wait_for_load_state()
            out["opened"] = await page.title()
            return out

        return await b.on_page(read)


def _count(db: Path) -> int:
    try:
        return len(_rows(db))
    except sqlite3.Error:
        return 0


def _rows(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as c:
        return [
            (f"{v}|{m}|{t}|{k}", finished)
            for v, m, t, k, finished in c.execute("SELECT variant, model, task, idx, finished FROM trials")
        ]


def test_an_anthropic_model_takes_part_in_the_matrix(tmp_path: Path, monkeypatch: Any) -> None:
    """The same task with a model of provider anthropic, through its SDK, against a loopback Messages
    server: its results come in the API's own shape, and its usage prices the trials."""
    from support.anthropic_server import AnthropicServer

    def reply(body: dict[str, Any]) -> str:
        first = body["messages"][0]["content"]
        text = first if isinstance(first, str) else " ".join(p.get("text", "") for p in first)
        start = text.rsplit("Start at ", 1)[1].strip()
        steps = [ba("launch", url=start), ba("click", coordinate="150,97"), ba("type", text="Ada")]
        steps += [ba("press", text="Enter"), ba("close"), DONE]
        n = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return steps[n] if n < len(steps) else "done"

    server = AnthropicServer(reply)
    path = experiment_file(tmp_path)
    monkeypatch.setenv("LAB_ANTHROPIC_KEY", "sk-test")
    with server.running() as base:
        exp = load_experiment(path)
        claude = exp.models[0].model_copy(
            update={
                "name": "claude",
                "provider": "anthropic",
                "base_url": base,
                "key_env": "LAB_ANTHROPIC_KEY",
            }
        )
        exp = exp.model_copy(update={"models": (claude,), "variants": exp.variants[:1], "trials": 2})
        done = asyncio.run(run_experiment(exp, tmp_path / "out", concurrency=2))
    assert [r.passed for r in done.rows] == [True, True], [r.checks for r in done.rows]
    assert not server.rejected and server.api_keys == ["sk-test"] * len(server.requests)
    reported = sum(u[0] for u in server.usages)
    assert sum(r.prompt_tokens for r in done.rows) == reported


def test_a_judge_grades_the_answer_and_the_last_page_against_a_rubric(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A judge check asks the [judge] model (here a loopback Messages server) with the task, the rubric,
    the answer and the last page's text; its PASS or FAIL is the verdict, its reason is kept, its cost
    is added to the trial's, and a cached rerun asks it nothing."""
    from support.anthropic_server import AnthropicServer

    def grade(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        text = prompt if isinstance(prompt, str) else " ".join(p.get("text", "") for p in prompt)
        assert "The rubric:\nThe page greets Ada by name." in text and "signed in as Ada" in text
        page = text.split("The page the attempt ended on", 1)[1]
        return "PASS\nThe page greets Ada." if "Welcome, Ada!" in page else "**FAIL**\nNo greeting for Ada."

    path = experiment_file(tmp_path)
    judged = path.read_text().replace(
        'checks = [{ kind = "url", value = "/form.html" }, { kind = "text", value = "Welcome, Ada!" }]',
        'checks = [{ kind = "judge", value = "The page greets Ada by name." }]',
    )
    path.write_text(judged + '\n[judge]\nprovider = "anthropic"\nmodel = "grader"\nkey_env = "LAB_JUDGE_KEY"\n'
                    "price_in = 3.0\nprice_out = 15.0\n")  # fmt: skip
    monkeypatch.setenv("LAB_JUDGE_KEY", "sk-judge")
    judge, model = AnthropicServer(grade), ScriptedServer(script(""))
    with judge.running() as jbase, model.running() as base:
        exp = load_experiment(path)
        exp = exp.model_copy(update={"judge": exp.judge.model_copy(update={"base_url": jbase})})  # type: ignore[union-attr]
        first = asyncio.run(
            run_experiment(exp, tmp_path / "out", concurrency=2, make_model=_with_judge(base))
        )
        asked = len(judge.requests)
        again = asyncio.run(
            run_experiment(exp, tmp_path / "out", concurrency=2, fresh=True, make_model=_with_judge(base))
        )
    assert asked == len(first.rows) == 2 * TRIALS
    # the rerun asks nothing: a prompt asked again shows what of the page changed
    assert [r["messages"][0]["content"] for r in judge.requests[asked:]] == []
    for r in first.rows:
        rng = random.Random("-".join(map(str, r.key)))
        good = rng.random() < (0.8 if r.variant == "B" else 0.3)
        assert r.passed is good, (r.key, r.checks)
        assert r.checks[0]["problem"] == (None if good else "the judge failed it: No greeting for Ada.")
    model_cost = sum((r.prompt_tokens * PRICE_IN + r.completion_tokens * PRICE_OUT) / 1e6 for r in first.rows)
    judge_cost = sum((i * 3.0 + o * 15.0) / 1e6 for i, o in judge.usages)
    assert abs(sum(r.cost for r in first.rows) - (model_cost + judge_cost)) < 1e-6
    assert outcomes(again.rows) == outcomes(first.rows)
    from xmltools.record.transcript import load_transcript

    for r in first.rows:  # each trial's transcript holds the tokens its row counts, as the server said
        said = [a.usage for a in load_transcript(tmp_path / "out" / str(r.transcript)).assistant_messages]
        assert sum(u.prompt_tokens for u in said if u) == r.prompt_tokens and not any(
            u and u.estimated for u in said
        )
        assert (
            abs(
                sum(u.cost for u in said if u)
                - (r.prompt_tokens * PRICE_IN + r.completion_tokens * PRICE_OUT) / 1e6
            )
            < 1e-9
        )


def _with_judge(base: str) -> Any:
    """The trial's model from the scripted server; the judge through the factory the CLI uses."""
    trial = maker(base)

    def make(spec: Any, cell: tuple[str, str, str, int]) -> Any:
        return default_model(spec, cell) if spec.provider == "anthropic" else trial(spec, cell)

    return make


def test_trials_spread_over_two_playwright_servers(tmp_path: Path, capsys: Any) -> None:
    """``experiment run --remote A,B``: the browsers come from two Playwright servers on loopback, each
    trial's row names the one it ran on, both take trials, and the verdicts are a local run's."""
    from support.helpers import playwright_servers

    from xmltools.browser.locate import find_chromium
    from xmltools.cli import main

    path = experiment_file(tmp_path)
    chromium = find_chromium().path  # the servers launch this one (they run --unsafe)
    text = path.read_text().replace(
        'templates = "variants/a"', f'templates = "variants/a"\nconfig = {{ executable = "{chromium}" }}'
    )
    text = text.replace(
        'templates = "variants/b"', f'templates = "variants/b"\nconfig = {{ executable = "{chromium}" }}'
    )
    server = ScriptedServer(script(""))
    with server.running() as base, playwright_servers(2) as servers:
        path.write_text(text.replace("http://127.0.0.1:9/v1", base))
        remote = ",".join(url for _, url in servers)
        code = main(
            [
                "experiment",
                "run",
                str(path),
                "--out",
                str(tmp_path / "out"),
                "--concurrency",
                "4",
                "--remote",
                remote,
            ]
        )
        assert code == 0
        local = main(
            [
                "experiment",
                "run",
                str(path),
                "--out",
                str(tmp_path / "local"),
                "--concurrency",
                "4",
                "--no-cache",
            ]
        )
        assert local == 0
    out = capsys.readouterr().out
    rows = load_rows(tmp_path / "out")
    assert sorted({r.browser for r in rows}) == sorted(url for _, url in servers), out
    assert {r.browser for r in load_rows(tmp_path / "local")} == {"local"}
    assert outcomes(rows) == outcomes(load_rows(tmp_path / "local"))
    assert f"on {servers[0][1]}" in out and f"on {servers[1][1]}" in out  # the trial lines say where


def load_rows(out: Path) -> list[Any]:
    from xmltools.lab.store import Store

    return Store(out / "results.sqlite").trials()


def test_two_tasks_whose_messages_read_the_same_never_share_a_cached_reply(tmp_path: Path) -> None:
    """Two tasks with one instruction and one start page, each on a served folder of its own: the
    messages of their trials read the same (the address is left out of the cache's key), yet each
    trial gets its own draw, so every verdict is its own cell's fate and not the other task's."""
    exp = load_experiment(experiment_file(tmp_path))
    twin = exp.tasks[0].model_copy(update={"id": "sign-in-again"})
    exp = exp.model_copy(update={"tasks": (exp.tasks[0], twin), "variants": exp.variants[:1], "trials": 4})

    def fate(cell: tuple[str, str, str, int]) -> bool:
        rng = random.Random("-".join(map(str, cell)))
        return rng.random() < 0.3  # variant A's draw, as the script makes it

    cells_ = exp.cells()
    assert any(
        fate(c) != fate((c[0], c[1], twin.id, c[3])) for c in cells_ if c[2] == "sign-in"
    )  # they differ
    server = ScriptedServer(script(""))
    with server.running() as base:
        done = asyncio.run(run_experiment(exp, tmp_path / "out", concurrency=1, make_model=maker(base)))
    assert {r.key: r.passed for r in done.rows} == {c: fate(c) for c in cells_}
    assert not any(r.cached for r in done.rows)
