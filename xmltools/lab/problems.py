"""The mistakes found in an experiment file, each one line naming its field, and all of them at once.

A :class:`Problem` is where (the field's path, ``tasks[2].checks[0].kind``)
and what (``no check named 'ulr'; did you mean 'url'?``).  :func:`from_pydantic`
turns a validation error into problems in the project's own words (never
pydantic's text): a field that is missing says so, a name that is no field
offers the closest one.  :func:`raise_problems` makes them one
:class:`~xmltools.errors.ConfigError` whose first line counts them and shows the
first, and whose next lines are each of them, ``FILE: PATH: what``, in the
order of the file.  Imports no other module of :mod:`xmltools.lab`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ..base.spelling import closest, did_you_mean
from ..errors import ConfigError, XmltoolsError

__all__ = ["Problem", "field_names", "from_pydantic", "problems_error", "raise_problems", "sort_problems"]


@dataclass(frozen=True)
class Problem:
    """One mistake: the path of the field it is in ("" for the file as a whole), and what is wrong."""

    where: str
    what: str

    def under(self, prefix: str) -> Problem:
        """The same mistake, its path inside ``prefix`` (``checks[0]`` under ``tasks[2]``)."""
        if not prefix:
            return self
        if not self.where:
            return Problem(prefix, self.what)
        sep = "" if self.where.startswith("[") else "."
        return Problem(prefix + sep + self.where, self.what)

    def line(self, label: str) -> str:
        """``label: where: what`` (the label names the file, or the flags)."""
        said = f"{self.where}: {self.what}" if self.where else self.what
        return f"{label}: {said}" if label else said


def path_of(loc: Sequence[str | int]) -> str:
    """``('tasks', 2, 'checks', 0, 'kind')`` as ``tasks[2].checks[0].kind``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def field_names(model: type[BaseModel]) -> list[str]:
    """The names a file may write for ``model``'s fields (an alias, where there is one)."""
    return [f.alias or name for name, f in model.model_fields.items() if f.exclude is not True]


def from_pydantic(
    error: ValidationError, models: Mapping[tuple[str, ...], type[BaseModel]], prefix: str = ""
) -> list[Problem]:
    """Each error of ``error`` as a problem.  ``models`` says which model each part of the file is
    read as, by its path of names (``("tasks", "checks")``), for the names a mistyped one is offered."""
    out: list[Problem] = []
    seen: set[str] = set()
    for err in error.errors(include_url=False):
        loc, tagged = _plain(err.get("loc", ()))
        where = path_of(loc)
        if tagged:  # a union's branches each failed: one problem for the field
            if where in seen:
                continue
            seen.add(where)
            out.append(Problem(where, UNION_WANTS.get(str(loc[-1]), "not a valid value")))
            continue
        out.append(Problem(where, _said(err, loc, models)))
    return [p.under(prefix) for p in _merge_typos(out)]


# what a field that takes one of several shapes wants, said when none of them fits
UNION_WANTS = {"mcp_servers": "expected a table of servers (the mcpServers shape) or an mcp.json's path"}


def _plain(loc: Sequence[str | int]) -> tuple[list[str | int], bool]:
    """The path of field names and indexes, cut where pydantic names a union's branch."""
    out: list[str | int] = []
    for part in loc:
        if isinstance(part, str) and ("[" in part or "(" in part):
            return out, True
        out.append(part)
    return out, False


def _model_at(
    loc: Sequence[str | int], models: Mapping[tuple[str, ...], type[BaseModel]]
) -> type[BaseModel] | None:
    names = tuple(p for p in loc[:-1] if isinstance(p, str))
    return models.get(names)


def _said(
    err: Mapping[str, Any], loc: Sequence[str | int], models: Mapping[tuple[str, ...], type[BaseModel]]
) -> str:
    """One error in words."""
    kind = str(err.get("type", ""))
    ctx: Mapping[str, Any] = err.get("ctx") or {}
    got = err.get("input")
    if kind == "extra_forbidden":
        model = _model_at(loc, models)
        names = field_names(model) if model is not None else []
        hint = did_you_mean(str(loc[-1]), names)
        return "not a field" + (hint or (f"; the fields here are: {', '.join(names)}" if names else ""))
    if kind == "missing":
        return "missing"
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        hint = did_you_mean(str(got), choices)
        return f"{got!r} is not one of {', '.join(repr(c) for c in choices)}{hint}"
    if kind == "value_error" and ctx.get("error") is not None:
        return str(ctx["error"])
    if kind in WANTS:
        return f"expected {WANTS[kind]}, got {_shown(got)}"
    if kind in BOUNDS:
        word, key = BOUNDS[kind]
        return f"{word} {ctx.get(key)}, got {_shown(got)}"
    return f"not a valid value ({_shown(got)})"


# what a value of the wrong type should have been
WANTS = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "list_type": "a list",
    "tuple_type": "a list",
    "path_type": "a path, as a string",
}
# a number out of its range
BOUNDS = {
    "greater_than_equal": ("must be at least", "ge"),
    "greater_than": ("must be above", "gt"),
    "less_than_equal": ("must be at most", "le"),
    "less_than": ("must be below", "lt"),
    "too_short": ("needs at least", "min_length"),
    "string_too_short": ("must hold at least this many characters:", "min_length"),
}


def _shown(value: Any) -> str:
    """A value as the file wrote it, shortly: a table or a list is named, not printed."""
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _merge_typos(problems: list[Problem]) -> list[Problem]:
    """A name that is no field, beside the missing field it is close to, is one mistake: the typo."""
    missing = {p.where: p for p in problems if p.what == "missing"}
    out: list[Problem] = []
    dropped: set[str] = set()
    for p in problems:
        parent, _, name = p.where.rpartition(".")
        if p.what.startswith("not a field"):
            near = [m.rpartition(".")[2] for m in missing if m.rpartition(".")[0] == parent]
            meant = closest(name, near)
            if meant is not None:
                dropped.add(f"{parent}.{meant}" if parent else meant)
                p = Problem(p.where, f"not a field; did you mean {meant!r}? ({meant} is missing)")
        out.append(p)
    return [p for p in out if not (p.what == "missing" and p.where in dropped)]


def sort_problems(problems: Iterable[Problem], order: Sequence[str] = ()) -> list[Problem]:
    """The problems in the file's order: by the position of their top-level key in ``order`` (the
    file's keys as written), then by index; each said once."""
    unique = list(dict.fromkeys(problems))

    def key(p: Problem) -> tuple[Any, ...]:
        parts = re.findall(r"[^.\[\]]+|\[\d+\]", p.where)
        top = parts[0] if parts else ""
        rank = order.index(top) if top in order else len(order)
        rest = tuple((0, int(x[1:-1]), "") if x.startswith("[") else (1, 0, x) for x in parts[1:])
        return (rank, top, rest)

    return sorted(unique, key=key)


SHOWN = 20  # the mistakes the command line lists without -v


def problems_error(
    label: str, problems: Sequence[Problem], error: type[XmltoolsError] = ConfigError
) -> XmltoolsError:
    """One error (a ConfigError, or ``error``) for all of ``problems``: with one, its line; with more,
    a first line that counts them and shows the first (``exp.toml: 2 mistakes: trails: ... (and 1
    more)``), then each on a line."""
    lines = [p.line(label) for p in problems]
    if len(lines) == 1:
        return error(lines[0])
    first = problems[0].line("")
    head = f"{label + ': ' if label else ''}{len(lines)} mistakes: {first} (and {len(lines) - 1} more)"
    err = error("\n".join([head, *lines]))
    err.shown = 1 + min(len(lines), SHOWN)  # the command line lists them (the first SHOWN; -v all)
    return err


def raise_problems(label: str, problems: Sequence[Problem], error: type[XmltoolsError] = ConfigError) -> None:
    """Raise :func:`problems_error` when there is any problem."""
    if problems:
        raise problems_error(label, problems, error)
