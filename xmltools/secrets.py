"""Secrets by name: ``{secret:NAME}`` in a call's value, the value itself only in the browser.

The host gives ``secrets={"PASSWORD": "hunter2"}``.  The model writes
``{secret:PASSWORD}`` where the value belongs (``<text>{secret:PASSWORD}</text>``);
the browser receives ``hunter2``; everything the model reads back and every
recording show ``{secret:PASSWORD}`` instead of the value, and the forms a
page or an address gives it (percent-encoded, HTML-escaped) too.

A recording lists the names the host gave in its header.  A replay fills those
placeholders again from the secrets it is given, or from the environment
variable ``XMLTOOLS_SECRET_<NAME>``: only that prefix is read, so a transcript
from elsewhere cannot make a replay type ``{secret:HOME}`` or any other
variable of this machine into a page.  Pure: no browser, no templates.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

from .errors import UsageError

__all__ = [
    "ENV_PREFIX",
    "REDACTED",
    "SECRET",
    "Hider",
    "check_secret_names",
    "fill",
    "hide",
    "names_in",
    "placeholder",
    "resolve",
]

SECRET = re.compile(r"\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENV_PREFIX = "XMLTOOLS_SECRET_"  # the configuration leaves these variables alone
REDACTED = "[redacted]"  # what an unnamed secret (an API key given as a plain value) is written as


def placeholder(name: str) -> str:
    return "{secret:" + name + "}"


def check_secret_names(secrets: Mapping[str, str]) -> None:
    """A host error for a name that a placeholder cannot spell, or a value that is not a string."""
    for name, value in secrets.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise UsageError(f"a secret's name is letters, digits and _, not starting with a digit: {name!r}")
        if not isinstance(value, str):
            raise UsageError(f"the secret {name} is a str, not {type(value).__name__}")


def names_in(text: str) -> list[str]:
    """The secret names a text's placeholders use, in order of first use."""
    return list(dict.fromkeys(m.group(1) for m in SECRET.finditer(text)))


def fill(text: str, secrets: Mapping[str, str]) -> str:
    """The text with each ``{secret:NAME}`` replaced by its value (names not given are left as written)."""
    if "{secret:" not in text:
        return text
    return SECRET.sub(lambda m: secrets.get(m.group(1), m.group(0)), text)


def _forms(value: str) -> dict[str, None]:
    """The value as written, and as an address or a page would show it."""
    return dict.fromkeys([value, quote(value), quote(value, safe=""), quote_plus(value), html.escape(value)])


class Hider:
    """Replaces every secret value in a text by its stand-in, in one pass.

    ``named`` values become ``{secret:NAME}``; ``plain`` ones ``[redacted]``.
    One regular expression, the longest values first, so that a secret holding
    another is replaced whole and a placeholder just written is never searched
    again (a secret ``"secret"`` cannot break ``{secret:PASSWORD}``).
    """

    def __init__(self, named: Mapping[str, str], plain: Iterable[str] = ()) -> None:
        table: dict[str, str] = {}
        pairs = [(v, placeholder(k)) for k, v in named.items()] + [(v, REDACTED) for v in plain]
        for value, stand_in in pairs:
            for form in _forms(value) if value else ():
                table.setdefault(form, stand_in)
        self._table = table
        ordered = sorted(table, key=len, reverse=True)
        self._re = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __bool__(self) -> bool:
        return self._re is not None

    def __call__(self, text: str) -> str:
        if self._re is None or not text:
            return text
        return self._re.sub(lambda m: self._table[m.group(0)], text)


def hide(text: str, secrets: Mapping[str, str]) -> str:
    """The text with each secret's value replaced by its placeholder (see :class:`Hider`)."""
    return Hider(secrets)(text)


def resolve(
    names: Iterable[str], given: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The value of each name: from ``given``, else the variable ``XMLTOOLS_SECRET_<NAME>``.

    A name found in neither is a :class:`~xmltools.errors.UsageError` that names them all.
    """
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    missing: list[str] = []
    for name in dict.fromkeys(names):
        if name in given:
            out[name] = given[name]
        elif ENV_PREFIX + name in env:
            out[name] = env[ENV_PREFIX + name]
        else:
            missing.append(name)
    if missing:
        listed = ", ".join(missing)
        raise UsageError(
            f"the transcript uses the secret{'s' if len(missing) > 1 else ''} {listed}:"
            f" give {'them' if len(missing) > 1 else 'it'} (secrets={{...}}, --secret NAME=VALUE)"
            f" or set {', '.join(ENV_PREFIX + n for n in missing)}"
        )
    check_secret_names(out)
    return out
