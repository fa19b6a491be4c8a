"""What the parser recognises: the tools, their parameters, and the size limits.

This module owns ``ToolSyntax``, ``Vocabulary`` and ``Limits``: frozen settings
that a parser is built with.  It is pure, and must import nothing of the parser
but this package's leaf modules (and neither jinja2, playwright nor pydantic).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import ConfigError

__all__ = ["BROWSER_ACTION", "WS", "HasVocabulary", "Limits", "ToolSyntax", "Vocabulary"]

# JavaScript's String.prototype.trim() whitespace, so that roo mode trims
# exactly as the anchors do.  Default mode uses the same set for consistency.
WS = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*\Z")


@dataclass(frozen=True, slots=True)
class ToolSyntax:
    """What the parser knows of one tool: its name and its parameter names.

    ``raw`` names the parameters that carry free text (such as ``text``): their
    values keep inner spaces (only one leading and one trailing newline are
    removed) and run to the *last* closing tag before the tool's own.
    """

    name: str
    params: tuple[str, ...]
    raw: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ConfigError(f"invalid tool name {self.name!r}: use letters, digits and _ . : -")
        params = tuple(self.params)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "raw", frozenset(self.raw))
        for p in params:
            if not isinstance(p, str) or not _NAME_RE.match(p):
                raise ConfigError(f"tool {self.name!r}: invalid parameter name {p!r}")
        if len(set(params)) != len(params):
            raise ConfigError(f"tool {self.name!r}: a parameter name is listed twice")
        unknown = self.raw - set(params)
        if unknown:
            raise ConfigError(f"tool {self.name!r}: raw parameters {sorted(unknown)} are not parameters")


BROWSER_ACTION = ToolSyntax(
    "browser_action", ("action", "url", "coordinate", "text", "size"), frozenset({"text"})
)
"""The classic ``browser_action`` tool of Cline and Roo-Code: its five parameters, ``text`` kept raw."""


@runtime_checkable
class HasVocabulary(Protocol):
    """Anything that can say which tools exist (a tool registry, for instance)."""

    @property
    def vocabulary(self) -> Vocabulary: ...


class Vocabulary:
    """The set of tools a parser recognises."""

    __slots__ = ("_tools", "all_params", "max_open", "opener_prefixes", "opener_re")

    def __init__(self, tools: Iterable[ToolSyntax] = (BROWSER_ACTION,)) -> None:
        self._tools: dict[str, ToolSyntax] = {}
        for t in tools:
            if not isinstance(t, ToolSyntax):
                raise ConfigError(f"expected ToolSyntax, got {type(t).__name__}")
            if t.name in self._tools:
                raise ConfigError(f"tool {t.name!r} is defined twice")
            self._tools[t.name] = t
        # Roo's vocabulary of parameters is global: any parameter tag of any tool.
        self.all_params: frozenset[str] = frozenset(p for t in self._tools.values() for p in t.params)
        self.max_open = max((len(n) + 2 for n in self._tools), default=2)
        names = sorted(self._tools, key=len, reverse=True)
        alts = "|".join(re.escape(n) for n in names) or "(?!)"
        self.opener_re = re.compile(f"<({alts})>")
        # what the end of a text may be while it could still become an opening tag
        self.opener_prefixes = frozenset("<" + n[:k] for n in names for k in range(len(n) + 1))

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> ToolSyntax:
        return self._tools[name]

    def __iter__(self) -> Iterator[ToolSyntax]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"Vocabulary({list(self._tools)!r})"

    @classmethod
    def coerce(cls, tools: Vocabulary | HasVocabulary | Iterable[ToolSyntax] | None) -> Vocabulary:
        if tools is None:
            return _DEFAULT_VOCAB
        if isinstance(tools, Vocabulary):
            return tools
        if isinstance(tools, HasVocabulary):
            return tools.vocabulary
        if isinstance(tools, (str, bytes)):
            raise ConfigError("tools must be ToolSyntax objects, a Vocabulary or a registry")
        return cls(tools)


_DEFAULT_VOCAB = Vocabulary()


@dataclass(frozen=True, slots=True)
class Limits:
    """Size limits.  Past either one the parser reports a diagnostic; it never raises."""

    max_message_chars: int = 8_000_000
    max_param_chars: int = 1_000_000

    def __post_init__(self) -> None:
        if self.max_message_chars < 1 or self.max_param_chars < 1:
            raise ConfigError("limits must be positive")
