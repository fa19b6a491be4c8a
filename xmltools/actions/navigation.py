"""Navigation and tabs: navigate, back, forward, reload, open_tab, list_tabs, switch_tab and close_tab.

:class:`InTab` wraps an action with the tab it runs in, for the dialects whose
every call names its tab (Aleph's ``tab_id``).

Imports only the package's own foundation (base, formats, model); never
Playwright or Jinja2.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from pydantic import ValidationInfo, field_validator

from ..base.quoting import quoted
from .base import WAIT_UNTIL, Facts, context_of
from .formats import check_url, parse_tab
from .model import ActionModel

__all__ = [
    "Back",
    "CloseTab",
    "Forward",
    "InTab",
    "ListTabs",
    "Navigate",
    "OpenTab",
    "Reload",
    "SwitchTab",
    "facts_of",
]


class Navigate(ActionModel):
    """Open ``url`` in the current tab; ``wait_until`` says which point of the load to wait for."""

    action: Literal["navigate"] = "navigate"
    url: str
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] | None = None

    category = "navigate"
    facts = Facts(loads_page=True, opens_address=True)
    summary = "open a URL in the current tab"
    params = ("url", "wait_until")
    required = ("url",)
    example = MappingProxyType({"url": "http://localhost:3000/cart"})

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str, info: ValidationInfo) -> str:
        return check_url(v.strip(), context_of(info))

    @field_validator("wait_until", mode="before")
    @classmethod
    def _until(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip().lower()
        if s not in WAIT_UNTIL:
            raise ValueError(f"{quoted(v, 40)} is not a point to wait for: write {', '.join(WAIT_UNTIL)}")
        return s


class Back(ActionModel):
    action: Literal["back"] = "back"

    category = "navigate"
    facts = Facts(loads_page=True)
    summary = "go back one page in the tab's history"


class Forward(ActionModel):
    action: Literal["forward"] = "forward"

    category = "navigate"
    facts = Facts(loads_page=True)
    summary = "go forward one page in the tab's history"


class Reload(ActionModel):
    action: Literal["reload"] = "reload"

    category = "navigate"
    facts = Facts(loads_page=True)
    summary = "load the current page again"


class OpenTab(ActionModel):
    """Open ``url`` in a new tab, which becomes the current one."""

    action: Literal["open_tab"] = "open_tab"
    url: str

    category = "navigate"
    facts = Facts(loads_page=True, opens_address=True)
    summary = "open a URL in a new tab, which becomes the current one"
    params = ("url",)
    required = ("url",)
    example = MappingProxyType({"url": "http://localhost:3000/help"})

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str, info: ValidationInfo) -> str:
        return check_url(v.strip(), context_of(info))


def _tab_id(v: object) -> object:
    return parse_tab(v) if isinstance(v, str) else v


class ListTabs(ActionModel):
    action: Literal["list_tabs"] = "list_tabs"

    category = "read"
    facts = Facts()
    summary = "list the open tabs with their ids, URLs and titles"


class SwitchTab(ActionModel):
    """Make ``tab`` (``t2``) the current tab."""

    action: Literal["switch_tab"] = "switch_tab"
    tab: str

    category = "session"
    facts = Facts(loads_page=True)
    summary = "make another tab the current one"
    params = ("tab",)
    required = ("tab",)
    example = MappingProxyType({"tab": "t2"})

    check_tab = field_validator("tab", mode="before")(_tab_id)


class CloseTab(ActionModel):
    """Close ``tab``, or the current tab; closing the last one ends the session."""

    action: Literal["close_tab"] = "close_tab"
    tab: str | None = None

    category = "session"
    facts = Facts(loads_page=True)
    summary = "close a tab, or the current one"
    params = ("tab",)
    example = MappingProxyType({"tab": "t2"})

    check_tab = field_validator("tab", mode="before")(_tab_id)


@dataclass(frozen=True)
class InTab:
    """An action to run in one tab, for dialects whose every call names its tab (Aleph's tab_id)."""

    tab: str
    inner: ActionModel

    @property
    def action(self) -> str:
        return str(getattr(self.inner, "action", ""))


def facts_of(action: object) -> Facts:
    """What an action declares of itself, in a named tab or not; ``Facts()`` for anything else."""
    inner = action.inner if isinstance(action, InTab) else action
    return inner.facts if isinstance(inner, ActionModel) else Facts()
