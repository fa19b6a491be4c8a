"""The canonical browser actions: one pydantic model each, the targets they act on, and the value formats.

A call from the parser is a flat set of parameters (``<ref>e12</ref>``,
``<text>…</text>``).  A profile (:mod:`xmltools.profiles`) says which actions
and parameter names a session offers; the models here turn the values into a
typed action, and every problem into a ``ValueError`` whose message is meant
for the model.  The registry (:mod:`xmltools.tools`) ties the two together.

Targets.  An action that acts on an element takes exactly one of
``coordinate`` (``x,y``, or ``x,y@WxH`` measured on a WxH screenshot), ``ref``
(copied from the latest snapshot: ``e12``, or ``f1e3`` inside a frame) or
``selector`` (Playwright's syntax, plus the shortcuts ``label=``,
``placeholder=``, ``alt=``, ``title=`` and ``testid=``; see
:func:`selector_kind`), and ``frame`` (the selector of an iframe) only beside
a selector.  They become one :class:`Target`: ``action.target``.  ``drag``
also takes ``to_coordinate``, ``to_ref`` or ``to_selector``: ``action.to``;
its ``frame`` applies to each selector of the call.

Values.  ``text`` is raw (the parser keeps its spaces).  ``value`` (select) and
``path`` (upload) are not raw: the parser trims them, then they hold one item
per line, each line trimmed and empty lines dropped, so an option or a file
name cannot begin or end with spaces.  An upload's relative path starts at the
workspace (or, without one, at the first allowed file root).

Pure: neither Playwright nor Jinja2.  The one look at the outside world is the
upload check, which resolves each path (following ``..`` and symlinks) and
asks the file system whether it is a file inside the allowed folders.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeAlias, get_args
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from .quoting import quoted, shorten
from .results import Point, Viewport
from .urlpolicy import UrlPolicy

__all__ = [
    "ACTIONS",
    "DEFAULT_VIEWPORT",
    "DIRECTIONS",
    "MAX_SNAPSHOT_DEPTH",
    "SELECTOR_SHORTCUTS",
    "TARGET_KINDS",
    "WAIT_UNTIL",
    "ActionContext",
    "ActionModel",
    "Back",
    "BrowserAction",
    "Click",
    "Close",
    "CloseTab",
    "ConsoleLogs",
    "Drag",
    "Evaluate",
    "ExtractContent",
    "Fill",
    "FillForm",
    "Forward",
    "GetAttribute",
    "GetHtml",
    "GetText",
    "Hover",
    "InTab",
    "Launch",
    "ListTabs",
    "Navigate",
    "OpenTab",
    "Press",
    "ProfileName",
    "Reload",
    "Resize",
    "ScreenshotAction",
    "Scroll",
    "ScrollDown",
    "ScrollUp",
    "Select",
    "SelectorKind",
    "Snapshot",
    "SwitchTab",
    "Target",
    "Type",
    "Upload",
    "Wait",
    "check_save_path",
    "check_upload_paths",
    "check_url",
    "normalize_keys",
    "parse_coordinate",
    "parse_ref",
    "parse_size",
    "parse_tab",
    "selector_kind",
    "target_problem",
]

ProfileName: TypeAlias = Literal["roo", "full", "aleph", "fractal", "forge"]
DEFAULT_VIEWPORT = Viewport(width=900, height=600)
MIN_SIDE, MAX_SIDE = 200, 4096
MAX_SHOT_SIDE = 16_384  # the largest screenshot Chromium takes; a bound on the W and H of x,y@WxH
_MAX_NUMBER = 1_000_000.0  # a coordinate number beyond this is off any screen
_MAX_PATH = 4_096  # PATH_MAX on Linux: no longer file path can be opened
MAX_SELECTOR_CHARS = 2_000  # a selector (or a frame's) longer than this is not one a model means
MAX_REF_CHARS = 32
MAX_OPTIONS = 100  # options one select call may choose
MAX_OPTION_CHARS = 1_000
MAX_UPLOAD_FILES = 50
MAX_SNAPSHOT_DEPTH = 50  # a deeper depth is taken as this one
MAX_FIND_CHARS = 200
DIRECTIONS = ("up", "down", "left", "right")


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
        )

    @property
    def upload_roots(self) -> tuple[Path, ...]:
        """The folders files may be uploaded from: the workspace first, then the file roots."""
        roots = ((self.workspace,) if self.workspace is not None else ()) + tuple(self.allowed_file_roots)
        return tuple(dict.fromkeys(roots))


def _ctx(info: ValidationInfo) -> ActionContext:
    c = info.context
    found = c.get("ctx") if isinstance(c, Mapping) else None
    return found if isinstance(found, ActionContext) else ActionContext()


# -- parameter formats -------------------------------------------------------------

_NUM = r"[-+]?\d+(?:\.\d+)?"
_COORD_RE = re.compile(rf"\s*({_NUM})\s*,\s*({_NUM})\s*(?:@\s*(\d+)\s*[xX×]\s*(\d+)\s*)?")
_SIZE_RE = re.compile(r"\s*(\d+)\s*(?:,|[xX×])\s*(\d+)\s*")


def parse_coordinate(value: str, viewport: Viewport) -> Point:
    """``x,y`` in viewport pixels, or ``x,y@WxH`` measured on a WxH screenshot (scaled, rounded).

    Every problem is a ``ValueError`` meant for the model, absurd numbers included.
    """
    m = _COORD_RE.fullmatch(value)
    if not m:
        raise ValueError(
            f"{quoted(value)} is not a coordinate: write x,y in pixels (such as 450,300),"
            " or x,y@WxH when you measured on a screenshot of W by H pixels"
        )
    outside = (
        f"outside the viewport, which is {viewport.width}x{viewport.height}:"
        f" x must be 0 to {viewport.width - 1} and y 0 to {viewport.height - 1}"
    )
    x, y = float(m.group(1)), float(m.group(2))  # 400 digits give inf, which is caught just below
    if not (abs(x) <= _MAX_NUMBER and abs(y) <= _MAX_NUMBER):
        raise ValueError(f"{quoted(value)} is far {outside}")
    if m.group(3):
        sw, sh = m.group(3), m.group(4)
        w = int(sw) if len(sw) <= 6 else MAX_SHOT_SIDE + 1  # int() of thousands of digits fails
        h = int(sh) if len(sh) <= 6 else MAX_SHOT_SIDE + 1
        if w < 1 or h < 1:
            raise ValueError(f"{quoted(value)}: the screenshot size after @ must be positive")
        if w > MAX_SHOT_SIDE or h > MAX_SHOT_SIDE:
            raise ValueError(
                f"{quoted(value)}: the screenshot size after @ is too large; give the width and"
                f" height in pixels of the screenshot you measured on (at most {MAX_SHOT_SIDE} each)"
            )
        x = x * viewport.width / w
        y = y * viewport.height / h
    xi, yi = math.floor(x + 0.5), math.floor(y + 0.5)
    if not (0 <= xi < viewport.width and 0 <= yi < viewport.height):
        raise ValueError(f"{xi},{yi} is {outside}")
    return Point(x=xi, y=yi)


def parse_size(value: str) -> Viewport:
    """``W,H`` or ``WxH``, each side from 200 to 4096."""
    m = _SIZE_RE.fullmatch(value)
    if not m:
        raise ValueError(f"{quoted(value)} is not a size: write width and height as 1280x800 or 1280,800")
    for side, digits in (("width", m.group(1)), ("height", m.group(2))):
        n = int(digits) if len(digits) <= 6 else None  # int() of thousands of digits fails
        if n is None or not MIN_SIDE <= n <= MAX_SIDE:
            shown = n if n is not None else shorten(digits, 12)
            raise ValueError(
                f"a {side} of {shown} is out of range: each side must be {MIN_SIDE} to {MAX_SIDE}"
            )
    return Viewport(width=int(m.group(1)), height=int(m.group(2)))


_KEY_ALIASES = {
    "cmd": "Meta",
    "command": "Meta",
    "meta": "Meta",
    "win": "Meta",
    "super": "Meta",
    "ctrl": "Control",
    "control": "Control",
    "shift": "Shift",
    "alt": "Alt",
    "option": "Alt",
    "opt": "Alt",
    "esc": "Escape",
    "escape": "Escape",
    "enter": "Enter",
    "return": "Enter",
    "tab": "Tab",
    "space": "Space",
    "spacebar": "Space",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "capslock": "CapsLock",
    "plus": "+",
}
_MODIFIERS = ("Control", "Alt", "Shift", "Meta")


def normalize_keys(value: str) -> str:
    """A key or a combination (``ctrl+a``, ``cmd+shift+p``) in the form the browser expects."""
    raw = value.strip()
    if not raw:
        raise ValueError("no key given: write a key such as Enter, or a combination such as Control+A")
    tokens = [raw] if raw == "+" else [t.strip() for t in re.split(r"(?<!^)\+(?!$)", raw)]
    keys: list[str] = []
    for tok in tokens:
        low = tok.lower()
        if low in _KEY_ALIASES:
            keys.append(_KEY_ALIASES[low])
        elif re.fullmatch(r"[fF]([1-9]|1[0-9]|2[0-4])", tok):
            keys.append(tok.upper())
        elif len(tok) == 1 and tok.isprintable():
            keys.append(tok)
        else:
            raise ValueError(
                f"{quoted(tok, 40)} is not a key this tool knows: use a single character or a name such as"
                " Enter, Tab, Escape, Backspace, ArrowDown, PageDown, F5, with Control, Alt, Shift or Meta"
            )
    mods = [k for k in keys if k in _MODIFIERS]
    rest = [k for k in keys if k not in _MODIFIERS]
    if len(rest) > 1:
        raise ValueError(f"{quoted(value)} presses {len(rest)} keys at once; combine modifiers with one key")
    if len(set(mods)) != len(mods):
        raise ValueError(f"{quoted(value)} repeats a modifier")
    mods.sort(key=_MODIFIERS.index)
    return "+".join(mods + rest)


def check_url(url: str, ctx: ActionContext) -> str:
    """Allow http and https, file URLs under the host's roots, and other schemes only when allowed."""
    if not url:
        raise ValueError("the URL is empty")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        if not parts.netloc:
            raise ValueError(f"{quoted(url)} has no host: write it in full, such as http://localhost:3000/")
        reason = ctx.url_policy.check(url)
        if reason is not None:
            raise ValueError(f"{quoted(url)} may not be opened: {shorten(reason, 300)}")
        return url
    if scheme == "file":
        if scheme in ctx.allowed_schemes:
            return url
        if "\\" in unquote(parts.path):
            raise ValueError(f"{quoted(url)} has a backslash; write file paths with / only")
        raw_path = unquote(parts.path)
        if len(raw_path) > _MAX_PATH or "\x00" in raw_path:  # resolving 450,000 folders took minutes
            raise ValueError(f"{quoted(url)} is not a file path this system can open")
        path = Path(raw_path).resolve()
        for root in ctx.allowed_file_roots:
            r = root.resolve()
            if path == r or r in path.parents:
                return url
        if not ctx.allowed_file_roots:
            raise ValueError("file URLs are not allowed in this session; use an http or https URL")
        roots = ", ".join(str(r) for r in ctx.allowed_file_roots)
        raise ValueError(f"{quoted(url)} is outside the folders this session may open ({roots})")
    if scheme and scheme in ctx.allowed_schemes:
        return url
    if not scheme:
        raise ValueError(f"{quoted(url)} has no scheme: write it in full, such as http://{shorten(url, 40)}")
    raise ValueError(f"{shorten(scheme, 40)}: URLs are not allowed; use an http or https URL")


# -- targets -----------------------------------------------------------------------------

TargetKind: TypeAlias = Literal["coordinate", "ref", "selector"]
TARGET_KINDS: tuple[TargetKind, ...] = ("coordinate", "ref", "selector")
SelectorKind: TypeAlias = Literal["playwright", "label", "placeholder", "alt", "title", "testid"]
SELECTOR_SHORTCUTS: dict[str, SelectorKind] = {
    "label": "label",
    "placeholder": "placeholder",
    "alt": "alt",
    "title": "title",
    "testid": "testid",
}
_REF_RE = re.compile(r"(f[0-9]+)?e[0-9]+")
_REF_AS_SHOWN = re.compile(r"\[?\s*ref\s*=\s*([^\]\s]*)\s*\]?")  # [ref=e12] or ref=e12, copied whole


def selector_kind(selector: str) -> tuple[SelectorKind, str]:
    """Which lookup a selector asks for: ``("label", "Email")`` for ``label=Email``, and so on.

    The five shortcuts ``label=``, ``placeholder=``, ``alt=``, ``title=`` and
    ``testid=`` (any case before the ``=``) stand for Playwright's
    ``get_by_label``, ``get_by_placeholder``, ``get_by_alt_text``,
    ``get_by_title`` and ``get_by_test_id``; the value after the ``=`` is
    trimmed and otherwise kept as written, quotes included (``label="Email"``
    gives ``'"Email"'``, which a caller may read as an exact match).  Every
    other selector, and a shortcut with nothing after its ``=``, is
    ``("playwright", selector)``: CSS, ``text=``, ``role=``, ``xpath=`` and the
    rest of Playwright's syntax, unchanged.
    """
    head, sep, rest = selector.partition("=")
    kind = SELECTOR_SHORTCUTS.get(head.strip().lower()) if sep else None
    value = rest.strip()
    if kind is not None and value:
        return kind, value
    return "playwright", selector


def parse_ref(value: str) -> str:
    """A ref as the snapshot shows it: ``e12``, or ``f1e3`` inside a frame (``[ref=e12]`` is read too)."""
    v = value.strip()
    copied = _REF_AS_SHOWN.fullmatch(v)
    if copied:
        v = copied.group(1)
    if len(v) > MAX_REF_CHARS or not _REF_RE.fullmatch(v):
        raise ValueError(
            f"{quoted(value, 40)} is not a ref. Refs come from the latest snapshot, where an element"
            ' reads like - button "Send" [ref=e12]: copy the part after ref=, such as e12 (or f1e3'
            " for an element inside a frame)"
        )
    return v


def _check_selector(value: str, what: Literal["selector", "frame"]) -> str:
    v = value.strip()
    sample = "iframe#payment" if what == "frame" else 'label=Email, text=Sign in or role=button[name="Send"]'
    if not v:
        raise ValueError(f"the {what} is empty: write one such as {sample}")
    if len(v) > MAX_SELECTOR_CHARS:
        raise ValueError(
            f"the {what} is {len(v):,} characters long; write a shorter one (at most {MAX_SELECTOR_CHARS:,})"
            + (", or use a ref from a snapshot" if what == "selector" else "")
        )
    head, sep, rest = v.partition("=")
    if sep and head.strip().lower() in SELECTOR_SHORTCUTS and not rest.strip():
        raise ValueError(
            f"{quoted(v, 40)} has nothing after the =: write the text to look for, such as label=Email"
        )
    return v


def _listed(params: Collection[str]) -> str:
    tags = [f"<{p}>" for p in params]
    return tags[0] if len(tags) == 1 else ", ".join(tags[:-1]) + " and " + tags[-1]


def target_problem(
    params: Collection[str], action: str | None, *, required: bool, destination: bool = False
) -> tuple[Literal["missing_param", "invalid_param"], str, str] | None:
    """What is wrong with the target parameters a call gives, as ``(code, param, message)``, or None.

    ``params`` are the names of the parameters present.  A target is exactly
    one of coordinate, ref or selector; ``frame`` only beside a selector; with
    ``destination`` (drag), exactly one of to_coordinate, to_ref or to_selector
    as well, and ``frame`` beside any selector of the call.
    """
    given = [k for k in TARGET_KINDS if k in params]
    dest = [f"to_{k}" for k in TARGET_KINDS if f"to_{k}" in params]
    if len(given) > 1:
        return (
            "invalid_param",
            "target",
            f"give one target only: this call has {_listed(given)}; keep the one you mean",
        )
    if required and not given:
        return (
            "missing_param",
            "target",
            (f"the {action} action needs a target: " if action else "a target is one of ")
            + "<ref> with a ref from the latest snapshot, <selector> with a selector such as"
            " label=Email, or <coordinate> with x,y",
        )
    if destination:
        if len(dest) > 1:
            return (
                "invalid_param",
                "to",
                f"give one place to drop only: this call has {_listed(dest)}; keep the one you mean",
            )
        if not dest:
            return (
                "missing_param",
                "to",
                f"the {action or 'drag'} action needs a place to drop: one of <to_ref>, <to_selector> or"
                " <to_coordinate>",
            )
    if "frame" in params and "selector" not in params and "to_selector" not in dest:
        if "ref" in given:
            why = "a ref already knows its frame, so leave <frame> out"
        elif "coordinate" in given:
            why = "a coordinate is a point of the whole viewport, so leave <frame> out"
        else:
            why = "add the <selector> of the element inside that frame"
        return ("invalid_param", "frame", f"<frame> goes only with <selector>: {why}")
    return None


class Target(BaseModel):
    """What an action acts on: exactly one of a point, a ref or a selector (with its frame).

    ``kind`` says which.  ``frame`` (an iframe's selector) is set only with
    ``selector``; a ref already knows its frame.  Selectors are kept as written
    (trimmed); :func:`selector_kind` reads the five shortcuts.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    coordinate: Point | None = None
    ref: str | None = None
    selector: str | None = None
    frame: str | None = None

    @field_validator("coordinate", mode="before")
    @classmethod
    def _coord(cls, v: object, info: ValidationInfo) -> object:
        return parse_coordinate(v, _ctx(info).viewport) if isinstance(v, str) else v

    @field_validator("ref", mode="before")
    @classmethod
    def _ref(cls, v: object) -> object:
        return parse_ref(v) if isinstance(v, str) else v

    @field_validator("selector", mode="before")
    @classmethod
    def _selector(cls, v: object) -> object:
        return _check_selector(v, "selector") if isinstance(v, str) else v

    @field_validator("frame", mode="before")
    @classmethod
    def _frame(cls, v: object) -> object:
        return _check_selector(v, "frame") if isinstance(v, str) else v

    @model_validator(mode="after")
    def _exactly_one(self) -> Target:
        present = [k for k in (*TARGET_KINDS, "frame") if getattr(self, k) is not None]
        problem = target_problem(present, None, required=True)
        if problem is not None:
            raise ValueError(problem[2])
        return self

    @property
    def kind(self) -> TargetKind:
        if self.ref is not None:
            return "ref"
        if self.selector is not None:
            return "selector"
        return "coordinate"

    def __str__(self) -> str:
        if self.ref is not None:
            return f"ref {self.ref}"
        if self.selector is not None:
            where = f" in the frame {quoted(self.frame)}" if self.frame is not None else ""
            return f"selector {quoted(self.selector)}{where}"
        return f"coordinate {self.coordinate}"


def _gather(data: Any, *, destination: bool) -> Any:
    """The flat parameters of a call (coordinate, ref, selector, frame, to_…) as ``target`` and ``to``."""
    if not isinstance(data, Mapping):
        return data
    out = dict(data)
    src: dict[str, Any] = {k: out.pop(k) for k in TARGET_KINDS if k in out}
    dst: dict[str, Any] = (
        {k: out.pop(f"to_{k}") for k in TARGET_KINDS if f"to_{k}" in out} if destination else {}
    )
    if "frame" in out:
        frame = out.pop("frame")
        placed = False
        for part in (src, dst):
            if "selector" in part:
                part["frame"] = frame
                placed = True
        if not placed:
            src["frame"] = frame  # and Target says why that is wrong
    for name, part in (("target", src), ("to", dst)):
        if part:
            if name in out:
                raise ValueError(f"the {name} is given twice")
            out[name] = part
    return out


# -- the typed browser actions ---------------------------------------------------------


class ActionModel(BaseModel):
    """The base of every browser action: frozen, no unknown fields, targets gathered from flat parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    # the classic (roo) form: its parameters and an example; profiles.py holds every form
    params: ClassVar[tuple[str, ...]] = ()
    example: ClassVar[dict[str, str]] = {}
    summary: ClassVar[str] = ""
    _destination: ClassVar[bool] = False

    @model_validator(mode="before")
    @classmethod
    def _targets(cls, data: Any) -> Any:
        if "target" not in cls.model_fields:
            return data
        return _gather(data, destination=cls._destination)


def _text_limit(v: str, info: ValidationInfo, *, empty_ok: bool) -> str:
    limit = _ctx(info).max_text_chars
    if not v and not empty_ok:
        raise ValueError("the text is empty: put the characters to type inside <text>")
    if len(v) > limit:
        raise ValueError(f"the text is {len(v)} characters long; at most {limit} can be typed at once")
    return v


class Launch(ActionModel):
    """Open the browser at ``url`` (a blank page without one, as some dialects start).

    ``size`` sets the viewport after the start; ``headless`` is what a dialect
    lets the model ask for, and is not obeyed: the host decides.
    """

    action: Literal["launch"] = "launch"
    url: str | None = None
    size: Viewport | None = None
    headless: bool | None = None
    params: ClassVar[tuple[str, ...]] = ("url",)
    example: ClassVar[dict[str, str]] = {"url": "http://localhost:3000"}

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str | None, info: ValidationInfo) -> str | None:
        return None if v is None else check_url(v.strip(), _ctx(info))

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: object) -> object:
        return parse_size(v) if isinstance(v, str) else v

    @field_validator("headless", mode="before")
    @classmethod
    def _headless(cls, v: object) -> object:
        return _flag(v, "headless")


class _OnElement(ActionModel):
    """An action on one element: ``target`` is required."""

    target: Target

    @property
    def coordinate(self) -> Point | None:
        """The point of a coordinate target (as in the classic form); None for a ref or a selector."""
        return self.target.coordinate


class Click(_OnElement):
    action: Literal["click"] = "click"
    params: ClassVar[tuple[str, ...]] = ("coordinate",)
    example: ClassVar[dict[str, str]] = {"coordinate": "450,300"}


class Hover(_OnElement):
    action: Literal["hover"] = "hover"
    params: ClassVar[tuple[str, ...]] = ("coordinate",)
    example: ClassVar[dict[str, str]] = {"coordinate": "450,300"}


class Type(ActionModel):
    """Type ``text`` where the focus is, or into ``target`` (focused first)."""

    action: Literal["type"] = "type"
    text: str
    target: Target | None = None
    params: ClassVar[tuple[str, ...]] = ("text",)
    example: ClassVar[dict[str, str]] = {"text": "hello@example.com"}

    @field_validator("text")
    @classmethod
    def _len(cls, v: str, info: ValidationInfo) -> str:
        return _text_limit(v, info, empty_ok=False)


class Press(ActionModel):
    """Press a key or a combination (``text``), on ``target`` (focused first) when given."""

    action: Literal["press"] = "press"
    text: str
    target: Target | None = None
    params: ClassVar[tuple[str, ...]] = ("text",)
    example: ClassVar[dict[str, str]] = {"text": "Control+A"}

    @field_validator("text")
    @classmethod
    def _keys(cls, v: str) -> str:
        return normalize_keys(v)


class Fill(ActionModel):
    """Replace the value of the ``target`` field with ``text`` (empty clears it)."""

    action: Literal["fill"] = "fill"
    target: Target
    text: str

    @field_validator("text")
    @classmethod
    def _len(cls, v: str, info: ValidationInfo) -> str:
        return _text_limit(v, info, empty_ok=True)


class Select(ActionModel):
    """Choose options of the ``target`` select list by value or label (``value``: one option a line)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)
    action: Literal["select"] = "select"
    target: Target
    values: tuple[str, ...] = Field(alias="value")

    @field_validator("values", mode="before")
    @classmethod
    def _lines(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        options = [line.strip() for line in v.splitlines() if line.strip()]
        if not options:
            raise ValueError("no option given: put the value or the visible label of an option in <value>")
        if len(options) > MAX_OPTIONS:
            raise ValueError(
                f"{len(options):,} options at once; at most {MAX_OPTIONS} can be chosen in one call"
            )
        long = next((o for o in options if len(o) > MAX_OPTION_CHARS), None)
        if long is not None:
            raise ValueError(
                f"{quoted(long)} is too long for an option (at most {MAX_OPTION_CHARS:,} characters)"
            )
        return tuple(options)


class Drag(ActionModel):
    """Drag ``target`` and drop it on ``to``."""

    action: Literal["drag"] = "drag"
    target: Target
    to: Target
    _destination: ClassVar[bool] = True


class Upload(ActionModel):
    """Put files (``path``: one a line) into the ``target`` file input; see :func:`check_upload_paths`."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)
    action: Literal["upload"] = "upload"
    target: Target
    paths: tuple[Path, ...] = Field(alias="path")

    @field_validator("paths", mode="before")
    @classmethod
    def _files(cls, v: object, info: ValidationInfo) -> object:
        if isinstance(v, str):
            v = [line.strip() for line in v.splitlines() if line.strip()]
        if not isinstance(v, (list, tuple)):
            return v
        return check_upload_paths([str(p) for p in v], _ctx(info))


def check_upload_paths(items: list[str], ctx: ActionContext) -> tuple[Path, ...]:
    """Each path resolved (``..`` and symlinks followed), inside the workspace or a file root, and a file.

    A relative path is taken from the first of those folders (the workspace,
    when there is one).  The paths come back resolved, so what is uploaded is
    what was checked.
    """
    if not items:
        raise ValueError("no file given: put the path of the file to upload in <path>, one per line")
    if len(items) > MAX_UPLOAD_FILES:
        raise ValueError(
            f"{len(items):,} files at once; at most {MAX_UPLOAD_FILES} can be uploaded in one call"
        )
    roots = ctx.upload_roots
    if not roots:
        raise ValueError(
            "uploads are not possible in this session: the host gave no folder to take files from"
        )
    folders = ", ".join(str(r) for r in roots)
    resolved = []
    for r in roots:
        try:
            resolved.append(r.resolve())
        except (OSError, RuntimeError):
            continue
    out: list[Path] = []
    for item in items:
        if len(item) > _MAX_PATH or "\x00" in item:
            raise ValueError(f"{quoted(item)} is not a file path this system can open")
        path = Path(item)
        if not path.is_absolute():
            path = roots[0] / path  # the workspace when there is one
        try:
            real = path.resolve()
            inside = any(real == r or r in real.parents for r in resolved)
            is_file = inside and real.is_file()
            is_dir = inside and not is_file and real.is_dir()
        except (OSError, RuntimeError, ValueError):
            raise ValueError(
                f"{quoted(item)} cannot be read as a path (a loop of links, or no permission)"
            ) from None
        if not inside:
            raise ValueError(f"{quoted(item)} is outside the folders files may be uploaded from ({folders})")
        if not is_file:
            what = "a folder, not a file" if is_dir else "not there: no file has that path"
            raise ValueError(f"{quoted(item)} is {what}; give the path of a file in {folders}")
        out.append(real)
    return tuple(out)


class Scroll(ActionModel):
    """Scroll the page one way, or the scroll container of ``target`` (or bring it into view)."""

    action: Literal["scroll"] = "scroll"
    direction: Literal["up", "down", "left", "right"]
    target: Target | None = None

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        d = v.strip().lower()
        if d not in DIRECTIONS:
            raise ValueError(f"{quoted(v, 40)} is not a direction: write up, down, left or right")
        return d


class Snapshot(ActionModel):
    """The page (or ``target``'s part of it) as an accessibility snapshot with refs."""

    action: Literal["snapshot"] = "snapshot"
    target: Target | None = None
    depth: int | None = None  # levels below the root shown; at most MAX_SNAPSHOT_DEPTH
    find: str | None = None  # show only the elements whose line holds this text

    @field_validator("depth", mode="before")
    @classmethod
    def _depth(cls, v: object) -> object:
        if isinstance(v, str):
            s = v.strip()
            if not re.fullmatch(r"[-+]?[0-9]{1,9}", s):
                raise ValueError(f"{quoted(v, 40)} is not a depth: write a whole number of levels, such as 3")
            v = int(s)
        if isinstance(v, int) and not isinstance(v, bool):
            if v < 1:
                raise ValueError(f"a depth of {v} shows nothing: write 1 or more")
            return min(v, MAX_SNAPSHOT_DEPTH)
        return v

    @field_validator("find", mode="before")
    @classmethod
    def _find(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip()
        if not s:
            raise ValueError("nothing to look for: write a text to find, such as the name of a link")
        if len(s) > MAX_FIND_CHARS:
            raise ValueError(f"the text to find is {len(s):,} characters long; at most {MAX_FIND_CHARS}")
        return s


# -- navigation, tabs, reading the page, waits and scripts ----------------------------

WAIT_UNTIL = ("load", "domcontentloaded", "networkidle", "commit")
MAX_SCRIPT_CHARS = 20_000
MAX_ATTRIBUTE_CHARS = 200
MAX_HTML_DEPTH = 50
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")
_TAB_RE = re.compile(r"\s*(?:[tT]\s*)?([0-9]{1,6})\s*")


def _flag(v: object, name: str) -> object:
    """``true``/``false`` (also yes/no, 1/0, on/off) as a bool, or a message that says so."""
    if not isinstance(v, str):
        return v
    s = v.strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise ValueError(f"{quoted(v, 40)} is not true or false: write <{name}>true</{name}> or leave it out")


def _whole(v: object, what: str, low: int, high: int) -> object:
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


def _no_point(target: Target | None, action: str) -> None:
    if target is not None and target.kind == "coordinate":
        raise ValueError(
            f"{action} needs an element, not a point: give its <ref> from the latest snapshot or a <selector>"
        )


def _all_needs_selector(every: bool, target: Target | None) -> None:
    if every and (target is None or target.kind != "selector"):
        raise ValueError(
            "<all>true</all> reads every match of a <selector>: add the selector, or leave <all> out"
        )


class Navigate(ActionModel):
    """Open ``url`` in the current tab; ``wait_until`` says which point of the load to wait for."""

    action: Literal["navigate"] = "navigate"
    url: str
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] | None = None

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str, info: ValidationInfo) -> str:
        return check_url(v.strip(), _ctx(info))

    @field_validator("wait_until", mode="before")
    @classmethod
    def _until(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip().lower()
        if s not in WAIT_UNTIL:
            raise ValueError(f"{quoted(v, 40)} is not a point to wait for: write {', '.join(WAIT_UNTIL)}")
        return s


class Back(ActionModel):
    action: Literal["back"] = "back"


class Forward(ActionModel):
    action: Literal["forward"] = "forward"


class Reload(ActionModel):
    action: Literal["reload"] = "reload"


class OpenTab(ActionModel):
    """Open ``url`` in a new tab, which becomes the current one."""

    action: Literal["open_tab"] = "open_tab"
    url: str

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str, info: ValidationInfo) -> str:
        return check_url(v.strip(), _ctx(info))


def parse_tab(value: str) -> str:
    """A tab id as the model wrote it (``t2``, ``T2``, ``2``) in its short form, ``t2``."""
    m = _TAB_RE.fullmatch(value)
    if m is None:
        raise ValueError(
            f"{quoted(value, 40)} is not a tab: write a tab id as the tab list shows it, such as t2"
        )
    return f"t{int(m.group(1))}"


def _tab_id(v: object) -> object:
    return parse_tab(v) if isinstance(v, str) else v


class ListTabs(ActionModel):
    action: Literal["list_tabs"] = "list_tabs"


class SwitchTab(ActionModel):
    """Make ``tab`` (``t2``) the current tab."""

    action: Literal["switch_tab"] = "switch_tab"
    tab: str

    check_tab = field_validator("tab", mode="before")(_tab_id)


class CloseTab(ActionModel):
    """Close ``tab``, or the current tab; closing the last one ends the session."""

    action: Literal["close_tab"] = "close_tab"
    tab: str | None = None

    check_tab = field_validator("tab", mode="before")(_tab_id)


class _Reading(ActionModel):
    """Reads the page, or a target; with ``all``, every match of a selector."""

    target: Target | None = None
    all: bool = False

    @field_validator("all", mode="before")
    @classmethod
    def _all(cls, v: object) -> object:
        return _flag(v, "all")

    @model_validator(mode="after")
    def _every(self) -> _Reading:
        _all_needs_selector(self.all, self.target)
        return self


class GetText(_Reading):
    """The readable, visible text (blocks on lines of their own)."""

    action: Literal["get_text"] = "get_text"


class GetHtml(_Reading):
    """The cleaned outer HTML, ``depth`` levels deep (4 by default)."""

    action: Literal["get_html"] = "get_html"
    depth: int | None = None

    @field_validator("depth", mode="before")
    @classmethod
    def _depth(cls, v: object) -> object:
        return _whole(v, "a depth", 1, MAX_HTML_DEPTH)


class GetAttribute(_Reading):
    """The value of ``attribute`` on the target (or on every match)."""

    action: Literal["get_attribute"] = "get_attribute"
    attribute: str

    @field_validator("attribute")
    @classmethod
    def _name(cls, v: str) -> str:
        s = v.strip()
        if not s:
            raise ValueError("no attribute named: write its name, such as href")
        if len(s) > MAX_ATTRIBUTE_CHARS or any(c.isspace() or c in "\"'<>/=" for c in s):
            raise ValueError(
                f"{quoted(s, 60)} is not an attribute name; write one such as href, value or aria-label"
            )
        return s

    @model_validator(mode="after")
    def _needs_target(self) -> GetAttribute:
        if self.target is None:
            raise ValueError("get_attribute needs the element: give its <ref> or a <selector>")
        return self


class ConsoleLogs(ActionModel):
    action: Literal["console_logs"] = "console_logs"


class Wait(ActionModel):
    """Wait for one thing: an element (``state`` visible or hidden), a ``text``, a ``url`` or ``seconds``."""

    action: Literal["wait"] = "wait"
    target: Target | None = None
    state: Literal["visible", "hidden"] | None = None
    text: str | None = None
    url: str | None = None
    seconds: float | None = None

    @field_validator("state", mode="before")
    @classmethod
    def _state(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip().lower()
        if s not in ("visible", "hidden"):
            raise ValueError(f"{quoted(v, 40)} is not a state: write visible or hidden")
        return s

    @field_validator("text", "url", mode="before")
    @classmethod
    def _words(cls, v: object, info: ValidationInfo) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip()
        if not s:
            raise ValueError(f"<{info.field_name}> is empty: write what to wait for, or leave it out")
        if len(s) > MAX_SELECTOR_CHARS:
            raise ValueError(
                f"<{info.field_name}> is {len(s):,} characters long; at most {MAX_SELECTOR_CHARS:,}"
            )
        return s

    @field_validator("seconds", mode="before")
    @classmethod
    def _seconds(cls, v: object, info: ValidationInfo) -> object:
        bound = _ctx(info).max_wait_seconds
        if isinstance(v, str):
            s = v.strip().lower().removesuffix("s").strip()
            try:
                v = float(s)
            except ValueError:
                raise ValueError(
                    f"{quoted(v, 40)} is not a number of seconds: write one such as 2 or 0.5"
                ) from None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if not math.isfinite(v) or v <= 0:
                raise ValueError(f"a wait of {v:g} seconds is not one: write a number above 0")
            if v > bound:
                raise ValueError(f"a wait of {v:g} seconds is too long: at most {bound:g} here")
        return v

    @model_validator(mode="after")
    def _one(self) -> Wait:
        given = [
            n
            for n, v in (
                ("target", self.target),
                ("text", self.text),
                ("url", self.url),
                ("seconds", self.seconds),
            )
            if v is not None
        ]
        if len(given) != 1:
            what = (
                "nothing"
                if not given
                else " and ".join(("a <ref> or <selector>" if g == "target" else f"<{g}>") for g in given)
            )
            raise ValueError(
                "wait for exactly one thing: an element (<ref> or <selector>), a <text>, a <url>"
                f" or <seconds>; this call gives {what}"
            )
        if self.state is not None and self.target is None:
            raise ValueError("<state> goes only with the element waited for (<ref> or <selector>)")
        _no_point(self.target, "wait")
        return self


class ScreenshotAction(ActionModel):
    """A full-page or element screenshot (``png`` or ``jpeg``), saved inside the workspace with ``path``."""

    action: Literal["screenshot"] = "screenshot"
    target: Target | None = None
    full_page: bool = False
    format: Literal["png", "jpeg"] | None = None
    path: Path | None = None

    @field_validator("full_page", mode="before")
    @classmethod
    def _full(cls, v: object) -> object:
        return _flag(v, "full_page")

    @field_validator("format", mode="before")
    @classmethod
    def _format(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        s = v.strip().lower().lstrip(".")
        s = "jpeg" if s == "jpg" else s
        if s not in ("png", "jpeg"):
            raise ValueError(f"{quoted(v, 40)} is not a format: write png or jpeg")
        return s

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, v: object, info: ValidationInfo) -> object:
        return check_save_path(v, _ctx(info)) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _shape(self) -> ScreenshotAction:
        if self.full_page and self.target is not None:
            raise ValueError(
                "a screenshot is of the full page or of one element: leave out <full_page> or the target"
            )
        if self.format is None and self.path is not None:
            fmt = "jpeg" if self.path.suffix.lower() in (".jpg", ".jpeg") else "png"
            object.__setattr__(self, "format", fmt)
        return self


def check_save_path(item: str, ctx: ActionContext) -> Path:
    """Where a file may be saved: resolved (``..`` and links followed), inside the workspace, not a folder."""
    s = item.strip()
    if ctx.workspace is None:
        raise ValueError(
            "files can be saved only in the workspace, and this session has none: leave <path> out"
        )
    if not s or len(s) > _MAX_PATH or "\x00" in s:
        raise ValueError(f"{quoted(item)} is not a file path this system can write")
    root = ctx.workspace
    path = Path(s) if Path(s).is_absolute() else root / s
    try:
        real, top = path.resolve(), root.resolve()
    except (OSError, RuntimeError, ValueError):
        raise ValueError(
            f"{quoted(item)} cannot be read as a path (a loop of links, or no permission)"
        ) from None
    if top not in real.parents:
        raise ValueError(f"{quoted(item)} is outside the workspace ({root}); give a path inside it")
    if real.is_dir():
        raise ValueError(f"{quoted(item)} is a folder; give a file name, such as page.png")
    return real


class Evaluate(ActionModel):
    """Run ``script`` in the page: an expression, or a function body with ``return``."""

    action: Literal["evaluate"] = "evaluate"
    script: str

    @field_validator("script")
    @classmethod
    def _script(cls, v: str) -> str:
        s = v.strip()
        if not s:
            raise ValueError("the script is empty: write an expression, such as document.title")
        if len(s) > MAX_SCRIPT_CHARS:
            raise ValueError(f"the script is {len(s):,} characters long; at most {MAX_SCRIPT_CHARS:,}")
        return s


class FillForm(ActionModel):
    """Fill several fields in order: ``fields`` is a JSON object of selector → value."""

    action: Literal["fill_form"] = "fill_form"
    fields: tuple[tuple[str, str], ...]

    @field_validator("fields", mode="before")
    @classmethod
    def _fields(cls, v: object, info: ValidationInfo) -> object:
        if not isinstance(v, str):
            return v
        try:
            data = json.loads(v)
        except json.JSONDecodeError as e:
            raise ValueError(
                f"the fields are not JSON ({e.msg} at character {e.pos});"
                ' write an object such as {"#email": "ada@example.com"}'
            ) from None
        if not isinstance(data, dict) or not data:
            raise ValueError(
                'the fields must be a JSON object of selector to value, such as {"#email": "ada@example.com"}'
            )
        if len(data) > MAX_OPTIONS:
            raise ValueError(f"{len(data):,} fields at once; at most {MAX_OPTIONS} can be filled in one call")
        out: list[tuple[str, str]] = []
        for selector, value in data.items():
            if not isinstance(value, (str, int, float, bool)) or value is None:
                raise ValueError(
                    f"the value for {quoted(selector, 60)} must be text, not {type(value).__name__}"
                )
            text = value if isinstance(value, str) else json.dumps(value)
            out.append((_check_selector(selector, "selector"), _text_limit(text, info, empty_ok=True)))
        return tuple(out)


class ExtractContent(ActionModel):
    """Forge's one extraction call: ``mode`` text, html or attribute, of one match or (``multiple``) all."""

    action: Literal["extract"] = "extract"
    selector: str
    mode: Literal["text", "html", "attribute"] = "text"
    attribute: str | None = None
    multiple: bool = False

    @field_validator("selector", mode="before")
    @classmethod
    def _sel(cls, v: object) -> object:
        return _check_selector(v, "selector") if isinstance(v, str) else v

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, v: object) -> object:
        if isinstance(v, str) and v.strip().lower() not in ("text", "html", "attribute"):
            raise ValueError(f"{quoted(v, 40)} is not a mode: write text, html or attribute")
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("multiple", mode="before")
    @classmethod
    def _multiple(cls, v: object) -> object:
        return _flag(v, "multiple")

    def canonical(self, ctx: ActionContext) -> ActionModel:
        """The get_text, get_html or get_attribute action this call stands for."""
        data: dict[str, Any] = {"selector": self.selector, "all": self.multiple}
        if self.mode == "attribute":
            if not self.attribute:
                raise ValueError(
                    "mode attribute needs <attribute>: the name of the attribute to read, such as href"
                )
            return GetAttribute.model_validate({**data, "attribute": self.attribute}, context={"ctx": ctx})
        if self.attribute:
            raise ValueError("<attribute> goes only with mode attribute")
        model = GetText if self.mode == "text" else GetHtml
        return model.model_validate(data, context={"ctx": ctx})


@dataclass(frozen=True)
class InTab:
    """An action to run in one tab, for dialects whose every call names its tab (Aleph's tab_id)."""

    tab: str
    inner: ActionModel

    @property
    def action(self) -> str:
        return str(getattr(self.inner, "action", ""))


class ScrollDown(ActionModel):
    action: Literal["scroll_down"] = "scroll_down"


class ScrollUp(ActionModel):
    action: Literal["scroll_up"] = "scroll_up"


class Resize(ActionModel):
    action: Literal["resize"] = "resize"
    size: Viewport
    params: ClassVar[tuple[str, ...]] = ("size",)
    example: ClassVar[dict[str, str]] = {"size": "1280x800"}

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: object) -> object:
        return parse_size(v) if isinstance(v, str) else v


class Close(ActionModel):
    action: Literal["close"] = "close"


BrowserAction: TypeAlias = Annotated[
    Launch
    | Click
    | Hover
    | Type
    | Press
    | Fill
    | Select
    | Drag
    | Upload
    | Scroll
    | Snapshot
    | ScrollDown
    | ScrollUp
    | Resize
    | Close
    | Navigate
    | Back
    | Forward
    | Reload
    | OpenTab
    | ListTabs
    | SwitchTab
    | CloseTab
    | GetText
    | GetHtml
    | GetAttribute
    | ConsoleLogs
    | Wait
    | ScreenshotAction
    | Evaluate
    | FillForm,
    Field(discriminator="action"),
]

ACTIONS: dict[str, type[ActionModel]] = {
    m.model_fields["action"].default: m for m in get_args(get_args(BrowserAction)[0])
}
