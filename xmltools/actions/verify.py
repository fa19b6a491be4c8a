"""The testing capability: checks the model may make of the page, as a test's assertions.

``verify_text``, ``verify_element``, ``verify_value`` and ``verify_url`` are
offered only when the host turns the ``testing`` capability on
(``capabilities = ["testing"]``).  A check that does not hold is reported to
the model as a failed action (not as its mistake), and a replay fails on it
as on any step that fails.  Imports only the package's own foundation; never
Playwright or Jinja2.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Literal

from pydantic import ValidationInfo, field_validator

from .base import MAX_SELECTOR_CHARS, Facts
from .model import ActionModel
from .targets import TARGET_PARAMS, Target

__all__ = ["VERIFY_ACTIONS", "VerifyElement", "VerifyText", "VerifyUrl", "VerifyValue"]


def _words(v: object, info: ValidationInfo) -> object:
    if not isinstance(v, str):
        return v
    s = v.strip()
    if not s:
        raise ValueError(f"<{info.field_name}> is empty: write what must be on the page")
    if len(s) > MAX_SELECTOR_CHARS:
        raise ValueError(f"<{info.field_name}> is {len(s):,} characters long; at most {MAX_SELECTOR_CHARS:,}")
    return s


class VerifyText(ActionModel):
    """Check that ``text`` is visible on the page (waiting a little for it, as a test does)."""

    action: Literal["verify_text"] = "verify_text"
    text: str

    category = "read"
    facts = Facts()
    summary = "check that a text is visible on the page"
    params = ("text",)
    required = ("text",)
    example = MappingProxyType({"text": "Order saved"})

    _text = field_validator("text", mode="before")(_words)


class VerifyElement(ActionModel):
    """Check that the ``target`` element is on the page and visible."""

    action: Literal["verify_element"] = "verify_element"
    target: Target

    category = "read"
    facts = Facts()
    summary = "check that an element is visible"
    target_rule = "required"
    params = TARGET_PARAMS
    example = MappingProxyType({"selector": 'role=button[name="Save"]'})
    selector_example = 'role=button[name="Save"]'


class VerifyValue(ActionModel):
    """Check that the ``target`` field holds ``value``."""

    action: Literal["verify_value"] = "verify_value"
    target: Target
    value: str

    category = "read"
    facts = Facts()
    summary = "check the value of a field"
    target_rule = "required"
    params = (*TARGET_PARAMS, "value")
    required = ("value",)
    example = MappingProxyType({"selector": "label=Email", "value": "ada@example.com"})
    selector_example = "label=Email"


class VerifyUrl(ActionModel):
    """Check that the page's address is ``url``."""

    action: Literal["verify_url"] = "verify_url"
    url: str

    category = "read"
    facts = Facts()
    summary = "check the page's address"
    params = ("url",)
    required = ("url",)
    example = MappingProxyType({"url": "http://localhost:3000/done"})

    _url = field_validator("url", mode="before")(_words)


VERIFY_ACTIONS = ("verify_text", "verify_element", "verify_value", "verify_url")
