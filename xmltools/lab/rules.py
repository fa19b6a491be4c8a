"""What a check, a task, a model or the machine lacks, beyond the types of the file's fields.

Each function answers a list of :class:`~xmltools.lab.problems.Problem`, its
path within the part it checks (``kind``, ``start``, ``key_env``):
:func:`check_problems` (a kind that does not exist, the fields its kind reads
and needs, a pattern, an mcp check's server, a judge check with no judge),
:func:`task_problems` (where the task starts), :func:`model_problems` (a key
variable's name, an address), and what the machine lacks for a run:
:func:`environment_problems` (keys, addresses) and :func:`server_problems`
(the MCP servers' programs).  :mod:`.plan` puts them together for a file.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base.spelling import did_you_mean
from ..errors import ConfigError
from ..mcp.settings import read_servers
from .kinds import KINDS
from .problems import Problem
from .specs import CheckSpec, Experiment, ModelSpec, TaskSpec

__all__ = [
    "check_problems",
    "environment_problems",
    "model_problems",
    "server_names",
    "server_problems",
    "shared_problems",
    "task_problems",
]


def server_names(value: Any) -> tuple[set[str] | None, list[Problem]]:
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


def shared_problems(shared: Sequence[str], servers: set[str] | None) -> list[Problem]:
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


def server_problems(exp: Experiment, environ: Mapping[str, str] | None = None) -> list[Problem]:
    """The MCP servers' programs this machine lacks (found as a trial would look for them: on the
    ``PATH`` of the server's environment): a run stops on these before any request; a dry run warns."""
    from .variants import Variant

    env = os.environ if environ is None else environ
    groups: list[tuple[str, Any]] = [("mcp_servers", exp.mcp_servers)]
    for i, v in enumerate(exp.variants):
        with contextlib.suppress(ConfigError):  # a variant.toml that cannot be read is said elsewhere
            groups.append(
                (
                    f"variants[{i}].config.mcp_servers",
                    Variant.of(v.name, v.templates, v.config).config.get("mcp_servers"),
                )
            )
    groups += [(f"tasks[{i}].mcp_servers", t.mcp_servers) for i, t in enumerate(exp.tasks)]
    out: list[Problem] = []
    for where, value in groups:
        try:
            servers = read_servers(value)
        except ConfigError:
            continue  # said elsewhere
        for s in servers:
            path = {**env, **s.env}.get("PATH")
            if s.command is not None and shutil.which(s.command, path=path) is None:
                out.append(
                    Problem(
                        f"{where}.{s.name}.command",
                        f"{s.command!r} is not found (a program on PATH, or its path)",
                    )
                )
    return out
