"""Reading the page: get_text, get_html, get_attribute, console_logs, evaluate, snapshot and screenshot.

What is read goes into the observation's ``extract``, capped
(``max_extract_chars``); a snapshot is taken with the observation; a full-page
or element screenshot replaces the observation's own.  Must not import the
session.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from ...actions import (
    ConsoleLogs,
    Evaluate,
    GetAttribute,
    GetHtml,
    GetText,
    ListTabs,
    ScreenshotAction,
    Snapshot,
)
from ...base.results import Screenshot
from ..collect import clip
from ..extract import cap, clean_html, normalise_text
from ..failures import FailureClass, first_line
from ..images import image_size
from ..observe import SnapshotRequest
from ..targets import TargetError, shown_any
from .base import Act, Scope, handles

__all__ = ["MAX_SHOWN_HEIGHT", "console_logs", "evaluate", "list_tabs", "read", "screenshot", "snapshot"]

MAX_SHOWN_HEIGHT = 7_900  # the tallest screenshot shown to a model (some refuse images over 8,000 pixels)
MAX_MATCHES = 200  # matches read with all=true; the rest are counted


@handles(GetText, GetHtml, GetAttribute)
async def read(action: GetText | GetHtml | GetAttribute, scope: Scope, act: Act) -> None:
    """Text, cleaned HTML or an attribute of the page, of a target, or of every match (``all``)."""
    page = scope.page
    t = scope.timeouts
    target: Any = action.target
    if target is None:
        locs = [page.locator("html" if isinstance(action, GetHtml) else "body")]
    elif action.all and getattr(target, "selector", None):
        where: Any = page.frame_locator(target.frame) if getattr(target, "frame", None) else page
        try:
            await where.locator(target.selector).first.wait_for(state="attached", timeout=t.action * 1000)
        except PlaywrightError as e:
            raise TargetError(f"nothing on the page matches the {shown_any(target)}.") from e
        locs = await where.locator(target.selector).all()
    else:
        locs = [await scope.targets.locate(target)]

    async def one(loc: Locator) -> str:
        if isinstance(action, GetText):
            return normalise_text(await loc.inner_text(timeout=t.action * 1000))
        if isinstance(action, GetHtml):
            html = await loc.evaluate("(el) => el.outerHTML", timeout=t.action * 1000)
            return clean_html(str(html), int(action.depth or 4))
        value = await loc.get_attribute(str(action.attribute), timeout=t.action * 1000)
        return "(no such attribute)" if value is None else value

    parts = [await scope.bounds.bounded(one(loc), t.action + 1) for loc in locs[:MAX_MATCHES]]
    if action.all:
        text = "\n".join(f"{i + 1}. {p}" for i, p in enumerate(parts))
        if len(locs) > MAX_MATCHES:
            text += f"\n… ({len(locs) - MAX_MATCHES} more matches)"
    else:
        text = parts[0] if parts else ""
    act.extract = cap(text, scope.settings.max_extract_chars)


@handles(ConsoleLogs)
async def console_logs(action: ConsoleLogs, scope: Scope, act: Act) -> None:
    await scope.watch.catch_up(scope.settings.timeouts.probe)
    entries, cut = scope.watch.console_log.take()
    act.extract = "\n".join(e.line() for e in entries) or "(no console entries since the last time)"
    act.notes += cut


@handles(ListTabs)
async def list_tabs(action: ListTabs, scope: Scope, act: Act) -> None:
    page = scope.page
    act.extract = "\n".join(await scope.tabs.lines()) or f"one tab: {scope.tabs.ids.get(page, 't1')}"


def script_forms(script: str) -> tuple[str, str]:
    """The two readings of a script: as one expression, and as the body of an async function.

    The newline before each closing bracket ends a trailing ``//`` comment.
    """
    return f"({script}\n)", f"(async () => {{ {script}\n}})"


async def _syntax_error(cdp: Any, source: str) -> str | None:
    """What the page's engine says is wrong with ``source``, parsed but not run; None when it parses.

    DevTools' own compiler is used (its Runtime domain enabled only meanwhile, so that this
    session is not sent the page's console) because the page's content security policy may
    forbid ``new Function`` and ``eval``.
    """
    compiled = await cdp.send(
        "Runtime.compileScript", {"expression": source, "sourceURL": "", "persistScript": False}
    )
    details = compiled.get("exceptionDetails")
    if details is None:
        return None
    described = (details.get("exception") or {}).get("description") or details.get("text") or "a syntax error"
    lines = str(described).strip().splitlines()
    return lines[0] if lines else "a syntax error"


@handles(Evaluate)
async def evaluate(action: Evaluate, scope: Scope, act: Act) -> None:
    """The script run in the page, its result as JSON, capped.

    The page's engine decides what the script is: if it parses as one expression it is one (a
    function expression is then called), otherwise it is the body of an async function, which
    ``return``s its result. A script that is neither is a syntax error, said as such and not run.
    """
    t = scope.timeouts
    page = scope.page
    expression, body = script_forms(str(action.script).strip())
    cdp = await scope.tabs.ensure_cdp()
    await scope.bounds.bounded(cdp.send("Runtime.enable"), t.action)
    try:
        run = expression
        if await scope.bounds.bounded(_syntax_error(cdp, expression), t.action) is not None:
            run = body
            wrong = await scope.bounds.bounded(_syntax_error(cdp, body), t.action)
            if wrong is not None:
                act.extract = f"the script is not valid JavaScript, so it was not run: {clip(wrong, 500)}"
                return
    finally:
        await scope.bounds.bounded(cdp.send("Runtime.disable"), t.action)
    try:
        value = await scope.bounds.bounded(page.evaluate(run), t.action)
    except PlaywrightError as e:
        if scope.watch.classify(e) is not FailureClass.PAGE:
            raise
        act.extract = f"the script threw: {clip(first_line(e), 500)}"
        return
    if value is None and run is body:
        act.notes.append("the script gave no value: as a function body, it needs `return` to give one")
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(value)
    act.extract = cap(text, scope.settings.max_extract_chars)


@handles(Snapshot)
async def snapshot(action: Snapshot, scope: Scope, act: Act) -> None:
    act.snapshot = SnapshotRequest(action.target, action.depth, action.find)


@handles(ScreenshotAction)
async def screenshot(action: ScreenshotAction, scope: Scope, act: Act) -> None:
    """A full-page or element screenshot; with a path, also saved inside the workspace.

    The model is shown at most the top ``MAX_SHOWN_HEIGHT`` pixels (models refuse taller
    images); the file saved with a path is the whole of it.
    """
    t = scope.timeouts
    c = scope.settings
    page = scope.page
    kind: Literal["png", "jpeg"] = "jpeg" if action.format == "jpeg" else "png"
    loc = None
    if action.target is not None:
        loc = await scope.targets.locate(action.target)
        data = await scope.bounds.bounded(
            loc.screenshot(type=kind, timeout=t.screenshot * 1000), t.screenshot + 1
        )
    elif action.full_page:
        data = await scope.bounds.bounded(
            page.screenshot(type=kind, full_page=True, timeout=t.screenshot * 1000), t.screenshot + 1
        )
    else:
        return  # the observation's own screenshot is the answer
    w, h = image_size(data)
    notes = [f"the screenshot is {w}x{h} pixels"]
    shown = data
    if h > MAX_SHOWN_HEIGHT:
        left, top = 0.0, 0.0
        if loc is not None:
            box = await scope.bounds.bounded(loc.bounding_box(timeout=t.action * 1000), t.action + 1)
            sx, sy = await scope.bounds.bounded(page.evaluate("() => [scrollX, scrollY]"), t.action)
            left, top = (box["x"] + sx, box["y"] + sy) if box else (0.0, 0.0)
        scale = c.device_scale_factor
        area = {"x": left, "y": top, "width": w / scale, "height": MAX_SHOWN_HEIGHT / scale}
        shown = await scope.bounds.bounded(
            page.screenshot(type=kind, full_page=True, clip=area, timeout=t.screenshot * 1000),  # type: ignore[arg-type]
            t.screenshot + 1,
        )
        notes = [f"the screenshot is {w}x{h} pixels; you are shown its top {MAX_SHOWN_HEIGHT:,} pixels"]
    sw, sh = image_size(shown)
    act.screenshot = Screenshot(data=shown, format=kind, width=sw, height=sh)
    act.notes += notes
    if action.path is None:
        return
    if c.workspace is None:
        raise TargetError("screenshots can be saved only inside the workspace, and this session has none.")
    path = action.path
    dest = (Path(path) if Path(path).is_absolute() else c.workspace / path).resolve()
    root = c.workspace.resolve()
    if dest != root and root not in dest.parents:
        raise TargetError(f"{clip(str(path), 120)!r} is outside the workspace ({root}).")
    dest.parent.mkdir(parents=True, exist_ok=True)
    await asyncio.to_thread(dest.write_bytes, data)
    act.notes.append(f"the whole screenshot ({w}x{h} pixels) was saved as {dest}")
