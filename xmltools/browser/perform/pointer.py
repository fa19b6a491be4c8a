"""The mouse's actions: click, hover, drag and scroll, by point, ref or selector.

A classic click at a coordinate and a click on a ref or a selector are one
handler: a point is aimed at as it is (what is there is named first, and the
page's bare background is the model's mistake), an element is located,
checked and acted on by :class:`~..targets.Targets`.  Must not import the
session.
"""

from __future__ import annotations

from typing import Literal

from ...actions import Click, Drag, Hover, Scroll, ScrollDown, ScrollUp
from ...base.results import Point
from .. import scripts
from ..targets import TargetError, shown_any
from .base import Act, Scope, handles

__all__ = ["click", "drag", "hover", "scroll"]


@handles(Click)
async def click(action: Click, scope: Scope, act: Act) -> None:
    t = scope.timeouts
    p = action.target.coordinate
    # the settle that follows waits for any navigation the click starts, within the navigation
    # bound; Playwright's own wait for it would end at the action's bound, as a failed click
    if p is None:
        act.target = await scope.targets.on_element(
            action.target, lambda loc: loc.click(timeout=t.action * 1000, no_wait_after=True)
        )
        return
    act.target, instead = await scope.targets.at_point(p)
    if instead is not None:  # replayed: the recorded element moved away from the point
        await scope.bounds.input(instead.click(timeout=t.action * 1000, no_wait_after=True), t.action + 1)
        return
    await scope.bounds.input(scope.page.mouse.click(p.x, p.y), t.action)
    act.mouse = p


@handles(Hover)
async def hover(action: Hover, scope: Scope, act: Act) -> None:
    t = scope.timeouts
    p = action.target.coordinate
    if p is None:
        act.target = await scope.targets.on_element(
            action.target, lambda loc: loc.hover(timeout=t.action * 1000), enabled=False
        )
        return
    page = scope.page
    try:
        act.target = await scope.targets.describe_point(p)
    except TargetError:
        act.target = None  # nothing but the background there: hovering it is still a move
    await scope.bounds.bounded(page.mouse.move(p.x, p.y), t.action)
    act.mouse = p


@handles(Drag)
async def drag(action: Drag, scope: Scope, act: Act) -> None:
    t = scope.timeouts
    page = scope.page
    start, end = await scope.targets.centre(action.target), await scope.targets.centre(action.to)
    await scope.bounds.input(page.mouse.move(start.x, start.y), t.action)
    await scope.bounds.input(page.mouse.down(), t.action)
    await scope.bounds.input(page.mouse.move(end.x, end.y, steps=8), t.action)
    await scope.bounds.input(page.mouse.up(), t.action)
    act.mouse = end
    act.target = f"from {shown_any(action.target)} to {shown_any(action.to)}"


Direction = Literal["up", "down", "left", "right"]
_EDGES = {"down": "bottom", "up": "top", "left": "left edge", "right": "right edge"}


@handles(Scroll, ScrollDown, ScrollUp)
async def scroll(action: Scroll | ScrollDown | ScrollUp, scope: Scope, act: Act) -> None:
    """The page (or the part under the mouse) one way; with a target, that element's scroll container."""
    if isinstance(action, Scroll):
        direction: Direction = action.direction
        target = action.target
    else:
        direction, target = ("down" if isinstance(action, ScrollDown) else "up"), None
    if target is None:
        act.notes += await _scroll_page(scope, direction)
        return
    t = scope.timeouts
    loc = await scope.targets.locate(target)
    res = await scope.bounds.bounded(loc.evaluate(scripts.SCROLL_ELEMENT, direction), t.action)
    act.target = await scope.targets.name(target, loc)
    if res != "scrolled":
        act.notes.append("the element was brought into view")


async def _scroll_page(scope: Scope, direction: Direction) -> list[str]:
    page = scope.page
    at = scope.mouse or Point(x=scope.viewport.width // 2, y=scope.viewport.height // 2)
    res = await scope.bounds.bounded(
        page.evaluate(scripts.SCROLL, [at.x, at.y, direction]), scope.timeouts.action
    )
    what = str(res.get("what", "page")) if isinstance(res, dict) else "page"
    moved = bool(res.get("moved")) if isinstance(res, dict) else False
    if what == "modal":
        return [
            "a dialog is open in front of the page and has nothing to scroll; the page behind it"
            " was left as it was"
        ]
    if not moved:
        return [
            f"nothing moved: the {'page' if what == 'page' else what} is already at the {_EDGES[direction]}"
        ]
    return [] if what == "page" else [f"scrolled {what}, the part under the mouse"]
