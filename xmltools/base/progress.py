"""The model's checklist of its task, as a call carried it (Cline's ``task_progress``).

This module owns :class:`TaskProgress`: the checklist as written, which call
gave it, and its items read from the Markdown checkboxes (``- [ ]`` to do,
``- [x]`` done).  The registry finds it, the turn holds it, the transcript
keeps it and the report shows it.  Pure data: it imports nothing of the package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["ChecklistItem", "TaskProgress"]

# a checkbox line: a list marker, a box with a space or an x in it, and the label
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*?)\s*$")


class ChecklistItem(NamedTuple):
    """One line of the checklist: whether it is done, and what it says."""

    done: bool
    label: str


@dataclass(frozen=True)
class TaskProgress:
    """The checklist one call of a message carried: given to the host, never checked, never an error.

    ``text`` is the checklist as the model wrote it (trimmed); ``tool`` the call
    that carried it, ``call_index`` that call's position among the calls of its
    message.  Lines that are not checkboxes stay in ``text`` and are no items.
    """

    text: str
    tool: str = ""
    call_index: int = 0

    @property
    def items(self) -> tuple[ChecklistItem, ...]:
        found = (_ITEM_RE.match(line) for line in self.text.splitlines())
        return tuple(ChecklistItem(m.group(1) != " ", m.group(2)) for m in found if m is not None)

    @property
    def done(self) -> int:
        return sum(1 for item in self.items if item.done)

    @property
    def total(self) -> int:
        return len(self.items)

    def summary(self) -> str:
        """One line: how much of the checklist is done (``2 of 5 done``), or that it has no checkboxes."""
        total = self.total
        if not total:
            return "a checklist without checkboxes"
        return f"{self.done} of {total} done"
