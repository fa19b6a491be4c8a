"""The canonical browser actions: one pydantic model each, declaring everything that is said of it.

A call from the parser is a flat set of parameters (``<ref>e12</ref>``,
``<text>…</text>``).  A profile (:mod:`xmltools.profiles`) says which actions
and parameter names a session offers; the models here turn the values into a
typed action, and every problem into a ``ValueError`` whose message is meant
for the model.  The registry (:mod:`xmltools.tools`) ties the two together.

Each model declares, as class-level data, its approval ``category``, a
one-line ``summary``, its ``target_rule`` (and ``destination`` for drag), its
parameters and an ``example`` of a correct call (see :mod:`.model`).

The package, one concern a module:

- :mod:`.base`: the validation context, the limits, the categories, small checks;
- :mod:`.formats`: coordinates, sizes, keys, URLs, tab ids, file paths;
- :mod:`.targets`: coordinate | ref | selector (+ frame) as one :class:`Target`;
- :mod:`.model`: :class:`ActionModel`, the base and its declarations;
- :mod:`.classic`, :mod:`.elements`, :mod:`.navigation`, :mod:`.reading`,
  :mod:`.control`: the models, by group.

Pure: neither Playwright nor Jinja2, nor any xmltools module above the pure
helpers (quoting, results, urlpolicy).
"""

from __future__ import annotations

from typing import Annotated, TypeAlias, get_args

from pydantic import Field

from .base import (
    CATEGORIES,
    DEFAULT_VIEWPORT,
    DIRECTIONS,
    MAX_HTML_DEPTH,
    MAX_SCRIPT_CHARS,
    MAX_SNAPSHOT_DEPTH,
    WAIT_UNTIL,
    ActionContext,
    Category,
    Facts,
    ProfileName,
    TargetRule,
)
from .classic import Click, Close, Hover, Launch, Press, Resize, ScrollDown, ScrollUp, Type
from .control import Evaluate, Wait
from .elements import Drag, Fill, FillForm, Scroll, Select, Snapshot, Upload
from .formats import (
    check_save_path,
    check_upload_paths,
    check_url,
    normalize_keys,
    parse_coordinate,
    parse_size,
    parse_tab,
)
from .model import ActionModel
from .navigation import (
    Back,
    CloseTab,
    Forward,
    InTab,
    ListTabs,
    Navigate,
    OpenTab,
    Reload,
    SwitchTab,
    facts_of,
)
from .reading import ConsoleLogs, ExtractContent, GetAttribute, GetHtml, GetText, ScreenshotAction
from .targets import (
    DESTINATION_PARAMS,
    LOOKUPS,
    SELECTOR_SHORTCUTS,
    TARGET_KINDS,
    TARGET_PARAMS,
    SelectorKind,
    Target,
    parse_ref,
    selector_kind,
    target_problem,
)
from .verify import VERIFY_ACTIONS, VerifyElement, VerifyText, VerifyUrl, VerifyValue

__all__ = [
    "ACTIONS",
    "CATEGORIES",
    "DEFAULT_VIEWPORT",
    "DESTINATION_PARAMS",
    "DIRECTIONS",
    "LOOKUPS",
    "MAX_HTML_DEPTH",
    "MAX_SCRIPT_CHARS",
    "MAX_SNAPSHOT_DEPTH",
    "SELECTOR_SHORTCUTS",
    "TARGET_KINDS",
    "TARGET_PARAMS",
    "VERIFY_ACTIONS",
    "WAIT_UNTIL",
    "ActionContext",
    "ActionModel",
    "Back",
    "BrowserAction",
    "Category",
    "Click",
    "Close",
    "CloseTab",
    "ConsoleLogs",
    "Drag",
    "Evaluate",
    "ExtractContent",
    "Facts",
    "Fill",
    "FillForm",
    "Forward",
    "GetAttribute",
    "GetHtml",
    "GetText",
    "Hover",
    "InTab",
    "Launch",
    "ListTabs",
    "Navigate",
    "OpenTab",
    "Press",
    "ProfileName",
    "Reload",
    "Resize",
    "ScreenshotAction",
    "Scroll",
    "ScrollDown",
    "ScrollUp",
    "Select",
    "SelectorKind",
    "Snapshot",
    "SwitchTab",
    "Target",
    "TargetRule",
    "Type",
    "Upload",
    "VerifyElement",
    "VerifyText",
    "VerifyUrl",
    "VerifyValue",
    "Wait",
    "check_save_path",
    "check_upload_paths",
    "check_url",
    "facts_of",
    "normalize_keys",
    "parse_coordinate",
    "parse_ref",
    "parse_size",
    "parse_tab",
    "selector_kind",
    "target_problem",
]

# every canonical action, told apart by its ``action``; ACTIONS maps each name to its model
BrowserAction: TypeAlias = Annotated[
    Launch
    | Click
    | Hover
    | Type
    | Press
    | Fill
    | Select
    | Drag
    | Upload
    | Scroll
    | Snapshot
    | ScrollDown
    | ScrollUp
    | Resize
    | Close
    | Navigate
    | Back
    | Forward
    | Reload
    | OpenTab
    | ListTabs
    | SwitchTab
    | CloseTab
    | GetText
    | GetHtml
    | GetAttribute
    | ConsoleLogs
    | Wait
    | ScreenshotAction
    | Evaluate
    | FillForm
    | VerifyText
    | VerifyElement
    | VerifyValue
    | VerifyUrl,
    Field(discriminator="action"),
]

ACTIONS: dict[str, type[ActionModel]] = {
    m.model_fields["action"].default: m for m in get_args(get_args(BrowserAction)[0])
}
