"""Assertions as steps: added while recording, checked in a real Chromium at record time and on every
replay, waited for as Playwright's web-first assertions are; drift = "warn" lets them alone decide."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.helpers import SITE, action, ba, ok, target

from xmltools.base.expectations import Expectation, ExpectationFailed
from xmltools.base.serve import serve_directory
from xmltools.browser.session import BrowserSession
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter, Interpreter
from xmltools.record.report import write_report
from xmltools.record.transcript import ExpectRecord, load_transcript
from xmltools.replaying.run import replay


async def test_a_late_answer_is_waited_for_every_time(
    browser: BrowserSession, site: str, repeat: int
) -> None:
    """The status comes up to 1.2 s after the click, on a page served with random delays: the check
    waits for it each time; one that never comes fails within its bound and says what is there."""
    saved = Expectation(kind="text", value="Saved")
    status = Expectation(kind="element", role="status")  # empty, it has no box: it is not visible
    for i in range(repeat):
        ok(await browser.launch(f"{site}/__slow__/rematch/late.html"))
        ok(await browser.act(action("click", target(selector='testid="save"'))))
        assert await browser.verify(saved) is None, i
        assert await browser.verify(status) is None, i
    never = await browser.verify(Expectation(kind="text", value="Deleted"), timeout=0.5)
    assert never == "no such element is visible"
    url = await browser.verify(Expectation(kind="url", value=f"{site}/rematch/order.html"), timeout=0.2)
    assert url == f"the address is '{site}/__slow__/rematch/late.html'"


async def test_each_kind_holds_and_fails_with_what_is_there(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(f"{site}/rematch/order.html"))
    ok(await browser.act(action("click", target(selector="#note"))))
    ok(await browser.act(action("type", text="rush")))
    holds = [
        Expectation(kind="text", value="Order 42"),
        Expectation(kind="text", value=r"Order \d+", regex=True),
        Expectation(kind="element", role="button", name="Save"),
        Expectation(kind="value", target="label=Note", value="rush"),
        Expectation(kind="url", value=f"{site}/rematch/order.html"),
        Expectation(kind="url", value=r"/rematch/order\.html$", regex=True),
        Expectation(kind="aria", value='- heading "Order 42"\n- button "Save"'),
    ]
    for exp in holds:
        assert await browser.verify(exp) is None, exp.describe()
    fails = {
        Expectation(kind="text", value="Order 43"): "no such element is visible",
        Expectation(kind="element", role="button", name="Sav"): "no such element is visible",
        Expectation(kind="value", target="label=Note", value="slow"): "found 'rush'",
        Expectation(kind="aria", value='- heading "Order 43"'): "the tree differs",
    }
    for exp, said in fails.items():
        got = await browser.verify(exp, timeout=0.3)
        assert got is not None and got.startswith(said), (exp.describe(), got)


@pytest.mark.long
def test_recorded_assertions_replay_and_fail_when_the_page_breaks(tmp_path: Path) -> None:
    """Recorded with the sync interpreter: each assertion is checked at once, a false one raises and
    is not written; the replay checks them all; a page whose heading changed fails on its assertion
    and, with drift = "warn", on nothing else."""
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    path = tmp_path / "flow.jsonl"
    with serve_directory(site) as base, Interpreter(Config()) as it:
        rec = it.record(path, base_url=base)
        it.handle(ba("launch", url=f"{base}/order.html"))
        rec.expect_text("Order 42")
        rec.expect_element("button", "Save")
        rec.expect_url(f"{base}/order.html")
        with pytest.raises(ExpectationFailed, match="text 'Order 43' is visible: no such element"):
            rec.expect_text("Order 43")
        it.handle(ba("close"))
    written = [r.expectation for r in load_transcript(path).records if isinstance(r, ExpectRecord)]
    assert [e.kind for e in written] == ["text", "element", "url"]
    assert written[2].value == "{base_url}/order.html"  # the address is the placeholder's

    with serve_directory(site) as base:
        same = asyncio_run(replay(path, base_url=base))
    assert same.ok and same.checked == 3, same.summary()
    assert "3 assertions held" in same.summary()

    page = site / "order.html"
    page.write_text(page.read_text().replace("Order 42", "Order 43"))
    with serve_directory(site) as base:
        broken = asyncio_run(
            replay(path, base_url=base, overrides={"drift": "warn"}, record=tmp_path / "broken.jsonl")
        )
    assert broken.outcome == "failed" and not broken.failures, broken.summary()
    assert broken.broken == ["step 1: expected text 'Order 42' is visible: no such element is visible"]
    html = write_report(tmp_path / "report.html", tmp_path / "broken.jsonl", broken).read_text()
    assert "assertion failed: expected text &#39;Order 42&#39; is visible" in html
    assert "assertion holds: button &#39;Save&#39; is visible" in html

    page.write_text(page.read_text().replace("Order 43", "Order 42").replace("</body>", "<p>new</p></body>"))
    with serve_directory(site) as base:
        pinned = asyncio_run(replay(path, base_url=base))
        warned = asyncio_run(replay(path, base_url=base, overrides={"drift": "warn"}))
    assert pinned.outcome == "drifted", pinned.summary()
    assert warned.outcome == "passed" and warned.drifts, warned.summary()
    assert "(warnings: drift = warn)" in warned.summary()


@pytest.mark.long
async def test_the_async_interpreter_checks_assertions_before_the_next_message(
    tmp_path: Path, site: str
) -> None:
    path = tmp_path / "flow.jsonl"
    async with AsyncInterpreter(Config()) as it:
        rec = it.record(path)
        await it.handle(ba("launch", url=f"{site}/rematch/order.html"))
        rec.expect_text("Order 42")
        rec.expect_text("Order 43")
        with pytest.raises(ExpectationFailed, match="Order 43"):
            await it.handle(ba("close"))
        assert it.browser_of() is not None and it.browser_of().is_open  # type: ignore[union-attr]
        rec.expect_value("#note", "")
        await it.check_expectations()
    kept = [r.expectation.value for r in load_transcript(path).records if isinstance(r, ExpectRecord)]
    assert kept == ["Order 42", ""]


def asyncio_run(coro: object) -> object:
    import asyncio

    return asyncio.run(coro)  # type: ignore[arg-type]


@pytest.mark.long
async def test_the_testing_capability_lets_the_model_check_the_page(tmp_path: Path) -> None:
    """verify_* are offered with capabilities = ["testing"]; a check that holds says so, one that does
    not fails with what is there and is not the model's mistake; a replay fails on it when the page
    changes."""
    path = tmp_path / "flow.jsonl"
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    # a check that does not hold waits its action bound: 2 s here, not 5
    config = Config(profile="full", capabilities=("testing",), action_timeout=2.0)
    with serve_directory(site) as base:
        async with AsyncInterpreter(config) as it:
            it.record(path, base_url=base)
            await it.handle(ba("launch", url=f"{base}/order.html"))
            await it.handle(ba("fill", selector="label=Note", text="rush"))
            checks = [
                ba("verify_text", text="Order 42"),
                ba("verify_element", selector='role=button[name="Save"]'),
                ba("verify_value", selector="#note", value="rush"),
                ba("verify_url", url=f"{base}/order.html"),
            ]
            for call in checks:
                turn = await it.handle(call)
                obs = turn.outcomes[0].observation
                assert turn.outcomes[0].status == "ok" and obs is not None, turn.outcomes[0].text
                assert any(n.startswith("verified: ") for n in obs.notes), obs.notes
            wrong = await it.handle(ba("verify_value", selector="#note", value="slow"))
            assert wrong.outcomes[0].status == "failed" and wrong.mistakes == 0
            said = wrong.messages[-1]["content"][0]["text"]
            assert "The check does not hold: #note has the value 'slow': found 'rush'." in said, said
            await it.handle(ba("close"))
        recorded = load_transcript(path)
        actions = [r.action for r in recorded.records if getattr(r, "action", None)]
        assert actions[2:6] == ["verify_text", "verify_element", "verify_value", "verify_url"]
        same = await replay(path, base_url=base, overrides={"drift": "warn"})
        assert same.ok, same.summary()
        page = site / "order.html"
        page.write_text(page.read_text().replace("Order 42", "Order 43"))
        broken = await replay(path, base_url=base, overrides={"drift": "warn"})
    assert broken.outcome == "failed", broken.summary()
    assert broken.failures[0].startswith(
        "step 3: browser_action verify_text: failed (the check does not hold: text 'Order 42' is visible"
    ), broken.failures
