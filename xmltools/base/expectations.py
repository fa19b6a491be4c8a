"""Assertions a recording carries: what must hold on the page at a point of the flow.

A host adds them while recording (``rec.expect_text("Saved")``), a replay
checks every one of them in the live page, and an exported test turns each
into a Playwright ``expect``.  They are data here; the browser checks them
(:mod:`xmltools.browser.verify`).  Pure: no browser, no templates.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

__all__ = ["EXPECTATION_KINDS", "Expectation", "ExpectationFailed"]

ExpectationKind = Literal["text", "element", "value", "url", "aria"]
EXPECTATION_KINDS: tuple[ExpectationKind, ...] = ("text", "element", "value", "url", "aria")


class ExpectationFailed(AssertionError):
    """An assertion added while recording does not hold on the page as it is (nothing was written)."""


class Expectation(BaseModel):
    """One assertion about the page of a session.

    * ``text``: ``value`` is visible on the page (a substring, as Playwright's
      ``get_by_text``; a regular expression with ``regex``);
    * ``element``: an element with ``role`` (and accessible name ``name``, whole) is visible;
    * ``value``: the field ``target`` (a selector in the model's syntax) holds ``value``;
    * ``url``: the page's address is ``value`` (or matches it, with ``regex``);
    * ``aria``: the page's accessibility tree contains the partial ARIA snapshot ``value``
      (YAML, as Playwright's ``toMatchAriaSnapshot``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ExpectationKind
    value: str = ""
    role: str | None = None
    name: str | None = None
    target: str | None = None
    regex: bool = False
    session: str | None = None  # a named browser session; None for the default one

    @field_validator("value")
    @classmethod
    def _no_nul(cls, v: str) -> str:
        if "\x00" in v:
            raise ValueError("an expectation cannot hold a NUL character")
        return v

    @model_validator(mode="after")
    def _complete(self) -> Expectation:
        need = {
            "text": self.value != "",
            "element": bool(self.role),
            "value": bool(self.target),
            "url": self.value != "",
            "aria": self.value.strip() != "",
        }[self.kind]
        if not need:
            what = {
                "text": "the text",
                "element": "a role",
                "value": "the target field",
                "url": "the address",
                "aria": "the ARIA snapshot",
            }[self.kind]
            raise ValueError(f"a {self.kind} expectation needs {what}")
        if self.regex:
            if self.kind not in ("text", "url"):
                raise ValueError("only text and url expectations take a regular expression")
            try:
                re.compile(self.value)
            except re.error as e:
                raise ValueError(f"{self.value!r} is not a regular expression ({e})") from e
        return self

    def describe(self) -> str:
        """One line for reports: ``text "Saved" is visible``."""
        shown = f"/{self.value}/" if self.regex else repr(self.value)
        where = f" (session {self.session})" if self.session else ""
        if self.kind == "text":
            return f"text {shown} is visible{where}"
        if self.kind == "element":
            name = f" {self.name!r}" if self.name else ""
            return f"{self.role}{name} is visible{where}"
        if self.kind == "value":
            return f"{self.target} has the value {self.value!r}{where}"
        if self.kind == "url":
            return f"the address {'matches' if self.regex else 'is'} {shown}{where}"
        first = self.value.strip().splitlines()[0]
        lines = len(self.value.strip().splitlines())
        more = f" (+{lines - 1} lines)" if lines > 1 else ""
        return f"the page contains the ARIA snapshot {first!r}{more}{where}"
