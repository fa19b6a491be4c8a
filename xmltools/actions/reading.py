"""Reading the page: get_text, get_html, get_attribute, console_logs and screenshot, and Forge's extract.

Imports only the package's own foundation (base, formats, targets, model);
never Playwright or Jinja2.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import ValidationInfo, field_validator, model_validator

from ..base.quoting import quoted
from .base import MAX_ATTRIBUTE_CHARS, MAX_HTML_DEPTH, ActionContext, Facts, context_of, flag, whole
from .formats import check_save_path
from .model import ActionModel
from .targets import TARGET_PARAMS, Target, all_needs_selector, check_selector

__all__ = ["ConsoleLogs", "ExtractContent", "GetAttribute", "GetHtml", "GetText", "ScreenshotAction"]


class _Reading(ActionModel):
    """Reads the page, or a target; with ``all``, every match of a selector."""

    target: Target | None = None
    all: bool = False

    @field_validator("all", mode="before")
    @classmethod
    def _all(cls, v: object) -> object:
        return flag(v, "all")

    @model_validator(mode="after")
    def _every(self) -> _Reading:
        all_needs_selector(self.all, self.target)
        return self


class GetText(_Reading):
    """The readable, visible text (blocks on lines of their own)."""

    action: Literal["get_text"] = "get_text"

    category = "read"
    facts = Facts()
    summary = "read the visible text of the page, or of an element"
    target_rule = "optional"
    params = (*TARGET_PARAMS, "all")
    example = MappingProxyType({"selector": "main"})
    selector_example = "main"


class GetHtml(_Reading):
    """The cleaned outer HTML, ``depth`` levels deep (4 by default)."""

    action: Literal["get_html"] = "get_html"
    depth: int | None = None

    category = "read"
    facts = Facts()
    summary = "read the cleaned HTML of the page, or of an element"
    target_rule = "optional"
    params = (*TARGET_PARAMS, "depth", "all")
    example = MappingProxyType({"selector": "form", "depth": "3"})
    selector_example = "form"

    @field_validator("depth", mode="before")
    @classmethod
    def _depth(cls, v: object) -> object:
        return whole(v, "a depth", 1, MAX_HTML_DEPTH)


class GetAttribute(_Reading):
    """The value of ``attribute`` on the target (or on every match)."""

    action: Literal["get_attribute"] = "get_attribute"
    attribute: str

    category = "read"
    facts = Facts()
    summary = "read an attribute of an element"
    target_rule = "required"
    params = (*TARGET_PARAMS, "attribute", "all")
    required = ("attribute",)
    example = MappingProxyType({"ref": "e12", "attribute": "href"})
    selector_example = "a.download"

    @field_validator("attribute")
    @classmethod
    def _name(cls, v: str) -> str:
        s = v.strip()
        if not s:
            raise ValueError("no attribute named: write its name, such as href")
        if len(s) > MAX_ATTRIBUTE_CHARS or any(c.isspace() or c in "\"'<>/=" for c in s):
            raise ValueError(
                f"{quoted(s, 60)} is not an attribute name; write one such as href, value or aria-label"
            )
        return s

    @model_validator(mode="after")
    def _needs_target(self) -> GetAttribute:
        if self.target is None:
            raise ValueError("get_attribute needs the element: give its <ref> or a <selector>")
        return self


class ConsoleLogs(ActionModel):
    action: Literal["console_logs"] = "console_logs"

    category = "read"
    facts = Facts()
    summary = "the console messages and page errors since the last time"


class ScreenshotAction(ActionModel):
    """A full-page or element screenshot (``png`` or ``jpeg``), saved inside the workspace with ``path``."""

    action: Literal["screenshot"] = "screenshot"
    target: Target | None = None
    full_page: bool = False
    format: Literal["png", "jpeg"] | None = None
    path: Path | None = None

    category = "read"
    facts = Facts()
    summary = "a screenshot of the whole page or of an element, saved when asked"
    target_rule = "optional"
    params = (*TARGET_PARAMS, "full_page", "format", "path")
    example = MappingProxyType({"ref": "e12"})
    selector_example = "#chart"

    @field_validator("full_page", mode="before")
    @classmethod
    def _full(cls, v: object) -> object:
        return flag(v, "full_page")

    @field_validator("format", mode="before")
    @classmethod
    def _format(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip().lower().lstrip(".")
        s = "jpeg" if s == "jpg" else s
        if s not in ("png", "jpeg"):
            raise ValueError(f"{quoted(v, 40)} is not a format: write png or jpeg")
        return s

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, v: object, info: ValidationInfo) -> object:
        return check_save_path(v, context_of(info)) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _shape(self) -> ScreenshotAction:
        if self.full_page and self.target is not None:
            raise ValueError(
                "a screenshot is of the full page or of one element: leave out <full_page> or the target"
            )
        if self.format is None and self.path is not None:
            fmt = "jpeg" if self.path.suffix.lower() in (".jpg", ".jpeg") else "png"
            object.__setattr__(self, "format", fmt)
        return self


class ExtractContent(ActionModel):
    """Forge's one extraction call: ``mode`` text, html or attribute, of one match or (``multiple``) all."""

    action: Literal["extract"] = "extract"
    selector: str
    mode: Literal["text", "html", "attribute"] = "text"
    attribute: str | None = None
    multiple: bool = False

    category = "read"
    facts = Facts()
    summary = "read the text, HTML or an attribute of one match or of all"
    params = ("selector", "mode", "attribute", "multiple")
    required = ("selector",)
    example = MappingProxyType({"selector": "main", "mode": "text"})

    @field_validator("selector", mode="before")
    @classmethod
    def _sel(cls, v: object) -> object:
        return check_selector(v, "selector") if isinstance(v, str) else v

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, v: object) -> object:
        if isinstance(v, str) and v.strip().lower() not in ("text", "html", "attribute"):
            raise ValueError(f"{quoted(v, 40)} is not a mode: write text, html or attribute")
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("multiple", mode="before")
    @classmethod
    def _multiple(cls, v: object) -> object:
        return flag(v, "multiple")

    def canonical(self, ctx: ActionContext) -> ActionModel:
        """The get_text, get_html or get_attribute action this call stands for."""
        data: dict[str, Any] = {"selector": self.selector, "all": self.multiple}
        if self.mode == "attribute":
            if not self.attribute:
                raise ValueError(
                    "mode attribute needs <attribute>: the name of the attribute to read, such as href"
                )
            return GetAttribute.model_validate({**data, "attribute": self.attribute}, context={"ctx": ctx})
        if self.attribute:
            raise ValueError("<attribute> goes only with mode attribute")
        model = GetText if self.mode == "text" else GetHtml
        return model.model_validate(data, context={"ctx": ctx})
