"""The base of every browser action, and what each action declares about itself.

An action model is a frozen pydantic model: its fields are the typed values
of a call, its validators turn the model's text into them (every problem a
``ValueError`` meant for the model), and its class-level data says, once,
what the rest of the package needs to know of it:

- ``category``: the approval category (read, navigate, input, mutate, script,
  session), which :mod:`xmltools.protocol.approval` reads;
- ``summary``: one line on what the action does;
- ``facts``: whether it opens or closes the session, loads a page, opens the
  address in its ``url``, or points at a place (:class:`~.base.Facts`);
- ``target_rule`` (required, optional or none) and ``destination`` (drag):
  how its target is checked before validation;
- ``params``, ``required``, ``example`` and ``selector_example``: the action as
  the canonical (``full``) dialect writes it.  A profile's form of the action
  (:class:`xmltools.profiles.ActionForm`) starts from these and states only
  its dialect's differences.

Imports only :mod:`.base` and :mod:`.targets`; never Playwright or Jinja2.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

from .base import Category, Facts, TargetRule
from .targets import gather_targets

__all__ = ["ActionModel"]


class ActionModel(BaseModel):
    """The base of every browser action: frozen, no unknown fields, targets gathered from flat parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # what each action declares (a concrete action sets category and summary)
    category: ClassVar[Category]
    facts: ClassVar[Facts]  # the rest of what is said of it (each action states its own)
    summary: ClassVar[str] = ""
    target_rule: ClassVar[TargetRule] = "none"
    destination: ClassVar[bool] = False  # drag: a place to drop, too (to_coordinate, to_ref or to_selector)
    # its parameters besides ``action``, as the full dialect writes them, in the order errors name them;
    # ``required`` those it cannot do without (a target is checked by ``target_rule`` instead)
    params: ClassVar[tuple[str, ...]] = ()
    required: ClassVar[tuple[str, ...]] = ()
    example: ClassVar[Mapping[str, str]] = MappingProxyType(
        {}
    )  # a correct call's parameters; a ref when it has a target
    selector_example: ClassVar[str] = 'role=button[name="Send"]'  # shown when the model wrote a selector

    @model_validator(mode="before")
    @classmethod
    def _targets(cls, data: Any) -> Any:
        if "target" not in cls.model_fields:
            return data
        return gather_targets(data, destination=cls.destination)
