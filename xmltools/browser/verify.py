"""Checking a recorded assertion (:class:`~xmltools.base.expectations.Expectation`) in the live page.

Each kind maps onto Playwright's own web-first assertions (``expect(...)``),
which retry until they hold or their bound runs out, so a page that is still
rendering after an action is waited for, not failed.  The answer is None when
it holds, or one line saying what was found instead.  Must not import the
session, the handlers or the observer.
"""

from __future__ import annotations

import re

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page, expect

from ..base.expectations import Expectation
from .collect import clip
from .targets import selector_locator

__all__ = ["verify", "verify_locator"]

MAX_ANSWER = 300  # characters of what Playwright found, in the one line


async def verify(page: Page, exp: Expectation, timeout: float) -> str | None:
    """None when ``exp`` holds on ``page`` within ``timeout`` seconds; else what is there instead."""
    ms = timeout * 1000
    try:
        if exp.kind == "text":
            text = re.compile(exp.value) if exp.regex else exp.value
            await expect(page.get_by_text(text).filter(visible=True).first).to_be_visible(timeout=ms)
        elif exp.kind == "element":
            assert exp.role is not None
            role = page.get_by_role(exp.role, name=exp.name, exact=True)  # type: ignore[arg-type]
            await expect(role.filter(visible=True).first).to_be_visible(timeout=ms)
        elif exp.kind == "value":
            assert exp.target is not None
            await expect(selector_locator(page, exp.target)).to_have_value(exp.value, timeout=ms)
        elif exp.kind == "url":
            await expect(page).to_have_url(re.compile(exp.value) if exp.regex else exp.value, timeout=ms)
        else:
            await expect(page.locator("body")).to_match_aria_snapshot(exp.value, timeout=ms)
    except AssertionError as e:
        return _found(str(e), exp, page)
    except PlaywrightError as e:  # a selector that is not valid, several fields for one value
        return clip(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__, MAX_ANSWER)
    return None


async def verify_locator(loc: Locator, value: str | None, timeout: float) -> str | None:
    """None when the element ``loc`` finds is visible (or, with ``value``, holds it); else what is
    there instead."""
    exp = (
        Expectation(kind="element", role="element")
        if value is None
        else Expectation(kind="value", target="element", value=value)
    )
    try:
        if value is None:
            await expect(loc.first).to_be_visible(timeout=timeout * 1000)
        else:
            await expect(loc).to_have_value(value, timeout=timeout * 1000)
    except AssertionError as e:
        return _found(str(e), exp, None)
    except PlaywrightError as e:
        return clip(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__, MAX_ANSWER)
    return None


def _found(message: str, exp: Expectation, page: Page | None) -> str:
    """Playwright's assertion message, shortened to what was there instead."""
    if exp.kind == "url" and page is not None:
        return f"the address is {page.url!r}"
    actual = message.split("Actual value:", 1)[1] if "Actual value:" in message else ""
    actual = actual.split("Call log:", 1)[0].split("\nError:", 1)[0].strip()
    if exp.kind in ("text", "element") and actual in ("", "None"):
        return "no such element is visible"
    if exp.kind == "aria":
        lines = [ln.strip() for ln in actual.splitlines() if ln.strip()]
        return clip("the tree differs; the page has: " + "; ".join(lines[:8]), MAX_ANSWER)
    if actual:
        return clip(f"found {actual!r}", MAX_ANSWER)
    first = message.strip().splitlines()[0] if message.strip() else "it does not hold"
    return clip(first, MAX_ANSWER)
