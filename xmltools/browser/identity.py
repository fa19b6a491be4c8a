"""Element identity: who an element is, recorded before an action acts on it, and found again on replay.

Owns the two questions a recorded test asks of an element:

- **Who is it?** :func:`identify` reads, in the page, the element's role and
  accessible name, tag, identifying attributes, short text and box, and the
  locators that could find it again in Playwright's order of preference; each
  is counted with Playwright's own engine, and only those that match exactly
  one element are kept.
- **Is it still there?** :func:`check` compares what a replayed action's ref,
  selector or point reaches with the recorded element (same role and name).
  When it differs, the recorded locators are tried in order, and the first
  that finds exactly one element with the recorded role and name is acted on
  instead (``rematch = "on"``); ``"strict"`` fails such a step instead, and
  ``"off"`` never looks.  When the role and name themselves match several
  elements, the step is ambiguous and fails: a weaker locator (text, CSS)
  that happens to find one would only guess.  Nothing has been acted on when
  the check fails.

Below :mod:`.targets`, which calls it: must not import the targets, the
observer, the handlers or the session.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FrameLocator, Locator, Page

from ..base.results import Identity, Rematch
from . import scripts
from .collect import clip
from .failures import ElementGone, TargetError
from .lookup import describe, selector_locator

__all__ = ["MAX_LISTED", "NOT_FOUND", "RematchMode", "check", "identify", "identity_of"]

RematchMode = Literal["on", "off", "strict"]
MAX_LISTED = 3  # elements named when a locator matches several
NOT_FOUND = "was not found"  # how the failure of a step whose recorded element is gone says so


async def identify(scope: Page | FrameLocator, loc: Locator, frame: str | None, timeout: float) -> Identity:
    """The identity of the element ``loc`` finds, with the locators that are unique now."""
    info = await loc.evaluate(scripts.IDENTIFY, timeout=timeout * 1000)
    return await identity_of(scope, info, frame)


async def identity_of(scope: Page | FrameLocator, info: dict[str, Any], frame: str | None) -> Identity:
    """The identity in the page's answer to ``scripts.IDENTIFY``, with the locators that are unique
    now: the plain CSS ones as the page counted them, the others by Playwright's engines, at once."""
    candidates = [str(c) for c in info["candidates"]]
    counted = {str(k): int(v) for k, v in (info.get("counted") or {}).items()}

    async def count(selector: str) -> int:
        if selector in counted:
            return counted[selector]
        return await selector_locator(scope, selector).count()

    counts = await asyncio.gather(*(count(c) for c in candidates), return_exceptions=True)
    x, y, w, h = (round(float(v), 1) for v in info["box"])
    return Identity(
        described=clip(str(info["described"]), 200),
        role=str(info["role"]),
        name=str(info["name"]),
        tag=str(info["tag"]),
        attributes={str(k): str(v) for k, v in info["attributes"].items()},
        text=str(info["text"]),
        frame=frame,
        box=(x, y, w, h),
        locators=tuple(c for c, n in zip(candidates, counts, strict=True) if n == 1),
    )


async def check(
    scope: Page | FrameLocator,
    expected: Identity,
    reached: str,
    mode: RematchMode,
    timeout: float,
) -> tuple[Locator, Rematch] | None:
    """None when the element reached (``reached``: its role and name, '' for none) is the recorded
    one; else the element found again by its recorded locators, and how; TargetError when it
    is ambiguous or ``mode`` is strict, and ElementGone (a TargetError) when it cannot be found."""
    if mode == "off" or reached == expected.described:
        return None
    now = f"reaches {reached}" if reached else "reaches nothing"
    if mode == "strict":
        raise TargetError(
            f"the recorded element {expected.described} is not what this step's target reaches now"
            f' (it {now}); with rematch = "strict" the step fails. Record the flow again, or replay'
            ' with rematch = "on" to find the element by its identity.'
        )
    tried: list[str] = []
    for selector in expected.locators:
        loc = selector_locator(scope, selector)
        try:
            count = await loc.count()
            if count == 1 and await describe(loc, timeout) == expected.described:
                return loc, Rematch(expected=expected.described, reached=reached, found_by=selector)
            tried.append(f"{selector} finds {await _listed(loc, count, timeout)}")
            if count > 1 and selector.startswith("role="):
                # the role and name themselves are several elements now: a weaker locator would guess
                raise TargetError(
                    f"the recorded element {expected.described} is ambiguous now: the step's target"
                    f" {now}, and {'; '.join(tried)}. Name the element in the flow more precisely."
                )
        except PlaywrightError as e:
            tried.append(f"{selector} could not be tried ({str(e).splitlines()[0]})")
    listed = "; ".join(tried) if tried else "no locator was recorded for it"
    raise ElementGone(
        f"the recorded element {expected.described} {NOT_FOUND}: the step's target {now}, and {listed}."
    )


async def _listed(loc: Locator, count: int, timeout: float) -> str:
    if count == 0:
        return "nothing"
    names = [await describe(loc.nth(i), timeout) for i in range(min(count, MAX_LISTED))]
    more = f" and {count - MAX_LISTED} more" if count > MAX_LISTED else ""
    return f"{count}: " + ", ".join(names) + more if count > 1 else names[0]
