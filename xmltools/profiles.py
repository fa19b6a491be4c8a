"""The dialects of ``browser_action`` as data: which actions a profile offers, and how each is written.

- ``roo``, the default: the nine classic actions of Cline and Roo-Code, by
  coordinates only, exactly as they have always been written here (the same
  parameters, the same messages, the same system prompt).
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
is one entry here.

Pure: data only.  Imports the action models and the parser's ToolSyntax;
never the registry, the renderer, the interpreter, Playwright or Jinja2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from .actions import (
    TARGET_KINDS,
    VERIFY_ACTIONS,
    ActionModel,
    Back,
    Click,
    Close,
    CloseTab,
    ConsoleLogs,
    Drag,
    Evaluate,
    ExtractContent,
    Fill,
    FillForm,
    Forward,
    GetAttribute,
    GetHtml,
    GetText,
    Hover,
    Launch,
    ListTabs,
    Navigate,
    OpenTab,
    Press,
    ProfileName,
    Reload,
    Resize,
    ScreenshotAction,
    Scroll,
    ScrollDown,
    ScrollUp,
    Select,
    Snapshot,
    SwitchTab,
    Type,
    Upload,
    VerifyElement,
    VerifyText,
    VerifyUrl,
    VerifyValue,
    Wait,
    target_problem,
)
from .errors import ConfigError
from .parser import BROWSER_ACTION, ToolSyntax

__all__ = [
    "ALEPH",
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


def _words(names: str) -> tuple[str, ...]:
    """A tool's parameter names, written as one string (in order: parse errors list them so)."""
    return tuple(names.split())


def _as_declared(*models: type[ActionModel]) -> Mapping[str, ActionForm]:
    """Each model under its own name, written as it declares itself."""
    return MappingProxyType({str(m.model_fields["action"].default): ActionForm(m) for m in models})


_BY_POINT = ("coordinate",)
ROO = Profile(
    "roo",
    MappingProxyType(
        {
            "launch": ActionForm(Launch),
            "click": ActionForm(Click, _BY_POINT, _BY_POINT, example={"coordinate": "450,300"}),
            "hover": ActionForm(Hover, _BY_POINT, _BY_POINT, example={"coordinate": "450,300"}),
            "type": ActionForm(Type, ("text",)),
            "press": ActionForm(Press, ("text",), example={"text": "Control+A"}),
            "scroll_down": ActionForm(ScrollDown),
            "scroll_up": ActionForm(ScrollUp),
            "resize": ActionForm(Resize),
            "close": ActionForm(Close),
        }
    ),
    (BROWSER_ACTION,),
    "system/browser_action.j2",
)

FULL = Profile(
    "full",
    _as_declared(
        Launch,
        Snapshot,
        Click,
        Hover,
        Fill,
        Select,
        Type,
        Press,
        Drag,
        Upload,
        Scroll,
        ScrollDown,
        ScrollUp,
        Resize,
        Navigate,
        Back,
        Forward,
        Reload,
        OpenTab,
        ListTabs,
        SwitchTab,
        CloseTab,
        GetText,
        GetHtml,
        GetAttribute,
        ConsoleLogs,
        Wait,
        ScreenshotAction,
        Evaluate,
        VerifyText,
        VerifyElement,
        VerifyValue,
        VerifyUrl,
        Close,
    ),
    (
        ToolSyntax(
            "browser_action",
            _words(
                "action url coordinate ref selector frame text value path direction depth find "
                "to_coordinate to_ref to_selector size wait_until tab all attribute state seconds "
                "full_page format script session"
            ),
            frozenset({"text"}),
        ),
    ),
    "system/browser_action_full.j2",
    sessions=True,
    optional=MappingProxyType(dict.fromkeys(VERIFY_ACTIONS, "testing")),
)

# -- the seeds' dialects ---------------------------------------------------------------

_ALEPH_TARGET = {"ref_id": "ref"}
_IN_T1 = {"tab_id": "t1"}
ALEPH = Profile(
    "aleph",
    MappingProxyType(
        {
            "start": ActionForm(Launch, ("headless",), example={}, in_tab=False),
            "stop": ActionForm(Close, in_tab=False),
            "open_tab": ActionForm(OpenTab, in_tab=False),
            "close_tab": ActionForm(
                CloseTab,
                ("tab_id",),
                ("tab_id",),
                example={"tab_id": "t2"},
                renames={"tab_id": "tab"},
                in_tab=False,
            ),
            "list_tabs": ActionForm(ListTabs, in_tab=False),
            "navigate": ActionForm(
                Navigate, ("url",), example={**_IN_T1, "url": "http://localhost:3000/cart"}
            ),
            "click": ActionForm(
                Click, ("ref_id", "selector"), example={**_IN_T1, "ref_id": "e12"}, renames=_ALEPH_TARGET
            ),
            "hover": ActionForm(
                Hover, ("ref_id", "selector"), example={**_IN_T1, "ref_id": "e12"}, renames=_ALEPH_TARGET
            ),
            "type": ActionForm(
                Type,
                ("ref_id", "selector", "text"),
                example={**_IN_T1, "ref_id": "e12", "text": " and more"},
                renames=_ALEPH_TARGET,
            ),
            "fill": ActionForm(
                Fill,
                ("ref_id", "selector", "text"),
                example={**_IN_T1, "selector": "#email", "text": "ada@example.com"},
                renames=_ALEPH_TARGET,
            ),
            "scroll": ActionForm(Scroll, ("direction",), example={**_IN_T1, "direction": "down"}),
            "screenshot": ActionForm(ScreenshotAction, ("full_page",), example=_IN_T1),
            "snapshot": ActionForm(Snapshot, (), example=_IN_T1),
            "evaluate": ActionForm(
                Evaluate, ("js",), example={**_IN_T1, "js": "document.title"}, renames={"js": "script"}
            ),
        }
    ),
    (
        ToolSyntax(
            "browser",
            _words("action headless url tab_id ref_id selector text direction full_page js"),
            frozenset({"text"}),
        ),
    ),
    "system/browser_aleph.j2",
    tab_param="tab_id",
    opener="start",
    closer="stop",
    open_example={},
    label="browser",
)

_SEL = ("selector",)
FRACTAL = Profile(
    "fractal",
    MappingProxyType(
        {
            "navigate": ActionForm(
                Navigate,
                ("url", "waitUntil"),
                example={"url": "http://localhost:3000/"},
                renames={"waitUntil": "wait_until"},
                defaults={"wait_until": "load"},
                opens=True,
            ),
            "go_back": ActionForm(Back),
            "go_forward": ActionForm(Forward),
            "click": ActionForm(Click, _SEL, _SEL, example={"selector": "#send"}),
            "hover": ActionForm(Hover, _SEL, _SEL, example={"selector": "nav .menu"}),
            "fill": ActionForm(
                Fill,
                ("selector", "value"),
                ("selector", "value"),
                example={"selector": "#email", "value": "ada@example.com"},
                renames={"value": "text"},
            ),
            "select": ActionForm(
                Select,
                ("selector", "value"),
                ("selector", "value"),
                example={"selector": "#size", "value": "Large"},
            ),
            "drag": ActionForm(
                Drag,
                ("selector", "targetSelector"),
                ("selector", "targetSelector"),
                example={"selector": "#card", "targetSelector": "#done"},
                renames={"targetSelector": "to_selector"},
            ),
            "press_key": ActionForm(
                Press, ("key", "selector"), example={"key": "Enter"}, renames={"key": "text"}
            ),
            "delete": ActionForm(Press, _SEL, example={"selector": "#email"}, fixed={"text": "Delete"}),
            "get_visible_text": ActionForm(GetText, _SEL),
            "get_html": ActionForm(
                GetHtml, ("selector", "depth"), example={"selector": "form", "depth": "4"}
            ),
            "screenshot": ActionForm(ScreenshotAction, (), example={}),
            "evaluate": ActionForm(
                Evaluate, ("value",), example={"value": "document.title"}, renames={"value": "script"}
            ),
            "console_logs": ActionForm(ConsoleLogs),
            "iframe_click": ActionForm(
                Click,
                ("frameSelector", "selector"),
                ("frameSelector", "selector"),
                example={"frameSelector": "iframe#pay", "selector": "#confirm"},
                renames={"frameSelector": "frame"},
            ),
            "iframe_fill": ActionForm(
                Fill,
                ("frameSelector", "selector", "value"),
                ("frameSelector", "selector", "value"),
                example={"frameSelector": "iframe#pay", "selector": "#card", "value": "4242"},
                renames={"frameSelector": "frame", "value": "text"},
            ),
            "upload_file": ActionForm(
                Upload,
                ("selector", "filePath"),
                ("selector", "filePath"),
                example={"selector": "#file", "filePath": "report.pdf"},
                renames={"filePath": "path"},
            ),
            "click_and_switch_tab": ActionForm(Click, _SEL, _SEL, example={"selector": "a.help"}),
            "close": ActionForm(CloseTab, (), example={}),
        }
    ),
    (
        ToolSyntax(
            "webBrowser",
            _words("action url waitUntil selector value targetSelector key depth frameSelector filePath"),
            frozenset({"value"}),
        ),
    ),
    "system/browser_fractal.j2",
    opener="navigate",
    label="webBrowser",
)

_IN_SHOP = {"session": "shop"}
FORGE = Profile(
    "forge",
    MappingProxyType(
        {
            "start_browser_session": ActionForm(
                Launch,
                ("headless", "viewport"),
                example={"name": "shop"},
                renames={"viewport": "size"},
                session_param="name",
            ),
            "close_browser_session": ActionForm(Close, example={"name": "shop"}, session_param="name"),
            "browser_navigate": ActionForm(Navigate, example={**_IN_SHOP, "url": "http://localhost:3000/"}),
            "browser_click": ActionForm(Click, _SEL, _SEL, example={**_IN_SHOP, "selector": "#send"}),
            "browser_fill_form": ActionForm(FillForm, example={**_IN_SHOP, **FillForm.example}),
            "browser_wait": ActionForm(
                Wait,
                ("selector", "navigation", "timeout"),
                example={**_IN_SHOP, "selector": "#results"},
                renames={"navigation": "url", "timeout": "seconds"},
            ),
            "browser_extract_content": ActionForm(
                ExtractContent, example={**_IN_SHOP, **ExtractContent.example}
            ),
            "browser_screenshot": ActionForm(
                ScreenshotAction, ("selector", "full_page", "path"), example={**_IN_SHOP, "full_page": "true"}
            ),
        }
    ),
    (
        ToolSyntax("start_browser_session", ("name", "headless", "viewport")),
        ToolSyntax("close_browser_session", ("name",)),
        ToolSyntax("browser_navigate", ("session", "url", "wait_until")),
        ToolSyntax("browser_click", ("session", "selector")),
        ToolSyntax("browser_fill_form", ("session", "fields")),
        ToolSyntax("browser_wait", ("session", "selector", "navigation", "timeout")),
        ToolSyntax("browser_extract_content", ("session", "selector", "mode", "attribute", "multiple")),
        ToolSyntax("browser_screenshot", ("session", "selector", "full_page", "path")),
    ),
    "system/browser_forge.j2",
    sessions=True,
    action_param=None,
    session_required=True,
    opener="start_browser_session",
    closer="close_browser_session",
    open_example={},
    ask=frozenset({"start_browser_session"}),
    dynamic_tools=True,
    label="the browser_* tools",
)

PROFILES: Mapping[str, Profile] = MappingProxyType(
    {"roo": ROO, "full": FULL, "aleph": ALEPH, "fractal": FRACTAL, "forge": FORGE}
)


_TABLE_LABELS = {
    "extract": "get_text, get_html or get_attribute, by `mode`",
    "fill_form": "fill, several fields at once",
}


def dialect_table() -> str:
    """The dialects side by side as a Markdown table: one row per canonical action, one column per profile."""
    names = [n for n in PROFILES if n != "roo"]
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
    """A profile by name (roo, full, aleph, fractal, forge), or the profile given."""
    if isinstance(profile, Profile):
        return profile
    found = PROFILES.get(profile) if isinstance(profile, str) else None
    if found is None:
        raise ConfigError(f"unknown profile {profile!r}; the profiles are: {', '.join(PROFILES)}")
    return found
