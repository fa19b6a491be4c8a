"""The tabs and the window: open_tab, switch_tab, close_tab, resize, and close.

Closing the last tab ends the session, as ``close`` does: the session then
has nothing to observe (:attr:`~.base.Act.ended`).  Must not import the
session.
"""

from __future__ import annotations

import contextlib

from playwright.async_api import Error as PlaywrightError

from ...actions import Close, CloseTab, OpenTab, Resize, SwitchTab
from ..bounds import Hung
from .base import Act, Scope, handles
from .navigation import goto

__all__ = ["close", "close_tab", "open_tab", "resize", "switch_tab"]


@handles(OpenTab)
async def open_tab(action: OpenTab, scope: Scope, act: Act) -> None:
    tabs = scope.tabs
    page = scope.page
    blank = tabs.blank_start and page.url == "about:blank" and len(tabs.open_tabs()) == 1
    tabs.blank_start = False
    if not blank:  # a browser started with no page: its one blank tab is the first to use
        page = await tabs.new_page(scope.timeouts.action)
        await tabs.use_page(page)
    await goto(scope, str(action.url))
    act.notes.append(f"opened {tabs.ids[page]}, which you now see")


@handles(SwitchTab)
async def switch_tab(action: SwitchTab, scope: Scope, act: Act) -> None:
    tab = scope.tabs.tab(str(action.tab))
    await scope.tabs.use_page(tab)
    await scope.bounds.bounded(tab.bring_to_front(), scope.timeouts.action)


@handles(CloseTab)
async def close_tab(action: CloseTab, scope: Scope, act: Act) -> None:
    """Close a tab (the current one by default); closing the last tab ends the session."""
    tabs = scope.tabs
    page = tabs.tab(action.tab) if action.tab else scope.page
    closing = tabs.ids[page]
    rest = [p for p in tabs.open_tabs() if p is not page]
    if not rest:
        await scope.control.drop()
        act.ended = True
        return
    if page is tabs.page:
        await tabs.use_page(rest[-1])
    with contextlib.suppress(PlaywrightError, Hung):
        await scope.bounds.bounded(page.close(), scope.timeouts.close)
    act.notes.append(f"closed {closing}; you now see {tabs.ids[scope.page]}")


@handles(Resize)
async def resize(action: Resize, scope: Scope, act: Act) -> None:
    size = action.size
    await scope.bounds.bounded(
        scope.page.set_viewport_size({"width": size.width, "height": size.height}), scope.timeouts.action
    )
    act.viewport = size


@handles(Close, flow="session")
async def close(action: Close, scope: Scope, act: Act) -> None:
    act.closed = await scope.control.end()
    act.ended = True
