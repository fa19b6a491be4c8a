"""The seeds' dialects as renames: ``aleph``, ``fractal`` and ``forge``.

Each maps its tool's own calls onto the canonical actions (its action names,
its parameter names, the call that opens a session).  Pure data.
"""

from __future__ import annotations

from types import MappingProxyType

from ..actions import (
    Back,
    Click,
    Close,
    CloseTab,
    ConsoleLogs,
    Drag,
    Evaluate,
    ExtractContent,
    Fill,
    FillForm,
    Forward,
    GetHtml,
    GetText,
    Hover,
    Launch,
    ListTabs,
    Navigate,
    OpenTab,
    Press,
    ScreenshotAction,
    Scroll,
    Select,
    Snapshot,
    Type,
    Upload,
    Wait,
)
from ..parser import ToolSyntax
from .forms import ActionForm, Profile, words

__all__ = ["ALEPH", "FORGE", "FRACTAL"]

_ALEPH_TARGET = {"ref_id": "ref"}
_IN_T1 = {"tab_id": "t1"}
ALEPH = Profile(
    "aleph",
    MappingProxyType(
        {
            "start": ActionForm(Launch, ("headless",), example={}, in_tab=False),
            "stop": ActionForm(Close, in_tab=False),
            "open_tab": ActionForm(OpenTab, in_tab=False),
            "close_tab": ActionForm(
                CloseTab,
                ("tab_id",),
                ("tab_id",),
                example={"tab_id": "t2"},
                renames={"tab_id": "tab"},
                in_tab=False,
            ),
            "list_tabs": ActionForm(ListTabs, in_tab=False),
            "navigate": ActionForm(
                Navigate, ("url",), example={**_IN_T1, "url": "http://localhost:3000/cart"}
            ),
            "click": ActionForm(
                Click, ("ref_id", "selector"), example={**_IN_T1, "ref_id": "e12"}, renames=_ALEPH_TARGET
            ),
            "hover": ActionForm(
                Hover, ("ref_id", "selector"), example={**_IN_T1, "ref_id": "e12"}, renames=_ALEPH_TARGET
            ),
            "type": ActionForm(
                Type,
                ("ref_id", "selector", "text"),
                example={**_IN_T1, "ref_id": "e12", "text": " and more"},
                renames=_ALEPH_TARGET,
            ),
            "fill": ActionForm(
                Fill,
                ("ref_id", "selector", "text"),
                example={**_IN_T1, "selector": "#email", "text": "ada@example.com"},
                renames=_ALEPH_TARGET,
            ),
            "scroll": ActionForm(Scroll, ("direction",), example={**_IN_T1, "direction": "down"}),
            "screenshot": ActionForm(ScreenshotAction, ("full_page",), example=_IN_T1),
            "snapshot": ActionForm(Snapshot, (), example=_IN_T1),
            "evaluate": ActionForm(
                Evaluate, ("js",), example={**_IN_T1, "js": "document.title"}, renames={"js": "script"}
            ),
        }
    ),
    (
        ToolSyntax(
            "browser",
            words("action headless url tab_id ref_id selector text direction full_page js"),
            frozenset({"text"}),
        ),
    ),
    "system/browser_aleph.j2",
    tab_param="tab_id",
    opener="start",
    closer="stop",
    open_example={},
    label="browser",
)

_SEL = ("selector",)
FRACTAL = Profile(
    "fractal",
    MappingProxyType(
        {
            "navigate": ActionForm(
                Navigate,
                ("url", "waitUntil"),
                example={"url": "http://localhost:3000/"},
                renames={"waitUntil": "wait_until"},
                defaults={"wait_until": "load"},
                opens=True,
            ),
            "go_back": ActionForm(Back),
            "go_forward": ActionForm(Forward),
            "click": ActionForm(Click, _SEL, _SEL, example={"selector": "#send"}),
            "hover": ActionForm(Hover, _SEL, _SEL, example={"selector": "nav .menu"}),
            "fill": ActionForm(
                Fill,
                ("selector", "value"),
                ("selector", "value"),
                example={"selector": "#email", "value": "ada@example.com"},
                renames={"value": "text"},
            ),
            "select": ActionForm(
                Select,
                ("selector", "value"),
                ("selector", "value"),
                example={"selector": "#size", "value": "Large"},
            ),
            "drag": ActionForm(
                Drag,
                ("selector", "targetSelector"),
                ("selector", "targetSelector"),
                example={"selector": "#card", "targetSelector": "#done"},
                renames={"targetSelector": "to_selector"},
            ),
            "press_key": ActionForm(
                Press, ("key", "selector"), example={"key": "Enter"}, renames={"key": "text"}
            ),
            "delete": ActionForm(Press, _SEL, example={"selector": "#email"}, fixed={"text": "Delete"}),
            "get_visible_text": ActionForm(GetText, _SEL),
            "get_html": ActionForm(
                GetHtml, ("selector", "depth"), example={"selector": "form", "depth": "4"}
            ),
            "screenshot": ActionForm(ScreenshotAction, (), example={}),
            "evaluate": ActionForm(
                Evaluate, ("value",), example={"value": "document.title"}, renames={"value": "script"}
            ),
            "console_logs": ActionForm(ConsoleLogs),
            "iframe_click": ActionForm(
                Click,
                ("frameSelector", "selector"),
                ("frameSelector", "selector"),
                example={"frameSelector": "iframe#pay", "selector": "#confirm"},
                renames={"frameSelector": "frame"},
            ),
            "iframe_fill": ActionForm(
                Fill,
                ("frameSelector", "selector", "value"),
                ("frameSelector", "selector", "value"),
                example={"frameSelector": "iframe#pay", "selector": "#card", "value": "4242"},
                renames={"frameSelector": "frame", "value": "text"},
            ),
            "upload_file": ActionForm(
                Upload,
                ("selector", "filePath"),
                ("selector", "filePath"),
                example={"selector": "#file", "filePath": "report.pdf"},
                renames={"filePath": "path"},
            ),
            "click_and_switch_tab": ActionForm(Click, _SEL, _SEL, example={"selector": "a.help"}),
            "close": ActionForm(CloseTab, (), example={}),
        }
    ),
    (
        ToolSyntax(
            "webBrowser",
            words("action url waitUntil selector value targetSelector key depth frameSelector filePath"),
            frozenset({"value"}),
        ),
    ),
    "system/browser_fractal.j2",
    opener="navigate",
    label="webBrowser",
)

_IN_SHOP = {"session": "shop"}
FORGE = Profile(
    "forge",
    MappingProxyType(
        {
            "start_browser_session": ActionForm(
                Launch,
                ("headless", "viewport"),
                example={"name": "shop"},
                renames={"viewport": "size"},
                session_param="name",
            ),
            "close_browser_session": ActionForm(Close, example={"name": "shop"}, session_param="name"),
            "browser_navigate": ActionForm(Navigate, example={**_IN_SHOP, "url": "http://localhost:3000/"}),
            "browser_click": ActionForm(Click, _SEL, _SEL, example={**_IN_SHOP, "selector": "#send"}),
            "browser_fill_form": ActionForm(FillForm, example={**_IN_SHOP, **FillForm.example}),
            "browser_wait": ActionForm(
                Wait,
                ("selector", "navigation", "timeout"),
                example={**_IN_SHOP, "selector": "#results"},
                renames={"navigation": "url", "timeout": "seconds"},
            ),
            "browser_extract_content": ActionForm(
                ExtractContent, example={**_IN_SHOP, **ExtractContent.example}
            ),
            "browser_screenshot": ActionForm(
                ScreenshotAction, ("selector", "full_page", "path"), example={**_IN_SHOP, "full_page": "true"}
            ),
        }
    ),
    (
        ToolSyntax("start_browser_session", ("name", "headless", "viewport")),
        ToolSyntax("close_browser_session", ("name",)),
        ToolSyntax("browser_navigate", ("session", "url", "wait_until")),
        ToolSyntax("browser_click", ("session", "selector")),
        ToolSyntax("browser_fill_form", ("session", "fields")),
        ToolSyntax("browser_wait", ("session", "selector", "navigation", "timeout")),
        ToolSyntax("browser_extract_content", ("session", "selector", "mode", "attribute", "multiple")),
        ToolSyntax("browser_screenshot", ("session", "selector", "full_page", "path")),
    ),
    "system/browser_forge.j2",
    sessions=True,
    action_param=None,
    session_required=True,
    opener="start_browser_session",
    closer="close_browser_session",
    open_example={},
    ask=frozenset({"start_browser_session"}),
    dynamic_tools=True,
    label="the browser_* tools",
)
