"""The full profile's navigation, tab, reading, wait and script actions, driven through the interpreter
in a real Chromium, by a model that reads nothing but the text of the previous result."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from support.helpers import ba, read, ref_named, said

from xmltools import Allow, ApprovalError, AsyncInterpreter, Config, Deny, Interpreter, State


def call(action: str, **params: str) -> str:
    return f"Next: {action}.\n" + ba(action, **params)


def tab_ids(result: str) -> list[str]:
    m = re.search(r"Tabs \(\d+ open\):\n((?:t\d+ .*\n?)+)", result)
    return [line.split(" ")[0] for line in m.group(1).splitlines()] if m else []


@pytest.mark.long
def test_a_text_only_model_carries_a_value_from_a_second_tab_into_a_form(site: str) -> None:
    with Interpreter(Config(profile="full", observe="snapshot")) as it:
        r = said(it.handle(call("launch", url=site + "/pages/redeem.html")))
        assert "Tabs" not in r  # one tab: nothing to list
        r = said(it.handle(call("open_tab", url=site + "/pages/voucher.html")))
        assert tab_ids(r) == ["t1", "t2"] and "(current)" in r.split("t2 ", 1)[1].splitlines()[0]
        code = read(said(it.handle(call("get_text", selector="#code"))))
        assert code == "K7-QX42"
        r = said(it.handle(call("switch_tab", tab="t1")))
        assert "Page: Redeem a voucher" in r
        r = said(it.handle(call("fill", ref=ref_named(r, '- textbox "Voucher code"'), text=code)))
        r = said(it.handle(call("click", ref=ref_named(r, '- button "Redeem"'))))
        assert read(said(it.handle(call("get_text", selector="#outcome")))) == "Redeemed K7-QX42"
        listed = read(said(it.handle(call("list_tabs"))))
        assert re.fullmatch(
            r't1 "Redeem a voucher" \S+redeem\.html \(current\)\nt2 "Your voucher" \S+', listed
        )
        turn = it.handle(call("close"))
        assert turn.state is State.IDLE


@pytest.mark.long
def test_a_tab_the_page_opens_and_closing_tabs_down_to_none(site: str) -> None:
    with Interpreter(Config(profile="full", observe="snapshot")) as it:
        r = said(it.handle(call("launch", url=site + "/pages/redeem.html")))
        r = said(it.handle(call("click", ref=ref_named(r, '- link "Show my voucher"'))))
        assert "Page: Your voucher" in r and tab_ids(r) == ["t1", "t2"]
        r = said(it.handle(call("close_tab")))
        assert "closed t2; you now see t1" in r and "Page: Redeem a voucher" in r and "Tabs" not in r
        r = said(it.handle(call("switch_tab", tab="t2")))
        assert "t2" in r and "t1" in r  # a tab that is gone: the model is told which are open
        turn = it.handle(call("close_tab", tab="t1"))
        assert turn.state is State.IDLE and "closed" in said(turn).lower()
        again = it.handle(call("get_text"))
        assert again.outcomes[0].violation == "launch_first"


def test_back_and_forward_across_three_pages(site: str) -> None:
    with Interpreter(Config(profile="full", observe="snapshot")) as it:
        r = said(it.handle(call("launch", url=site + "/pages/one.html")))
        r = said(it.handle(call("click", ref=ref_named(r, '- link "Go to page two"'))))
        r = said(it.handle(call("click", ref=ref_named(r, '- link "Go to page three"'))))
        assert "Page: Page three" in r
        titles, notes = [], []
        for step in ("back", "back", "back", "forward", "forward", "forward", "reload"):
            r = said(it.handle(call(step)))
            titles.append(re.search(r"Page: (.*)", r).group(1))  # type: ignore[union-attr]
            notes.append("there is no page to go" in r)
        assert titles == [
            "Page two",
            "Page one",
            "Page one",
            "Page two",
            "Page three",
            "Page three",
            "Page three",
        ]
        assert notes == [False, False, True, False, False, True, False]
        r = said(it.handle(call("navigate", url=site + "/pages/two.html", wait_until="load")))
        assert "Page: Page two" in r


@pytest.mark.long
def test_waits_through_the_interpreter_and_one_that_runs_out(site: str) -> None:
    with Interpreter(Config(profile="full", observe="snapshot", max_wait_seconds=1.5)) as it:
        it.handle(call("launch", url=site + "/pages/extract.html"))
        turn = it.handle(call("wait", selector="#later"))  # appears after 500 ms
        assert turn.ran is not None and turn.ran.status == "ok", said(turn)
        assert it.handle(call("wait", text="arrived late")).ran.status == "ok"  # type: ignore[union-attr]
        assert it.handle(call("wait", url="**/extract.html")).ran.status == "ok"  # type: ignore[union-attr]
        turn = it.handle(call("wait", selector="#never-there"))
        assert turn.ran is not None and turn.ran.status == "failed"
        assert (
            "ran out after 1.5 s" in said(turn) and turn.mistakes == 0
        )  # the page's problem, not the model's
        turn = it.handle(call("wait", seconds="5"))
        assert turn.outcomes[0].status == "invalid" and "at most 1.5 here" in said(turn)
        assert it.handle(call("get_text", selector="#later")).ran is not None


@pytest.mark.long
def test_evaluate_under_every_approval_answer(site: str) -> None:
    page = site + "/pages/extract.html"
    script = "return [...document.querySelectorAll('li.item')].map(li => li.dataset.sku);"
    with Interpreter(Config(profile="full", observe="snapshot")) as it:
        it.handle(call("launch", url=page))
        asked = it.handle(call("evaluate", script=script))
        assert asked.approval_required is not None and "approval required:" in said(asked)
        done = it.approve(asked.approval_required)
        assert read(said(done)) == '["A1", "B2", "C3"]'
        asked = it.handle(call("evaluate", script="document.cookie"))
        assert asked.approval_required is not None
        assert "denied by policy: not today" in said(it.deny(asked.approval_required, "not today"))
    with Interpreter(Config(profile="full", observe="snapshot", approval={"script": "deny"})) as it:
        it.handle(call("launch", url=page))
        turn = it.handle(call("evaluate", script="document.title"))
        assert turn.outcomes[0].status == "denied" and "denied by policy" in said(turn)
    with Interpreter(Config(profile="full", observe="snapshot", approval={"script": "allow"})) as it:
        it.handle(call("launch", url=page))
        assert read(said(it.handle(call("evaluate", script="document.title")))) == '"Extract"'


@pytest.mark.long
async def test_evaluate_with_an_async_callback_and_one_that_raises(site: str) -> None:
    async def judge(c: Any, category: str) -> Any:
        await asyncio.sleep(0)
        return Allow() if "title" in c.args.script else Deny("only the title may be read")

    async with AsyncInterpreter(Config(profile="full", observe="snapshot"), approver=judge) as it:
        await it.handle(call("launch", url=site + "/pages/extract.html"))
        assert read(said(await it.handle(call("evaluate", script="document.title")))) == '"Extract"'
        turn = await it.handle(call("evaluate", script="localStorage.length"))
        assert "denied by policy: only the title may be read" in said(turn)

    def broken(c: Any, category: str) -> Any:
        raise LookupError("no such user")

    async with AsyncInterpreter(Config(profile="full", observe="snapshot"), approver=broken) as it:
        await it.handle(call("launch", url=site + "/pages/extract.html"))
        with pytest.raises(ApprovalError, match="no such user"):
            await it.handle(call("evaluate", script="document.title"))
        # the host's error left the session sound: the browser is still open and works
        turn = await it.handle(call("get_text", selector="#top"))
        assert turn.ran is not None and turn.ran.status == "ok" and it.state is State.ACTIVE
