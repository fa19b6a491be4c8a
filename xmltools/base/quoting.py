"""The one way text is cut for the model, and the cut stated.

Two cases, two helpers, one wording each:

- a value the model wrote (a coordinate, a URL, a key, an action name) is
  quoted back shortened by :func:`shorten` and :func:`quoted`: the first
  characters, an ellipsis and the full length, ``'11111…' (900,000 characters)``;
- anything else too long for the model (a page's title or text, a console
  line, a note, a whole result) is cut by :func:`cut`: what fits, an ellipsis
  and what was left out, ``… (61,707 more characters were left out of 71,758)``.

Pure: imports nothing of the package.
"""

from __future__ import annotations

__all__ = ["CUT_NOTE_CHARS", "QUOTE_CHARS", "cut", "quoted", "shorten"]

QUOTE_CHARS = 80  # how much of a long value is shown
CUT_NOTE_CHARS = 64  # room for the note of a cut: "… (999,999,999 more characters were left out of …)"


def shorten(text: object, limit: int = QUOTE_CHARS) -> str:
    """``text`` as it is when it has at most ``limit`` characters; otherwise its start and its length.

    ``shorten("9" * 900_000)`` is ``"999…9… (900,000 characters)"`` with 80 nines.
    """
    s = str(text)
    if len(s) <= limit:
        return s
    return f"{s[:limit]}… ({len(s):,} characters)"


def quoted(text: object, limit: int = QUOTE_CHARS) -> str:
    """``text`` in single quotes, shortened as :func:`shorten` does, with the length outside the quotes."""
    s = str(text)
    if len(s) <= limit:
        return f"'{s}'"
    return f"'{s[:limit]}…' ({len(s):,} characters)"


def cut(text: str, limit: int, *, keep: int | None = None, newline: bool = False) -> str:
    """``text`` when it has at most ``limit`` characters; otherwise its start, and what was left out.

    The result fits in ``limit`` characters, the note included, unless ``keep``
    says how many characters of the text to keep whole (an extraction keeps
    exactly what the host allowed, and the note comes after it).  ``newline``
    puts the note on a line of its own, after text that has lines.
    """
    if len(text) <= limit:
        return text
    kept = keep if keep is not None else max(0, limit - CUT_NOTE_CHARS)
    sep = "\n" if newline else ""
    return f"{text[:kept]}{sep}… ({len(text) - kept:,} more characters were left out of {len(text):,})"
