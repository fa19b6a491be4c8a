"""The dialects of ``browser_action`` as data: which actions a profile offers, and how each is written.

- ``roo``, the default: the nine classic actions of Cline and Roo-Code, by
  coordinates only, exactly as they have always been written here (the same
  parameters, the same messages, the same system prompt).
- ``cline``: Cline's six actions and four parameters, every value trimmed, and
  ``<task_progress>`` on every tool, given to the host (:mod:`.cline`).
- ``full``: every canonical action as its model declares it: targets by
  ``coordinate``, ``ref`` or ``selector`` (with ``frame``), the element and
  form actions, navigation and tabs, reading the page, ``wait`` and
  ``evaluate``.  Every call may also name a ``<session>`` (see
  :data:`DEFAULT_SESSION`).
- ``aleph``, ``fractal`` and ``forge``: the seeds' dialects, as renames.

A profile maps each action name to an :class:`ActionForm`: the canonical
model (:mod:`xmltools.actions`), whose declaration gives the parameters, the
target rule and the example, and the dialect's differences from it (its own
parameter names, values it fixes or assumes, the call that opens a session,
its session and tab parameters).  The parser's vocabulary and the system
prompt's template come from the profile too.  Adding an action to a profile
is one entry in its module.

The modules, one concern each::

    forms.py    ActionForm and Profile: how a dialect is written
    classic.py  roo
    cline.py    cline, and Cline's whole vocabulary (CLINE_TOOLS)
    full.py     full
    seeds.py    aleph, fractal, forge
    __init__.py PROFILES, get_profile(), dialect_table()

Pure: data only.  Imports the action models and the parser's ToolSyntax;
never the registry, the renderer, the interpreter, Playwright or Jinja2.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..actions import ProfileName
from ..errors import ConfigError
from .classic import ROO
from .cline import CLINE, CLINE_TOOLS
from .forms import DEFAULT_SESSION, ActionForm, Profile, format_call
from .full import FULL
from .seeds import ALEPH, FORGE, FRACTAL

__all__ = [
    "ALEPH",
    "CLINE",
    "CLINE_TOOLS",
    "DEFAULT_SESSION",
    "FORGE",
    "FRACTAL",
    "FULL",
    "PROFILES",
    "ROO",
    "ActionForm",
    "Profile",
    "ProfileName",
    "dialect_table",
    "format_call",
    "get_profile",
]

PROFILES: Mapping[str, Profile] = MappingProxyType(
    {"roo": ROO, "cline": CLINE, "full": FULL, "aleph": ALEPH, "fractal": FRACTAL, "forge": FORGE}
)
# the classic dialects: subsets of the full profile's first row, left out of the table side by side
_CLASSIC = ("roo", "cline")


_TABLE_LABELS = {
    "extract": "get_text, get_html or get_attribute, by `mode`",
    "fill_form": "fill, several fields at once",
}


def dialect_table() -> str:
    """The dialects side by side as a Markdown table: one row per canonical action, one column per profile."""
    names = [n for n in PROFILES if n not in _CLASSIC]
    rows: dict[str, dict[str, list[str]]] = {}
    order: list[str] = []
    for pname in names:
        for written, form in PROFILES[pname].actions.items():
            canonical = str(form.model.model_fields["action"].default)
            if canonical not in rows:
                rows[canonical] = {n: [] for n in names}
                order.append(canonical)
            shown = f"`{written}`"
            if canonical == "launch" and not PROFILES[pname].open_example:
                shown += " (no page)"
            rows[canonical][pname].append(shown)
    for pname in names:  # an action that opens a session when none is open also counts as launch
        for written, form in PROFILES[pname].actions.items():
            if form.opens:
                rows["launch"][pname].append(f"`{written}` (when no session is open)")
    lines = ["| action | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for canonical in order:
        cells = [", ".join(rows[canonical][n]) or "–" for n in names]
        label = _TABLE_LABELS.get(canonical, canonical)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def get_profile(profile: str | Profile) -> Profile:
    """A profile by name (roo, cline, full, aleph, fractal, forge), or the profile given."""
    if isinstance(profile, Profile):
        return profile
    found = PROFILES.get(profile) if isinstance(profile, str) else None
    if found is None:
        raise ConfigError(f"unknown profile {profile!r}; the profiles are: {', '.join(PROFILES)}")
    return found
