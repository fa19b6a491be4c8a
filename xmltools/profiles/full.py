"""The ``full`` profile: every canonical action as its model declares it.

Targets by ``coordinate``, ``ref`` or ``selector`` (with ``frame``), the
element and form actions, navigation and tabs, reading the page, ``wait`` and
``evaluate``; every call may also name a ``<session>``.  Pure data.
"""

from __future__ import annotations

from types import MappingProxyType

from ..actions import (
    VERIFY_ACTIONS,
    Back,
    Click,
    Close,
    CloseTab,
    ConsoleLogs,
    Drag,
    Evaluate,
    Fill,
    Forward,
    GetAttribute,
    GetHtml,
    GetText,
    Hover,
    Launch,
    ListTabs,
    Navigate,
    OpenTab,
    Press,
    Reload,
    Resize,
    ScreenshotAction,
    Scroll,
    ScrollDown,
    ScrollUp,
    Select,
    Snapshot,
    SwitchTab,
    Type,
    Upload,
    VerifyElement,
    VerifyText,
    VerifyUrl,
    VerifyValue,
    Wait,
)
from ..parser import ToolSyntax
from .forms import Profile, as_declared, words

__all__ = ["FULL"]

FULL = Profile(
    "full",
    as_declared(
        Launch,
        Snapshot,
        Click,
        Hover,
        Fill,
        Select,
        Type,
        Press,
        Drag,
        Upload,
        Scroll,
        ScrollDown,
        ScrollUp,
        Resize,
        Navigate,
        Back,
        Forward,
        Reload,
        OpenTab,
        ListTabs,
        SwitchTab,
        CloseTab,
        GetText,
        GetHtml,
        GetAttribute,
        ConsoleLogs,
        Wait,
        ScreenshotAction,
        Evaluate,
        VerifyText,
        VerifyElement,
        VerifyValue,
        VerifyUrl,
        Close,
    ),
    (
        ToolSyntax(
            "browser_action",
            words(
                "action url coordinate ref selector frame text value path direction depth find "
                "to_coordinate to_ref to_selector size wait_until tab all attribute state seconds "
                "full_page format script session"
            ),
            frozenset({"text"}),
        ),
    ),
    "system/browser_action_full.j2",
    sessions=True,
    optional=MappingProxyType(dict.fromkeys(VERIFY_ACTIONS, "testing")),
)
