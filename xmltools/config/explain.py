"""Each setting explained: its effective value and where it came from, and the settings reference's table.

``xmltools config`` prints :func:`explain`; ``xmltools doctor`` a part of it;
:func:`settings_table` is the table of every setting in docs/reference/settings.md,
kept equal to it by a test.  Reads :mod:`xmltools.config.settings`, which knows nothing of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from .settings import CHROMIUM_VARIABLE, ENV_PREFIX, Config, _load

__all__ = ["Setting", "display", "environment_variables", "explain", "format_settings", "settings_table"]


class Setting(NamedTuple):
    """One line of ``xmltools config``: a setting, its effective value, and where it came from."""

    name: str
    value: Any
    source: str  # default, argument, environment (XMLTOOLS_...), pyproject.toml, xmltools.toml or the file


def explain(
    path: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    **overrides: Any,
) -> list[Setting]:
    """Like :meth:`Config.load`, but every setting with its effective value and its source."""
    config, origins = _load(Config, path, environ=environ, cwd=cwd, overrides=overrides)
    return [Setting(name, getattr(config, name), origins[name]) for name in Config.model_fields]


def format_settings(settings: Iterable[Setting]) -> str:
    """The lines of ``xmltools config``: name, value and source, in columns."""
    rows = [(s.name, display(s.value), s.source) for s in settings]
    w0 = max(len(r[0]) for r in rows)
    w1 = min(max(len(r[1]) for r in rows), 40)
    return "\n".join(f"{n:<{w0}}  {v:<{w1}}  {src}" for n, v, src in rows)


def display(value: Any) -> str:
    """A value as the environment would give it (``900x600``, ``none``, ``true``, JSON lists)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, (tuple, list)):
        return json.dumps([str(x) for x in value])
    if isinstance(value, Mapping):
        return json.dumps({str(k): v for k, v in value.items()})
    return str(value)


def environment_variables(name: str) -> tuple[str, ...]:
    """The variables that set ``name``, the first winning."""
    return (
        (ENV_PREFIX + name.upper(), CHROMIUM_VARIABLE)
        if name == "executable"
        else (ENV_PREFIX + name.upper(),)
    )


def settings_table() -> str:
    """Every setting as a Markdown table (name, default, variable, description): the settings page's."""
    lines = ["| setting | default | environment variable | description |", "|---|---|---|---|"]
    for name, info in Config.model_fields.items():
        default = info.get_default(call_default_factory=True)
        variables = ", ".join(f"`{v}`" for v in environment_variables(name))
        about = (info.description or "").replace("|", "\\|")
        lines.append(f"| `{name}` | `{display(default)}` | {variables} | {about} |")
    return "\n".join(lines)
