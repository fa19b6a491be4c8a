"""What each kind of check reads from its entry in the file: the fields it takes and the one it needs.

The checks themselves (:mod:`.checks`) run on a browser page; this table is
plain data, so that an experiment file is checked whole when it is read, before
any browser or model: a kind that does not exist, a field the kind does not
read (``role`` on a ``url`` check), a field it needs and lacks.  A kind of
one's own, registered with :func:`xmltools.lab.register_check`, is added here
too; it declares its fields, or takes any.  Imports no other module of
:mod:`xmltools.lab`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["KINDS", "CheckShape", "declare_kind"]


@dataclass(frozen=True)
class CheckShape:
    """The fields a kind of check reads besides ``kind`` (None: any), and those of which it needs one."""

    fields: frozenset[str] | None = None
    needs: tuple[str, ...] = ()  # at least one of these is given, and not empty

    def reads(self) -> str:
        return ", ".join(sorted(self.fields)) if self.fields else "no other field"


KINDS: dict[str, CheckShape] = {
    "url": CheckShape(frozenset({"value", "regex"}), ("value",)),
    "text": CheckShape(frozenset({"value", "regex"}), ("value",)),
    "element": CheckShape(frozenset({"role", "name", "value"}), ("role", "value")),
    "aria": CheckShape(frozenset({"value"}), ("value",)),
    "js": CheckShape(frozenset({"value"}), ("value",)),
    "answer": CheckShape(frozenset({"value", "regex", "schema"}), ("value", "schema")),
    "mcp": CheckShape(frozenset({"server", "uri", "tool", "arguments", "value", "regex"}), ("server",)),
    "judge": CheckShape(frozenset({"value"}), ("value",)),
}


def declare_kind(kind: str, fields: Iterable[str] | None = None, needs: Iterable[str] = ()) -> None:
    """Declare a kind of check: the fields it reads (None: any) and those of which it needs one."""
    KINDS[kind] = CheckShape(frozenset(fields) if fields is not None else None, tuple(needs))
