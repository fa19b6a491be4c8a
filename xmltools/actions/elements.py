"""Elements and forms: fill, select, drag, upload, scroll and snapshot, and the dialects' fill_form.

Values.  ``text`` is raw (the parser keeps its spaces).  ``value`` (select)
and ``path`` (upload) are not raw: the parser trims them, then they hold one
item per line, each line trimmed and empty lines dropped, so an option or a
file name cannot begin or end with spaces.  An upload's relative path starts
at the workspace (or, without one, at the first allowed file root).

Imports only the package's own foundation (base, formats, targets, model);
never Playwright or Jinja2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from ..base.quoting import quoted
from .base import (
    DIRECTIONS,
    MAX_FIND_CHARS,
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    MAX_SNAPSHOT_DEPTH,
    Facts,
    context_of,
    text_limit,
)
from .formats import check_upload_paths
from .model import ActionModel
from .targets import DESTINATION_PARAMS, TARGET_PARAMS, Target, check_selector

__all__ = ["Drag", "Fill", "FillForm", "Scroll", "Select", "Snapshot", "Upload"]


class Fill(ActionModel):
    """Replace the value of the ``target`` field with ``text`` (empty clears it)."""

    action: Literal["fill"] = "fill"
    target: Target
    text: str

    category = "input"
    facts = Facts()
    summary = "replace the value of a field"
    target_rule = "required"
    params = (*TARGET_PARAMS, "text")
    required = ("text",)
    example = MappingProxyType({"ref": "e12", "text": "ada@example.com"})
    selector_example = "label=Email"

    @field_validator("text")
    @classmethod
    def _len(cls, v: str, info: ValidationInfo) -> str:
        return text_limit(v, info, empty_ok=True)


class Select(ActionModel):
    """Choose options of the ``target`` select list by value or label (``value``: one option a line)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)
    action: Literal["select"] = "select"
    target: Target
    values: tuple[str, ...] = Field(alias="value")

    category = "input"
    facts = Facts()
    summary = "choose options of a select list"
    target_rule = "required"
    params = (*TARGET_PARAMS, "value")
    required = ("value",)
    example = MappingProxyType({"ref": "e12", "value": "Large"})
    selector_example = "label=Size"

    @field_validator("values", mode="before")
    @classmethod
    def _lines(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        options = [line.strip() for line in v.splitlines() if line.strip()]
        if not options:
            raise ValueError("no option given: put the value or the visible label of an option in <value>")
        if len(options) > MAX_OPTIONS:
            raise ValueError(
                f"{len(options):,} options at once; at most {MAX_OPTIONS} can be chosen in one call"
            )
        long = next((o for o in options if len(o) > MAX_OPTION_CHARS), None)
        if long is not None:
            raise ValueError(
                f"{quoted(long)} is too long for an option (at most {MAX_OPTION_CHARS:,} characters)"
            )
        return tuple(options)


class Drag(ActionModel):
    """Drag ``target`` and drop it on ``to``."""

    action: Literal["drag"] = "drag"
    target: Target
    to: Target

    category = "mutate"
    facts = Facts()
    summary = "drag an element and drop it on another place"
    target_rule = "required"
    destination = True
    params = (*TARGET_PARAMS, *DESTINATION_PARAMS)
    example = MappingProxyType({"ref": "e12", "to_ref": "e15"})
    selector_example = "text=First item"


class Upload(ActionModel):
    """Put files (``path``: one a line) into the ``target`` file input; see :func:`check_upload_paths`."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)
    action: Literal["upload"] = "upload"
    target: Target
    paths: tuple[Path, ...] = Field(alias="path")

    category = "input"
    facts = Facts()
    summary = "put files into a file input"
    target_rule = "required"
    params = (*TARGET_PARAMS, "path")
    required = ("path",)
    example = MappingProxyType({"ref": "e12", "path": "report.pdf"})
    selector_example = "label=Attachment"

    @field_validator("paths", mode="before")
    @classmethod
    def _files(cls, v: object, info: ValidationInfo) -> object:
        if isinstance(v, str):
            v = [line.strip() for line in v.splitlines() if line.strip()]
        if not isinstance(v, (list, tuple)):
            return v
        return check_upload_paths([str(p) for p in v], context_of(info))


class Scroll(ActionModel):
    """Scroll the page one way, or the scroll container of ``target`` (or bring it into view)."""

    action: Literal["scroll"] = "scroll"
    direction: Literal["up", "down", "left", "right"]
    target: Target | None = None

    category = "read"
    facts = Facts()
    summary = "scroll the page, or an element's container, one way"
    target_rule = "optional"
    params = ("direction", *TARGET_PARAMS)
    required = ("direction",)
    example = MappingProxyType({"direction": "down"})

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        d = v.strip().lower()
        if d not in DIRECTIONS:
            raise ValueError(f"{quoted(v, 40)} is not a direction: write up, down, left or right")
        return d


class Snapshot(ActionModel):
    """The page (or ``target``'s part of it) as an accessibility snapshot with refs."""

    action: Literal["snapshot"] = "snapshot"
    target: Target | None = None
    depth: int | None = None  # levels below the root shown; at most MAX_SNAPSHOT_DEPTH
    find: str | None = None  # show only the elements whose line holds this text

    category = "read"
    facts = Facts()
    summary = "the page, or a part of it, as an accessibility snapshot with refs"
    target_rule = "optional"
    params = (*TARGET_PARAMS, "depth", "find")
    example = MappingProxyType({"find": "Sign in"})

    @field_validator("depth", mode="before")
    @classmethod
    def _depth(cls, v: object) -> object:
        if isinstance(v, str):
            s = v.strip()
            if not re.fullmatch(r"[-+]?[0-9]{1,9}", s):
                raise ValueError(f"{quoted(v, 40)} is not a depth: write a whole number of levels, such as 3")
            v = int(s)
        if isinstance(v, int) and not isinstance(v, bool):
            if v < 1:
                raise ValueError(f"a depth of {v} shows nothing: write 1 or more")
            return min(v, MAX_SNAPSHOT_DEPTH)
        return v

    @field_validator("find", mode="before")
    @classmethod
    def _find(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip()
        if not s:
            raise ValueError("nothing to look for: write a text to find, such as the name of a link")
        if len(s) > MAX_FIND_CHARS:
            raise ValueError(f"the text to find is {len(s):,} characters long; at most {MAX_FIND_CHARS}")
        return s


class FillForm(ActionModel):
    """Fill several fields in order: ``fields`` is a JSON object of selector → value."""

    action: Literal["fill_form"] = "fill_form"
    fields: tuple[tuple[str, str], ...]

    category = "input"
    facts = Facts()
    summary = "fill several fields in order"
    params = ("fields",)
    required = ("fields",)
    example = MappingProxyType({"fields": '{"#email": "ada@example.com", "#city": "Oslo"}'})

    @field_validator("fields", mode="before")
    @classmethod
    def _fields(cls, v: object, info: ValidationInfo) -> object:
        if not isinstance(v, str):
            return v
        try:
            data = json.loads(v)
        except json.JSONDecodeError as e:
            raise ValueError(
                f"the fields are not JSON ({e.msg} at character {e.pos});"
                ' write an object such as {"#email": "ada@example.com"}'
            ) from None
        if not isinstance(data, dict) or not data:
            raise ValueError(
                'the fields must be a JSON object of selector to value, such as {"#email": "ada@example.com"}'
            )
        if len(data) > MAX_OPTIONS:
            raise ValueError(f"{len(data):,} fields at once; at most {MAX_OPTIONS} can be filled in one call")
        out: list[tuple[str, str]] = []
        for selector, value in data.items():
            if not isinstance(value, (str, int, float, bool)) or value is None:
                raise ValueError(
                    f"the value for {quoted(selector, 60)} must be text, not {type(value).__name__}"
                )
            text = value if isinstance(value, str) else json.dumps(value)
            out.append((check_selector(selector, "selector"), text_limit(text, info, empty_ok=True)))
        return tuple(out)
