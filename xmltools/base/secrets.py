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
variable of this machine into a page.

A secret may be bound to the sites it is for: ``Secret("hunter2",
origins=["https://app.example.com"])`` is typed only into pages of those
origins, and a call that would fill it anywhere else is refused before it
runs (a look-alike sign-in page gets nothing).  ``Secret.totp(seed)`` is a
one-time code, the current one at each use (pyotp).  A plain string stays
what it was, a secret for any site, and says so once in a warning.

A transcript writer that keeps values out of its file says so while it is
open (:func:`recording_secrets`): a field an interpreter of this process types
one of them into is painted over in its screenshots, as one that received a
``{secret:NAME}`` is, so that the recording shows it as its replay will.
Pure: no browser, no templates.
"""

from __future__ import annotations

import html
import os
import re
import threading
import warnings
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus, urlsplit

from ..errors import UsageError

__all__ = [
    "ENV_PREFIX",
    "REDACTED",
    "SECRET",
    "Hider",
    "Secret",
    "UnscopedSecretWarning",
    "check_secret_names",
    "fill",
    "hide",
    "names_in",
    "origin_of",
    "placeholder",
    "recorded_secrets",
    "recording_ended",
    "recording_secrets",
    "resolve",
]

SECRET = re.compile(r"\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENV_PREFIX = "XMLTOOLS_SECRET_"  # the configuration leaves these variables alone
REDACTED = "[redacted]"  # what an unnamed secret (an API key given as a plain value) is written as


class UnscopedSecretWarning(UserWarning):
    """A secret given as a plain string may be typed into any site (give a Secret with origins)."""


_warned = False


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased, the scheme's own port left out."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


@dataclass(frozen=True)
class Secret:
    """A secret value and the origins it may be typed into (``None``: any, as a plain string).

    ``Secret.totp(seed)`` gives the current one-time code (RFC 6238, through
    pyotp) each time it is used, instead of a fixed value.
    """

    value: str = field(default="", repr=False)
    origins: tuple[str, ...] | None = None
    seed: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.value, str):
            raise UsageError(f"a secret's value is a str, not {type(self.value).__name__}")
        if self.origins is not None:
            if isinstance(self.origins, str):
                raise UsageError("origins is a list of origins, such as ['https://app.example.com']")
            kept = []
            for o in self.origins:
                if o.startswith("mcp:") and len(o) > 4:  # an MCP server, by its configured name
                    kept.append(o)
                    continue
                origin = origin_of(o)
                if not origin.startswith(("http://", "https://")) or origin.endswith("://"):
                    raise UsageError(f"{o!r} is not an origin: write scheme://host[:port], or mcp:SERVER")
                kept.append(origin)
            object.__setattr__(self, "origins", tuple(kept))

    @classmethod
    def totp(cls, seed: str, origins: Iterable[str] | None = None) -> Secret:
        """A one-time code from a base32 seed, the current one at each use."""
        try:
            import pyotp
        except ImportError as e:  # pragma: no cover - a dependency
            raise UsageError("one-time codes need pyotp: pip install pyotp") from e
        try:
            pyotp.TOTP(seed).now()
        except Exception as e:  # a seed that is not base32, or too short
            raise UsageError(f"that TOTP seed is not valid: {e}") from None
        return cls("", tuple(origins) if origins is not None else None, seed)

    def current(self) -> str:
        """The value to type now."""
        if self.seed is None:
            return self.value
        import pyotp

        return str(pyotp.TOTP(self.seed).now())

    def allows(self, url: str) -> bool:
        return self.origins is None or origin_of(url) in self.origins

    def for_server(self, server: str) -> bool:
        """Whether the secret may go to the MCP server ``server``: only when bound to it (``mcp:NAME``)."""
        return self.origins is not None and f"mcp:{server}" in self.origins


def as_secrets(given: Mapping[str, str | Secret]) -> dict[str, Secret]:
    """The host's secrets as :class:`Secret`; plain strings warn, once, that any site may get them."""
    global _warned
    check_secret_names(given)
    out = {name: v if isinstance(v, Secret) else Secret(v) for name, v in given.items()}
    plain = sorted(n for n, v in given.items() if isinstance(v, str))
    if plain and not _warned:
        _warned = True
        warnings.warn(
            f"the secrets {', '.join(plain)} may be typed into any site; bind each to its site with"
            " Secret(value, origins=['https://...'])",
            UnscopedSecretWarning,
            stacklevel=3,
        )
    return out


def fixed_values(given: Mapping[str, str | Secret]) -> dict[str, str]:
    """The values to hide in what is written: each plain string and each bound secret's value (a
    one-time code has no fixed value; the interpreter hides each code once it is typed)."""
    out = {}
    for name, v in given.items():
        if isinstance(v, Secret):
            if v.seed is None:
                out[name] = v.value
        else:
            out[name] = v
    return out


def placeholder(name: str) -> str:
    return "{secret:" + name + "}"


def check_secret_names(secrets: Mapping[str, object]) -> None:
    """A host error for a name that a placeholder cannot spell, or a value that is not a string."""
    for name, value in secrets.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise UsageError(f"a secret's name is letters, digits and _, not starting with a digit: {name!r}")
        if not isinstance(value, str | Secret):
            raise UsageError(f"the secret {name} is a str or a Secret, not {type(value).__name__}")


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
    names: Iterable[str], given: Mapping[str, str | Secret], environ: Mapping[str, str] | None = None
) -> dict[str, str | Secret]:
    """The value of each name: from ``given``, else the variable ``XMLTOOLS_SECRET_<NAME>``.

    A name found in neither is a :class:`~xmltools.errors.UsageError` that names them all.
    """
    env = os.environ if environ is None else environ
    out: dict[str, str | Secret] = {}
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


# the values each open recording keeps out of its file, by recording (a writer; gone with it)
_recording: weakref.WeakKeyDictionary[object, tuple[str, ...]] = weakref.WeakKeyDictionary()
_recording_lock = threading.Lock()


def recording_secrets(recording: object, values: Iterable[str]) -> None:
    """``recording`` (a transcript writer) keeps ``values`` out of its file until
    :func:`recording_ended`: a field they are typed into is painted over in screenshots meanwhile."""
    kept = tuple(v for v in dict.fromkeys(values) if v)
    with _recording_lock:
        if kept:
            _recording[recording] = kept
        else:
            _recording.pop(recording, None)


def recording_ended(recording: object) -> None:
    """``recording`` is closed: its values are no longer masked on its account."""
    with _recording_lock:
        _recording.pop(recording, None)


def recorded_secrets() -> tuple[str, ...]:
    """Every value an open recording of this process keeps out of its file."""
    with _recording_lock:
        return tuple(dict.fromkeys(v for values in _recording.values() for v in values))
