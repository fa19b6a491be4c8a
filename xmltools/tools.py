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

import json
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, ClassVar, NamedTuple, TypeAlias

from pydantic import AfterValidator, BaseModel, Field, ValidationError

from .actions import (
    CATEGORIES,
    DEFAULT_VIEWPORT,
    TARGET_KINDS,
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
    parse_tab,
    selector_kind,
)
from .base.mistakes import Mistake, MistakeKind
from .base.progress import TaskProgress
from .base.quoting import quoted, shorten
from .base.schema import schema_problem
from .errors import ConfigError
from .parser import Block, ToolSyntax, ToolUse, Vocabulary
from .profiles import ROO, ActionForm, Profile, format_call, get_profile

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
    "result_tool",
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
    ``category`` puts the tool under the approval policy (:mod:`xmltools.protocol.approval`).
    """

    name: str
    params: type[BaseModel]
    handler: Handler
    description: str = ""
    template: str = "system/tool.j2"
    raw: frozenset[str] = frozenset()
    completes: bool = False
    category: str | None = None  # an approval category (read, navigate, …); None: not gated
    # a tool whose calls differ (an MCP server's): readied before the check (async), checked after its
    # model (the model's mistake, or None), and its category per call (None: not gated)
    prepare: Callable[[Mapping[str, str]], Awaitable[None]] | None = None
    check: Callable[[BaseModel], CallError | None] | None = None
    category_for: Callable[[BaseModel], str | None] | None = None

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
class CallError(Mistake):
    """A model-facing error (a mistake of kind ``call``): what was wrong with a call, and a correct one."""

    kind: ClassVar[MistakeKind] = "call"
    code: str  # unknown_tool, missing_action, unknown_action, disabled_action, missing_param,
    #            invalid_param, unexpected_param, malformed_call, truncated_call
    message: str
    tool: str
    param: str | None = None  # the parameter at fault; "target" (or "to", for drag) for the target as a whole
    example: str = ""


@dataclass(frozen=True)
class ValidCall:
    tool: str
    args: BaseModel  # a canonical browser action model, or the host tool's parameter model
    block: ToolUse = field(compare=False)
    session: str | None = None  # the session a browser call named (profiles with sessions)
    browser: bool = False  # a call of the profile's browser tool(s)
    written: str | None = None  # the action as the dialect named it (fractal's get_visible_text)
    tab: str | None = None  # the tab the call acts in (dialects with a tab parameter)
    opens: bool = False  # with no session open, this call opens one (fractal's navigate)

    @property
    def action(self) -> str | None:
        """The canonical action (launch, click, get_text, …) of a browser call; None for a host tool."""
        a = getattr(self.args, "action", None)
        return a if self.browser and isinstance(a, str) else None


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


def result_tool(shape: type[BaseModel] | Mapping[str, Any], name: str = COMPLETION_TOOL.name) -> Tool:
    """The completion tool of a run whose result is typed: ``<result>`` holds JSON of ``shape`` (a
    pydantic model, or a JSON Schema as a dict).  A result that does not fit is refused as the
    model's mistake, with what is wrong, and the model tries again; the system prompt shows the
    schema in one line."""
    schema = shape.model_json_schema() if isinstance(shape, type) else dict(shape)
    compact = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)

    def check(text: str) -> str:
        try:
            value = json.loads(text)
        except ValueError as e:
            raise ValueError(f"the result is not JSON ({e}); write one JSON value of the schema") from None
        if isinstance(shape, type):
            try:
                shape.model_validate(value)
            except ValidationError as e:
                first = e.errors()[0]
                where = ".".join(str(x) for x in first.get("loc", ())) or "the result"
                more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
                raise ValueError(f"{where}: {first.get('msg')}{more}") from None
        else:
            problem = schema_problem(value, schema, "the result")
            if problem is not None:
                raise ValueError(problem)
        return text

    class TypedResult(BaseModel):
        result: Annotated[str, AfterValidator(check)] = Field(
            description=f"the result: one JSON value of this schema: {compact}"
        )

    def complete(p: TypedResult) -> str:
        return f"The task is marked as complete. Result: {p.result}"

    return Tool(
        name,
        TypedResult,
        complete,
        "Say that the task is finished, with its result as JSON of the schema below. Use it once the"
        " work is done (and the browser is closed).",
        raw=frozenset({"result"}),
        completes=True,
    )


def offered_actions(
    profile: Profile,
    actions: Iterable[str] | None = None,
    disabled: Iterable[str] = (),
    *,
    browser: bool = True,
    capabilities: Iterable[str] = (),
) -> tuple[str, ...]:
    """The actions a registry offers: the profile's (or ``actions``, some of them), less the ``disabled``.

    An action of a capability (the ``testing`` checks) is offered only when
    ``capabilities`` names it, or when ``actions`` names the action itself.

    The one place where turning actions off is applied; the prompt lists what
    this returns, and validation refuses the rest as ``disabled_action``.
    Unknown names, and turning off the opener or the closer, are the host's
    errors.
    """
    names = profile.names
    off = tuple(disabled)
    unknown_off = [a for a in off if a not in profile.actions]
    if unknown_off:
        raise ConfigError(
            f"disabled_actions names {unknown_off}, which the {profile.name} profile does not have;"
            f" its actions are: {', '.join(names)}"
        )
    given = set(capabilities)
    acts = (
        tuple(actions)
        if actions is not None
        else tuple(a for a in profile.actions if profile.optional.get(a) in (None, *given))
    )
    unknown = [a for a in acts if a not in profile.actions]
    if unknown:
        raise ConfigError(f"unknown browser actions {unknown}; known: {', '.join(names)}")
    acts = tuple(a for a in acts if a not in off)
    if browser and (profile.opener not in acts or (profile.closer in names and profile.closer not in acts)):
        raise ConfigError(f"the {profile.opener} and {profile.closer} actions cannot be turned off")
    return tuple(a for a in profile.actions if a in acts)


@dataclass
class _BrowserCall:
    """A browser call on its way to a typed action: what it names, and what is left of its parameters."""

    tool: str
    action: str
    form: ActionForm
    params: dict[str, str]
    what: str  # how errors name it: "the click action", or "<tool>" in a dialect of one tool per action
    example: str  # a correct call of the action, shown with every mistake

    def error(self, code: str, message: str, param: str | None) -> CallError:
        return CallError(code, message, self.tool, param, self.example)


class ToolRegistry:
    """The tools a session offers: ``browser_action`` (a profile, some or all of its actions) and host tools.

    ``profile`` is ``"roo"`` (the nine classic actions, by coordinates),
    ``"cline"`` (Cline's six, and ``<task_progress>`` on every tool, the host's
    too: see :meth:`progress`), ``"full"`` (targets by ref and selector too, and
    the form actions), or one of the seeds' dialects; it sets the parser's
    vocabulary for the browser tool(s), the validation of each action, and the
    system prompt's template.
    ``actions`` (some of the profile's) and ``disabled`` (the host's
    ``disabled_actions``) narrow what is offered: see :func:`offered_actions`.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        browser: bool = True,
        actions: Iterable[str] | None = None,
        profile: ProfileName | Profile = "roo",
        disabled: Iterable[str] = (),
        capabilities: Iterable[str] = (),
    ) -> None:
        self.browser = browser
        self.profile: Profile = get_profile(profile)
        self.actions: tuple[str, ...] = offered_actions(
            self.profile, actions, disabled, browser=browser, capabilities=capabilities
        )
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
            # every tool as the dialect reads it: with its progress parameter, the host's too
            syn = [self.profile.with_progress(t.syntax()) for t in self._tools.values()]
            if self.browser:
                syn[:0] = self.profile.tools
            self._vocab = Vocabulary(syn)
        return self._vocab

    # the model's checklist

    def _declares(self, tool: str, param: str) -> bool:
        """Whether a host tool takes ``param`` as a parameter of its own (then it is the tool's)."""
        found = self._tools.get(tool)
        return found is not None and param in found.params.model_fields

    def call_params(self, call: ToolUse) -> dict[str, str]:
        """The call's parameters, without the dialect's progress checklist (the host's, never checked)."""
        params = dict(call.params)
        param = self.profile.progress_param
        if param is not None and param in params and not self._declares(call.name, param):
            del params[param]
        return params

    def progress(self, blocks: Iterable[Block]) -> TaskProgress | None:
        """The checklist the message gave in the dialect's progress parameter (cline's task_progress).

        Read from the calls the message acted on: each closed call up to the
        first complete one (the calls after it are not run; a call cut short
        counts for nothing).  When several gave one, the last wins.
        """
        param = self.profile.progress_param
        found: TaskProgress | None = None
        if param is None:
            return found
        calls = [b for b in blocks if isinstance(b, ToolUse)]
        for index, call in enumerate(calls):
            text = call.params.get(param, "").strip()
            if text and not call.partial and not self._declares(call.name, param):
                found = TaskProgress(text, call.name, index)
            if call.complete:
                break
        return found

    # validation

    def is_browser(self, tool: str) -> bool:
        """Whether ``tool`` is one of the profile's browser tools (and the browser is offered)."""
        return self.browser and tool in self.profile.tool_names

    def written_action(self, call: ToolUse) -> str | None:
        """The action a browser call names, as written (None for a host tool)."""
        if not self.is_browser(call.name):
            return None
        return self.profile.action_of(call.name, call.params) or None

    def session_of(self, call: ToolUse) -> str | None:
        """The session a browser call names, as written and trimmed (None when it names none)."""
        action = self.written_action(call)
        param = self.profile.session_param_of(action or "") if action is not None else None
        value = call.params.get(param, "").strip() if param else ""
        return value or None

    def example(self, action: str, kind: str | None = None) -> str:
        """A correct call of ``action``, its target written as ``kind`` (coordinate, ref or selector)."""
        form = self.profile.actions[action]
        return self.profile.call_text(action, form.example_params(kind))

    def validate(self, block: ToolUse, ctx: ActionContext | None = None) -> ValidCall | CallError:
        """Turn a parsed call into a typed call, or into an error meant for the model."""
        ctx = ctx or ActionContext()
        if block.diagnostics or block.partial:
            return self._diagnosed(block)
        if self.is_browser(block.name):
            return self._validate_browser(block, ctx)
        tool = self._tools.get(block.name)
        if tool is None:
            return CallError("unknown_tool", f"there is no tool named <{block.name}> here", block.name)
        try:
            args = tool.params.model_validate(self.call_params(block), context={"ctx": ctx})
        except ValidationError as e:
            return self._from_validation(e, block.name, self._host_example(tool))
        wrong = tool.check(args) if tool.check is not None else None
        return wrong if wrong is not None else ValidCall(block.name, args, block)

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
        if self.is_browser(block.name):
            action = self.written_action(block) or ""
            return self.example(action if action in self.actions else self._fallback_action())
        tool = self._tools.get(block.name)
        return self._host_example(tool) if tool else ""

    def _host_example(self, tool: Tool) -> str:
        return format_call(tool.name, {f.name: "..." for f in tool.fields() if f.required})

    def _fallback_action(self) -> str:
        """The action an example shows when the call named none that exists: a click if there is one."""
        forms = self.profile.actions
        return next((a for a in self.actions if forms[a].model.facts.points == "click"), self.profile.opener)

    def _validate_browser(self, block: ToolUse, ctx: ActionContext) -> ValidCall | CallError:
        """A browser call as a typed action, in steps: the action, its session and tab, its
        parameters, then its model; the first step that finds a mistake says it."""
        call = self._browser_action(block)
        if isinstance(call, CallError):
            return call
        session = self._browser_session(call)
        if isinstance(session, CallError):
            return session
        tab = self._browser_tab(call)
        if isinstance(tab, CallError):
            return tab
        canonical = self._browser_params(call)
        if isinstance(canonical, CallError):
            return canonical
        args = self._browser_model(call, canonical, ctx)
        if isinstance(args, CallError):
            return args
        form = call.form
        return ValidCall(
            block.name, args, block, session, browser=True, written=call.action, tab=tab, opens=form.opens
        )

    def _browser_action(self, block: ToolUse) -> _BrowserCall | CallError:
        """The action the call names, offered here, with its parameters but the action's own."""
        p = self.profile
        tool = block.name
        params = self.call_params(block)
        action = p.action_of(tool, params) or ""
        if p.action_param is not None:
            params.pop(p.action_param, None)
        if not action:
            message = f"the call has no <{p.action_param}>: say which action to take"
            return CallError("missing_action", message, tool, p.action_param, self.example(p.opener))
        fallback = self.example(self._fallback_action())
        offered = ", ".join(self.actions)
        if action not in p.actions:
            message = f"{quoted(action, 40)} is not an action; the actions are: {offered}"
            return CallError("unknown_action", message, tool, p.action_param, fallback)
        if action not in self.actions:
            off = (
                f"belongs to the {p.optional[action]} checks, which are not offered here"
                if action in p.optional
                else "is turned off here"
            )
            message = f"the {action} action {off}; the actions are: {offered}"
            return CallError("disabled_action", message, tool, p.action_param, fallback)
        kind = next((k for k in ("ref", "selector", "coordinate") if k in params), None)
        what = f"the {action} action" if p.action_param is not None else f"<{tool}>"
        return _BrowserCall(tool, action, p.actions[action], params, what, self.example(action, kind))

    def _browser_session(self, call: _BrowserCall) -> str | CallError | None:
        """The session the call names (taken out of its parameters), when the dialect names sessions."""
        p = self.profile
        session_param = p.session_param_of(call.action)
        if session_param is not None and session_param in call.params:
            session = call.params.pop(session_param).strip()
            if not _SESSION_RE.fullmatch(session):
                message = (
                    f"{quoted(session, 40)} is not a session name: use up to 32 letters, digits, '-', '_'"
                    " or '.', starting with a letter or digit, such as shop"
                )
                return call.error("invalid_param", message, session_param)
            return session
        if session_param is not None and p.session_required:
            return call.error("missing_param", f"{call.what} needs <{session_param}>", session_param)
        return None

    def _browser_tab(self, call: _BrowserCall) -> str | CallError | None:
        """The tab the call names (taken out of its parameters), when the dialect names tabs."""
        tab_param = self.profile.tab_param
        if tab_param is None or not call.form.in_tab or tab_param not in call.params:
            return None
        try:
            return parse_tab(call.params.pop(tab_param))
        except ValueError as e:
            return call.error("invalid_param", str(e), tab_param)

    def _browser_params(self, call: _BrowserCall) -> dict[str, str] | CallError:
        """The parameters under their canonical names, once none is foreign or missing."""
        form, what, params = call.form, call.what, call.params
        for name in params:
            if name not in form.params:
                takes = (
                    f"takes only <{'>, <'.join(form.params)}>" if form.params else "takes no other parameters"
                )
                return call.error(
                    "unexpected_param", f"<{name}> does not belong to {what}, which {takes}", name
                )
        for name in form.required:
            if name not in params:
                return call.error("missing_param", f"{what} needs <{name}>", name)
        canonical = form.canonical_params(params)
        own_targets = [n for n in form.params if form.renames.get(n, n) in TARGET_KINDS]
        needs_target = form.model.model_fields.get("target")
        if (
            form.target is None
            and needs_target is not None
            and needs_target.is_required()
            and own_targets
            and not any(k in canonical for k in TARGET_KINDS)
        ):
            message = f"{what} needs the element: give {' or '.join(f'<{n}>' for n in own_targets)}"
            return call.error("missing_param", message, own_targets[0])
        problem = form.problem(call.action, canonical)
        if problem is not None:
            code, param, message = problem
            return call.error(code, form.dialect_words(message), param)
        return canonical

    def _browser_model(
        self, call: _BrowserCall, canonical: dict[str, str], ctx: ActionContext
    ) -> BaseModel | CallError:
        """The typed action, validated in the session's context; its problems in the dialect's words."""
        form = call.form
        try:
            args: BaseModel = form.model.model_validate(canonical, context={"ctx": ctx})
            resolve = getattr(args, "canonical", None)
            if callable(resolve):
                args = resolve(ctx)
            return args
        except ValidationError as e:
            err = self._from_validation(e, call.tool, call.example)
            return replace(
                err, message=form.dialect_words(err.message), param=_dialect_param(form, err.param)
            )
        except ValueError as e:  # a dialect's call that stands for another action, refused on the way
            return call.error("invalid_param", form.dialect_words(str(e)), None)
        except Exception as e:  # the last guard: the model's text never ends the host's loop
            message = f"the {call.action} call could not be read ({type(e).__name__}); check its values"
            return call.error("invalid_param", message, None)

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


def _dialect_param(form: ActionForm, param: str | None) -> str | None:
    """The parameter as the dialect names it."""
    if param is None:
        return None
    back = {canonical: mine for mine, canonical in form.renames.items()}
    return back.get(param, param)


def _param_of(loc: tuple[int | str, ...]) -> str | None:
    """The parameter the model wrote, from where pydantic found the fault (a target is gathered)."""
    if not loc:
        return None
    head = str(loc[0])
    if head in ("target", "to") and len(loc) > 1 and str(loc[1]) in Target.model_fields:
        inner = str(loc[1])
        return inner if head == "target" or inner == "frame" else f"to_{inner}"
    return head
