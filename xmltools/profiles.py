"""The dialects of ``browser_action`` as data: which actions a profile offers, and how each is written.

- ``roo``, the default: the nine classic actions of Cline and Roo-Code, by
  coordinates only, exactly as they have always been written here (the same
  parameters, the same messages, the same system prompt).
- ``full``: targets by ``coordinate``, ``ref`` (from the latest snapshot) or
  ``selector`` (with ``frame``); the element and form actions ``fill``,
  ``select``, ``drag``, ``upload``, ``scroll`` and ``snapshot``; navigation
  and tabs (``navigate``, ``back``, ``forward``, ``reload``, ``open_tab``,
  ``list_tabs``, ``switch_tab``, ``close_tab``); reading the page
  (``get_text``, ``get_html``, ``get_attribute``, ``console_logs``,
  ``screenshot``); ``wait`` and ``evaluate``; and the classic ones.  Every
  call may also name a ``<session>`` (see :data:`DEFAULT_SESSION`).

A profile maps each action name to an :class:`ActionForm`: the canonical
model (:mod:`xmltools.actions`), the parameters it takes, those it needs, how
its target is checked, and an example call.  The parser's vocabulary for
``browser_action`` and the system prompt's template come from the profile
too.  Adding an action to a profile is one entry here (plus its model, its
handler in the controller and a line of the template).  Pure: data only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from .actions import (
    TARGET_KINDS,
    ActionModel,
    Back,
    Click,
    Close,
    CloseTab,
    ConsoleLogs,
    Drag,
    Evaluate,
    Fill,
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
    Wait,
    target_problem,
)
from .errors import ConfigError
from .parser import BROWSER_ACTION, ToolSyntax

__all__ = [
    "DEFAULT_SESSION",
    "FULL",
    "PROFILES",
    "ROO",
    "ActionForm",
    "Profile",
    "ProfileName",
    "get_profile",
]

DEFAULT_SESSION = "default"  # the session a call without <session> acts on (the only one in roo)
TARGET_PARAMS = ("coordinate", "ref", "selector", "frame")
DESTINATION_PARAMS = ("to_coordinate", "to_ref", "to_selector")
# what each kind of target looks like in an example call
_TARGET_EXAMPLES = {"coordinate": "450,300", "ref": "e12"}


@dataclass(frozen=True)
class ActionForm:
    """How one action is written in a profile.

    ``params`` are every parameter it takes besides ``action`` (in the order the
    errors name them), ``required`` those it cannot do without.  ``target`` says
    whether exactly one of coordinate, ref and selector must be given
    (``"required"``), may be (``"optional"``), or is not checked as a target
    (None: the classic forms, where ``coordinate`` is simply required).
    ``destination`` (drag) asks for exactly one of to_coordinate, to_ref and
    to_selector as well.  ``example`` is a correct call's parameters, written
    with a ref when the action has a target; ``selector_example`` is the
    selector shown when the model wrote a selector.
    """

    model: type[ActionModel]
    params: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    target: Literal["required", "optional"] | None = None
    destination: bool = False
    example: Mapping[str, str] = field(default_factory=dict)
    selector_example: str = 'role=button[name="Send"]'

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
    """A dialect: its actions (in the order the prompt lists them), its parser syntax, its prompt."""

    name: ProfileName
    actions: Mapping[str, ActionForm]
    syntax: ToolSyntax
    template: str  # the system prompt's section for browser_action
    sessions: bool = False  # every call may name a <session>; without one it acts on "default"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.actions)


def _classic(model: type[ActionModel]) -> ActionForm:
    """The classic form: the model's own parameters, all of them needed."""
    return ActionForm(model, model.params, model.params, example=dict(model.example))


ROO = Profile(
    "roo",
    MappingProxyType(
        {
            m.model_fields["action"].default: _classic(m)
            for m in (Launch, Click, Hover, Type, Press, ScrollDown, ScrollUp, Resize, Close)
        }
    ),
    BROWSER_ACTION,
    "system/browser_action.j2",
)

_T = TARGET_PARAMS
FULL = Profile(
    "full",
    MappingProxyType(
        {
            "launch": _classic(Launch),
            "snapshot": ActionForm(
                Snapshot,
                (*_T, "depth", "find"),
                target="optional",
                example={"find": "Sign in"},
            ),
            "click": ActionForm(Click, _T, target="required", example={"ref": "e12"}),
            "hover": ActionForm(Hover, _T, target="required", example={"ref": "e12"}),
            "fill": ActionForm(
                Fill,
                (*_T, "text"),
                ("text",),
                target="required",
                example={"ref": "e12", "text": "ada@example.com"},
                selector_example="label=Email",
            ),
            "select": ActionForm(
                Select,
                (*_T, "value"),
                ("value",),
                target="required",
                example={"ref": "e12", "value": "Large"},
                selector_example="label=Size",
            ),
            "type": ActionForm(
                Type,
                ("text", *_T),
                ("text",),
                target="optional",
                example={"text": "hello@example.com"},
                selector_example="label=Email",
            ),
            "press": ActionForm(
                Press,
                ("text", *_T),
                ("text",),
                target="optional",
                example={"text": "Enter"},
                selector_example="label=Search",
            ),
            "drag": ActionForm(
                Drag,
                (*_T, *DESTINATION_PARAMS),
                target="required",
                destination=True,
                example={"ref": "e12", "to_ref": "e15"},
                selector_example="text=First item",
            ),
            "upload": ActionForm(
                Upload,
                (*_T, "path"),
                ("path",),
                target="required",
                example={"ref": "e12", "path": "report.pdf"},
                selector_example="label=Attachment",
            ),
            "scroll": ActionForm(
                Scroll,
                ("direction", *_T),
                ("direction",),
                target="optional",
                example={"direction": "down"},
            ),
            "scroll_down": _classic(ScrollDown),
            "scroll_up": _classic(ScrollUp),
            "resize": _classic(Resize),
            "navigate": ActionForm(
                Navigate, ("url", "wait_until"), ("url",), example={"url": "http://localhost:3000/cart"}
            ),
            "back": ActionForm(Back),
            "forward": ActionForm(Forward),
            "reload": ActionForm(Reload),
            "open_tab": ActionForm(
                OpenTab, ("url",), ("url",), example={"url": "http://localhost:3000/help"}
            ),
            "list_tabs": ActionForm(ListTabs),
            "switch_tab": ActionForm(SwitchTab, ("tab",), ("tab",), example={"tab": "t2"}),
            "close_tab": ActionForm(CloseTab, ("tab",), example={"tab": "t2"}),
            "get_text": ActionForm(
                GetText,
                (*_T, "all"),
                target="optional",
                example={"selector": "main"},
                selector_example="main",
            ),
            "get_html": ActionForm(
                GetHtml,
                (*_T, "depth", "all"),
                target="optional",
                example={"selector": "form", "depth": "3"},
                selector_example="form",
            ),
            "get_attribute": ActionForm(
                GetAttribute,
                (*_T, "attribute", "all"),
                ("attribute",),
                target="required",
                example={"ref": "e12", "attribute": "href"},
                selector_example="a.download",
            ),
            "console_logs": ActionForm(ConsoleLogs),
            "wait": ActionForm(
                Wait,
                ("ref", "selector", "frame", "state", "text", "url", "seconds"),
                target="optional",
                example={"selector": "#results"},
                selector_example="#results",
            ),
            "screenshot": ActionForm(
                ScreenshotAction,
                (*_T, "full_page", "format", "path"),
                target="optional",
                example={"ref": "e12"},
                selector_example="#chart",
            ),
            "evaluate": ActionForm(Evaluate, ("script",), ("script",), example={"script": "document.title"}),
            "close": _classic(Close),
        }
    ),
    ToolSyntax(
        "browser_action",
        (
            "action",
            "url",
            "coordinate",
            "ref",
            "selector",
            "frame",
            "text",
            "value",
            "path",
            "direction",
            "depth",
            "find",
            "to_coordinate",
            "to_ref",
            "to_selector",
            "size",
            "wait_until",
            "tab",
            "all",
            "attribute",
            "state",
            "seconds",
            "full_page",
            "format",
            "script",
            "session",
        ),
        frozenset({"text"}),
    ),
    "system/browser_action_full.j2",
    sessions=True,
)

PROFILES: Mapping[str, Profile] = MappingProxyType({"roo": ROO, "full": FULL})


def get_profile(profile: str | Profile) -> Profile:
    """A profile by name (``"roo"`` or ``"full"``), or the profile given."""
    if isinstance(profile, Profile):
        return profile
    found = PROFILES.get(profile) if isinstance(profile, str) else None
    if found is None:
        raise ConfigError(f"unknown profile {profile!r}; the profiles are: {', '.join(PROFILES)}")
    return found
