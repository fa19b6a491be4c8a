"""Navigation, tab, reading, wait, screenshot and script actions: their typed models and model-facing errors.

No browser here: test_extract_wait and test_full_actions drive these in Chromium.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.helpers import ba_inline as ba

from xmltools import parse
from xmltools.actions import (
    MAX_HTML_DEPTH,
    MAX_SCRIPT_CHARS,
    CloseTab,
    Evaluate,
    GetAttribute,
    GetHtml,
    GetText,
    Navigate,
    OpenTab,
    ScreenshotAction,
    SwitchTab,
    Wait,
)
from xmltools.parser import ToolUse
from xmltools.tools import ActionContext, CallError, ToolRegistry, ValidCall

REG = ToolRegistry(profile="full")


def check(ctx: ActionContext | None = None, **params: str) -> Any:
    blocks = [b for b in parse(ba(**params), tools=REG) if isinstance(b, ToolUse)]
    got = REG.validate(blocks[0], ctx or ActionContext())
    return got.args if isinstance(got, ValidCall) else got


def error(ctx: ActionContext | None = None, **params: str) -> str:
    got = check(ctx, **params)
    assert isinstance(got, CallError), got
    return got.message


def test_navigate_and_open_tab_go_through_the_url_policy() -> None:
    nav = check(action="navigate", url=" http://localhost:3000/cart ", wait_until="NetworkIdle")
    assert isinstance(nav, Navigate) and nav.url == "http://localhost:3000/cart"
    assert nav.wait_until == "networkidle"
    assert "is not a point to wait for" in error(action="navigate", url="http://a.test/", wait_until="soon")
    ctx = ActionContext(blocked_origins=("http://evil.test",))
    for action in ("navigate", "open_tab"):
        assert "evil.test" in error(ctx, action=action, url="http://evil.test/x")
        assert "javascript" in error(action=action, url="javascript:alert(1)").lower()
    assert isinstance(check(action="open_tab", url="https://example.com/"), OpenTab)
    assert "needs <url>" in error(action="open_tab")


def test_back_forward_reload_list_and_console_take_nothing() -> None:
    for action in ("back", "forward", "reload", "list_tabs", "console_logs"):
        assert check(action=action).action == action
        assert "does not belong to the" in error(action=action, url="http://a.test/")


@pytest.mark.parametrize("written", ["t2", "T2", " 2 ", "t02", "t 2"])
def test_tab_ids_are_read_leniently_and_kept_short(written: str) -> None:
    got = check(action="switch_tab", tab=written)
    assert isinstance(got, SwitchTab) and got.tab == "t2"


def test_a_tab_that_is_not_an_id_is_refused() -> None:
    assert "is not a tab" in error(action="switch_tab", tab="the second one")
    assert "needs <tab>" in error(action="switch_tab")
    closing = check(action="close_tab")
    assert isinstance(closing, CloseTab) and closing.tab is None
    assert check(action="close_tab", tab="t3").tab == "t3"


def test_reading_actions_take_an_optional_target_and_all_needs_a_selector() -> None:
    page = check(action="get_text")
    assert isinstance(page, GetText) and page.target is None and page.all is False
    every = check(action="get_text", selector="li.item", all="yes")
    assert every.all is True and every.target.selector == "li.item"
    assert "reads every match of a <selector>" in error(action="get_text", ref="e3", all="true")
    assert "reads every match of a <selector>" in error(action="get_html", all="true")
    assert "is not true or false" in error(action="get_text", selector="li", all="sometimes")
    assert isinstance(check(action="get_text", coordinate="10,10"), GetText)  # the element at a point


def test_get_html_depth_and_get_attribute() -> None:
    assert check(action="get_html").depth is None
    assert check(action="get_html", depth="999").depth == MAX_HTML_DEPTH
    assert "too small" in error(action="get_html", depth="0")
    assert "is not a depth" in error(action="get_html", depth="deep")
    got = check(action="get_attribute", ref="e4", attribute=" href ")
    assert isinstance(got, GetAttribute) and got.attribute == "href"
    assert "needs <attribute>" in error(action="get_attribute", ref="e4")
    assert "not an attribute name" in error(action="get_attribute", ref="e4", attribute="a b")
    assert "the get_attribute action needs a target" in error(action="get_attribute", attribute="href")
    assert isinstance(check(action="get_html", selector="form", depth="2"), GetHtml)


@pytest.mark.parametrize(
    "params",
    [
        {"selector": "#results"},
        {"ref": "e7", "state": "hidden"},
        {"text": "Saved"},
        {"url": "**/done"},
        {"seconds": "2.5"},
    ],
)
def test_a_wait_for_exactly_one_thing(params: dict[str, str]) -> None:
    assert isinstance(check(action="wait", **params), Wait)


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({}, "this call gives nothing"),
        ({"text": "a", "url": "b"}, "gives <text> and <url>"),
        ({"selector": "#a", "seconds": "1"}, "a <ref> or <selector> and <seconds>"),
        ({"state": "hidden", "text": "x"}, "<state> goes only with the element"),
        ({"selector": "#a", "state": "gone"}, "write visible or hidden"),
        ({"seconds": "11"}, "too long: at most 10 here"),
        ({"seconds": "0"}, "not one: write a number above 0"),
        ({"seconds": "soon"}, "is not a number of seconds"),
        ({"seconds": "nan"}, "not one"),
        ({"text": "   "}, "<text> is empty"),
    ],
)
def test_a_wait_that_is_not_one_says_why(params: dict[str, str], words: str) -> None:
    assert words in error(action="wait", **params)


def test_the_wait_bound_is_the_hosts() -> None:
    assert check(ActionContext(max_wait_seconds=30), action="wait", seconds="25").seconds == 25
    assert "at most 2 here" in error(ActionContext(max_wait_seconds=2), action="wait", seconds="3")
    assert "does not belong" in error(action="wait", coordinate="10,10")


def test_screenshots_full_page_or_an_element_and_a_path_inside_the_workspace(tmp_path: Path) -> None:
    ctx = ActionContext(workspace=tmp_path)
    full = check(ctx, action="screenshot", full_page="true")
    assert isinstance(full, ScreenshotAction) and full.full_page and full.format is None
    el = check(ctx, action="screenshot", selector="#chart", path="shots/chart.JPG")
    assert el.path == tmp_path.resolve() / "shots" / "chart.JPG" and el.format == "jpeg"
    assert check(ctx, action="screenshot", path="a.png", format="jpg").format == "jpeg"
    assert "full page or of one element" in error(ctx, action="screenshot", ref="e2", full_page="true")
    assert "write png or jpeg" in error(ctx, action="screenshot", format="gif")
    assert "outside the workspace" in error(ctx, action="screenshot", path="../out.png")
    assert "outside the workspace" in error(ctx, action="screenshot", path="/etc/passwd")
    (tmp_path / "shots").mkdir(exist_ok=True)
    assert "is a folder" in error(ctx, action="screenshot", path="shots")
    os.symlink("/tmp", tmp_path / "out")
    assert "outside the workspace" in error(ctx, action="screenshot", path="out/x.png")
    assert "has none" in error(action="screenshot", path="a.png")


def test_evaluate_takes_an_expression_or_a_body() -> None:
    got = check(action="evaluate", script="  document.title  ")
    assert isinstance(got, Evaluate) and got.script == "document.title"
    body = "const a = [1, 2]; return a.filter(x => x < 2 && x > 0);"
    assert check(action="evaluate", script=body).script == body  # <, > and && are kept raw
    assert "the script is empty" in error(action="evaluate", script=" ")
    assert f"at most {MAX_SCRIPT_CHARS:,}" in error(action="evaluate", script="1;" * MAX_SCRIPT_CHARS)


@given(st.text(min_size=1, max_size=60))
def test_any_tab_or_seconds_text_gives_a_call_or_an_error_never_a_crash(value: str) -> None:
    for action, param in (("switch_tab", "tab"), ("wait", "seconds"), ("get_html", "depth")):
        got = REG.validate(ToolUse("browser_action", {"action": action, param: value}), ActionContext())
        assert isinstance(got, (ValidCall, CallError))
