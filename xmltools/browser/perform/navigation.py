"""Where the page goes: launch's first page, navigate, back, forward, reload, and waiting for something.

A navigation the URL policy refused, a page that does not answer or a
network error is a :class:`~..failures.NavigationError`; a wait that runs out
is :class:`~..failures.WaitedOut`: both are reported, neither is the model's
mistake.  Must not import the session.
"""

from __future__ import annotations

import asyncio
from typing import Any

from playwright.async_api import Error as PlaywrightError

from ...actions import Back, Forward, Launch, Navigate, Reload, Resize, Wait
from ..bounds import Hung
from ..failures import FailureClass, NavigationError, WaitedOut, first_line
from ..targets import TargetError
from .base import Act, Scope, handles

__all__ = ["go", "goto", "launch", "wait"]


async def goto(scope: Scope, url: str) -> None:
    """Open ``url`` in the current tab, up to its commit; the page's failure is a NavigationError."""
    page = scope.page
    t = scope.timeouts
    try:
        await scope.bounds.bounded(
            page.goto(url, wait_until="commit", timeout=t.navigation * 1000), t.navigation + 1
        )
    except (PlaywrightError, Hung) as e:
        raise _not_loaded(scope, e, url, named=True) from e


def _not_loaded(scope: Scope, e: PlaywrightError | Hung, url: str | None, *, named: bool) -> NavigationError:
    """A page that did not load, as the model is told it: by its address when the model ``named``
    it, else as "the page".  A failure that is not the page's own (the browser's) is raised again."""
    wait = scope.timeouts.navigation
    subject = url if named else "the page"
    if isinstance(e, Hung):
        return NavigationError(f"{subject} sent no answer within {wait:g} s.")
    if scope.watch.classify(e) is not FailureClass.PAGE:
        raise e
    refused = scope.guard.refusal(url)
    if refused and "ERR_ABORTED" in str(e):
        return NavigationError(f"{url} may not be opened: {refused}")
    msg = first_line(e)
    if not named:
        return NavigationError(f"the page could not be loaded: {msg}")
    if "Timeout" in msg:
        return NavigationError(f"{url} sent no answer within {wait:g} s.")
    return NavigationError(f"{url} could not be opened: {msg}")


@handles(Launch, flow="open")
async def launch(action: Launch, scope: Scope, act: Act) -> None:
    """The session has just opened (a blank tab): go to the URL; a size is set by a resize after."""
    scope.tabs.blank_start = action.url is None
    if action.url is not None:
        await goto(scope, action.url)
    if action.size is not None:
        act.then = Resize.model_construct(size=action.size)


@handles(Navigate, Back, Forward, Reload)
async def go(action: Navigate | Back | Forward | Reload, scope: Scope, act: Act) -> None:
    page = scope.page
    t = scope.timeouts
    name = action.action
    url = action.url if isinstance(action, Navigate) else None
    until: Any = (action.wait_until if isinstance(action, Navigate) else None) or "commit"
    try:
        if url is not None:
            await scope.bounds.bounded(
                page.goto(url, wait_until=until, timeout=t.navigation * 1000), t.navigation + 1
            )
            return
        if name == "back" and await _only_blank_behind(scope):
            act.notes.append("there is no page to go back to in this tab's history")
            return
        step = {"back": page.go_back, "forward": page.go_forward, "reload": page.reload}[name]
        before = page.url
        response = await scope.bounds.bounded(
            step(wait_until=until, timeout=t.navigation * 1000), t.navigation + 1
        )
    except (PlaywrightError, Hung) as e:
        raise _not_loaded(scope, e, url, named=False) from e
    if response is None and name in ("back", "forward") and page.url == before and not scope.watch.navigating:
        act.notes.append(f"there is no page to go {name} to in this tab's history")


async def _only_blank_behind(scope: Scope) -> bool:
    """True when going back would land on the blank page the tab began on, or on nothing.

    The tab's history comes from the DevTools protocol; where it cannot be
    read (a browser without it), the answer is False and back runs as asked.
    """
    try:
        cdp = await scope.tabs.ensure_cdp()
        history = await scope.bounds.bounded(cdp.send("Page.getNavigationHistory"), scope.timeouts.probe)
    except (PlaywrightError, Hung):
        return False
    index = int(history.get("currentIndex", 0))
    entries = history.get("entries", [])
    behind = entries[:index]
    return all(str(e.get("url", "")) in ("about:blank", "") for e in behind)


@handles(Wait)
async def wait(action: Wait, scope: Scope, act: Act) -> None:
    """Wait for an element, a text, a URL or a time; running out is the page's problem, reported."""
    page = scope.page
    bound = scope.settings.max_wait_seconds
    try:
        if action.seconds is not None:
            await asyncio.sleep(min(float(action.seconds), bound))
            return
        if action.url:
            await page.wait_for_url(str(action.url), timeout=bound * 1000, wait_until="commit")
            return
        if action.text and action.target is None:
            await page.get_by_text(str(action.text)).first.wait_for(state="visible", timeout=bound * 1000)
            return
        state: Any = "hidden" if action.state == "hidden" else "visible"
        target: Any = action.target
        if getattr(target, "ref", None) and target.ref not in scope.targets.refs:
            raise TargetError(f"{target.ref} is not in the latest snapshot. Take a new snapshot.")
        scope_: Any = page.frame_locator(target.frame) if getattr(target, "frame", None) else page
        loc = (
            page.locator(f"aria-ref={target.ref}")
            if getattr(target, "ref", None)
            else scope_.locator(target.selector)
        )
        await loc.first.wait_for(state=state, timeout=bound * 1000)
    except PlaywrightError as e:
        if "Timeout" not in str(e):
            raise
        raise WaitedOut(f"the wait ran out after {bound:g} s: what it waited for did not happen.") from e
