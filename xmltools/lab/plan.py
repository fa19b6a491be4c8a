"""The experiment file: variants × models × tasks × trials, with the checks that decide each trial.

TOML, for three reasons: the standard library reads it (no dependency), it
holds comments, and it is the format of every other setting here
(``xmltools.toml``, ``[tool.xmltools]``, ``variant.toml``).  Paths in it are
relative to the file.  :func:`load_experiment` checks a file whole before
anything runs (the fields and their types, the check kinds and the fields each
reads, the folders, the start pages, the variants' settings and templates, the
MCP servers, the judge), and says every mistake at once: one
:class:`~xmltools.errors.ConfigError`, a line each naming the file and the field
(``exp.toml: tasks[2].checks[0].kind: no check named 'ulr'; did you mean
'url'?``).  What the environment lacks (a key variable that is not set) is
:func:`environment_problems`'s, so that a dry run needs no key.  A ``title``
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

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..base.spelling import did_you_mean
from ..errors import ConfigError
from ..mcp.settings import read_servers
from .kinds import KINDS
from .problems import Problem, field_names, from_pydantic, raise_problems, sort_problems

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
    "task_problems",
]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckSpec(_Spec):
    """One check of a task: ``kind`` names a registered check (url, text, element, aria, js, answer,
    judge); for ``judge``, ``value`` is the rubric."""

    kind: str
    value: str = ""
    regex: bool = False
    role: str | None = None
    name: str | None = None
    schema_: dict[str, Any] | None = Field(None, alias="schema")
    # kind "mcp": what an MCP server answers, read after the trial: a resource (uri), or a tool the
    # server marks read-only (tool and arguments); value is looked for in the answer's text
    server: str | None = None
    uri: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)

    def describe(self) -> str:
        if self.kind == "element":
            return f"element {self.role} {self.name!r}" if self.name else f"element {self.role}"
        if self.kind == "mcp":
            return f"mcp {self.server} {self.uri or self.tool} {self.value!r}"
        shown = self.value if len(self.value) <= 60 else self.value[:57] + "..."
        return f"{self.kind} {shown!r}" + (" (regex)" if self.regex else "")


class TaskSpec(_Spec):
    id: str
    instruction: str
    url: str | None = None  # the page to start on
    serve: Path | None = None  # or a folder served on 127.0.0.1 for the task
    start: str = ""  # the path to start at in the served folder
    checks: tuple[CheckSpec, ...] = ()
    # MCP servers for this task's trials (the mcpServers shape, or an mcp.json's path): over the
    # experiment's and the variant's servers of the same name
    mcp_servers: dict[str, Any] | Path | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not v.strip() or any(c in v for c in "/\\\n"):
            raise ValueError(f"{v!r} is not a task id: a short name without slashes")
        return v


class VariantSpec(_Spec):
    name: str
    templates: Path | None = None
    config: dict[str, Any] = Field(default_factory=dict)


class ModelSpec(_Spec):
    name: str  # how the results name it
    provider: Literal["openai", "anthropic"] = "openai"
    model: str = ""  # the API's model name (the name, when not given)
    base_url: str | None = None
    key_env: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    price_in: float = Field(0.0, ge=0)  # dollars per million input tokens
    price_out: float = Field(0.0, ge=0)  # dollars per million output tokens
    max_requests: int = Field(4, ge=1)  # requests to this model at once

    @property
    def api_name(self) -> str:
        return self.model or self.name

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1_000_000


class JudgeSpec(ModelSpec):
    """The model a ``judge`` check asks: a model like the others, whose name may go unsaid (its
    API name may not: a judge is not a trial's model, and nothing else names it)."""

    name: str = "judge"
    model: str = Field(min_length=1)


class Limits(_Spec):
    turns: int = Field(20, ge=1)  # per trial
    tokens: int | None = Field(None, ge=1)  # per trial
    seconds: float | None = Field(None, gt=0)  # per trial
    cost: float | None = Field(None, ge=0)  # for the whole run: no trial starts past it
    check_seconds: float = Field(5.0, gt=0)  # how long a page check waits for what it looks for


class Experiment(_Spec):
    """An experiment file as read: variants × models × tasks × trials, with its limits (see the module)."""

    variants: tuple[VariantSpec, ...]
    models: tuple[ModelSpec, ...]
    tasks: tuple[TaskSpec, ...]
    trials: int = Field(8, ge=1)
    limits: Limits = Limits()
    concurrency: int | None = Field(None, ge=1)
    judge: JudgeSpec | None = None  # the model a judge check asks; no judge check runs without one
    remote: str | None = None  # browsers from these endpoints (comma-separated) unless a variant says
    # MCP servers for every task (the mcpServers shape, or an mcp.json's path); each trial starts its
    # own, but for the shared ones, which one process serves to every trial at once
    mcp_servers: dict[str, Any] | Path | None = None
    shared_servers: tuple[str, ...] = ()
    title: str | None = None  # the report's title (else one made from the file's name)

    path: Path | None = Field(None, exclude=True)  # the file it came from

    @field_validator("variants", "models", "tasks")
    @classmethod
    def _named_once(cls, v: tuple[Any, ...]) -> tuple[Any, ...]:
        if not v:
            raise ValueError("needs at least one")
        names = [str(getattr(x, "name", None) or getattr(x, "id", "")) for x in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"names {twice} are used twice")
        return v

    def cells(self) -> list[tuple[str, str, str, int]]:
        """Every trial to run, as (variant, model, task, index), in a fixed order."""
        return [
            (v.name, m.name, t.id, k)
            for t in self.tasks
            for m in self.models
            for v in self.variants
            for k in range(1, self.trials + 1)
        ]

    def fingerprint(self) -> str:
        """What a resumed run must share with the one it resumes: everything but the trial count,
        the limits and where the browsers run."""
        data = self.model_dump(
            mode="json",
            by_alias=True,
            exclude={"trials", "concurrency", "limits", "remote", "shared_servers", "title"},
        )
        for key in ("mcp_servers",):  # an experiment without servers hashes as it did before them
            if data.get(key) is None:
                data.pop(key, None)
        for task in data.get("tasks") or ():
            if task.get("mcp_servers") is None:
                task.pop("mcp_servers", None)
            for check in task.get("checks") or ():
                for key in ("server", "uri", "tool"):
                    if check.get(key) is None:
                        check.pop(key, None)
                if not check.get("arguments"):
                    check.pop("arguments", None)
        if data.get("judge") is None:  # an experiment without a judge hashes as it did before judges
            data.pop("judge", None)
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def variant(self, name: str) -> VariantSpec:
        return next(v for v in self.variants if v.name == name)

    def model(self, name: str) -> ModelSpec:
        return next(m for m in self.models if m.name == name)

    def task(self, task_id: str) -> TaskSpec:
        return next(t for t in self.tasks if t.id == task_id)

    def report_title(self) -> str:
        """The report's title: the file's ``title``; else "Experiment" and the file's name, or its
        folder's when the name says nothing (``experiment.toml``); "Prompt experiment" with no file."""
        if self.title:
            return self.title
        if self.path is None:
            return "Prompt experiment"
        name = self.path.stem
        if name.lower() in GENERIC_NAMES:
            name = self.path.resolve().parent.name or name
        return f"Experiment {name}"


GENERIC_NAMES = frozenset({"experiment", "experiments", "exp", "study"})  # file names that name nothing


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
    known, problems = _servers(exp.mcp_servers)
    out += problems + _shared_problems(exp.shared_servers, known)
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
    servers, problems = _servers(data.get("mcp_servers"))
    shared = tuple(str(n) for n in _items(data, "shared_servers"))
    out += problems + _shared_problems(shared, servers)
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
        names, problems = _servers(config.get("mcp_servers"))
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
    own, problems = _servers(servers)
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


def _servers(value: Any) -> tuple[set[str] | None, list[Problem]]:
    """The names of the servers of an ``mcp_servers`` value, and what is wrong with its entries, each
    read on its own (None: the names are not known, the value being wrong)."""
    if value is None:
        return set(), []
    if not isinstance(value, dict | str | Path):
        return None, []  # its type is said elsewhere
    entries = value.get("mcpServers", value) if isinstance(value, dict) else None
    parts = [{"mcpServers": {n: e}} for n, e in entries.items()] if isinstance(entries, dict) else [value]
    names: set[str] = set()
    problems: list[Problem] = []
    for part in parts:
        try:
            names |= {s.name for s in read_servers(part, "mcp_servers")}
        except ConfigError as e:
            problems.append(Problem("", str(e)))
    return (names if not problems else None), problems


def _shared_problems(shared: Sequence[str], servers: set[str] | None) -> list[Problem]:
    if servers is None:
        return []
    return [
        Problem(
            "shared_servers", f"{n!r} is not one of the experiment's mcp_servers{did_you_mean(n, servers)}"
        )
        for n in shared
        if n not in servers
    ]


def check_problems(
    spec: CheckSpec, *, judged: bool = True, servers: Collection[str] | None = None
) -> list[Problem]:
    """A check's mistakes: a kind that does not exist (the closest one offered), a field its kind does
    not read, one it needs and lacks, a pattern that is no regular expression, an mcp check's server
    that the task's trials do not have (``servers``; None: not known), a judge check with no judge."""
    shape = KINDS.get(spec.kind)
    if shape is None:
        hint = did_you_mean(spec.kind, KINDS) or f"; the kinds are: {', '.join(sorted(KINDS))}"
        return [Problem("kind", f"no check named {spec.kind!r}{hint}")]
    given = {"schema" if f == "schema_" else f for f in spec.model_fields_set} - {"kind"}
    out: list[Problem] = []
    if shape.fields is not None:
        for name in sorted(given - shape.fields):
            out.append(Problem(name, f"not a field of {_a(spec.kind)} check (it reads {shape.reads()})"))
    if shape.needs and not any(_value(spec, f) for f in shape.needs):
        need = shape.needs[0]
        if len(shape.needs) > 1:
            out.append(Problem("", f"{_a(spec.kind)} check needs {' or '.join(shape.needs)}"))
        else:
            said = "empty" if need in given else "missing"
            out.append(Problem(need, f"{said} ({_a(spec.kind)} check needs it)"))
    if spec.regex and spec.value:
        try:
            re.compile(spec.value)
        except re.error as e:
            out.append(Problem("value", f"not a regular expression ({e})"))
    if spec.kind == "mcp":
        if (spec.uri is None) == (spec.tool is None):
            out.append(Problem("", "an mcp check reads a resource (uri) or calls a tool (tool): give one"))
        if spec.server and servers is not None and spec.server not in servers:
            known = did_you_mean(spec.server, servers) or (
                f"; it has: {', '.join(sorted(servers))}" if servers else ""
            )
            out.append(Problem("server", f"the task's trials have no server named {spec.server!r}{known}"))
    if spec.kind == "judge" and not judged:
        out.append(Problem("kind", "a judge check asks the [judge] model, and the file names none"))
    return out


def _a(kind: str) -> str:
    """The kind with its article, as said aloud: an answer check, an mcp check, a url check."""
    return ("an " if kind in ("answer", "element", "aria", "mcp") else "a ") + kind


def _value(spec: CheckSpec, name: str) -> bool:
    return bool(getattr(spec, "schema_" if name == "schema" else name, None))


def task_problems(task: TaskSpec) -> list[Problem]:
    """A task's mistakes: where it starts (url and serve both, a served folder that is not there, a
    start page that is not in it, a start with nothing served, an address that is none), and an
    empty instruction."""
    out: list[Problem] = []
    if not task.instruction.strip():
        out.append(Problem("instruction", "empty: say what the model is to do"))
    if task.url is not None and task.serve is not None:
        out.append(Problem("", "url and serve are both given: give one"))
    if task.url is not None and not re.match(r"(https?|file)://|about:|data:", task.url):
        out.append(Problem("url", f"{task.url!r} is not an address (http://, https:// or file://)"))
    if task.serve is None:
        if task.start:
            out.append(
                Problem("start", "a path in the served folder: give serve too (or the whole address as url)")
            )
        return out
    if not task.serve.is_dir():
        out.append(Problem("serve", f"{task.serve} is not a folder"))
        return out
    page = re.split(r"[?#]", task.start, maxsplit=1)[0].lstrip("/")
    if page and not (task.serve / page).exists():
        files = [
            f.relative_to(task.serve).as_posix() for f in sorted(task.serve.rglob("*"))[:2000] if f.is_file()
        ]
        out.append(Problem("start", f"{page!r} is not in {task.serve}{did_you_mean(page, files)}"))
    return out


KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def model_problems(spec: ModelSpec) -> list[Problem]:
    """A model's mistakes: a ``key_env`` that is not a variable's name (a key written in its place is
    not repeated), a ``base_url`` that is not an address."""
    out: list[Problem] = []
    if spec.key_env is not None and not KEY_NAME.fullmatch(spec.key_env):
        out.append(
            Problem("key_env", "not a variable's name: give the name of the variable that holds the key")
        )
    if spec.base_url is not None and not spec.base_url.startswith(("http://", "https://")):
        out.append(Problem("base_url", f"{spec.base_url!r} is not an http:// or https:// address"))
    return out


def environment_problems(exp: Experiment, environ: Mapping[str, str] | None = None) -> list[Problem]:
    """What the environment lacks for the experiment's models (and its judge): a key variable that is
    not set, an openai model with no address (and no ``OPENAI_BASE_URL``), an anthropic one with no
    key at all.  A run stops on these before any request; a dry run only warns."""
    env = os.environ if environ is None else environ
    out: list[Problem] = []
    named = [(f"models[{i}]", m) for i, m in enumerate(exp.models)]
    if exp.judge is not None and any(c.kind == "judge" for t in exp.tasks for c in t.checks):
        named.append(("judge", exp.judge))
    for where, m in named:
        if m.key_env and m.key_env not in env:
            out.append(Problem(f"{where}.key_env", f"{m.key_env} is not set"))
        if m.provider == "openai" and not m.base_url and not env.get("OPENAI_BASE_URL"):
            out.append(
                Problem(
                    f"{where}.base_url",
                    "missing, and OPENAI_BASE_URL is not set: the openai provider"
                    " needs the server's address, such as http://127.0.0.1:8000/v1",
                )
            )
        if (
            m.provider == "anthropic"
            and not m.key_env
            and not {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} & set(env)
        ):
            out.append(Problem(f"{where}.key_env", "missing, and ANTHROPIC_API_KEY is not set"))
    return out
