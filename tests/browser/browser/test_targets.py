"""Element targets in a real Chromium: refs from the snapshot, every selector kind, every target mistake.

The actions here are stand-ins with the attributes of the full profile's
typed actions (``action``, ``target``, ``text``, ``values``, ``paths``,
``to``, ``direction``, ``depth``, ``find``), so that the controller is tested
on its own; the typed actions are tested in test_actions.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from support.helpers import action, ok, target
from support.helpers import evaluate as value
from support.helpers import ref_named as ref_of

from xmltools.base.results import Failure, Observation
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig


def mistake(result: Observation | Failure | None, *words: str) -> Failure:
    assert isinstance(result, Failure) and result.kind == "target", result
    for w in words:
        assert w in result.message, result.message
    return result


@pytest.fixture
async def order(browser: BrowserSession, site: str) -> BrowserSession:
    ok(await browser.launch(site + "/forms/order.html"))
    return browser


async def test_snapshot_gives_refs_that_click_and_fill(order: BrowserSession) -> None:
    snap = ok(await order.act(action("snapshot"))).snapshot
    assert snap is not None and 'textbox "Email"' in snap and "[box=" not in snap
    email = ref_of(snap, '- textbox "Email"')
    obs = ok(await order.act(action("fill", target(ref=email), text="ada@example.com")))
    assert obs.target == 'textbox "Email"'
    assert await value(order, "document.getElementById('email').value") == "ada@example.com"
    terms = ref_of(snap, '- checkbox "I accept the terms"')
    ok(await order.act(action("click", target(ref=terms))))
    assert await value(order, "document.getElementById('terms').checked") is True


async def test_a_stale_or_unknown_ref_fails_at_once(order: BrowserSession) -> None:
    start = time.monotonic()
    f = mistake(await order.act(action("click", target(ref="e9999"))), "e9999", "new snapshot")
    assert time.monotonic() - start < 2
    assert f.observation is not None and not f.browser_closed
    ok(await order.act(action("snapshot")))
    mistake(await order.act(action("click", target(ref="e9999"))), "not in the latest snapshot")


@pytest.mark.parametrize(
    ("selector", "field", "typed"),
    [
        ("#email", "email", "css"),
        ("label=Email", "email", "by label"),
        ("placeholder=City", "city", "by placeholder"),
        ("xpath=//input[@name='city']", "city", "xpath"),
        ('role=textbox[name="Email"]', "email", "by role"),
    ],
)
async def test_every_selector_kind_fills(
    order: BrowserSession, selector: str, field: str, typed: str
) -> None:
    ok(await order.act(action("fill", target(selector=selector), text=typed)))
    assert await value(order, f"document.getElementById('{field}').value") == typed


@pytest.mark.long
async def test_text_title_alt_and_testid_selectors(order: BrowserSession) -> None:
    ok(await order.act(action("hover", target(selector="text=Send order"))))
    ok(await order.act(action("hover", target(selector="title=overlay"))))
    obs = ok(await order.act(action("hover", target(selector="testid=step-b"))))
    assert obs.target is not None and "Ship" in obs.target


async def test_select_by_value_or_label_and_several(order: BrowserSession) -> None:
    ok(await order.act(action("select", target(selector="label=Size"), values=("Large",))))
    assert await value(order, "document.getElementById('size').value") == "l"
    ok(await order.act(action("select", target(selector="#size"), values=("m",))))
    assert await value(order, "document.getElementById('size').value") == "m"
    ok(await order.act(action("select", target(selector="#extras"), values=("Gift bag", "wrap"))))
    assert (
        await value(order, "[...document.getElementById('extras').selectedOptions].map(o => o.value).join()")
        == "bag,wrap"
    )
    mistake(await order.act(action("select", target(selector="#email"), values=("x",))), "not a select")


async def test_selector_mistakes_say_the_way_out(order: BrowserSession) -> None:
    mistake(await order.act(action("click", target(selector="#nope"))), "nothing on the page matches")
    f = mistake(await order.act(action("click", target(selector="button.small"))), "matches 2 elements")
    assert "Help" in f.message and "More help" in f.message
    mistake(await order.act(action("click", target(selector="#covered"))), "covered by", "overlay")
    mistake(await order.act(action("click", target(selector="[[["))), "not a valid selector")


async def test_a_button_that_became_disabled(order: BrowserSession) -> None:
    ok(await order.act(action("fill", target(selector="#email"), text="a@b.c")))
    obs = ok(await order.act(action("click", target(selector="#send"))))
    assert obs.title == "Order sent"
    start = time.monotonic()
    mistake(await order.act(action("click", target(selector="#send"))), "disabled")
    assert time.monotonic() - start < 2  # said at once, not after the action's bound


async def test_a_ref_to_a_disabled_button_is_refused_and_never_clicked(order: BrowserSession) -> None:
    count = "document.querySelectorAll('[data-clicked]').length"
    mark = "document.getElementById('send').addEventListener('click', (e) => e.target.dataset.clicked = 1)"
    await order.on_page(lambda p: p.evaluate(mark))
    # disabled when the snapshot was taken: said at once
    await order.on_page(lambda p: p.evaluate("document.getElementById('send').disabled = true"))
    send = ref_of(ok(await order.act(action("snapshot"))).snapshot or "", '- button "Send order"')
    start = time.monotonic()
    mistake(await order.act(action("click", target(ref=send))), "disabled")
    assert time.monotonic() - start < 2
    # enabled in the snapshot, disabled since: Playwright's own check refuses it, within the bound
    await order.on_page(lambda p: p.evaluate("document.getElementById('send').disabled = false"))
    send = ref_of(ok(await order.act(action("snapshot"))).snapshot or "", '- button "Send order"')
    await order.on_page(lambda p: p.evaluate("document.getElementById('send').disabled = true"))
    mistake(await order.act(action("click", target(ref=send))), "disabled")
    assert await value(order, count) == 0


async def test_a_frame_selector_reaches_into_the_iframe(order: BrowserSession) -> None:
    ok(await order.act(action("fill", target(selector="#note", frame="#gift"), text="Happy birthday")))
    ok(await order.act(action("click", target(selector="#ok", frame="iframe[title='gift note']"))))
    text = await order.on_page(lambda p: p.frame_locator("#gift").locator("#ok").inner_text())
    assert text == "Saved"
    snap = ok(await order.act(action("snapshot"))).snapshot
    assert snap is not None and re.search(r'textbox "Gift note" \[ref=f\d+e\d+\]', snap), snap
    note = ref_of(snap, '- textbox "Gift note"')
    ok(await order.act(action("fill", target(ref=note), text="From Ada")))
    value_in_frame = await order.on_page(lambda p: p.frame_locator("#gift").locator("#note").input_value())
    assert value_in_frame == "From Ada"


async def test_upload_type_press_and_drag(order: BrowserSession, tmp_path: Path) -> None:
    receipt = tmp_path / "receipt.txt"
    receipt.write_text("paid")
    ok(await order.act(action("upload", target(selector="label=Receipt"), paths=(receipt,))))
    assert await value(order, "document.getElementById('file').files[0].name") == "receipt.txt"
    ok(await order.act(action("type", target(selector="#city"), text="Oslo")))
    ok(await order.act(action("press", target(selector="#city"), text="End")))
    assert await value(order, "document.getElementById('city').value") == "Oslo"
    ok(await order.act(action("drag", target(selector="testid=step-c"), to=target(selector="testid=step-a"))))
    assert (
        await value(order, "[...document.querySelectorAll('#steps li')].map(l => l.textContent).join()")
        == "Bill,Pack,Ship"
    )


async def test_scroll_with_a_target_and_a_snapshot_of_a_part(order: BrowserSession) -> None:
    obs = ok(await order.act(action("scroll", target(selector="#steps"), direction="down")))
    assert obs.target is not None and "list" in obs.target
    part = ok(await order.act(action("snapshot", target(selector="#steps")))).snapshot
    assert part is not None and "Pack" in part and "Email" not in part
    found = ok(await order.act(action("snapshot", find="terms"))).snapshot
    assert found is not None and "I accept the terms" in found and "Email" not in found


async def test_observe_snapshot_mode_has_no_image(site: str) -> None:
    async with BrowserSession(BrowserConfig(observe="snapshot")) as b:
        obs = ok(await b.launch(site + "/forms/order.html"))
        assert obs.screenshot is None and obs.snapshot is not None and "Send order" in obs.snapshot
    async with BrowserSession(BrowserConfig(observe="both")) as b:
        obs = ok(await b.launch(site + "/forms/order.html"))
        assert obs.screenshot is not None and obs.snapshot is not None


@pytest.mark.long
async def test_a_large_page_snapshot_stays_small_and_find_reaches_everything(
    browser: BrowserSession, site: str
) -> None:
    ok(await browser.launch(site + "/forms/big.html"))
    snap = ok(await browser.act(action("snapshot"))).snapshot
    assert snap is not None and len(snap) < 20_000, len(snap)
    assert "more elements below were left out" in snap
    assert 'link "Topic 1"' in snap  # what is in the viewport comes first
    found = ok(await browser.act(action("snapshot", find="Topic 2999"))).snapshot
    assert found is not None
    link = ref_of(found, '- link "Topic 2999"')
    obs = ok(await browser.act(action("click", target(ref=link))))
    assert obs.url.endswith("#t2999") and obs.target == 'link "Topic 2999"'
