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

from xmltools.browser.controller import BrowserSession
from xmltools.results import Failure, Observation, Point
from xmltools.serve import serve_directory

DOCS = Path("/usr/share/doc/python3.11/html")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.realsite,
    pytest.mark.skipif(not (DOCS / "index.html").exists(), reason="Debian's python3.11-doc is not installed"),
]


def ok(result: Observation | Failure | None) -> Observation:
    assert isinstance(result, Observation), result
    return result


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


async def test_links_of_the_real_docs_load_every_time(browser: BrowserSession, docs: str) -> None:
    failures = []
    for i in range(30):
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
