"""The keyboard's and the form's actions: type, press, fill, select, upload and fill_form.

``type`` and ``press`` go where the focus is, or focus their target first
(typing goes after what a field holds).  Must not import the session.
"""

from __future__ import annotations

from collections.abc import Awaitable

from playwright.async_api import Locator, Page

from ...actions import Fill, FillForm, Press, Select, Target, Type, Upload
from .. import scripts
from .base import Act, Scope, handles

__all__ = ["TYPE_KEYS_MAX", "fill", "fill_form", "select", "type_text", "upload"]

TYPE_KEYS_MAX = 200  # longer text is inserted with one input event instead of a keystroke per character


@handles(Type, Press)
async def type_text(action: Type | Press, scope: Scope, act: Act) -> None:
    t = scope.timeouts
    page = scope.page
    typing = isinstance(action, Type)
    if action.target is not None:

        async def focus_at_end(loc: Locator) -> None:
            await loc.focus(timeout=t.action * 1000)
            if typing:  # typing into a field goes after what it holds
                await loc.evaluate(scripts.CARET_TO_END, timeout=t.action * 1000)

        act.target = await scope.targets.on_element(action.target, focus_at_end)
    if typing:
        await _keys(scope, page, action.text)
    else:
        await scope.bounds.input(page.keyboard.press(action.text), t.action)


async def _keys(scope: Scope, page: Page, text: str) -> None:
    t = scope.timeouts
    if len(text) <= TYPE_KEYS_MAX:
        await scope.bounds.bounded(page.keyboard.type(text), t.action + len(text) * 0.02)
    else:
        await scope.bounds.bounded(page.keyboard.insert_text(text), t.action + len(text) * 0.0005)


@handles(Fill)
async def fill(action: Fill, scope: Scope, act: Act) -> None:
    t = scope.timeouts
    act.target = await scope.targets.on_element(
        action.target, lambda loc: loc.fill(action.text, timeout=t.action * 1000)
    )


@handles(Select)
async def select(action: Select, scope: Scope, act: Act) -> None:
    t = scope.timeouts
    values = list(action.values)
    act.target = await scope.targets.on_element(
        action.target, lambda loc: loc.select_option(values, timeout=t.action * 1000)
    )


@handles(Upload)
async def upload(action: Upload, scope: Scope, act: Act) -> None:
    t = scope.timeouts
    files = [str(p) for p in action.paths]
    act.target = await scope.targets.on_element(
        action.target, lambda loc: loc.set_input_files(files, timeout=t.action * 1000), visible=False
    )


@handles(FillForm)
async def fill_form(action: FillForm, scope: Scope, act: Act) -> None:
    t = scope.timeouts
    filled = []
    for selector, value in action.fields:

        def fill_with(loc: Locator, v: str = value) -> Awaitable[None]:
            return loc.fill(v, timeout=t.action * 1000)

        filled.append(await scope.targets.on_element(Target(selector=selector), fill_with))
    act.notes.append(f"filled {len(filled)} field{'s' if len(filled) != 1 else ''}")
    act.target = "; ".join(filled)
