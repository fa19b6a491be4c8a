"""The two lookups targets and identity share: a selector in the model's syntax as a locator, and an
element's role and name.

Selectors are Playwright's syntax, with ``label=``, ``placeholder=``, ``alt=``,
``title=`` and ``testid=`` mapped onto ``get_by_label`` and the others.  Below
both :mod:`.targets` and :mod:`.identity`: must import neither, nor the
observer, the handlers or the session.
"""

from __future__ import annotations

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FrameLocator, Locator, Page

from ..actions import LOOKUPS, selector_kind
from .collect import clip
from .scripts import DESCRIBE

__all__ = ["describe", "selector_locator"]


def selector_locator(scope: Page | FrameLocator, selector: str) -> Locator:
    """The locator of a selector in the model's syntax (Playwright's, and the lookup shortcuts)."""
    kind, value = selector_kind(selector)
    if kind == "playwright":
        return scope.locator(selector)
    lookup = getattr(scope, LOOKUPS[kind])
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        if kind == "testid":  # a test id always matches whole: quotes only delimit it
            return lookup(value[1:-1])  # type: ignore[no-any-return]
        return lookup(value[1:-1], exact=True)  # type: ignore[no-any-return]
    return lookup(value)  # type: ignore[no-any-return]


async def describe(loc: Locator, timeout: float = 1.0) -> str:
    """Role and accessible name of an element (``button "Send"``), computed in the page.

    Not Playwright's own snapshot of the element: taking one would replace the
    refs of the model's latest snapshot.
    """
    try:
        text = await loc.evaluate(DESCRIBE, timeout=timeout * 1000)
    except PlaywrightError:
        return "an element"
    return clip(str(text), 200)
