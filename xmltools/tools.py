"""The tool registry: ``browser_action`` in a profile's dialect, host tools, and validation.

A call from the parser becomes either a typed, validated action or a
:class:`CallError` that says exactly what is wrong and shows a correct call.
The browser actions themselves (their models, targets and value formats) live
in :mod:`xmltools.actions` and are re-exported here; which of them a session
offers, under which parameter names, is the profile's (:mod:`xmltools.profiles`).
Host programs register their own tools here (a name, a pydantic parameter
model, a handler and a description); the parser's vocabulary comes from this
registry.  Pure: neither Playwright nor Jinja2 is imported.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeAlias

from pydantic import BaseModel, Field, ValidationError

from .actions import (
    DEFAULT_VIEWPORT,
    ActionContext,
    ActionModel,
    BrowserAction,
    Click,
    Close,
    Drag,
    Fill,
    Hover,
    Launch,
    Press,
    ProfileName,
    Resize,
    Scroll,
    ScrollDown,
    ScrollUp,
    Select,
    Snapshot,
    Target,
    Type,
    Upload,
    check_url,
    normalize_keys,
    parse_coordinate,
    parse_size,
    selector_kind,
)
from .approval import CATEGORIES
from .errors import ConfigError
from .parser import ToolSyntax, ToolUse, Vocabulary
from .profiles import ROO, Profile, get_profile
from .quoting import quoted, shorten

__all__ = [
    "ACTION_MODELS",
    "BROWSER_TOOL",
    "COMPLETION_TOOL",
    "DEFAULT_VIEWPORT",
    "STANDARD_TOOLS",
    "ActionContext",
    "ActionModel",
    "BrowserAction",
    "CallError",
    "Click",
    "Close",
    "Drag",
    "Fill",
    "Hover",
    "Launch",
    "Press",
    "Profile",
    "ProfileName",
    "Resize",
    "Scroll",
    "ScrollDown",
    "ScrollUp",
    "Select",
    "Snapshot",
    "Target",
    "Tool",
    "ToolRegistry",
    "Type",
    "Upload",
    "ValidCall",
    "check_url",
    "format_call",
    "normalize_keys",
    "parse_coordinate",
    "parse_size",
    "selector_kind",
]

BROWSER_TOOL = "browser_action"
_SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
MAX_ERROR_CHARS = 1_000  # the longest message one CallError carries

# the classic (roo) actions, by name; every profile's actions are in xmltools.profiles
ACTION_MODELS: dict[str, type[ActionModel]] = {name: form.model for name, form in ROO.actions.items()}
ACTION_NAMES: tuple[str, ...] = tuple(ACTION_MODELS)


# -- host tools and the registry ---------------------------------------------------------

Handler: TypeAlias = Callable[[Any], Any] | Callable[[Any], Awaitable[Any]]


class ParamInfo(NamedTuple):
    name: str
    description: str
    required: bool


@dataclass(frozen=True)
class Tool:
    """A host tool: a name, a pydantic model of its parameters, a handler and a description.

    The handler receives the validated model and returns text (or anything with
    a useful ``str``); it may be async.  ``raw`` names free-text parameters
    (kept verbatim, as ``text`` is).  A ``completes`` tool ends the chat loop.
    ``category`` puts the tool under the approval policy (:mod:`xmltools.approval`).
    """

    name: str
    params: type[BaseModel]
    handler: Handler
    description: str = ""
    template: str = "system/tool.j2"
    raw: frozenset[str] = frozenset()
    completes: bool = False
    category: str | None = None  # an approval category (read, navigate, …); None: not gated

    def __post_init__(self) -> None:
        if self.category is not None and self.category not in CATEGORIES:
            raise ConfigError(
                f"tool {self.name!r}: {self.category!r} is not a category; the categories are:"
                f" {', '.join(CATEGORIES)}"
            )
        if self.name == BROWSER_TOOL:
            raise ConfigError(f"{BROWSER_TOOL!r} is built in; give your tool another name")
        if not (isinstance(self.params, type) and issubclass(self.params, BaseModel)):
            raise ConfigError(f"tool {self.name!r}: params must be a pydantic model class")
        if not callable(self.handler):
            raise ConfigError(f"tool {self.name!r}: the handler is not callable")
        object.__setattr__(self, "raw", frozenset(self.raw))
        self.syntax()  # validates the names

    def syntax(self) -> ToolSyntax:
        return ToolSyntax(self.name, tuple(self.params.model_fields), self.raw)

    def fields(self) -> list[ParamInfo]:
        """Each parameter with its description and whether it is required (for the prompt)."""
        return [
            ParamInfo(n, f.description or "", f.is_required()) for n, f in self.params.model_fields.items()
        ]


@dataclass(frozen=True)
class CallError:
    """A model-facing error: what was wrong with a call, and how a correct one looks."""

    code: str  # unknown_tool, missing_action, unknown_action, disabled_action, missing_param,
    #            invalid_param, unexpected_param, malformed_call, truncated_call
    message: str
    tool: str
    param: str | None = None  # the parameter at fault; "target" (or "to", for drag) for the target as a whole
    example: str = ""


@dataclass(frozen=True)
class ValidCall:
    tool: str
    args: BaseModel  # a browser action model, or the host tool's parameter model
    block: ToolUse = field(compare=False)
    session: str | None = None  # the <session> a browser call named (profiles with sessions)

    @property
    def action(self) -> str | None:
        a = getattr(self.args, "action", None)
        return a if self.tool == BROWSER_TOOL and isinstance(a, str) else None


class CompletionParams(BaseModel):
    result: str = Field(description="what was done, in a few sentences, for the user")


def _complete(p: CompletionParams) -> str:
    return f"The task is marked as complete. Result: {p.result}"


COMPLETION_TOOL = Tool(
    "attempt_completion",
    CompletionParams,
    _complete,
    "Say that the task is finished, and what the result is. Use it once the work is done"
    " (and the browser is closed).",
    completes=True,
)
STANDARD_TOOLS: dict[str, Tool] = {COMPLETION_TOOL.name: COMPLETION_TOOL}


def format_call(tool: str, params: Mapping[str, str]) -> str:
    """A call written out in the dialect, one parameter per line."""
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in params.items())
    return f"<{tool}>\n{inner}</{tool}>"


class ToolRegistry:
    """The tools a session offers: ``browser_action`` (a profile, some or all of its actions) and host tools.

    ``profile`` is ``"roo"`` (the nine classic actions, by coordinates) or
    ``"full"`` (targets by ref and selector too, and the form actions); it sets
    the parser's vocabulary for ``browser_action``, the validation of each
    action, and the system prompt's template.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        browser: bool = True,
        actions: Iterable[str] | None = None,
        profile: ProfileName | Profile = "roo",
    ) -> None:
        self.browser = browser
        self.profile: Profile = get_profile(profile)
        names = self.profile.names
        acts = tuple(actions) if actions is not None else names
        unknown = [a for a in acts if a not in self.profile.actions]
        if unknown:
            raise ConfigError(f"unknown browser actions {unknown}; known: {', '.join(names)}")
        if browser and ("launch" not in acts or "close" not in acts):
            raise ConfigError("the launch and close actions cannot be turned off")
        self.actions: tuple[str, ...] = tuple(a for a in names if a in acts)
        self._tools: dict[str, Tool] = {}
        self._vocab: Vocabulary | None = None
        for t in tools:
            self.register(t)

    # registration

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ConfigError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._vocab = None
        return tool

    def tool(
        self,
        params: type[BaseModel],
        *,
        name: str | None = None,
        description: str = "",
        raw: Iterable[str] = (),
        completes: bool = False,
        category: str | None = None,
    ) -> Callable[[Handler], Handler]:
        """Decorator form of :meth:`register`: the function's name is the tool's name by default."""

        def deco(fn: Handler) -> Handler:
            self.register(
                Tool(
                    name or fn.__name__,
                    params,
                    fn,
                    description or (fn.__doc__ or "").strip(),
                    raw=frozenset(raw),
                    completes=completes,
                    category=category,
                )
            )
            return fn

        return deco

    @property
    def host_tools(self) -> list[Tool]:
        return list(self._tools.values())

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def vocabulary(self) -> Vocabulary:
        if self._vocab is None:
            syn = [t.syntax() for t in self._tools.values()]
            if self.browser:
                syn.insert(0, self.profile.syntax)
            self._vocab = Vocabulary(syn)
        return self._vocab

    # validation

    def example(self, action: str, kind: str | None = None) -> str:
        """A correct call of ``action``, its target written as ``kind`` (coordinate, ref or selector)."""
        form = self.profile.actions[action]
        return format_call(BROWSER_TOOL, {"action": action, **form.example_params(kind)})

    def validate(self, block: ToolUse, ctx: ActionContext | None = None) -> ValidCall | CallError:
        """Turn a parsed call into a typed call, or into an error meant for the model."""
        ctx = ctx or ActionContext()
        if block.diagnostics or block.partial:
            return self._diagnosed(block)
        if block.name == BROWSER_TOOL and self.browser:
            return self._validate_browser(block, ctx)
        tool = self._tools.get(block.name)
        if tool is None:
            return CallError("unknown_tool", f"there is no tool named <{block.name}> here", block.name)
        try:
            args = tool.params.model_validate(dict(block.params), context={"ctx": ctx})
        except ValidationError as e:
            return self._from_validation(e, block.name, self._host_example(tool))
        return ValidCall(block.name, args, block)

    def _diagnosed(self, block: ToolUse) -> CallError:
        d = block.diagnostics[0] if block.diagnostics else None
        code = "malformed_call"
        if d is None or d.code in ("truncated_call", "truncated_param", "message_too_large"):
            code = "truncated_call"
        message = d.message if d is not None else f"</{block.name}> is missing"
        if d is not None and d.code == "message_too_large":
            message = "your message passed the size limit inside this call or right after it"
        example = self._example_for(block)
        return CallError(code, message, block.name, example=example)

    def _example_for(self, block: ToolUse) -> str:
        if block.name == BROWSER_TOOL:
            action = block.params.get("action", "").strip()
            return self.example(action if action in self.actions else "click")
        tool = self._tools.get(block.name)
        return self._host_example(tool) if tool else ""

    def _host_example(self, tool: Tool) -> str:
        return format_call(tool.name, {f.name: "..." for f in tool.fields() if f.required})

    def _validate_browser(self, block: ToolUse, ctx: ActionContext) -> ValidCall | CallError:
        params = dict(block.params)
        action = params.get("action", "")
        session: str | None = None
        if self.profile.sessions and "session" in params:
            session = params.pop("session").strip()
            if not _SESSION_RE.fullmatch(session):
                return CallError(
                    "invalid_param",
                    f"{quoted(session, 40)} is not a session name: use up to 32 letters, digits, '-', '_'"
                    " or '.', starting with a letter or digit, such as shop",
                    BROWSER_TOOL,
                    "session",
                    format_call(
                        BROWSER_TOOL, {"action": "launch", "url": "http://localhost:3000/", "session": "shop"}
                    ),
                )
        if not action:
            return CallError(
                "missing_action",
                "the call has no <action>: say which action to take",
                BROWSER_TOOL,
                "action",
                self.example("launch"),
            )
        if action not in self.profile.actions:
            return CallError(
                "unknown_action",
                f"{quoted(action, 40)} is not an action; the actions are: {', '.join(self.actions)}",
                BROWSER_TOOL,
                "action",
                self.example("click"),
            )
        if action not in self.actions:
            return CallError(
                "disabled_action",
                f"the {action} action is turned off here; the actions are: {', '.join(self.actions)}",
                BROWSER_TOOL,
                "action",
                self.example("click"),
            )
        form = self.profile.actions[action]
        kind = next((k for k in ("ref", "selector", "coordinate") if k in params), None)
        example = self.example(action, kind)
        for p in params:
            if p != "action" and p not in form.params:
                takes = (
                    f"takes only <{'>, <'.join(form.params)}>" if form.params else "takes no other parameters"
                )
                return CallError(
                    "unexpected_param",
                    f"<{p}> does not belong to the {action} action, which {takes}",
                    BROWSER_TOOL,
                    p,
                    example,
                )
        for p in form.required:
            if p not in params:
                return CallError(
                    "missing_param",
                    f"the {action} action needs <{p}>",
                    BROWSER_TOOL,
                    p,
                    example,
                )
        problem = form.problem(action, params)
        if problem is not None:
            code, param, message = problem
            return CallError(code, message, BROWSER_TOOL, param, example)
        try:
            args = form.model.model_validate(params, context={"ctx": ctx})
        except ValidationError as e:
            return self._from_validation(e, BROWSER_TOOL, example)
        except Exception as e:  # the last guard: the model's text never ends the host's loop
            return CallError(
                "invalid_param",
                f"the {action} call could not be read ({type(e).__name__}); check its values",
                BROWSER_TOOL,
                None,
                example,
            )
        return ValidCall(BROWSER_TOOL, args, block, session)

    @staticmethod
    def _from_validation(e: ValidationError, tool: str, example: str) -> CallError:
        err = e.errors(include_url=False)[0]
        param = _param_of(tuple(err.get("loc") or ()))
        msg = str(err.get("msg", "invalid value"))
        msg = shorten(msg.removeprefix("Value error, "), MAX_ERROR_CHARS)  # a host validator may echo
        etype = err.get("type", "")
        if etype == "missing":
            return CallError("missing_param", f"<{param}> is required", tool, param, example)
        if etype == "extra_forbidden":
            return CallError(
                "unexpected_param", f"<{param}> is not a parameter of <{tool}>", tool, param, example
            )
        where = f"<{param}>: " if param else ""
        return CallError("invalid_param", f"{where}{msg}", tool, param, example)


def _param_of(loc: tuple[int | str, ...]) -> str | None:
    """The parameter the model wrote, from where pydantic found the fault (a target is gathered)."""
    if not loc:
        return None
    head = str(loc[0])
    if head in ("target", "to") and len(loc) > 1 and str(loc[1]) in Target.model_fields:
        inner = str(loc[1])
        return inner if head == "target" or inner == "frame" else f"to_{inner}"
    return head
