"""Targets: what an action acts on, and how the flat target parameters of a call are read.

An action that acts on an element takes exactly one of ``coordinate``
(``x,y``, or ``x,y@WxH`` measured on a WxH screenshot), ``ref`` (copied from
the latest snapshot: ``e12``, or ``f1e3`` inside a frame) or ``selector``
(Playwright's syntax, plus the shortcuts ``label=``, ``placeholder=``,
``alt=``, ``title=`` and ``testid=``; see :func:`selector_kind`), and
``frame`` (the selector of an iframe) only beside a selector.  They become
one :class:`Target`: ``action.target``.  ``drag`` also takes
``to_coordinate``, ``to_ref`` or ``to_selector``: ``action.to``; its
``frame`` applies to each selector of the call.  :func:`target_problem` says
what is wrong with the target parameters of a call before any model sees them.

Imports only :mod:`.base`, :mod:`.formats` and the pure helpers; never the
action models, Playwright or Jinja2.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from ..base.quoting import quoted
from ..base.results import Point
from .base import MAX_REF_CHARS, MAX_SELECTOR_CHARS, context_of
from .formats import parse_coordinate

TargetKind: TypeAlias = Literal["coordinate", "ref", "selector"]
TARGET_KINDS: tuple[TargetKind, ...] = ("coordinate", "ref", "selector")
TARGET_PARAMS = (*TARGET_KINDS, "frame")  # the parameters that name a target
DESTINATION_PARAMS = tuple(f"to_{k}" for k in TARGET_KINDS)  # the place to drop, for drag
SelectorKind: TypeAlias = Literal["playwright", "label", "placeholder", "alt", "title", "testid"]
SELECTOR_SHORTCUTS: dict[str, SelectorKind] = {
    "label": "label",
    "placeholder": "placeholder",
    "alt": "alt",
    "title": "title",
    "testid": "testid",
}
# each shortcut, and the Playwright lookup it stands for (the browser calls it; an export writes it)
LOOKUPS: dict[SelectorKind, str] = {
    "label": "get_by_label",
    "placeholder": "get_by_placeholder",
    "alt": "get_by_alt_text",
    "title": "get_by_title",
    "testid": "get_by_test_id",
}
_REF_RE = re.compile(r"(f[0-9]+)?e[0-9]+")
_REF_AS_SHOWN = re.compile(r"\[?\s*ref\s*=\s*([^\]\s]*)\s*\]?")  # [ref=e12] or ref=e12, copied whole


def selector_kind(selector: str) -> tuple[SelectorKind, str]:
    """Which lookup a selector asks for: ``("label", "Email")`` for ``label=Email``, and so on.

    The five shortcuts ``label=``, ``placeholder=``, ``alt=``, ``title=`` and
    ``testid=`` (any case before the ``=``) stand for Playwright's
    ``get_by_label``, ``get_by_placeholder``, ``get_by_alt_text``,
    ``get_by_title`` and ``get_by_test_id``; the value after the ``=`` is
    trimmed and otherwise kept as written, quotes included (``label="Email"``
    gives ``'"Email"'``, which a caller may read as an exact match).  Every
    other selector, and a shortcut with nothing after its ``=``, is
    ``("playwright", selector)``: CSS, ``text=``, ``role=``, ``xpath=`` and the
    rest of Playwright's syntax, unchanged.
    """
    head, sep, rest = selector.partition("=")
    kind = SELECTOR_SHORTCUTS.get(head.strip().lower()) if sep else None
    value = rest.strip()
    if kind is not None and value:
        return kind, value
    return "playwright", selector


def parse_ref(value: str) -> str:
    """A ref as the snapshot shows it: ``e12``, or ``f1e3`` inside a frame (``[ref=e12]`` is read too)."""
    v = value.strip()
    copied = _REF_AS_SHOWN.fullmatch(v)
    if copied:
        v = copied.group(1)
    if len(v) > MAX_REF_CHARS or not _REF_RE.fullmatch(v):
        raise ValueError(
            f"{quoted(value, 40)} is not a ref. Refs come from the latest snapshot, where an element"
            ' reads like - button "Send" [ref=e12]: copy the part after ref=, such as e12 (or f1e3'
            " for an element inside a frame)"
        )
    return v


def check_selector(value: str, what: Literal["selector", "frame"]) -> str:
    """A selector (or a frame's) as written, trimmed; empty, overlong or a bare shortcut is refused."""
    v = value.strip()
    sample = "iframe#payment" if what == "frame" else 'label=Email, text=Sign in or role=button[name="Send"]'
    if not v:
        raise ValueError(f"the {what} is empty: write one such as {sample}")
    if len(v) > MAX_SELECTOR_CHARS:
        raise ValueError(
            f"the {what} is {len(v):,} characters long; write a shorter one (at most {MAX_SELECTOR_CHARS:,})"
            + (", or use a ref from a snapshot" if what == "selector" else "")
        )
    head, sep, rest = v.partition("=")
    if sep and head.strip().lower() in SELECTOR_SHORTCUTS and not rest.strip():
        raise ValueError(
            f"{quoted(v, 40)} has nothing after the =: write the text to look for, such as label=Email"
        )
    return v


def _listed(params: Collection[str]) -> str:
    tags = [f"<{p}>" for p in params]
    return tags[0] if len(tags) == 1 else ", ".join(tags[:-1]) + " and " + tags[-1]


def target_problem(
    params: Collection[str], action: str | None, *, required: bool, destination: bool = False
) -> tuple[Literal["missing_param", "invalid_param"], str, str] | None:
    """What is wrong with the target parameters a call gives, as ``(code, param, message)``, or None.

    ``params`` are the names of the parameters present.  A target is exactly
    one of coordinate, ref or selector; ``frame`` only beside a selector; with
    ``destination`` (drag), exactly one of to_coordinate, to_ref or to_selector
    as well, and ``frame`` beside any selector of the call.
    """
    given = [k for k in TARGET_KINDS if k in params]
    dest = [f"to_{k}" for k in TARGET_KINDS if f"to_{k}" in params]
    if len(given) > 1:
        return (
            "invalid_param",
            "target",
            f"give one target only: this call has {_listed(given)}; keep the one you mean",
        )
    if required and not given:
        return (
            "missing_param",
            "target",
            (f"the {action} action needs a target: " if action else "a target is one of ")
            + "<ref> with a ref from the latest snapshot, <selector> with a selector such as"
            " label=Email, or <coordinate> with x,y",
        )
    if destination:
        if len(dest) > 1:
            return (
                "invalid_param",
                "to",
                f"give one place to drop only: this call has {_listed(dest)}; keep the one you mean",
            )
        if not dest:
            return (
                "missing_param",
                "to",
                f"the {action or 'drag'} action needs a place to drop: one of <to_ref>, <to_selector> or"
                " <to_coordinate>",
            )
    if "frame" in params and "selector" not in params and "to_selector" not in dest:
        if "ref" in given:
            why = "a ref already knows its frame, so leave <frame> out"
        elif "coordinate" in given:
            why = "a coordinate is a point of the whole viewport, so leave <frame> out"
        else:
            why = "add the <selector> of the element inside that frame"
        return ("invalid_param", "frame", f"<frame> goes only with <selector>: {why}")
    return None


class Target(BaseModel):
    """What an action acts on: exactly one of a point, a ref or a selector (with its frame).

    ``kind`` says which.  ``frame`` (an iframe's selector) is set only with
    ``selector``; a ref already knows its frame.  Selectors are kept as written
    (trimmed); :func:`selector_kind` reads the five shortcuts.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    coordinate: Point | None = None
    ref: str | None = None
    selector: str | None = None
    frame: str | None = None

    @field_validator("coordinate", mode="before")
    @classmethod
    def _coord(cls, v: object, info: ValidationInfo) -> object:
        return parse_coordinate(v, context_of(info).viewport) if isinstance(v, str) else v

    @field_validator("ref", mode="before")
    @classmethod
    def _ref(cls, v: object) -> object:
        return parse_ref(v) if isinstance(v, str) else v

    @field_validator("selector", mode="before")
    @classmethod
    def _selector(cls, v: object) -> object:
        return check_selector(v, "selector") if isinstance(v, str) else v

    @field_validator("frame", mode="before")
    @classmethod
    def _frame(cls, v: object) -> object:
        return check_selector(v, "frame") if isinstance(v, str) else v

    @model_validator(mode="after")
    def _exactly_one(self) -> Target:
        present = [k for k in (*TARGET_KINDS, "frame") if getattr(self, k) is not None]
        problem = target_problem(present, None, required=True)
        if problem is not None:
            raise ValueError(problem[2])
        return self

    @property
    def kind(self) -> TargetKind:
        if self.ref is not None:
            return "ref"
        if self.selector is not None:
            return "selector"
        return "coordinate"

    def __str__(self) -> str:
        if self.ref is not None:
            return f"ref {self.ref}"
        if self.selector is not None:
            where = f" in the frame {quoted(self.frame)}" if self.frame is not None else ""
            return f"selector {quoted(self.selector)}{where}"
        return f"coordinate {self.coordinate}"


def gather_targets(data: Any, *, destination: bool) -> Any:
    """The flat parameters of a call (coordinate, ref, selector, frame, to_…) as ``target`` and ``to``."""
    if not isinstance(data, Mapping):
        return data
    out = dict(data)
    src: dict[str, Any] = {k: out.pop(k) for k in TARGET_KINDS if k in out}
    dst: dict[str, Any] = (
        {k: out.pop(f"to_{k}") for k in TARGET_KINDS if f"to_{k}" in out} if destination else {}
    )
    if "frame" in out:
        frame = out.pop("frame")
        placed = False
        for part in (src, dst):
            if "selector" in part:
                part["frame"] = frame
                placed = True
        if not placed:
            src["frame"] = frame  # and Target says why that is wrong
    for name, part in (("target", src), ("to", dst)):
        if part:
            if name in out:
                raise ValueError(f"the {name} is given twice")
            out[name] = part
    return out


def no_point(target: Target | None, action: str) -> None:
    """An action that needs an element refuses a point."""
    if target is not None and target.kind == "coordinate":
        raise ValueError(
            f"{action} needs an element, not a point: give its <ref> from the latest snapshot or a <selector>"
        )


def all_needs_selector(every: bool, target: Target | None) -> None:
    """``all`` reads every match of a selector, so it needs one."""
    if every and (target is None or target.kind != "selector"):
        raise ValueError(
            "<all>true</all> reads every match of a <selector>: add the selector, or leave <all> out"
        )
