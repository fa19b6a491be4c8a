"""The classic actions of Cline and Roo-Code: launch, click, hover, type, press, scroll_down, scroll_up,
resize and close.

The ``roo`` profile writes them by coordinates only; the ``full`` profile adds
refs and selectors as targets (declared here, as for every action).

Imports only the package's own foundation (base, formats, targets, model);
never Playwright or Jinja2.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Literal

from pydantic import ValidationInfo, field_validator

from ..base.results import Point, Viewport
from .base import Facts, context_of, flag, text_limit
from .formats import check_url, normalize_keys, parse_size
from .model import ActionModel
from .targets import TARGET_PARAMS, Target

__all__ = ["Click", "Close", "Hover", "Launch", "Press", "Resize", "ScrollDown", "ScrollUp", "Type"]


class Launch(ActionModel):
    """Open the browser at ``url`` (a blank page without one, as some dialects start).

    ``size`` sets the viewport after the start; ``headless`` is what a dialect
    lets the model ask for, and is not obeyed: the host decides.
    """

    action: Literal["launch"] = "launch"
    url: str | None = None
    size: Viewport | None = None
    headless: bool | None = None

    category = "navigate"
    facts = Facts(session="open", loads_page=True, opens_address=True)
    summary = "open the browser at a page"
    params = ("url",)
    required = ("url",)
    example = MappingProxyType({"url": "http://localhost:3000"})

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str | None, info: ValidationInfo) -> str | None:
        return None if v is None else check_url(v.strip(), context_of(info))

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: object) -> object:
        return parse_size(v) if isinstance(v, str) else v

    @field_validator("headless", mode="before")
    @classmethod
    def _headless(cls, v: object) -> object:
        return flag(v, "headless")


class _OnElement(ActionModel):
    """An action on one element: ``target`` is required."""

    target: Target

    target_rule = "required"
    params = TARGET_PARAMS
    example = MappingProxyType({"ref": "e12"})

    @property
    def coordinate(self) -> Point | None:
        """The point of a coordinate target (as in the classic form); None for a ref or a selector."""
        return self.target.coordinate


class Click(_OnElement):
    action: Literal["click"] = "click"

    category = "mutate"
    facts = Facts(points="click")
    summary = "click an element"


class Hover(_OnElement):
    action: Literal["hover"] = "hover"

    category = "read"
    facts = Facts(points="hover")
    summary = "move the mouse onto an element without clicking"


class Type(ActionModel):
    """Type ``text`` where the focus is, or into ``target`` (focused first)."""

    action: Literal["type"] = "type"
    text: str
    target: Target | None = None

    category = "input"
    facts = Facts()
    summary = "type text key by key where the focus is, or into an element"
    target_rule = "optional"
    params = ("text", *TARGET_PARAMS)
    required = ("text",)
    example = MappingProxyType({"text": "hello@example.com"})
    selector_example = "label=Email"

    @field_validator("text")
    @classmethod
    def _len(cls, v: str, info: ValidationInfo) -> str:
        return text_limit(v, info, empty_ok=False)


class Press(ActionModel):
    """Press a key or a combination (``text``), on ``target`` (focused first) when given."""

    action: Literal["press"] = "press"
    text: str
    target: Target | None = None

    category = "input"
    facts = Facts()
    summary = "press a key or a combination, on an element when given"
    target_rule = "optional"
    params = ("text", *TARGET_PARAMS)
    required = ("text",)
    example = MappingProxyType({"text": "Enter"})
    selector_example = "label=Search"

    @field_validator("text")
    @classmethod
    def _keys(cls, v: str) -> str:
        return normalize_keys(v)


class ScrollDown(ActionModel):
    action: Literal["scroll_down"] = "scroll_down"

    category = "read"
    facts = Facts()
    summary = "scroll down by one viewport height"


class ScrollUp(ActionModel):
    action: Literal["scroll_up"] = "scroll_up"

    category = "read"
    facts = Facts()
    summary = "scroll up by one viewport height"


class Resize(ActionModel):
    action: Literal["resize"] = "resize"
    size: Viewport

    category = "read"
    facts = Facts()
    summary = "change the viewport's size"
    params = ("size",)
    required = ("size",)
    example = MappingProxyType({"size": "1280x800"})

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: object) -> object:
        return parse_size(v) if isinstance(v, str) else v


class Close(ActionModel):
    action: Literal["close"] = "close"

    category = "session"
    facts = Facts(session="close")
    summary = "close the browser (or the session named)"
