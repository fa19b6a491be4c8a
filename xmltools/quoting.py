"""Quoting the model's own text back to it, shortened: the one helper every message uses.

A value the model wrote (a coordinate, a URL, a key, an action name) can be
any length, up to the parser's limits.  Messages quote it back so the model
sees what was wrong, but never whole when it is long: the first characters, an
ellipsis, and the full length, e.g. ``'11111…' (900,000 characters)``.
Pure: imports nothing of the package.
"""

from __future__ import annotations

__all__ = ["QUOTE_CHARS", "quoted", "shorten"]

QUOTE_CHARS = 80  # how much of a long value is shown


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
