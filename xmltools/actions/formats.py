"""The value formats the model writes: coordinates, sizes, keys, URLs, tab ids and file paths.

Each parser takes the text of one parameter and returns the typed value, or
raises a ``ValueError`` whose message is meant for the model.  The one look
at the outside world is in the path checks (:func:`check_upload_paths`,
:func:`check_save_path`), which resolve each path (following ``..`` and
symlinks) and ask the file system what is there.

Imports only :mod:`.base` and the pure helpers (quoting, results); never the
action models, Playwright or Jinja2.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..base.quoting import quoted, shorten
from ..base.results import Point, Viewport
from .base import (
    MAX_NUMBER,
    MAX_PATH,
    MAX_SHOT_SIDE,
    MAX_SIDE,
    MAX_UPLOAD_FILES,
    MIN_SIDE,
    ActionContext,
)

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
    if not (abs(x) <= MAX_NUMBER and abs(y) <= MAX_NUMBER):
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
        if len(raw_path) > MAX_PATH or "\x00" in raw_path:  # resolving 450,000 folders took minutes
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


_TAB_RE = re.compile(r"\s*(?:[tT]\s*)?([0-9]{1,6})\s*")


def parse_tab(value: str) -> str:
    """A tab id as the model wrote it (``t2``, ``T2``, ``2``) in its short form, ``t2``."""
    m = _TAB_RE.fullmatch(value)
    if m is None:
        raise ValueError(
            f"{quoted(value, 40)} is not a tab: write a tab id as the tab list shows it, such as t2"
        )
    return f"t{int(m.group(1))}"


# -- files ---------------------------------------------------------------------------------


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
        if len(item) > MAX_PATH or "\x00" in item:
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


def check_save_path(item: str, ctx: ActionContext) -> Path:
    """Where a file may be saved: resolved (``..`` and links followed), inside the workspace, not a folder."""
    s = item.strip()
    if ctx.workspace is None:
        raise ValueError(
            "files can be saved only in the workspace, and this session has none: leave <path> out"
        )
    if not s or len(s) > MAX_PATH or "\x00" in s:
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
