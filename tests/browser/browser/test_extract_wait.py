"""Navigation, extraction and waits in a real Chromium (the controller's side of the full profile)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from support.helpers import action, ok, target

from xmltools.base.results import Failure, Point
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig


def sel(selector: str) -> Any:
    return target(selector=selector)


async def test_navigate_back_forward_reload_across_three_pages(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/form.html"))
    ok(await browser.click(Point(x=150, y=97)))
    ok(await browser.act(action("navigate", url=site + "/buttons.html")))
    ok(await browser.click(Point(x=100, y=65)))
    assert ok(await browser.act(action("navigate", url=site + "/long.html"))).url.endswith("/long.html")
    assert ok(await browser.act(action("back"))).url.endswith("/buttons.html")
    assert ok(await browser.act(action("back"))).url.endswith("/form.html")
    for _ in range(2):  # the blank page the tab began on is stepped over, every time
        obs = ok(await browser.act(action("back")))
        assert obs.url.endswith("/form.html") and any("no page to go back" in n for n in obs.notes), obs
    assert ok(await browser.act(action("forward"))).url.endswith("/buttons.html")
    obs = ok(await browser.act(action("reload")))
    assert obs.title == "Buttons" and "buttons ready" in [c.text for c in obs.console]


async def test_get_text_of_the_page_and_of_a_target(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    text = ok(await browser.act(action("get_text"))).extract
    assert text is not None and text.startswith("Price list\nApples 3\nBread 2")
    assert "window.secret" not in text and "nobody should see" not in text
    assert ok(await browser.act(action("get_text", sel("#prices li >> nth=1")))).extract == "Bread 2"
    every = ok(await browser.act(action("get_text", sel("#prices li"), all=True))).extract
    assert every == "1. Apples 3\n2. Bread 2\n3. Cheese 7"


async def test_get_html_is_cleaned_and_depth_limited(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    html = ok(await browser.act(action("get_html"))).extract
    assert html is not None
    for gone in ("<script", "<style", "<svg", "<noscript", "nobody should see", "onclick", "onmouseover"):
        assert gone not in html, gone
    deep = ok(await browser.act(action("get_html", sel("#deep"), depth=12))).extract
    assert deep is not None and "<span>bottom</span>" in deep
    shallow = ok(await browser.act(action("get_html", sel("#deep"), depth=3))).extract
    assert shallow == '<div id="deep"><div><div>… (1 child element not shown)</div></div></div>'


async def test_get_attribute_one_and_all(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    assert (
        ok(await browser.act(action("get_attribute", sel("text=Bread"), attribute="data-sku"))).extract
        == "B2"
    )
    every = ok(
        await browser.act(action("get_attribute", sel("li.item"), attribute="data-sku", all=True))
    ).extract
    assert every == "1. A1\n2. B2\n3. C3"


async def test_extraction_is_capped_at_its_exact_boundary(site: str) -> None:
    async with BrowserSession(BrowserConfig(max_extract_chars=10)) as b:
        ok(await b.launch(site + "/pages/extract.html"))
        exact = ok(await b.act(action("get_attribute", sel("#top"), attribute="id"))).extract
        assert exact == "top"
        text = ok(await b.act(action("get_text", sel("#prices")))).extract
        assert (
            text is not None
            and text.startswith("Apples 3\nB\n…")
            and "more characters were left out of 25" in text
        )


async def test_waits_for_an_element_a_text_a_url_and_time(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    start = time.monotonic()
    ok(await browser.act(action("wait", sel("#later"))))
    assert time.monotonic() - start < 5
    ok(await browser.act(action("wait", text="arrived late")))
    ok(await browser.act(action("wait", url="**/extract.html")))
    start = time.monotonic()
    ok(await browser.act(action("wait", seconds=0.3)))
    assert 0.3 <= time.monotonic() - start < 3


async def test_a_wait_that_runs_out_is_reported_and_the_session_goes_on(site: str) -> None:
    async with BrowserSession(BrowserConfig(max_wait_seconds=1.0)) as b:
        ok(await b.launch(site + "/pages/extract.html"))
        res = await b.act(action("wait", sel("#never-there")))
        assert isinstance(res, Failure) and res.kind == "timeout" and "ran out after 1 s" in res.message
        assert b.is_open
        ok(await b.hover(Point(x=10, y=10)))


async def test_tabs_opened_listed_switched_and_closed(browser: BrowserSession, site: str) -> None:
    obs = ok(await browser.launch(site + "/form.html"))
    assert obs.tabs == ()  # one tab: nothing to list
    obs = ok(await browser.act(action("open_tab", url=site + "/buttons.html")))
    assert obs.title == "Buttons" and any("opened t2" in n for n in obs.notes)
    assert [t.split(" ")[0] for t in obs.tabs] == ["t1", "t2"] and obs.tabs[1].endswith("(current)")
    listed = ok(await browser.act(action("list_tabs"))).extract
    assert listed is not None and 't1 "Sign in"' in listed and 't2 "Buttons"' in listed
    obs = ok(await browser.act(action("switch_tab", tab="t1")))
    assert obs.title == "Sign in" and obs.tabs[0].endswith("(current)")
    res = await browser.act(action("switch_tab", tab="t9"))
    assert isinstance(res, Failure) and res.kind == "target" and "t1, t2" in res.message
    obs = ok(await browser.close_tab("t1"))
    assert obs.title == "Buttons" and obs.tabs == ()
    assert await browser.close_tab() is None  # the last tab: the session ends
    assert not browser.is_open


@pytest.mark.long
async def test_a_tab_the_page_opens_gets_the_next_id(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/popup.html"))
    obs = ok(await browser.click(Point(x=150, y=65)))
    assert obs.title == "Sign in" and obs.tabs[1].startswith("t2") and obs.tabs[1].endswith("(current)")


@pytest.mark.long
async def test_console_logs_gathers_everything_since_the_last_call(
    browser: BrowserSession, site: str
) -> None:
    ok(await browser.launch(site + "/buttons.html"))
    ok(await browser.click(Point(x=100, y=65)))
    ok(await browser.click(Point(x=100, y=305)))
    logs = ok(await browser.act(action("console_logs"))).extract
    assert logs == "buttons ready\nclicked log\n[pageerror] boom from the page"
    assert ok(await browser.act(action("console_logs"))).extract == "(no console entries since the last time)"


async def test_evaluate_expressions_and_function_bodies(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    assert ok(await browser.act(action("evaluate", script="document.title"))).extract == '"Extract"'
    body = "const items = [...document.querySelectorAll('li')]; return items.map(li => li.dataset.sku);"
    assert ok(await browser.act(action("evaluate", script=body))).extract == '["A1", "B2", "C3"]'
    thrown = ok(await browser.act(action("evaluate", script="throw new Error('nope');"))).extract
    assert thrown is not None and "the script threw" in thrown and "nope" in thrown


SCRIPTS = [
    ("a bare expression", "document.title", '"Extract"'),
    ("an expression with a trailing comment", "document.title // the title", '"Extract"'),
    ("an object literal", "{answer: 42}", '{"answer": 42}'),
    ("an IIFE", "(() => { const a = 40; return {answer: a + 2}; })()", '{"answer": 42}'),
    ("an arrow function", "() => document.title", '"Extract"'),
    ("an async function", "async function () { await new Promise(r => setTimeout(r, 10)); return 7; }", "7"),
    ("a body with return", "const n = document.querySelectorAll('li').length; return n * 2;", "6"),
    ("a body with await", "await new Promise(r => setTimeout(r, 10)); return 'late';", '"late"'),
]


@pytest.mark.parametrize(("what", "script", "want"), SCRIPTS, ids=[s[0] for s in SCRIPTS])
@pytest.mark.long
async def test_evaluate_reads_a_script_as_the_engine_parses_it(
    browser: BrowserSession, site: str, what: str, script: str, want: str
) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    obs = ok(await browser.act(action("evaluate", script=script)))
    assert obs.extract == want, (what, obs.extract)
    assert obs.notes == (), obs.notes


@pytest.mark.long
async def test_a_script_that_does_not_parse_is_said_so_and_never_run(
    browser: BrowserSession, site: str
) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    said = ok(await browser.act(action("evaluate", script="window.ran = 1; return (;"))).extract
    assert said is not None and said.startswith(
        "the script is not valid JavaScript, so it was not run: SyntaxError"
    )
    assert await browser.on_page(lambda p: p.evaluate("window.ran === undefined"))


@pytest.mark.long
async def test_a_syntax_error_thrown_while_running_runs_the_script_once(
    browser: BrowserSession, site: str
) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    script = '(window.runs = (window.runs || 0) + 1, JSON.parse("{"))'
    said = ok(await browser.act(action("evaluate", script=script))).extract
    assert said is not None and said.startswith("the script threw") and "JSON" in said
    assert await browser.on_page(lambda p: p.evaluate("window.runs")) == 1


@pytest.mark.long
async def test_a_body_without_return_is_told_to_return(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/pages/extract.html"))
    obs = ok(await browser.act(action("evaluate", script="const t = document.title; t.length;")))
    assert obs.extract == "null" and any("needs `return`" in n for n in obs.notes), obs.notes


async def test_evaluate_works_where_the_page_forbids_eval(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/pages/csp.html"))
    for script in ("document.title", "const t = document.title; return t + '!';"):
        assert ok(await browser.act(action("evaluate", script=script))).extract in ('"Strict"', '"Strict!"')
    said = ok(await browser.act(action("evaluate", script="return (;"))).extract
    assert said is not None and said.startswith("the script is not valid JavaScript")


async def test_full_page_and_element_screenshots_and_saving_in_the_workspace(
    site: str, tmp_path: Path
) -> None:
    from xmltools.browser.images import image_size

    async with BrowserSession(BrowserConfig(workspace=tmp_path)) as b:
        ok(await b.launch(site + "/long.html"))
        full = ok(await b.act(action("screenshot", full_page=True))).screenshot
        assert full is not None and full.width == 900 and full.height > 600
        ok(await b.launch(site + "/forms/order.html"))
        obs = ok(await b.act(action("screenshot", sel("#send"), path="shots/send.png")))
        box = await b.on_page(lambda p: p.locator("#send").bounding_box())
        assert obs.screenshot is not None  # as large as the element (its box, rounded out)
        assert abs(obs.screenshot.width - box["width"]) < 2 and abs(obs.screenshot.height - box["height"]) < 2
        saved = tmp_path / "shots" / "send.png"
        assert image_size(saved.read_bytes()) == (obs.screenshot.width, obs.screenshot.height)
        res = await b.act(action("screenshot", sel("#send"), path="../escape.png"))
        assert isinstance(res, Failure) and res.kind == "target" and "outside the workspace" in res.message


async def test_back_and_forward_repeatedly_on_pages_that_answer_late(
    browser: BrowserSession, site: str, repeat: int
) -> None:
    """Back and forward over links to pages served after a random delay: each step lands, every time."""
    slow = site + "/__slow__/pages/"
    ok(await browser.launch(slow + "one.html"))
    obs = ok(await browser.act(action("back")))
    assert obs.url.endswith("/one.html") and any("no page to go back" in n for n in obs.notes)
    ok(await browser.act(action("navigate", url=slow + "two.html")))
    wrong = []
    for i in range(repeat):
        back = ok(await browser.act(action("back")))
        forward = ok(await browser.act(action("forward")))
        if back.title != "Page one" or forward.title != "Page two" or back.notes or forward.notes:
            wrong.append((i, back.title, back.notes, forward.title, forward.notes))
    assert not wrong, wrong[:3]


@pytest.mark.long
async def test_a_very_tall_screenshot_is_shown_cut_and_saved_whole(site: str, tmp_path: Path) -> None:
    from xmltools.browser.images import image_size
    from xmltools.browser.perform.reading import MAX_SHOWN_HEIGHT

    async with BrowserSession(BrowserConfig(workspace=tmp_path)) as b:
        ok(await b.launch(site + "/long.html"))
        ok(await b.act(action("evaluate", script="document.body.style.minHeight = '12000px'; 1")))
        obs = ok(await b.act(action("screenshot", full_page=True, path=str(tmp_path / "tall.png"))))
        assert obs.screenshot is not None and (obs.screenshot.width, obs.screenshot.height) == (
            900,
            MAX_SHOWN_HEIGHT,
        )
        w, h = image_size((tmp_path / "tall.png").read_bytes())
        assert w == 900 and h >= 12_000
        assert any(f"you are shown its top {MAX_SHOWN_HEIGHT:,} pixels" in n for n in obs.notes), obs.notes
        assert any("the whole screenshot" in n and "tall.png" in n for n in obs.notes)
        tall = ok(await b.act(action("screenshot", sel("body"))))  # an element taller than the limit
        assert tall.screenshot is not None and tall.screenshot.height == MAX_SHOWN_HEIGHT


@pytest.mark.long
async def test_typing_into_a_field_goes_after_what_it_holds(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(site + "/forms/order.html"))
    ok(await browser.act(action("fill", sel("#email"), text="ada")))
    ok(await browser.act(action("type", sel("#email"), text="@example.com")))
    value = await browser.on_page(lambda p: p.locator("#email").input_value())
    assert value == "ada@example.com"
