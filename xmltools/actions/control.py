"""Control: wait for something on the page, and evaluate a script in it.

Imports only the package's own foundation (base, targets, model); never
Playwright or Jinja2.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Literal

from pydantic import ValidationInfo, field_validator, model_validator

from ..base.quoting import quoted
from .base import MAX_SCRIPT_CHARS, MAX_SELECTOR_CHARS, Facts, context_of
from .model import ActionModel
from .targets import Target, no_point

__all__ = ["Evaluate", "Wait"]


class Wait(ActionModel):
    """Wait for one thing: an element (``state`` visible or hidden), a ``text``, a ``url`` or ``seconds``."""

    action: Literal["wait"] = "wait"
    target: Target | None = None
    state: Literal["visible", "hidden"] | None = None
    text: str | None = None
    url: str | None = None
    seconds: float | None = None

    category = "read"
    facts = Facts()
    summary = "wait for an element, a text, a URL or a number of seconds"
    target_rule = "optional"
    params = ("ref", "selector", "frame", "state", "text", "url", "seconds")
    example = MappingProxyType({"selector": "#results"})
    selector_example = "#results"

    @field_validator("state", mode="before")
    @classmethod
    def _state(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip().lower()
        if s not in ("visible", "hidden"):
            raise ValueError(f"{quoted(v, 40)} is not a state: write visible or hidden")
        return s

    @field_validator("text", "url", mode="before")
    @classmethod
    def _words(cls, v: object, info: ValidationInfo) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip()
        if not s:
            raise ValueError(f"<{info.field_name}> is empty: write what to wait for, or leave it out")
        if len(s) > MAX_SELECTOR_CHARS:
            raise ValueError(
                f"<{info.field_name}> is {len(s):,} characters long; at most {MAX_SELECTOR_CHARS:,}"
            )
        return s

    @field_validator("seconds", mode="before")
    @classmethod
    def _seconds(cls, v: object, info: ValidationInfo) -> object:
        bound = context_of(info).max_wait_seconds
        if isinstance(v, str):
            s = v.strip().lower().removesuffix("s").strip()
            try:
                v = float(s)
            except ValueError:
                raise ValueError(
                    f"{quoted(v, 40)} is not a number of seconds: write one such as 2 or 0.5"
                ) from None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if not math.isfinite(v) or v <= 0:
                raise ValueError(f"a wait of {v:g} seconds is not one: write a number above 0")
            if v > bound:
                raise ValueError(f"a wait of {v:g} seconds is too long: at most {bound:g} here")
        return v

    @model_validator(mode="after")
    def _one(self) -> Wait:
        given = [
            n
            for n, v in (
                ("target", self.target),
                ("text", self.text),
                ("url", self.url),
                ("seconds", self.seconds),
            )
            if v is not None
        ]
        if len(given) != 1:
            what = (
                "nothing"
                if not given
                else " and ".join(("a <ref> or <selector>" if g == "target" else f"<{g}>") for g in given)
            )
            raise ValueError(
                "wait for exactly one thing: an element (<ref> or <selector>), a <text>, a <url>"
                f" or <seconds>; this call gives {what}"
            )
        if self.state is not None and self.target is None:
            raise ValueError("<state> goes only with the element waited for (<ref> or <selector>)")
        no_point(self.target, "wait")
        return self


class Evaluate(ActionModel):
    """Run ``script`` in the page: an expression, or a function body with ``return``."""

    action: Literal["evaluate"] = "evaluate"
    script: str

    category = "script"
    facts = Facts()
    summary = "run JavaScript in the page and read its result"
    params = ("script",)
    required = ("script",)
    example = MappingProxyType({"script": "document.title"})

    @field_validator("script")
    @classmethod
    def _script(cls, v: str) -> str:
        s = v.strip()
        if not s:
            raise ValueError("the script is empty: write an expression, such as document.title")
        if len(s) > MAX_SCRIPT_CHARS:
            raise ValueError(f"the script is {len(s):,} characters long; at most {MAX_SCRIPT_CHARS:,}")
        return s
