"""What is collected from a page between two observations, held within its caps, and the one cut.

A page can log a million console lines, raise thousands of dialogs or set a
title of a megabyte; the model must never receive that.  The collectors here
keep memory bounded while the page misbehaves (the first and the last entries,
and a count of what was left out) and every cut is stated in a note;
:func:`clip` is the cut every text taken from a page gets.  Pure Python: must
not import Playwright, so the caps are tested without a browser.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..base.quoting import cut
from ..base.results import ConsoleEntry
from .settings import Caps

__all__ = ["ConsoleCollector", "NoteCollector", "clip"]


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, saying how much was left out."""
    return cut(text, limit)


class ConsoleCollector:
    """Console entries since the last observation: bounded, with consecutive repeats folded."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self._head: list[tuple[ConsoleEntry, int]] = []
        self._tail_max = max(1, caps.console_entries // 2)
        self._head_max = max(0, caps.console_entries - self._tail_max)
        self._tail: deque[tuple[ConsoleEntry, int]] = deque(maxlen=self._tail_max)
        self._dropped = 0

    def add(self, type_: str, text: str) -> None:
        entry = ConsoleEntry(type=type_, text=clip(text, self.caps.console_entry_chars))
        last = self._tail if self._tail else self._head
        if last and last[-1][0] == entry:
            last[-1] = (entry, last[-1][1] + 1)
            return
        if len(self._head) < self._head_max:
            self._head.append((entry, 1))
            return
        if len(self._tail) == self._tail_max:
            self._dropped += 1
        self._tail.append((entry, 1))

    def skip(self, count: int) -> None:
        """``count`` entries went by unseen: they count as left out."""
        self._dropped += count

    def clear(self) -> None:
        self._head.clear()
        self._tail.clear()
        self._dropped = 0

    def take(self) -> tuple[tuple[ConsoleEntry, ...], list[str]]:
        """The entries to report, and the notes that state any cut.  Empties the collector."""
        entries = []
        budget = self.caps.console_chars
        over = 0
        for e, n in (*self._head, *self._tail):
            entry = _folded(e, n)
            if len(entry.text) > budget:
                over += 1
                continue
            budget -= len(entry.text)
            entries.append(entry)
        notes = []
        if self._dropped:
            notes.append(
                f"{self._dropped:,} console entries between the first {len(self._head)} and the last"
                f" {len(self._tail)} were left out"
            )
        if over:
            notes.append(
                f"{over} more console entries were left out: together they passed"
                f" {self.caps.console_chars:,} characters"
            )
        self.clear()
        return tuple(entries), notes


def _folded(entry: ConsoleEntry, count: int) -> ConsoleEntry:
    if count == 1:
        return entry
    return ConsoleEntry(type=entry.type, text=f"{entry.text} (repeated {count:,} times)")


@dataclass
class _Dialogs:
    count: int
    first: str
    last: str


class NoteCollector:
    """Notes since the last observation: identical notes and dialogs are folded into counts."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self._notes: dict[str, int] = {}  # in order of first appearance
        self._dialogs: dict[str, _Dialogs] = {}

    def add(self, note: str) -> None:
        note = clip(note, self.caps.note_chars)
        if note in self._notes or len(self._notes) < self.caps.notes * 4:
            self._notes[note] = self._notes.get(note, 0) + 1
        else:
            self._notes["(more notes were left out)"] = 1

    def dialog(self, kind: str, message: str) -> None:
        msg = clip(message, 200)
        seen = self._dialogs.setdefault(kind, _Dialogs(0, msg, msg))
        seen.count += 1
        seen.last = msg

    def clear(self) -> None:
        self._notes.clear()
        self._dialogs.clear()

    def take_dialogs(self) -> list[str]:
        """What the dialogs since the last observation said, one line a kind.  Forgets them."""
        lines = self._dialog_lines()
        self._dialogs.clear()
        return lines

    def _dialog_lines(self) -> list[str]:
        return [
            f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} dialog was dismissed: {d.first!r}"
            if d.count == 1
            else f"{d.count:,} {kind} dialogs were dismissed"
            f" (the first said {d.first!r}, the last {d.last!r})"
            for kind, d in self._dialogs.items()
        ]

    def take(self, extra: list[str] | None = None) -> tuple[str, ...]:
        """The notes to report (dialogs first), capped.  Empties the collector."""
        for note in extra or ():
            self.add(note)
        out = self._dialog_lines()
        for note, n in self._notes.items():
            out.append(note if n == 1 else f"{note} ({n:,} times)")
        if len(out) > self.caps.notes:
            left = len(out) - (self.caps.notes - 1)
            out = [*out[: self.caps.notes - 1], f"{left:,} more notes were left out"]
        self.clear()
        return tuple(out)
