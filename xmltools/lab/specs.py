"""The experiment file's parts as data: its variants, models, tasks, checks, judge and limits.

Pydantic models, frozen, that refuse a field they do not have; their types are
the first check of a file (:mod:`.plan` reads it and checks the rest).
:meth:`Experiment.fingerprint` is what a resumed run must share with the one it
resumes.  Imports no other module of :mod:`xmltools.lab`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["CheckSpec", "Experiment", "JudgeSpec", "Limits", "ModelSpec", "TaskSpec", "VariantSpec"]


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
