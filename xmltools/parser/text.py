"""The text of one message as it arrives, kept so that any span can be read back.

This module owns ``TextStore``: joined parts of at least ``MERGE`` characters, a
tail of recent chunks, and the scanner's *window* (the end of the text, from
``_wbase`` on).  Memory stays near the message size and reading a span is cheap.
It is pure and imports nothing but the standard library.
"""

from __future__ import annotations

from bisect import bisect_right

__all__ = ["MERGE", "TextStore"]

MERGE = 4096  # recent chunks are joined into one string once they reach this many characters


class TextStore:
    """The text so far.  The scanner (a subclass) owns what the window holds."""

    __slots__ = ("_len", "_parts", "_starts", "_tail", "_tail_start", "_wbase", "_win")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._starts: list[int] = []
        self._tail: list[str] = []
        self._tail_start = 0
        self._len = 0
        self._win = ""
        self._wbase = 0

    def _merge(self) -> None:
        tail = self._tail
        self._starts.append(self._tail_start)
        self._parts.append(tail[0] if len(tail) == 1 else "".join(tail))
        tail.clear()
        self._tail_start = self._len

    def _slice(self, a: int, b: int) -> str:
        """The text from ``a`` to ``b`` (``0 <= a`` and ``b <= len``)."""
        wb = self._wbase
        if a >= wb:
            return self._win[a - wb : b - wb]
        if b <= a:
            return ""
        tail = self._tail
        ts = self._tail_start
        if a >= ts:
            if len(tail) > 1:
                tail[:] = ["".join(tail)]  # in place: feed appends to this very list
            return tail[0][a - ts : b - ts]
        parts = self._parts
        k = bisect_right(self._starts, a) - 1
        s0 = self._starts[k]
        part = parts[k]
        if b - s0 <= len(part):
            return part[a - s0 : b - s0]
        out = [part[a - s0 :]]
        p = s0 + len(part)
        k += 1
        while p < b and k < len(parts):
            part = parts[k]
            out.append(part[: b - p])
            p += len(part)
            k += 1
        if p < b:
            if len(tail) > 1:
                tail[:] = ["".join(tail)]
            out.append(tail[0][: b - ts])
        return "".join(out)

    def _char_before(self, j: int, w: str) -> str:
        """The character before window index ``j`` of window ``w`` ("" at the start)."""
        if j > 0:
            return w[j - 1]
        a = self._wbase
        return self._slice(a - 1, a) if a > 0 else ""
