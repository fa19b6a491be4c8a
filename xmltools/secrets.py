"""Secrets by name: ``{secret:NAME}`` in a call's value, the value itself only in the browser.

The host gives ``secrets={"PASSWORD": "hunter2"}``.  The model writes
``{secret:PASSWORD}`` where the value belongs (``<text>{secret:PASSWORD}</text>``);
the browser receives ``hunter2``; everything the model reads back and every
recording show ``{secret:PASSWORD}`` instead of the value.  A replay fills the
placeholders again from the secrets it is given, or from environment variables
of the same names.  Pure: no browser, no templates.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from .errors import UsageError

__all__ = ["SECRET", "check_secret_names", "fill", "hide", "names_in", "resolve"]

SECRET = re.compile(r"\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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


def hide(text: str, secrets: Mapping[str, str]) -> str:
    """The text with each secret's value replaced by its placeholder (the longest values first)."""
    for name, value in sorted(secrets.items(), key=lambda kv: len(kv[1]), reverse=True):
        if value and value in text:
            text = text.replace(value, "{secret:" + name + "}")
    return text


def resolve(
    names: Iterable[str], given: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The value of each name: from ``given``, else the environment variable of that name.

    A name found in neither is a :class:`~xmltools.errors.UsageError` that names them all.
    """
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    missing: list[str] = []
    for name in dict.fromkeys(names):
        if name in given:
            out[name] = given[name]
        elif name in env:
            out[name] = env[name]
        else:
            missing.append(name)
    if missing:
        listed = ", ".join(missing)
        raise UsageError(
            f"the transcript uses the secret{'s' if len(missing) > 1 else ''} {listed}:"
            f" give {'them' if len(missing) > 1 else 'it'} (secrets={{...}}, --secret NAME=VALUE)"
            f" or set the environment variable{'s' if len(missing) > 1 else ''} of that name"
        )
    check_secret_names(out)
    return out
