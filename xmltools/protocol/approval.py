"""The approval policy: each call's category, and the host's answer to it.

Every browser action has one category, which its model declares
(``Click.category == "mutate"``; see :mod:`xmltools.actions`); a host tool
may declare one too (``Tool(category=…)``; without one it is not gated).  The
categories:

========== ===============================================================
read       looks: reads the page, scrolls, hovers, waits, lists the tabs
navigate   loads a page, in the current tab or in a new one
input      enters values: text, keys, options, files
mutate     acts on elements: clicks, drags
script     runs the model's own JavaScript in the page
session    ends or switches: closes the browser or a tab, switches tabs
========== ===============================================================

:data:`ACTION_CATEGORIES` is derived from the models; this module keeps no
list of action names.

The host gives a rule per category: ``allow``, ``deny`` or ``ask``.  A
category it leaves out is allowed, except ``script``, which asks.  When a
rule says ask and the host gave a callback, the callback decides the call:
``callback(call, category)`` returns :class:`Allow`, :class:`Deny` (with a
reason) or :class:`Ask` (with a prompt), and may be async.  An :class:`Ask`
that is still standing is the host's to answer: the interpreter holds the call
in ``Turn.approval_required`` until ``approve()`` or ``deny()``.

The model reads a denial as "denied by policy: <reason>" and a standing
question as "approval required: <prompt>".  Neither is a model mistake.  A
callback that raises, or returns anything else, is the host's error
(:class:`~xmltools.errors.ApprovalError`).  Pure: neither Playwright nor
Jinja2, and nothing but the callback is called.  Imports the action models
(for their declared categories), never the registry or the interpreter.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ..actions import ACTIONS, CATEGORIES, Category
from ..errors import ApprovalError, ConfigError

if TYPE_CHECKING:
    from ..parser import ToolUse

__all__ = [
    "ACTION_CATEGORIES",
    "CATEGORIES",
    "DEFAULT_RULES",
    "Allow",
    "ApprovalPolicy",
    "Ask",
    "Category",
    "Decision",
    "Deny",
    "PendingApproval",
    "Rule",
    "is_named_rule",
]

Rule: TypeAlias = Literal["allow", "deny", "ask"]

# each canonical action's category, as its model declares it
ACTION_CATEGORIES: Mapping[str, Category] = MappingProxyType(
    {name: model.category for name, model in ACTIONS.items()}
)
DEFAULT_RULES: Mapping[Category, Rule] = MappingProxyType(
    {c: ("ask" if c == "script" else "allow") for c in CATEGORIES}
)


@dataclass(frozen=True)
class Allow:
    """Run the call."""


@dataclass(frozen=True)
class Deny:
    """Refuse the call; the model reads the reason."""

    reason: str = "the host does not allow this"


@dataclass(frozen=True)
class Ask:
    """Hold the call for the host; the model reads the prompt if the host does not answer first."""

    prompt: str = "the host has to approve this call first"


Decision: TypeAlias = Allow | Deny | Ask
Callback: TypeAlias = Callable[[Any, Category], "Decision | Awaitable[Decision]"]


@dataclass(frozen=True)
class PendingApproval:
    """A call held for the host's answer: ``it.approve(pending)`` or ``it.deny(pending, reason)``."""

    call: ToolUse
    tool: str
    action: str | None
    category: Category
    prompt: str


def is_named_rule(key: str) -> bool:
    """Whether an approval key names MCP calls (``mcp:SERVER`` or ``mcp:SERVER/TOOL``), not a category."""
    return key.startswith("mcp:") and len(key) > 4


def _default_prompt(tool: str, action: str | None, category: Category) -> str:
    what = f"the {action} action" if action else f"the {tool} tool"
    return f"{what} ({category}) waits for the host's approval"


class ApprovalPolicy:
    """The host's rules per category, and its callback for the calls a rule asks about."""

    def __init__(self, rules: Mapping[str, str] | None = None, callback: Callback | None = None) -> None:
        given = {k: v for k, v in (rules or {}).items() if not is_named_rule(k)}
        # rules on MCP calls by name, which come before their category's: mcp:SERVER/TOOL, mcp:SERVER
        self.named: Mapping[str, Rule] = MappingProxyType(
            {k: v for k, v in (rules or {}).items() if is_named_rule(k)}  # type: ignore[misc]
        )
        unknown = sorted(k for k in given if k not in CATEGORIES)
        if unknown:
            raise ConfigError(
                f"unknown approval categories {unknown}; the categories are: {', '.join(CATEGORIES)}"
            )
        bad = sorted(
            f"{k}={v!r}" for k, v in {**given, **self.named}.items() if v not in ("allow", "deny", "ask")
        )
        if bad:
            raise ConfigError(f"approval rules are allow, deny or ask, not {', '.join(bad)}")
        if callback is not None and not callable(callback):
            raise ConfigError("the approval callback is not callable")
        merged: dict[Category, Rule] = dict(DEFAULT_RULES)
        merged.update(given)  # type: ignore[arg-type]
        self.given = frozenset(given)  # the categories the host ruled on
        self.rules: Mapping[Category, Rule] = MappingProxyType(merged)
        self.callback = callback
        self.closed_reason: str | None = None  # set: every gated call is refused with this reason

    def category_of(self, tool: str, action: str | None, declared: str | None = None) -> Category | None:
        """The category of a browser action (``action`` given) or the one a host tool declared."""
        if action is not None:
            return ACTION_CATEGORIES.get(action)
        if declared is None:
            return None
        if declared not in CATEGORIES:
            raise ConfigError(f"tool {tool!r} declares the unknown category {declared!r}")
        return declared

    def named_rule(self, names: Sequence[str]) -> tuple[str, Rule] | None:
        """The first of ``names`` (most specific first: mcp:SERVER/TOOL, mcp:SERVER) with a rule."""
        return next(((n, self.named[n]) for n in names if n in self.named), None)

    async def decide(
        self,
        call: Any,
        tool: str,
        action: str | None,
        category: Category,
        *,
        asks: bool = False,
        names: Sequence[str] = (),
    ) -> Decision:
        """The answer for one call: by its name's rule (``names``, for an MCP call) or else its
        category's, and by the callback when the rule asks.

        ``asks`` marks an action its dialect has ask by default (Forge's session start): it asks
        unless the host gave a rule for its category.
        """
        if self.closed_reason is not None:  # the run's budget is spent: nothing gated runs any more
            return Deny(self.closed_reason)
        named = self.named_rule(names)
        rule = named[1] if named is not None else self.rules[category]
        if asks and named is None and category not in self.given:
            rule = "ask"
        if rule == "allow":
            return Allow()
        if rule == "deny":
            if named is not None:
                return Deny(f"{named[0].removeprefix('mcp:')} is not allowed in this session")
            return Deny(f"{category} actions are not allowed in this session")
        if self.callback is None:
            return Ask(_default_prompt(tool, action, category))
        try:
            out = self.callback(call, category)
            if inspect.isawaitable(out):
                out = await out
        except Exception as e:
            raise ApprovalError(
                f"the approval callback failed on a {category} call: {type(e).__name__}: {e}"
            ) from e
        if isinstance(out, Ask) and not out.prompt:
            return Ask(_default_prompt(tool, action, category))
        if not isinstance(out, (Allow, Deny, Ask)):
            raise ApprovalError(
                f"the approval callback returned {type(out).__name__}; it must return Allow(), Deny(reason)"
                " or Ask(prompt)"
            )
        return out
