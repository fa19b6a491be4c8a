"""The experiment file: variants × models × tasks × trials, with the checks that decide each trial.

TOML, for three reasons: the standard library reads it (no dependency), it
holds comments, and it is the format of every other setting here
(``xmltools.toml``, ``[tool.xmltools]``, ``variant.toml``).  Paths in it are
relative to the file.  A file that is not valid is a
:class:`~xmltools.errors.ConfigError` naming the file and the field.

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
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import ConfigError
from ..mcp.settings import read_servers

__all__ = [
    "CheckSpec",
    "Experiment",
    "JudgeSpec",
    "Limits",
    "ModelSpec",
    "TaskSpec",
    "VariantSpec",
    "load_experiment",
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

    @model_validator(mode="after")
    def _mcp(self) -> CheckSpec:
        if self.kind == "mcp" and (not self.server or (self.uri is None) == (self.tool is None)):
            raise ValueError("an mcp check names a server, and a uri or a tool (not both)")
        return self

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

    @model_validator(mode="after")
    def _judged(self) -> Experiment:
        judged = [t.id for t in self.tasks if any(c.kind == "judge" for c in t.checks)]
        if judged and self.judge is None:
            raise ValueError(f"task {judged[0]!r} has a judge check, but no [judge] model is named")
        return self

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
            exclude={"trials", "concurrency", "limits", "remote", "shared_servers"},
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


def load_experiment(path: str | Path) -> Experiment:
    """Read an experiment file; a problem is a ConfigError naming the file and the field."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such experiment file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: cannot be read ({e})") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML ({e})") from e
    here = p.resolve().parent
    for section, key in (("variants", "templates"), ("tasks", "serve"), ("tasks", "mcp_servers")):
        for item in data.get(section) or ():
            if isinstance(item, dict) and isinstance(item.get(key), str):
                item[key] = here / item[key]
    if isinstance(data.get("mcp_servers"), str):
        data["mcp_servers"] = here / data["mcp_servers"]
    try:
        exp = Experiment.model_validate({**data, "path": p})
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        msg = str(first.get("msg", "")).removeprefix("Value error, ")
        raise ConfigError(f"{p}: {where + ': ' if where else ''}{msg}{more}") from e
    for t in exp.tasks:
        if t.url is not None and t.serve is not None:
            raise ConfigError(f"{p}: task {t.id!r} has both url and serve: give one")
        if t.serve is not None and not t.serve.is_dir():
            raise ConfigError(f"{p}: task {t.id!r}: serve {t.serve} is not a folder")
    for v in exp.variants:
        if v.templates is not None and not v.templates.is_dir():
            raise ConfigError(f"{p}: variant {v.name!r}: templates {v.templates} is not a folder")
    _check_servers(p, exp)
    return exp


def _check_servers(p: Path, exp: Experiment) -> None:
    """Each server entry read (a bad one is one line naming its field); the shared ones among the
    experiment's own, and no task redefining one of them."""
    servers = {s.name for s in read_servers(exp.mcp_servers, f"{p}: mcp_servers")}
    unknown = [n for n in exp.shared_servers if n not in servers]
    if unknown:
        raise ConfigError(f"{p}: shared_servers: {unknown[0]!r} is not one of the experiment's mcp_servers")
    for t in exp.tasks:
        own = {s.name for s in read_servers(t.mcp_servers, f"{p}: task {t.id!r}: mcp_servers")}
        twice = sorted(own & set(exp.shared_servers))
        if twice:
            raise ConfigError(f"{p}: task {t.id!r} redefines the shared server {twice[0]!r}")
