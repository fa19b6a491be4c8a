"""What a judge check reads of the trial's last page, in Chromium: the page's text as it is, read at
once, not waited for (the check's wait is for what a check looks for, and a loaded machine made a
short one fail the read), and the text of a document with no body."""

from __future__ import annotations

from typing import Any

import pytest
from support.helpers import ok

from xmltools.lab.checks import CHECKS, CheckContext, KeptSession
from xmltools.lab.plan import CheckSpec

RUBRIC = CheckSpec(kind="judge", value="The page greets Ada.")


async def judged(session: KeptSession, wait: float) -> str:
    """The prompt the judge is given for the session's page, with the check's wait at ``wait``."""
    asked: list[str] = []

    async def judge(prompt: str) -> str:
        asked.append(prompt)
        return "PASS\nIt does."

    ctx = CheckContext(session, "done", True, "Sign in as Ada.", judge, wait=wait)
    assert await CHECKS["judge"](RUBRIC, ctx) is None
    return asked[0].split("The page the attempt ended on", 1)[1]


@pytest.mark.parametrize(
    ("path", "shown"),
    [("/form.html", "Welcome, Ada!"), ("/pages/chart.svg", "March: 120 orders")],
    ids=["html", "svg-without-body"],
)
async def test_the_judge_reads_the_page_at_once_whatever_the_checks_wait(
    site: str, path: str, shown: str
) -> None:
    """With the check's wait at a millisecond (a read through it timed out, and the judge was told the
    page could not be read), the judge still gets the page's text; an SVG document, which has no
    body, gives its text too."""
    async with KeptSession() as session:
        ok(await session.launch(site + path))
        if path.endswith(".html"):
            await session.on_page(lambda p: _sign_in(p, "Ada"))
        page = await judged(session, wait=0.001)
    assert shown in page and "could not be read" not in page


async def _sign_in(page: Any, name: str) -> None:
    await page.fill("#name", name)
    await page.press("#name", "Enter")
    await page.wait_for_function("document.title === 'Welcome'")
