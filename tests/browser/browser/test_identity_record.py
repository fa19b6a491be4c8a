"""Recording who an element is, in one page round trip for a click by point.

The page reads the element's facts with the hit test, and counts the candidate locators
that are plain CSS itself; Playwright's engines count the rest (role, text, label, test id).
The counts the page makes must be the ones Playwright's CSS engine would make.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Locator, Page
from support.helpers import ok

from xmltools.base.results import Point
from xmltools.browser import scripts
from xmltools.browser.lookup import selector_locator
from xmltools.browser.session import BrowserSession

ELEMENTS = ["input[placeholder='Search']", "[data-testid=footer-save]", "#search button", "#top-link"]


@pytest.mark.parametrize("selector", ELEMENTS)
async def test_the_pages_counts_are_playwrights(browser: BrowserSession, site: str, selector: str) -> None:
    ok(await browser.launch(site + "/pages/twins.html"))

    async def both(page: Page) -> tuple[dict[str, int], dict[str, int]]:
        info = await page.locator(selector).evaluate(scripts.IDENTIFY)
        return info["counted"], {c: await selector_locator(page, c).count() for c in info["counted"]}

    counted, playwrights = await browser.on_page(both)
    assert any(c.startswith("css=") for c in counted), counted  # every element has its CSS path
    assert counted == playwrights
    # the candidates of Playwright's own engines are left to them
    assert not any(c.startswith(("role=", "text=", "testid=", "label=", "placeholder=")) for c in counted)


async def test_the_shared_name_is_counted_as_two(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/pages/twins.html"))
    info = await browser.on_page(
        lambda page: page.locator("input[placeholder='Search']").evaluate(scripts.IDENTIFY)
    )
    assert info["counted"]['input[name="q"]'] == 2


async def test_a_click_by_point_reads_the_identity_with_its_hit_test(
    browser: BrowserSession, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No separate question about the element (a locator's evaluate costs a round trip of its own)."""
    asked: list[Any] = []
    evaluate = Locator.evaluate

    async def counted_evaluate(self: Locator, expression: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(expression)
        return await evaluate(self, expression, *args, **kwargs)

    monkeypatch.setattr(Locator, "evaluate", counted_evaluate)
    ok(await browser.launch(site + "/pages/twins.html"))
    box = await browser.on_page(lambda page: page.locator("#top-link").bounding_box())
    assert box is not None
    asked.clear()
    browser.prepare(record_identity=True)
    clicked = ok(await browser.click(Point(x=int(box["x"] + 5), y=int(box["y"] + box["height"] / 2))))
    identity = clicked.identity
    assert identity is not None and identity.described == 'link "Back to top"'
    assert identity.locators[0] == 'role=link[name="Back to top"s]'
    assert "#top-link" in identity.locators and 'text="Back to top"' in identity.locators
    assert asked == []
