"""Python source text, written as ``ruff format`` leaves it: what the export writes with.

- :func:`literal` and :func:`fstring` quote as ruff does (double quotes, unless that escapes
  more), and escape what a source line cannot hold;
- :func:`comment` is one line of comment whose text cannot act as a tool's directive;
- :class:`Code`, :class:`Attr` and :class:`Call` are the few expressions an exported test is
  made of, and :func:`statement` writes one within ruff's 88 columns: while the line is too long,
  its longest value is named first on a line of its own, which ruff leaves as it is;
- :func:`locator` is Playwright's Python lookup for a selector in the model's syntax.

Pure: text in, text out.  Imports only :mod:`xmltools.actions` (how a selector is read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TypeAlias

from ..actions import LOOKUPS, selector_kind

__all__ = [
    "LINE",
    "PAGE",
    "TRUE",
    "Attr",
    "Call",
    "Code",
    "Expr",
    "comment",
    "flat",
    "fstring",
    "literal",
    "locator",
    "method",
    "number",
    "raw",
    "statement",
]

LINE = 88  # ruff's default line length
# a hash sign that a linter or a formatter would read as its directive (noqa, fmt: off, ...)
_DIRECTIVE = re.compile(r"#(?=\s*(?:noqa|type:|fmt:|ruff:|isort:|pyright:|mypy:))", re.I)


def _quote(text: str) -> str:
    return "'" if text.count('"') > text.count("'") else '"'


def _escaped(text: str, quote: str) -> str:
    """The text between quotes: the quote, backslashes and what is not printable escaped."""
    return "".join(
        "\\" + c if c == quote else repr(c)[1:-1] if c == "\\" or not c.isprintable() else c for c in text
    )


def literal(text: str) -> str:
    """A string literal of ``text``, quoted as ruff quotes it."""
    quote = _quote(text)
    return quote + _escaped(text, quote) + quote


def raw(text: str) -> str:
    """A raw string literal of ``text`` where one can hold it (a regular expression reads better so);
    else :func:`literal`."""
    quote = _quote(text)
    if quote in text or not text.isprintable() or (len(text) - len(text.rstrip("\\"))) % 2:
        return literal(text)
    return f"r{quote}{text}{quote}"


def fstring(parts: list[str | tuple[str]]) -> str:
    """An f-string of literal parts and ``(name,)`` variables (a plain literal when there is no variable)."""
    plain = "".join(p for p in parts if isinstance(p, str))
    if all(isinstance(p, str) for p in parts):
        return literal(plain)
    quote = _quote(plain)
    body = "".join(
        _escaped(p, quote).replace("{", "{{").replace("}", "}}") if isinstance(p, str) else "{" + p[0] + "}"
        for p in parts
    )
    return f"f{quote}{body}{quote}"


def comment(text: str) -> str:
    """A line of comment: whitespace folded, what is not printable made a space, directives defused."""
    words = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return "# " + _DIRECTIVE.sub("(#)", words)


# -- expressions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Code:
    """An atom: a name, a number, a literal.  ``hint`` names the variable it becomes when its line
    is too long (None: it stays in its line)."""

    text: str
    hint: str | None = None


@dataclass(frozen=True)
class Attr:
    obj: Expr
    name: str
    hint: str | None = None


@dataclass(frozen=True)
class Call:
    func: Expr
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()
    hint: str | None = None


Expr: TypeAlias = Code | Attr | Call
PAGE = Code("page")
TRUE = Code("True")


def method(obj: Expr, attr: str, /, *args: Expr, **kwargs: Expr) -> Call:
    """``obj.attr(*args, **kwargs)``."""
    return Call(Attr(obj, attr), args, tuple(kwargs.items()))


def number(value: float) -> Code:
    """A whole number as one (5000, not 5000.0)."""
    return Code(str(int(value)) if float(value).is_integer() else repr(float(value)))


def flat(e: Expr) -> str:
    """The expression on one line."""
    if isinstance(e, Code):
        return e.text
    if isinstance(e, Attr):
        return f"{flat(e.obj)}.{e.name}"
    args = [flat(a) for a in e.args] + [f"{k}={flat(v)}" for k, v in e.kwargs]
    return f"{flat(e.func)}({', '.join(args)})"


def _parts(e: Expr) -> Iterator[Expr]:
    yield e
    if isinstance(e, Attr):
        yield from _parts(e.obj)
    elif isinstance(e, Call):
        yield from _parts(e.func)
        for a in (*e.args, *(v for _, v in e.kwargs)):
            yield from _parts(a)


def _swap(e: Expr, old: Expr, new: Expr) -> Expr:
    if e == old:
        return new
    if isinstance(e, Attr):
        return replace(e, obj=_swap(e.obj, old, new))
    if isinstance(e, Call):
        return replace(
            e,
            func=_swap(e.func, old, new),
            args=tuple(_swap(a, old, new) for a in e.args),
            kwargs=tuple((k, _swap(v, old, new)) for k, v in e.kwargs),
        )
    return e


def statement(e: Expr, indent: int, assign: str | None = None) -> list[str]:
    """The lines of one statement (``assign = e``, or ``e``) within :data:`LINE` columns.

    While the line is too long, a part with a hint becomes a variable, assigned on the lines
    before: a literal whose name alone makes the line fit, else a call that does, else the longest
    part.  A literal too long for any line stays whole: in parentheses when that makes it fit, as
    ruff writes it, else as it is (ruff leaves it so).
    """
    pad, head = " " * indent, (f"{assign} = " if assign else "")
    lines: list[str] = []
    named: dict[str, Expr] = {}
    while len(pad + head + flat(e)) > LINE:
        found = [p for p in _parts(e) if p is not e and p.hint and len(flat(p)) > len(p.hint)]
        if not found:
            break
        # one that makes the line fit, a literal rather than a call; else the longest
        enough = [p for p in found if len(pad + head + flat(_swap(e, p, Code(p.hint or "")))) <= LINE]
        part = max(enough or found, key=lambda p: (bool(enough) and isinstance(p, Code), len(flat(p))))
        name = base = part.hint or "value"
        n = 1
        while name in named and named[name] != part:
            n += 1
            name = f"{base}_{n}"
        named[name] = part
        lines += statement(part, indent, name)
        e = _swap(e, part, Code(name))
    text = flat(e)
    if assign and isinstance(e, Code) and len(pad + head + text) > LINE >= len(pad + text) + 4:
        return [*lines, f"{pad}{head}(", f"{pad}    {text}", f"{pad})"]
    return [*lines, pad + head + text]


# -- locators -------------------------------------------------------------------------------------

_ROLE = re.compile(r'role=([a-z]+)(?:\[name=("(?:[^"\\]|\\.)*")([si]?)\])?')
_TEXT = re.compile(r'text=("(?:[^"\\]|\\.)*")')


def _json_text(quoted: str) -> str | None:
    """The text of a quoted JSON string; None when it is not one."""
    try:
        text = json.loads(quoted)
    except ValueError:
        return None
    return text if isinstance(text, str) else None


def locator(selector: str, frame: str | None, value: Callable[[str, str], Code]) -> Call:
    """Playwright's lookup for a selector in the model's syntax, in ``frame`` when one is named.

    The shortcuts (``testid=``, ``label=``, ...) become ``get_by_test_id`` and its kin, exact when
    quoted, as :func:`xmltools.browser.targets.selector_locator` reads them; ``role=R[name="N"s]``
    and ``text="T"`` (how a recorded identity writes them) become ``get_by_role`` and
    ``get_by_text``; any other selector is ``locator(...)``.  ``value(text, hint)`` writes each
    string of the transcript (its placeholders become variables).
    """
    scope: Expr = PAGE if frame is None else method(PAGE, "frame_locator", value(frame, "frame"))
    kind, rest = selector_kind(selector)
    found: Call | None = None
    if kind != "playwright":
        quoted = len(rest) >= 2 and rest[0] == rest[-1] and rest[0] in "\"'"
        inner = value(rest[1:-1] if quoted else rest, "test_id" if kind == "testid" else kind)
        exact = {"exact": TRUE} if quoted and kind != "testid" else {}  # a test id always matches whole
        found = method(scope, LOOKUPS[kind], inner, **exact)
    elif (role := _ROLE.fullmatch(selector)) is not None:
        name = _json_text(role.group(2)) if role.group(2) else None
        if role.group(2) is None:
            found = method(scope, "get_by_role", Code(literal(role.group(1))))
        elif name is not None:
            exact = {"exact": TRUE} if role.group(3) == "s" else {}
            found = method(
                scope, "get_by_role", Code(literal(role.group(1))), name=value(name, "name"), **exact
            )
    elif (text := _TEXT.fullmatch(selector)) is not None and (words := _json_text(text.group(1))) is not None:
        found = method(scope, "get_by_text", value(words, "text"), exact=TRUE)
    if found is None:
        found = method(scope, "locator", value(selector, "selector"))
    return replace(found, hint="target")
