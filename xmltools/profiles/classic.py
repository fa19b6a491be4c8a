"""The ``roo`` profile: the nine classic actions of Cline and Roo-Code, by coordinates only.

Written exactly as they have always been here: the same parameters, the same
messages, the same system prompt.  Pure data.
"""

from __future__ import annotations

from types import MappingProxyType

from ..actions import Click, Close, Hover, Launch, Press, Resize, ScrollDown, ScrollUp, Type
from ..parser import BROWSER_ACTION
from .forms import ActionForm, Profile

__all__ = ["BY_POINT", "ROO"]

BY_POINT = ("coordinate",)  # a classic action's target: a point, nothing else
ROO = Profile(
    "roo",
    MappingProxyType(
        {
            "launch": ActionForm(Launch),
            "click": ActionForm(Click, BY_POINT, BY_POINT, example={"coordinate": "450,300"}),
            "hover": ActionForm(Hover, BY_POINT, BY_POINT, example={"coordinate": "450,300"}),
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
