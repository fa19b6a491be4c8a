"""Rendering through the Jinja2 templates of ``prompts/``: the only Jinja2 import.

One environment with ``StrictUndefined``.  A host may name a folder of
overrides: a template found there wins over the bundled one of the same name,
which is what prompt experiments build on.  Results come out as messages in
three shapes: OpenAI chat, Anthropic messages, and plain text.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import jinja2
from jinja2 import meta as jinja2_meta

from ..base.quoting import shorten
from ..base.results import Failure, Identity, Observation, Viewport
from ..errors import ConfigError
from ..profiles import DEFAULT_SESSION, ROO, Profile
from ..protocol.machine import Policy, Violation
from ..tools import BROWSER_TOOL, DEFAULT_VIEWPORT, CallError, ToolRegistry
from .messages import Rendered

if TYPE_CHECKING:
    from ..mcp.results import McpResult

__all__ = [
    "PROMPTS_DIR",
    "Renderer",
    "bundled_templates",
    "check_overrides",
    "format_templates",
    "neutralize",
    "template_table",
    "template_variables",
]

Observe = Literal["screenshot", "snapshot", "both"]
NOT_RUN_KINDS_SHOWN = 5  # the not-run note names at most this many kinds of call


def _prompts_dir() -> Path:
    return Path(str(resources.files("xmltools.prompts")))


PROMPTS_DIR = _prompts_dir()


def bundled_templates() -> list[str]:
    """The names of the bundled prompt templates (``system/browser_action.j2``, ...)."""
    return sorted(p.relative_to(PROMPTS_DIR).as_posix() for p in PROMPTS_DIR.rglob("*.j2"))


def check_overrides(folder: str | Path) -> None:
    """Every ``*.j2`` under ``folder`` must override a bundled template: a stray name is a typo."""
    d = Path(folder)
    names = bundled_templates()
    problems = []
    for p in sorted(d.rglob("*.j2")):
        rel = p.relative_to(d).as_posix()
        if rel not in names:
            closest = difflib.get_close_matches(rel, names, n=1, cutoff=0.0)
            hint = f"; did you mean {closest[0]}?" if closest else ""
            problems.append(f"{rel} matches no template{hint}")
    if problems:
        raise ConfigError(f"templates folder {str(d)!r}: " + "; ".join(problems))


# every render gets these two, whatever the template uses
TEMPLATE_GLOBALS = ("tool", "policy")


@functools.lru_cache(maxsize=1)
def template_variables() -> dict[str, tuple[str, ...]]:
    """Each bundled template and the variables it reads (besides ``tool`` and ``policy``).

    Found from the templates themselves (Jinja2's ``meta.find_undeclared_variables``),
    so an override can rely on exactly these.
    """
    env = Renderer().env  # the filters the templates use
    out: dict[str, tuple[str, ...]] = {}
    for name in bundled_templates():
        source = (PROMPTS_DIR / name).read_text()
        found = jinja2_meta.find_undeclared_variables(env.parse(source))
        out[name] = tuple(sorted(found - set(TEMPLATE_GLOBALS)))
    return out


def template_table() -> str:
    """The bundled templates and their variables as a Markdown table: docs/reference/templates.md's."""
    lines = ["| template | variables |", "|---|---|"]
    for name, variables in template_variables().items():
        lines.append(f"| `{name}` | {', '.join(f'`{v}`' for v in variables) or '(none)'} |")
    return "\n".join(lines)


def format_templates(overrides: str | Path | None = None) -> str:
    """The lines of ``xmltools prompt --list``: each template, its variables, and which are overridden."""
    if overrides is not None:
        check_overrides(overrides)
    table = template_variables()
    width = max(len(n) for n in table)
    lines = []
    for name, variables in table.items():
        mark = " (overridden)" if overrides is not None and (Path(overrides) / name).is_file() else ""
        lines.append(f"{name:<{width}}  {', '.join(variables) or '-'}{mark}")
    lines.append(f"every template also gets: {', '.join(TEMPLATE_GLOBALS)}")
    return "\n".join(lines)


def neutralize(value: object) -> str:
    """Escape page-derived text so that no part of it can read as a tag (``<`` becomes ``&lt;``)."""
    return html.escape(str(value), quote=False)


def neutralize_tools(value: object, names: Iterable[str]) -> str:
    """Escape only the ``<`` that would open or close a tool's tag (``<browser_action``, ``</note``).

    Page text, HTML and the model's own selectors stay as written (``a > b``,
    ``R&D``, ``<div>``), and still no part of them can read as a tool call.
    """
    text = str(value)
    if "<" not in text:
        return text
    pattern = _tool_tag_re(tuple(sorted(set(names))))
    return pattern.sub("&lt;", text)


@functools.lru_cache(maxsize=64)
def _tool_tag_re(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"<(?=\s*/?\s*(?:{alternatives})(?![\w.:-]))", re.IGNORECASE)


def sentence(value: object) -> str:
    """A message as a sentence: a capital first letter and a full stop at the end.

    A first word with a digit in it is a name the model may copy (a ref such as
    ``e12``, a tab id such as ``t2``): it is left as it is.
    """
    s = str(value).strip()
    if not s:
        return s
    first = s.split(maxsplit=1)[0]
    if not any(c.isdigit() for c in first):
        s = s[0].upper() + s[1:]
    return s if s[-1] in ".!?" else s + "."


class Renderer:
    """Renders the system prompt, results, errors and notes from the templates."""

    def __init__(
        self,
        templates: str | Path | None = None,
        *,
        policy: Policy | str = Policy.REJECT,
        escape: Literal["html", "tools"] = "html",
    ) -> None:
        """``escape`` says how text from the page is shown: ``html`` escapes every ``<``, ``>`` and
        ``&`` (the roo profile's way); ``tools`` escapes only what would open or close a tool's tag
        (the tools named by :meth:`guard`, and browser_action), so HTML and selectors read as written.
        """
        loaders: list[jinja2.BaseLoader] = []
        self.override_dir: Path | None = None
        if templates is not None:
            d = Path(templates)
            if not d.is_dir():
                raise ConfigError(f"templates folder {str(d)!r} does not exist")
            check_overrides(d)
            self.override_dir = d
            loaders.append(jinja2.FileSystemLoader(str(d)))
        loaders.append(jinja2.FileSystemLoader(str(PROMPTS_DIR)))
        self.env = jinja2.Environment(
            loader=jinja2.ChoiceLoader(loaders),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
        )
        self.escape = escape
        self.profile: Profile = ROO
        self._guarded: frozenset[str] = frozenset({BROWSER_TOOL})
        self.env.filters["page"] = neutralize if escape == "html" else self._neutralize_tools
        self.env.filters["sentence"] = sentence
        self.env.filters["count"] = _count
        self.policy = Policy(policy)

    def use_profile(self, profile: Profile) -> None:
        """Write the protocol's hints in ``profile``'s dialect (its tool, its opener and closer)."""
        self.profile = profile

    def tools_changed(self, registry: ToolRegistry, *, opened: bool) -> Rendered:
        """For dialects with dynamic tools: the tools a session start made available, or a close took away."""
        tools = [a for a in registry.actions if a not in (registry.profile.opener,)]
        return Rendered("note", self.render("note/tools_changed.j2", opened=opened, tools=tools))

    def guard(self, names: Iterable[str]) -> None:
        """The tool names whose tags page text must never open or close (``escape="tools"``)."""
        self._guarded = frozenset({BROWSER_TOOL, *names})

    def _neutralize_tools(self, value: object) -> str:
        return neutralize_tools(value, self._guarded)

    # -- plumbing ------------------------------------------------------------

    def render(self, name: str, /, **context: Any) -> str:
        try:
            template = self.env.get_template(name)
            text = template.render(
                tool=context.pop("tool", self.profile.label), policy=self.policy.value, **context
            )
        except jinja2.TemplateNotFound as e:
            raise ConfigError(f"no template named {e.name!r}") from e
        except jinja2.TemplateError as e:
            raise ConfigError(f"template {name!r} failed: {e}") from e
        return _tidy(text)

    def template_names(self) -> list[str]:
        return sorted(n for n in self.env.list_templates() if n.endswith(".j2"))

    def template_hashes(self) -> dict[str, str]:
        """sha256 of every template's source as this renderer sees it (overrides included)."""
        out: dict[str, str] = {}
        loader = self.env.loader
        assert loader is not None
        for name in self.template_names():
            source, _, _ = loader.get_source(self.env, name)
            out[name] = hashlib.sha256(source.encode()).hexdigest()[:16]
        return out

    # -- the system prompt ----------------------------------------------------------

    def system_prompt(
        self,
        registry: ToolRegistry | None = None,
        viewport: Viewport = DEFAULT_VIEWPORT,
        *,
        file_urls: bool = False,
        observe: Observe = "screenshot",
        upload_folders: Sequence[str | Path] = (),
        workspace: bool = False,
        max_wait_seconds: float = 10.0,
        script_rule: str = "ask",
        max_sessions: int = 3,
        open_sessions: Sequence[str] = (),
        dynamic_tools: bool = True,
        opener_asks: bool = False,
        mcp_servers: Sequence[dict[str, Any]] = (),
    ) -> str:
        """The tools' sections of a system prompt: browser_action (if enabled), then each host tool.

        The browser's section is the registry's profile's template (roo or full),
        listing only the actions the registry offers; ``observe`` says what each
        result will show (a screenshot, the snapshot as text, or both), and
        ``upload_folders`` where the files of ``upload`` may come from;
        ``workspace`` whether screenshots can be saved, ``max_wait_seconds`` the
        longest wait, ``script_rule`` the approval rule of ``evaluate``, and
        ``max_sessions`` how many named sessions may be open at once.  A dialect
        with dynamic tools (forge) lists only its opener while ``open_sessions``
        is empty, unless ``dynamic_tools`` is false.  ``mcp_servers`` (from
        :func:`xmltools.mcp.calls.listing`) adds the MCP servers' section; without
        servers the prompt is what it was.
        """
        registry = registry or ToolRegistry()
        parts: list[str] = []
        if registry.browser:
            parts.append(
                self.render(
                    registry.profile.template,
                    tool=registry.profile.label,
                    viewport=viewport,
                    actions=list(registry.actions),
                    file_urls=file_urls,
                    observe=observe,
                    upload_folders=[str(f) for f in upload_folders],
                    workspace=workspace,
                    max_wait_seconds=f"{max_wait_seconds:g}",
                    script_rule=script_rule,
                    max_sessions=max_sessions,
                    only_opener=registry.profile.dynamic_tools and dynamic_tools and not open_sessions,
                    dynamic_tools=registry.profile.dynamic_tools and dynamic_tools,
                    opener=registry.profile.opener,
                    opener_asks=opener_asks,
                    open_call=registry.profile.open_call("shop" if registry.profile.sessions else None),
                )
            )
        for t in registry.host_tools:
            parts.append(
                self.render(
                    t.template,
                    tool={"name": t.name, "description": t.description, "fields": t.fields()},
                )
            )
        if mcp_servers:
            parts.append(self.render("system/mcp.j2", servers=list(mcp_servers)))
        return "\n\n".join(parts)

    # -- results and errors --------------------------------------------------------

    def browser_result(self, action: str, obs: Observation) -> Rendered:
        return Rendered("result", self.render("result/browser.j2", action=action, obs=obs), obs.screenshot)

    def close_result(self, closed: str | None = None, still_open: Sequence[str] = ()) -> Rendered:
        """The browser (or the session ``closed``) was closed; ``still_open`` are the sessions left."""
        return Rendered(
            "result",
            self.render(
                "result/close.j2",
                closed=closed or DEFAULT_SESSION,
                still_open=list(still_open),
                opener=self.profile.opener,
            ),
        )

    def tool_result(self, tool: str, output: object) -> Rendered:
        return Rendered("result", self.render("result/tool.j2", tool=tool, output=str(output)))

    def call_error(self, error: CallError) -> Rendered:
        return Rendered("error", self.render("error/call.j2", error=error))

    def violation(
        self,
        violation: Violation,
        called: str,
        action: str | None,
        *,
        session: str | None = None,
        sessions: Sequence[str] = (),
    ) -> Rendered:
        """A protocol refusal; ``session``: a session other than the default; ``sessions``: the open ones."""
        p = self.profile
        return Rendered(
            "error",
            self.render(
                "error/protocol.j2",
                violation=violation.code,
                called=called,
                action=action or called,
                session=session,
                sessions=list(sessions),
                opener=p.opener,
                closer=p.closer,
                launch_call=p.open_call(session),
                close_call=p.close_call(
                    sessions[0] if len(sessions) == 1 and sessions[0] != DEFAULT_SESSION else None
                ),
                default=DEFAULT_SESSION,
                session_param=p.session_param_of(p.closer) or p.session_param,
            ),
        )

    def denied(self, tool: str, action: str | None, reason: str) -> Rendered:
        """A call the approval policy refused: "denied by policy: <reason>"."""
        return Rendered(
            "error",
            self.render(
                "error/approval.j2", answer="denied", what=_what(tool, action), reason=shorten(reason, 500)
            ),
        )

    def approval_required(self, tool: str, action: str | None, prompt: str) -> Rendered:
        """A call held for the host's answer: "approval required: <prompt>"."""
        return Rendered(
            "error",
            self.render(
                "error/approval.j2", answer="ask", what=_what(tool, action), prompt=shorten(prompt, 500)
            ),
        )

    def browser_failure(self, action: str, failure: Failure) -> Rendered:
        shot = failure.observation.screenshot if failure.observation else None
        return Rendered("error", self.render("error/browser.j2", action=action, failure=failure), shot)

    def tool_failure(self, tool: str, message: str) -> Rendered:
        # a handler's exception may quote what the model sent: keep it to a readable length
        return Rendered("error", self.render("error/tool.j2", tool=tool, message=shorten(message, 2_000)))

    def mcp_result(self, result: McpResult) -> list[Rendered]:
        """A server's answer: its text (the tool's error when the server said so), then its images."""
        images = result.images
        kind: Literal["result", "error"] = "error" if result.is_error else "result"
        text = self.render("result/mcp.j2", result=result)
        first = Rendered(kind, text, images[0] if images else None)
        return [first, *(Rendered(kind, "", img) for img in images[1:])]

    def mcp_unavailable(self, server: str, why: str) -> Rendered:
        """A started server that crashed or did not answer during the call."""
        return Rendered(
            "error", self.render("error/mcp_unavailable.j2", server=server, why=shorten(why, 300))
        )

    def mcp_tools_changed(self, changed: Sequence[str], servers: Sequence[dict[str, Any]]) -> Rendered:
        """A server's tools changed: the note, with the servers' section as it is now."""
        listing = self.render("system/mcp.j2", servers=list(servers))
        return Rendered(
            "note", self.render("note/mcp_tools_changed.j2", changed=list(changed), listing=listing)
        )

    def not_run(self, calls: Sequence[tuple[str, str | None]], ran: str | None) -> Rendered:
        """One note for all the calls of a message that were not run: ``calls`` holds (tool, action)."""
        groups: dict[tuple[str, str | None], int] = {}
        for name, action in calls:
            key = (name, shorten(action, 30) if action is not None else None)
            groups[key] = groups.get(key, 0) + 1
        kinds = [{"name": n, "action": a, "count": c} for (n, a), c in groups.items()]
        shown = kinds[:NOT_RUN_KINDS_SHOWN]
        return Rendered(
            "note",
            self.render(
                "note/not_run.j2",
                count=len(calls),
                kinds=shown,
                more_kinds=len(kinds) - len(shown),
                ran=ran,
            ),
        )

    def more_errors(self, count: int) -> Rendered:
        """``count`` more broken calls whose errors are not spelled out (the first few are)."""
        return Rendered("note", self.render("note/more_errors.j2", count=count))

    def message_too_large(self, limit: int) -> Rendered:
        """The model's message passed ``max_message_chars``: only its first ``limit`` characters were read."""
        return Rendered("error", self.render("error/message_too_large.j2", limit=limit))

    def mistake_limit(self, mistakes: int, limit: int) -> Rendered:
        return Rendered("note", self.render("note/mistake_limit.j2", mistakes=mistakes, limit=limit))

    def no_tool(self) -> Rendered:
        return Rendered("note", self.render("note/no_tool.j2"))

    def idle_closed(self, seconds: float, session: str | None = None) -> Rendered:
        return Rendered("note", self.render("note/idle_closed.j2", seconds=seconds, session=session))

    def auto_closed(self, called: str, sessions: Sequence[str] = ()) -> Rendered:
        return Rendered("note", self.render("note/auto_closed.j2", called=called, sessions=list(sessions)))

    def image_dropped(self) -> str:
        return self.render("note/image_dropped.j2")

    def stuck(self, kind: str, turns: int, what: str) -> Rendered:
        """A nudge to a model going round in circles (``kind``: repeat or stagnant)."""
        return Rendered("note", self.render("note/stuck.j2", kind=kind, turns=turns, what=what))

    def budget(
        self, left: list[str], *, last: str | None = None, tool: str | None = None, closed: bool = False
    ) -> Rendered:
        """What is left of the run's budgets; or, with ``last`` (the spent budget), the last turn."""
        text = self.render(
            "note/budget.j2",
            left=left,
            last=last is not None,
            budget=(last or "").removeprefix("max_"),
            tool=tool,
            closed=closed,
        )
        return Rendered("note", text)

    def heal_prompt(
        self, *, action: str, identity: Identity, failure: str, snapshot: str, url: str, action_name: str
    ) -> str:
        """What a model is asked to mend a replayed step whose element is gone (healing); the page's
        text cannot pass for a call."""
        return self.render(
            "note/heal.j2",
            action=action,
            identity=identity,
            failure=self._neutralize_tools(failure),
            snapshot=self._neutralize_tools(snapshot),
            url=url,
            action_name=action_name,
        )

    def judge_prompt(self, *, task: str, rubric: str, answer: str | None, url: str | None, page: str) -> str:
        """What a judging model is asked about one experiment trial; the page's text cannot pass for
        a call."""
        return self.render(
            "note/judge.j2",
            task=task,
            rubric=rubric,
            answer=None if answer is None else self._neutralize_tools(answer),
            url=url,
            page=self._neutralize_tools(page),
        )


def _what(tool: str, action: str | None) -> str:
    return f"{action} action" if action else f"<{tool}> call"


def _count(n: int) -> str:
    """A number with thousands separators: 100,000."""
    return f"{n:,}"


def _tidy(text: str) -> str:
    """Strip trailing spaces and collapse runs of blank lines left by template logic."""
    lines = [ln.rstrip() for ln in text.strip("\n").splitlines()]
    out: list[str] = []
    for ln in lines:
        if ln == "" and out and out[-1] == "":
            continue
        out.append(ln)
    return "\n".join(out).strip()
