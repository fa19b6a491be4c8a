"""The closest of a set of names to one that is not among them: the "did you mean" of every message.

One helper for every file that names things (``xmltools.toml``, an experiment
file, its check kinds and providers), so that a typo reads the same wherever it
is made.  Pure: imports nothing of xmltools.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest", "did_you_mean"]

CLOSE = 0.6  # how alike two names must be to be offered as the one meant (difflib's ratio)


def closest(name: str, choices: Iterable[str], *, cutoff: float = CLOSE) -> str | None:
    """The choice most like ``name`` (case aside), or None when none is at least ``cutoff`` alike."""
    options = list(choices)
    lowered = {o.lower(): o for o in reversed(options)}  # the first of names alike but for case wins
    found = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[found[0]] if found else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``; did you mean 'x'?`` when a choice is close to ``name``, else nothing."""
    found = closest(name, choices)
    return f"; did you mean {found!r}?" if found is not None else ""
