"""How a dialect is written: :class:`ActionForm` (one action) and :class:`Profile` (a whole dialect).

The dialects themselves are data in the sibling modules (:mod:`.classic`,
:mod:`.full`, :mod:`.seeds`, :mod:`.cline`).  Pure: imports the action models
and the parser's ToolSyntax; never the registry, the renderer, the
interpreter, Playwright or Jinja2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ..actions import TARGET_KINDS, ActionModel, ProfileName, target_problem
from ..parser import ToolSyntax

__all__ = ["DEFAULT_SESSION", "ActionForm", "Profile", "as_declared", "format_call", "words"]


def format_call(tool: str, params: Mapping[str, str]) -> str:
    """A call written out, one parameter per line."""
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in params.items())
    return f"<{tool}>\n{inner}</{tool}>"


DEFAULT_SESSION = "default"  # the session a call without <session> acts on (the only one in roo)
# what each kind of target looks like in an example call
_TARGET_EXAMPLES = {"coordinate": "450,300", "ref": "e12"}
_MODEL: Any = object()  # a part of a form left out: the model's declaration says it


@dataclass(frozen=True)
class ActionForm:
    """How one action is written in a profile: its model, and how the dialect differs from it.

    ``params`` are every parameter it takes besides ``action`` (in the order the
    errors name them), ``required`` those it cannot do without.  ``target`` says
    whether exactly one of coordinate, ref and selector must be given
    (``"required"``), may be (``"optional"``), or is not checked as a target
    (None: the target parameters, if any, are plain ones, as in the classic
    forms).  ``destination`` (drag) asks for exactly one of to_coordinate,
    to_ref and to_selector as well.  ``example`` is a correct call's
    parameters; ``selector_example`` is the selector shown when the model wrote
    a selector.

    What a form leaves out, the model declares (:class:`~xmltools.actions.ActionModel`):
    ``ActionForm(Click)`` is click as the full dialect writes it.  A form that
    lists its own ``params`` checks them as written: unless it says otherwise,
    it has no target rule, and it requires those of its parameters that the
    model requires (by their canonical names).
    """

    model: type[ActionModel]
    params: tuple[str, ...] = _MODEL
    required: tuple[str, ...] = _MODEL
    target: Literal["required", "optional"] | None = _MODEL
    destination: bool = _MODEL
    example: Mapping[str, str] = _MODEL
    selector_example: str = _MODEL
    # a dialect's own words: its parameter names -> the canonical ones, values it fixes,
    # values it assumes when the model leaves them out
    renames: Mapping[str, str] = field(default_factory=dict)
    fixed: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, str] = field(default_factory=dict)
    opens: bool = False  # with no session open, this action opens one (Fractal's navigate)
    session_param: str | None = None  # the parameter naming the session, when not the profile's
    in_tab: bool = True  # the profile's tab parameter applies to this action

    def __post_init__(self) -> None:
        m = self.model
        own = self.params is not _MODEL
        params = self.params if own else m.params
        declared: dict[str, Any] = {
            "params": params,
            "required": tuple(p for p in params if self.renames.get(p, p) in m.required),
            "target": None if own or m.target_rule == "none" else m.target_rule,
            "destination": m.destination and not own,
            "example": dict(m.example),
            "selector_example": m.selector_example,
        }
        for name, value in declared.items():
            if getattr(self, name) is _MODEL:
                object.__setattr__(self, name, value)

    @property
    def action(self) -> str:
        """The canonical action this form writes (click, get_text, …)."""
        return str(self.model.model_fields["action"].default)

    def canonical_params(self, params: Mapping[str, str]) -> dict[str, str]:
        """The call's parameters under their canonical names, with the dialect's fixed values and defaults."""
        out = {**self.defaults, **{self.renames.get(k, k): v for k, v in params.items()}}
        out.update(self.fixed)
        return out

    def dialect_words(self, text: str) -> str:
        """A message written with canonical parameter names, in the dialect's names instead."""
        for mine, canonical in self.renames.items():
            text = text.replace(f"<{canonical}>", f"<{mine}>")
        return text

    def example_params(self, kind: str | None = None) -> dict[str, str]:
        """The example's parameters, with its target written as ``kind`` (coordinate, ref or selector)."""
        params = dict(self.example)
        if self.target is None or kind not in TARGET_KINDS or kind in params or kind not in self.params:
            return params
        written = [k for k in TARGET_KINDS if k in params]
        shown = self.selector_example if kind == "selector" else _TARGET_EXAMPLES[kind]
        if not written:  # an optional target the example leaves out: shown first
            return {kind: shown, **params}
        out: dict[str, str] = {}
        for k, v in params.items():
            if k == written[0]:
                out[kind] = shown
            else:
                out[k] = v
        return out

    def problem(self, action: str, params: Mapping[str, str]) -> tuple[str, str, str] | None:
        """What is wrong with the call's targets, as ``(code, param, message)``, or None."""
        if self.target is None and not self.destination:
            return None
        return target_problem(
            params, action, required=self.target == "required", destination=self.destination
        )


@dataclass(frozen=True)
class Profile:
    """A dialect: its actions (in the order the prompt lists them), its tools, its prompt, its protocol words.

    With ``action_param`` set, the dialect has one tool whose ``<action>``
    names the action (roo, full, aleph, fractal); without it, every action is
    a tool of its own, named as the action (forge).
    """

    name: ProfileName
    actions: Mapping[str, ActionForm]
    tools: tuple[ToolSyntax, ...]
    template: str  # the system prompt's section for the browser tool(s)
    sessions: bool = False  # calls may name a session; without one they act on "default"
    action_param: str | None = "action"
    session_param: str = "session"
    session_required: bool = False  # every call names its session: there is no default one
    tab_param: str | None = None  # a parameter any call may carry: the tab to act in
    opener: str = "launch"  # the action that opens a session
    closer: str = "close"  # the action that ends one
    open_example: Mapping[str, str] = field(default_factory=lambda: {"url": "http://localhost:3000/"})
    ask: frozenset[str] = frozenset()  # actions that ask for approval unless the host ruled on their category
    dynamic_tools: bool = False  # before a session is open, only the opener is offered
    label: str = "browser_action"  # how results name the browser tool
    # actions offered only with a capability the host turns on: action -> capability ("testing")
    optional: Mapping[str, str] = field(default_factory=dict)
    # a parameter every tool takes, the host's too: the model's checklist of the task (cline's
    # task_progress), given to the host; never checked, never an error
    progress_param: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The actions offered by default (those of a capability come only when it is on)."""
        return tuple(a for a in self.actions if a not in self.optional)

    @property
    def syntax(self) -> ToolSyntax:
        """The first (for most dialects, the only) browser tool's syntax."""
        return self.tools[0]

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    def with_progress(self, syntax: ToolSyntax) -> ToolSyntax:
        """A tool's syntax as the dialect reads it: with its progress parameter, when it has one."""
        param = self.progress_param
        if param is None or param in syntax.params:
            return syntax
        return ToolSyntax(syntax.name, (*syntax.params, param), syntax.raw)

    def action_of(self, tool: str, params: Mapping[str, str]) -> str | None:
        """The dialect's action a call names, or None for a tool that is not this profile's."""
        if tool not in self.tool_names:
            return None
        if self.action_param is None:
            return tool
        return params.get(self.action_param, "").strip()

    def call_text(self, action: str, params: Mapping[str, str]) -> str:
        """A call of ``action`` written in the dialect, one parameter per line."""
        if self.action_param is None:
            return format_call(action, params)
        return format_call(self.tools[0].name, {self.action_param: action, **params})

    def session_param_of(self, action: str) -> str | None:
        """The parameter that names the session for ``action`` (None: this dialect has no sessions)."""
        if not self.sessions:
            return None
        form = self.actions.get(action)
        return (form.session_param if form is not None else None) or self.session_param

    def open_call(self, session: str | None = None) -> str:
        params = dict(self.open_example)
        sp = self.session_param_of(self.opener)
        if session is not None and sp is not None:
            params[sp] = session
        return self.call_text(self.opener, params)

    def close_call(self, session: str | None = None) -> str:
        params: dict[str, str] = {}
        sp = self.session_param_of(self.closer)
        if session is not None and sp is not None:
            params[sp] = session
        return self.call_text(self.closer, params)


def words(names: str) -> tuple[str, ...]:
    """A tool's parameter names, written as one string (in order: parse errors list them so)."""
    return tuple(names.split())


def as_declared(*models: type[ActionModel]) -> Mapping[str, ActionForm]:
    """Each model under its own name, written as it declares itself."""
    return MappingProxyType({str(m.model_fields["action"].default): ActionForm(m) for m in models})
