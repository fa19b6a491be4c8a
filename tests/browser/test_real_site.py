"""A real documentation site that nobody here wrote: Python's own, from Debian's python3.11-doc.

Skipped when the package is not installed (``make test`` still runs without
it); ``.ci/run`` installs it.  The coordinates are found the way a model finds
them, from where the element is on the page, and every navigating step is
repeated.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import ba, ok
from support.helpers import read as _read
from support.helpers import said as _said

from xmltools.base.results import Observation, Point
from xmltools.base.serve import serve_directory
from xmltools.browser.session import BrowserSession

DOCS = Path("/usr/share/doc/python3.11/html")

pytestmark = [
    pytest.mark.long,
    pytest.mark.realsite,
    pytest.mark.skipif(not (DOCS / "index.html").exists(), reason="Debian's python3.11-doc is not installed"),
]


@pytest.fixture(scope="module")
def docs() -> Iterator[str]:
    with serve_directory(DOCS) as base:
        yield base


async def centre_of(b: BrowserSession, selector: str) -> Point:
    """Where the element is on screen, after scrolling it into view (as a model would scroll to it)."""

    async def find(page: object) -> object:
        el = page.locator(selector).first  # type: ignore[attr-defined]
        await el.scroll_into_view_if_needed()
        return await el.bounding_box()

    box = await b.on_page(find)
    assert box is not None, selector
    return Point(x=int(box["x"] + box["width"] / 2), y=int(box["y"] + box["height"] / 2))


async def test_links_of_the_real_docs_load_every_time(
    browser: BrowserSession, docs: str, repeat: int
) -> None:
    failures = []
    for i in range(repeat):
        ok(await browser.launch(docs + "/library/index.html"))
        link = await centre_of(browser, "a[href='asyncio.html']")
        obs = await browser.click(link)
        if not (isinstance(obs, Observation) and obs.url.endswith("/library/asyncio.html")):
            failures.append(f"try {i}: {obs}")
        elif "asyncio" not in obs.title or obs.target is None or "asyncio" not in obs.target:
            failures.append(f"try {i}: title {obs.title!r}, target {obs.target!r}")
    assert not failures, failures[:3]


async def test_the_javascript_search_of_the_real_docs(browser: BrowserSession, docs: str) -> None:
    ok(await browser.launch(docs + "/index.html"))
    box = await centre_of(browser, "input[name='q']")
    ok(await browser.click(box))
    ok(await browser.type("asyncio.gather"))
    obs = ok(await browser.press("Enter"))
    assert "search.html?q=asyncio.gather" in obs.url, obs
    results = await browser.on_page(lambda p: p.locator("ul.search li").count())
    assert results > 0, "the search results were not there when the page was shown"
    first = await centre_of(browser, "ul.search li a")
    obs = ok(await browser.click(first))
    assert "/library/" in obs.url and obs.title, obs


def test_a_text_only_model_searches_the_real_docs_and_reads_a_result(docs: str, tmp_path: Path) -> None:
    """Search (JavaScript), wait for the results, read them, open one in a tab, read and save a part of it."""
    import re

    from xmltools import Config, Interpreter

    cfg = Config(profile="full", observe="snapshot", workspace=tmp_path, max_wait_seconds=15)
    gather = "xpath=//dt[@id='asyncio.gather']/.."
    with Interpreter(cfg) as it:
        seen = _said(it.handle(ba("launch", url=docs + "/index.html")))
        box = re.search(r'textbox "Quick search" \[ref=(e\d+)\]', seen)
        assert box, seen
        it.handle(ba("fill", ref=box.group(1), text="asyncio.gather"))
        turn = it.handle(ba("press", ref=box.group(1), text="Enter"))
        assert "search.html?q=asyncio.gather" in _said(turn)
        turn = it.handle(ba("wait", selector="ul.search li"))  # the search runs in the page's JavaScript
        assert turn.ran is not None and turn.ran.status == "ok", _said(turn)
        titles = _read(it.handle(ba("get_text", selector="ul.search li a", all="true")))
        assert titles.startswith("1. asyncio.gather"), titles
        hrefs = _read(it.handle(ba("get_attribute", selector="ul.search li a", attribute="href", all="true")))
        first = hrefs.splitlines()[0].removeprefix("1. ")
        turn = it.handle(ba("open_tab", url=docs + "/" + first))
        assert "Tabs (2 open)" in _said(turn), _said(turn)
        html = _read(it.handle(ba("get_html", selector=gather, depth="3")))
        assert html.startswith('<dl class="py function">') and "<script" not in html
        assert "Run awaitable objects in the aws sequence" not in html or "inline elements" in html
        text = _read(it.handle(ba("get_text", selector=gather)))
        assert "Run awaitable objects in the aws sequence concurrently." in text
        assert "\n    f = 1\n" in text  # the example's indentation is kept
        turn = it.handle(ba("screenshot", selector=gather, path="gather.png"))
        assert (tmp_path / "gather.png").stat().st_size > 10_000, _said(turn)
        turn = it.handle(ba("screenshot", full_page="true"))
        assert "you are shown its top 7,900 pixels" in _said(turn)  # the page is far taller
        turn = it.handle(ba("close_tab"))
        assert "you now see t1" in _said(turn) and "search.html" in _said(turn)
        turn = it.handle(ba("back"))
        assert "/index.html" in _said(turn), _said(turn)[:400]
        it.handle(ba("close"))
