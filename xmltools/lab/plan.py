"""The experiment file: variants × models × tasks × trials, with the checks that decide each trial.

TOML, for three reasons: the standard library reads it (no dependency), it
holds comments, and it is the format of every other setting here
(``xmltools.toml``, ``[tool.xmltools]``, ``variant.toml``).  Paths in it are
relative to the file; its parts are the models of :mod:`.specs`.
:func:`load_experiment` checks a file whole before
anything runs (the fields and their types, the check kinds and the fields each
reads, the folders, the start pages, the variants' settings and templates, the
MCP servers, the judge), and says every mistake at once: one
:class:`~xmltools.errors.ConfigError`, a line each naming the file and the field
(``exp.toml: tasks[2].checks[0].kind: no check named 'ulr'; did you mean
'url'?``).  What the environment lacks (a key variable that is not set) is
:func:`~xmltools.lab.rules.environment_problems`'s, so that a dry run needs no key.  A ``title``
names the report (else the file's name, or its folder's for a name that says
nothing, such as ``experiment.toml``).

.. code-block:: toml

    trials = 8
    remote = "ws://10.0.0.5:3000/,ws://10.0.0.6:3000/"   # Playwright servers (optional)
    shared_servers = ["time"]               # one process for all trials at once (else one a trial)

    [[variants]]
    name = "careful"
    templates = "variants/careful"          # template overrides (optional)
    config = { observe = "snapshot" }       # setting overrides, the profile among them

    [[models]]
    name = "local"
    provider = "openai"                     # or anthropic
    model = "qwen2.5-7b-instruct"
    base_url = "http://127.0.0.1:8000/v1"
    key_env = "LOCAL_KEY"
    price_in = 0.15                         # per million tokens
    price_out = 0.60
    max_requests = 4                        # at once, to this model

    [[tasks]]
    id = "sign-in"
    serve = "site"                          # or url = "http://..."
    start = "form.html"
    instruction = "Sign in as Ada."
    checks = [{ kind = "url", value = "/welcome.html" }, { kind = "text", value = "Welcome, Ada" }]

    [[tasks]]
    id = "note"
    instruction = "Write today's date into notes/today.txt."
    mcp_servers = { files = { command = "mcp-server-filesystem", args = ["notes"] } }

    [[tasks.checks]]                        # what the server says after the trial (a read-only tool)
    kind = "mcp"
    server = "files"
    tool = "read_text_file"
    arguments = { path = "notes/today.txt" }
    value = "2026"

    [mcp_servers]                           # for every task, in the mcpServers shape (or a path)
    time = { command = "mcp-server-time" }

    [judge]                                 # only for tasks with a judge check
    provider = "anthropic"
    model = "claude-sonnet-4-5"
    key_env = "ANTHROPIC_API_KEY"

    [limits]
    turns = 15
    cost = 2.0                              # dollars for the whole run
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from .problems import Problem, field_names, from_pydantic, raise_problems, sort_problems
from .rules import (
    check_problems,
    environment_problems,
    model_problems,
    server_names,
    server_problems,
    shared_problems,
    task_problems,
)
from .specs import CheckSpec, Experiment, JudgeSpec, Limits, ModelSpec, TaskSpec, VariantSpec

__all__ = [
    "CheckSpec",
    "Experiment",
    "JudgeSpec",
    "Limits",
    "ModelSpec",
    "TaskSpec",
    "VariantSpec",
    "check_problems",
    "environment_problems",
    "experiment_problems",
    "load_experiment",
    "model_problems",
    "server_problems",
    "task_problems",
]


# -- reading a file, and every mistake in it at once -----------------------------------------------

# which model each part of the file is read as, by its path of names (for the names offered for a typo)
MODELS: dict[tuple[str, ...], type[BaseModel]] = {
    (): Experiment,
    ("variants",): VariantSpec,
    ("models",): ModelSpec,
    ("tasks",): TaskSpec,
    ("tasks", "checks"): CheckSpec,
    ("judge",): JudgeSpec,
    ("limits",): Limits,
}


def load_experiment(path: str | Path) -> Experiment:
    """Read an experiment file, checked whole before anything runs: every mistake in it (a field that
    is not one, a check kind that does not exist, a folder that is not there, a template that does not
    render) is found at once, and raised as one ConfigError, a line each, naming the file and the
    field (see :func:`~xmltools.lab.problems.problems_error`).  The keys of the models are not read
    here: :func:`environment_problems` says which are missing."""
    p = Path(path)
    data = _read(p)
    here = p.resolve().parent
    for section, key in (("variants", "templates"), ("tasks", "serve"), ("tasks", "mcp_servers")):
        for item in data.get(section) or ():
            if isinstance(item, dict) and isinstance(item.get(key), str):
                item[key] = here / item[key]
    if isinstance(data.get("mcp_servers"), str):
        data["mcp_servers"] = here / data["mcp_servers"]
    exp: Experiment | None = None
    problems: list[Problem] = []
    try:
        exp = Experiment.model_validate({**data, "path": p})
    except ValidationError as e:
        problems += [_tables_missing(m) for m in from_pydantic(e, MODELS)]
    problems += _file_problems(data)
    raise_problems(str(p), sort_problems(problems, [*data, *field_names(Experiment)]))
    assert exp is not None  # no problem: it was made
    return exp


def _tables_missing(p: Problem) -> Problem:
    """``tasks: missing`` says how to write what is missing: ``[[tasks]]`` tables."""
    if p.what == "missing" and p.where in ("variants", "models", "tasks"):
        return Problem(p.where, f"missing: give at least one [[{p.where}]] table")
    return p


def _read(p: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such experiment file") from None
    except IsADirectoryError:
        raise ConfigError(f"{p}: a folder, not an experiment file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: cannot be read ({e})") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML ({e})") from e


def experiment_problems(exp: Experiment) -> list[Problem]:
    """Every mistake of an experiment that its fields' types do not show, each with its field's path:
    check kinds that do not exist and fields a check does not read, folders that are not there, a
    start page missing from its served folder, variants whose settings or templates are wrong, server
    entries, shared servers, a judge check with no judge.  :func:`load_experiment` finds these in a
    file; :func:`~xmltools.lab.runner.run_experiment` in an experiment made in code, before any trial."""
    out: list[Problem] = []
    for i, v in enumerate(exp.variants):
        out += [p.under(f"variants[{i}]") for p in _variant_problems(v)]
    for i, m in enumerate(exp.models):
        out += [p.under(f"models[{i}]") for p in model_problems(m)]
    if exp.judge is not None:
        out += [p.under("judge") for p in model_problems(exp.judge)]
    known, problems = server_names(exp.mcp_servers)
    out += problems + shared_problems(exp.shared_servers, known)
    ctx = _Context(exp.judge is not None, _known(known, exp.variants), frozenset(exp.shared_servers))
    for i, t in enumerate(exp.tasks):
        out += [p.under(f"tasks[{i}]") for p in _task_problems(t, t.mcp_servers, t.checks, ctx)]
    return out


def _file_problems(data: dict[str, Any]) -> list[Problem]:
    """:func:`experiment_problems` on a file's parts that could be read, each on its own (a bad item
    hides no other)."""
    out: list[Problem] = []
    variants = [_quietly(VariantSpec, raw) for raw in _items(data, "variants")]
    for i, v in enumerate(variants):
        out += [p.under(f"variants[{i}]") for p in _variant_problems(v)] if v is not None else []
    for i, raw in enumerate(_items(data, "models")):
        if (m := _quietly(ModelSpec, raw)) is not None:
            out += [p.under(f"models[{i}]") for p in model_problems(m)]
    if (judge := _quietly(JudgeSpec, data.get("judge"))) is not None:
        out += [p.under("judge") for p in model_problems(judge)]
    servers, problems = server_names(data.get("mcp_servers"))
    shared = tuple(str(n) for n in _items(data, "shared_servers"))
    out += problems + shared_problems(shared, servers)
    known = None if None in variants else _known(servers, [v for v in variants if v is not None])
    ctx = _Context("judge" in data, known, frozenset(shared))
    for i, raw in enumerate(_items(data, "tasks")):
        if not isinstance(raw, dict):
            continue
        task = _quietly(TaskSpec, {k: v for k, v in raw.items() if k != "checks"})
        checks = [_quietly(CheckSpec, c, mend=False) for c in _items(raw, "checks")]
        out += [p.under(f"tasks[{i}]") for p in _task_problems(task, raw.get("mcp_servers"), checks, ctx)]
    return out


_S = TypeVar("_S", bound=BaseModel)


def _items(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    return value if isinstance(value, list) else []


def _quietly(model: type[_S], raw: Any, *, mend: bool = True) -> _S | None:
    """``raw`` read as ``model``, or None when it cannot be (what is wrong with it is said elsewhere).
    With ``mend``, an item with a wrong field is read without it (its default), or with a stand-in for a
    missing name, so that the rest of it is checked too (a typo in ``instruction`` hides no bad
    ``start``)."""
    if not isinstance(raw, dict):
        return None
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        mended = _mended(model, raw, e) if mend else None
    if mended is None:
        return None
    try:
        return model.model_validate(mended)
    except ValidationError:
        return None


def _mended(model: type[BaseModel], raw: dict[str, Any], error: ValidationError) -> dict[str, Any] | None:
    """``raw`` without its wrong fields (those with a default, and names that are none) and with a
    stand-in for a missing text field; None when that cannot be done."""
    out = dict(raw)
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    for err in error.errors():
        loc = err.get("loc", ())
        key = loc[0] if loc else None
        if not isinstance(key, str):
            return None
        field = fields.get(key)
        if err.get("type") == "extra_forbidden" and len(loc) == 1:
            out.pop(key, None)
        elif err.get("type") == "missing" and len(loc) == 1 and field is not None and field.annotation is str:
            out[key] = "?"
        elif field is not None and not field.is_required():
            out.pop(key, None)
        else:
            return None
    return out


@dataclass(frozen=True)
class _Context:
    """What a task's checks need to know of the rest of the experiment."""

    judged: bool  # a [judge] model is named
    servers: frozenset[str] | None  # the servers every trial has, but its task's (None: not known)
    shared: frozenset[str]  # the shared ones, which no task may redefine


def _known(servers: set[str] | None, variants: Sequence[VariantSpec]) -> frozenset[str] | None:
    """The servers every trial has: the experiment's, and those every variant brings (in its config, or
    its folder's variant.toml); None when some cannot be read (that is said elsewhere)."""
    from .variants import Variant

    if servers is None:
        return None
    brought: list[set[str]] = []
    for v in variants:
        try:
            config = Variant.of(v.name, v.templates, dict(v.config)).config
        except ConfigError:
            return None
        names, problems = server_names(config.get("mcp_servers"))
        if names is None or problems:
            return None
        brought.append(names)
    return frozenset(servers | (set.intersection(*brought) if brought else set()))


def _variant_problems(spec: VariantSpec) -> list[Problem]:
    from .variants import Variant, variant_problems  # the templates are rendered to be checked

    try:
        variant = Variant.of(spec.name, spec.templates, dict(spec.config))
    except ConfigError as e:  # its variant.toml cannot be read
        return [Problem("templates", str(e))]
    return variant_problems(variant)


def _task_problems(
    task: TaskSpec | None, servers: Any, checks: Sequence[CheckSpec | None], ctx: _Context
) -> list[Problem]:
    """A task's own mistakes (when it could be read), its servers', then each check's."""
    out = task_problems(task) if task is not None else []
    own, problems = server_names(servers)
    out += problems
    out += [
        Problem("mcp_servers", f"redefines the shared server {n!r}")
        for n in sorted((own or set()) & ctx.shared)
    ]
    known = None if own is None or ctx.servers is None else own | ctx.servers
    for j, check in enumerate(checks):
        if check is not None:
            out += [p.under(f"checks[{j}]") for p in check_problems(check, judged=ctx.judged, servers=known)]
    return out
