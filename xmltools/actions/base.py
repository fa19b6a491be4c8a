"""What every action shares: the validation context, the limits, the categories, small value checks.

:class:`ActionContext` is what validation knows of the session (its viewport
and the host's rules); a validator reaches it with :func:`context_of`.  The
limits bound every value the model writes.  :data:`CATEGORIES` are the
approval categories an action model declares (:mod:`xmltools.protocol.approval` holds
the host's rules per category), :data:`TargetRule` the ways an action may
take a target, and :class:`Facts` the rest of what it declares.

Pure: imports no action model and no xmltools module but the pure helpers
(quoting, results, urlpolicy); never Playwright or Jinja2.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from pydantic import ValidationInfo

from ..base.quoting import quoted
from ..base.results import Viewport
from ..base.urlpolicy import UrlPolicy

ProfileName: TypeAlias = Literal["roo", "cline", "full", "aleph", "fractal", "forge"]
Category: TypeAlias = Literal["read", "navigate", "input", "mutate", "script", "session"]
CATEGORIES: tuple[Category, ...] = ("read", "navigate", "input", "mutate", "script", "session")
# whether an action takes exactly one of coordinate, ref and selector: it must, it may, or it has no target
TargetRule: TypeAlias = Literal["required", "optional", "none"]

DEFAULT_VIEWPORT = Viewport(width=900, height=600)


@dataclass(frozen=True)
class Facts:
    """What the rest of the package needs to know of an action besides its category, said once.

    Every action model states its own (``facts = Facts(...)``, ``Facts()`` when
    none applies), and a test fails when one does not: a new action is never
    left to a default.
    """

    session: Literal["open", "close"] | None = None  # it opens the browser session, or closes it
    loads_page: bool = False  # it loads, or brings forward, another page (a test waits for no URL after it)
    opens_address: bool = False  # its ``url`` is an address the browser opens (a secret would go there)
    points: Literal["click", "hover"] | None = None  # what it does at a place on the page (drawn in reports)


# -- limits on what the model writes ------------------------------------------------------

MIN_SIDE, MAX_SIDE = 200, 4096
MAX_SHOT_SIDE = 16_384  # the largest screenshot Chromium takes; a bound on the W and H of x,y@WxH
MAX_NUMBER = 1_000_000.0  # a coordinate number beyond this is off any screen
MAX_PATH = 4_096  # PATH_MAX on Linux: no longer file path can be opened
MAX_SELECTOR_CHARS = 2_000  # a selector (or a frame's) longer than this is not one a model means
MAX_REF_CHARS = 32
MAX_OPTIONS = 100  # options one select call may choose (and fields one fill_form call fills)
MAX_OPTION_CHARS = 1_000
MAX_UPLOAD_FILES = 50
MAX_SNAPSHOT_DEPTH = 50  # a deeper depth is taken as this one
MAX_FIND_CHARS = 200
MAX_SCRIPT_CHARS = 20_000
MAX_ATTRIBUTE_CHARS = 200
MAX_HTML_DEPTH = 50
DIRECTIONS = ("up", "down", "left", "right")
WAIT_UNTIL = ("load", "domcontentloaded", "networkidle", "commit")


@dataclass(frozen=True)
class ActionContext:
    """What validation needs to know of the session: the viewport and the host's rules."""

    viewport: Viewport = DEFAULT_VIEWPORT
    allowed_file_roots: tuple[Path, ...] = ()
    allowed_schemes: frozenset[str] = frozenset()  # beyond http, https and file
    max_text_chars: int = 10_000
    allowed_origins: tuple[str, ...] = ()
    blocked_origins: tuple[str, ...] = ()
    allow_link_local: bool = False
    blocked_addresses: tuple[str, ...] = ()
    profile: ProfileName = "roo"
    workspace: Path | None = None  # the session's folder: uploads come from here (or the file roots)
    max_wait_seconds: float = 10.0  # the longest wait the model may ask for

    @property
    def url_policy(self) -> UrlPolicy:
        return UrlPolicy(
            allowed_schemes=self.allowed_schemes,
            allowed_file_roots=self.allowed_file_roots,
            allowed_origins=self.allowed_origins,
            blocked_origins=self.blocked_origins,
            allow_link_local=self.allow_link_local,
            blocked_addresses=self.blocked_addresses,
        )

    @property
    def upload_roots(self) -> tuple[Path, ...]:
        """The folders files may be uploaded from: the workspace first, then the file roots."""
        roots = ((self.workspace,) if self.workspace is not None else ()) + tuple(self.allowed_file_roots)
        return tuple(dict.fromkeys(roots))


def context_of(info: ValidationInfo) -> ActionContext:
    """The session's context a validator was given (``context={"ctx": …}``), or the default one."""
    c = info.context
    found = c.get("ctx") if isinstance(c, Mapping) else None
    return found if isinstance(found, ActionContext) else ActionContext()


# -- small value checks shared by the models ---------------------------------------------

_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def flag(v: object, name: str) -> object:
    """``true``/``false`` (also yes/no, 1/0, on/off) as a bool, or a message that says so."""
    if not isinstance(v, str):
        return v
    s = v.strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise ValueError(f"{quoted(v, 40)} is not true or false: write <{name}>true</{name}> or leave it out")


def whole(v: object, what: str, low: int, high: int) -> object:
    """A whole number written as text, within ``low``..``high`` (a larger one is taken as ``high``)."""
    if isinstance(v, str):
        s = v.strip()
        if not re.fullmatch(r"[-+]?[0-9]{1,9}", s):
            raise ValueError(f"{quoted(v, 40)} is not {what}: write a whole number, such as {low + 2}")
        v = int(s)
    if isinstance(v, int) and not isinstance(v, bool):
        if v < low:
            raise ValueError(f"{what} of {v} is too small: write {low} or more")
        return min(v, high)
    return v


def text_limit(v: str, info: ValidationInfo, *, empty_ok: bool) -> str:
    limit = context_of(info).max_text_chars
    if not v and not empty_ok:
        raise ValueError("the text is empty: put the characters to type inside <text>")
    if len(v) > limit:
        raise ValueError(f"the text is {len(v)} characters long; at most {limit} can be typed at once")
    return v
