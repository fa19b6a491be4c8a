"""The tool registry, and the typed form of every ``browser_action``.

A call from the parser becomes either a typed, validated action or a
:class:`CallError` that says exactly what is wrong and shows a correct call.
Host programs register their own tools here (a name, a pydantic parameter
model, a handler and a description); the parser's vocabulary comes from this
registry.  Pure: no I/O, and neither Playwright nor Jinja2 is imported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NamedTuple, TypeAlias, get_args
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from .errors import ConfigError
from .parser import ToolSyntax, ToolUse, Vocabulary
from .quoting import quoted, shorten
from .results import Point, Viewport
from .urlpolicy import UrlPolicy

__all__ = [
    "ACTION_MODELS",
    "BROWSER_TOOL",
    "COMPLETION_TOOL",
    "DEFAULT_VIEWPORT",
    "STANDARD_TOOLS",
    "ActionContext",
    "BrowserAction",
    "CallError",
    "Click",
    "Close",
    "Hover",
    "Launch",
    "Press",
    "Resize",
    "ScrollDown",
    "ScrollUp",
    "Tool",
    "ToolRegistry",
    "Type",
    "ValidCall",
    "format_call",
    "normalize_keys",
    "parse_coordinate",
    "parse_size",
]

BROWSER_TOOL = "browser_action"
DEFAULT_VIEWPORT = Viewport(width=900, height=600)
MIN_SIDE, MAX_SIDE = 200, 4096
MAX_SHOT_SIDE = 16_384  # the largest screenshot Chromium takes; a bound on the W and H of x,y@WxH
_MAX_NUMBER = 1_000_000.0  # a coordinate number beyond this is off any screen
MAX_ERROR_CHARS = 1_000  # the longest message one CallError carries
_MAX_PATH = 4_096  # PATH_MAX on Linux: no longer file path can be opened


@dataclass(frozen=True)
class ActionContext:
    """What validation needs to know of the session: the viewport and the host's rules."""

    viewport: Viewport = DEFAULT_VIEWPORT
    allowed_file_roots: tuple[Path, ...] = ()
    allowed_schemes: frozenset[str] = frozenset()  # beyond http, https and file
    max_text_chars: int = 10_000
    allowed_origins: tuple[str, ...] = ()
    blocked_origins: tuple[str, ...] = ()
    allow_link_local: bool = False

    @property
    def url_policy(self) -> UrlPolicy:
        return UrlPolicy(
            allowed_schemes=self.allowed_schemes,
            allowed_file_roots=self.allowed_file_roots,
            allowed_origins=self.allowed_origins,
            blocked_origins=self.blocked_origins,
            allow_link_local=self.allow_link_local,
        )


def _ctx(info: ValidationInfo) -> ActionContext:
    c = info.context
    found = c.get("ctx") if isinstance(c, Mapping) else None
    return found if isinstance(found, ActionContext) else ActionContext()


# -- parameter formats -------------------------------------------------------------

_NUM = r"[-+]?\d+(?:\.\d+)?"
_COORD_RE = re.compile(rf"\s*({_NUM})\s*,\s*({_NUM})\s*(?:@\s*(\d+)\s*[xX×]\s*(\d+)\s*)?")
_SIZE_RE = re.compile(r"\s*(\d+)\s*(?:,|[xX×])\s*(\d+)\s*")


def parse_coordinate(value: str, viewport: Viewport) -> Point:
    """``x,y`` in viewport pixels, or ``x,y@WxH`` measured on a WxH screenshot (scaled, rounded).

    Every problem is a ``ValueError`` meant for the model, absurd numbers included.
    """
    m = _COORD_RE.fullmatch(value)
    if not m:
        raise ValueError(
            f"{quoted(value)} is not a coordinate: write x,y in pixels (such as 450,300),"
            " or x,y@WxH when you measured on a screenshot of W by H pixels"
        )
    outside = (
        f"outside the viewport, which is {viewport.width}x{viewport.height}:"
        f" x must be 0 to {viewport.width - 1} and y 0 to {viewport.height - 1}"
    )
    x, y = float(m.group(1)), float(m.group(2))  # 400 digits give inf, which is caught just below
    if not (abs(x) <= _MAX_NUMBER and abs(y) <= _MAX_NUMBER):
        raise ValueError(f"{quoted(value)} is far {outside}")
    if m.group(3):
        sw, sh = m.group(3), m.group(4)
        w = int(sw) if len(sw) <= 6 else MAX_SHOT_SIDE + 1  # int() of thousands of digits fails
        h = int(sh) if len(sh) <= 6 else MAX_SHOT_SIDE + 1
        if w < 1 or h < 1:
            raise ValueError(f"{quoted(value)}: the screenshot size after @ must be positive")
        if w > MAX_SHOT_SIDE or h > MAX_SHOT_SIDE:
            raise ValueError(
                f"{quoted(value)}: the screenshot size after @ is too large; give the width and"
                f" height in pixels of the screenshot you measured on (at most {MAX_SHOT_SIDE} each)"
            )
        x = x * viewport.width / w
        y = y * viewport.height / h
    xi, yi = math.floor(x + 0.5), math.floor(y + 0.5)
    if not (0 <= xi < viewport.width and 0 <= yi < viewport.height):
        raise ValueError(f"{xi},{yi} is {outside}")
    return Point(x=xi, y=yi)


def parse_size(value: str) -> Viewport:
    """``W,H`` or ``WxH``, each side from 200 to 4096."""
    m = _SIZE_RE.fullmatch(value)
    if not m:
        raise ValueError(f"{quoted(value)} is not a size: write width and height as 1280x800 or 1280,800")
    for side, digits in (("width", m.group(1)), ("height", m.group(2))):
        n = int(digits) if len(digits) <= 6 else None  # int() of thousands of digits fails
        if n is None or not MIN_SIDE <= n <= MAX_SIDE:
            shown = n if n is not None else shorten(digits, 12)
            raise ValueError(
                f"a {side} of {shown} is out of range: each side must be {MIN_SIDE} to {MAX_SIDE}"
            )
    return Viewport(width=int(m.group(1)), height=int(m.group(2)))


_KEY_ALIASES = {
    "cmd": "Meta",
    "command": "Meta",
    "meta": "Meta",
    "win": "Meta",
    "super": "Meta",
    "ctrl": "Control",
    "control": "Control",
    "shift": "Shift",
    "alt": "Alt",
    "option": "Alt",
    "opt": "Alt",
    "esc": "Escape",
    "escape": "Escape",
    "enter": "Enter",
    "return": "Enter",
    "tab": "Tab",
    "space": "Space",
    "spacebar": "Space",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "capslock": "CapsLock",
    "plus": "+",
}
_MODIFIERS = ("Control", "Alt", "Shift", "Meta")


def normalize_keys(value: str) -> str:
    """A key or a combination (``ctrl+a``, ``cmd+shift+p``) in the form the browser expects."""
    raw = value.strip()
    if not raw:
        raise ValueError("no key given: write a key such as Enter, or a combination such as Control+A")
    tokens = [raw] if raw == "+" else [t.strip() for t in re.split(r"(?<!^)\+(?!$)", raw)]
    keys: list[str] = []
    for tok in tokens:
        low = tok.lower()
        if low in _KEY_ALIASES:
            keys.append(_KEY_ALIASES[low])
        elif re.fullmatch(r"[fF]([1-9]|1[0-9]|2[0-4])", tok):
            keys.append(tok.upper())
        elif len(tok) == 1 and tok.isprintable():
            keys.append(tok)
        else:
            raise ValueError(
                f"{quoted(tok, 40)} is not a key this tool knows: use a single character or a name such as"
                " Enter, Tab, Escape, Backspace, ArrowDown, PageDown, F5, with Control, Alt, Shift or Meta"
            )
    mods = [k for k in keys if k in _MODIFIERS]
    rest = [k for k in keys if k not in _MODIFIERS]
    if len(rest) > 1:
        raise ValueError(f"{quoted(value)} presses {len(rest)} keys at once; combine modifiers with one key")
    if len(set(mods)) != len(mods):
        raise ValueError(f"{quoted(value)} repeats a modifier")
    mods.sort(key=_MODIFIERS.index)
    return "+".join(mods + rest)


# -- the typed browser actions ---------------------------------------------------------


class _Action(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    params: ClassVar[tuple[str, ...]] = ()
    example: ClassVar[dict[str, str]] = {}
    summary: ClassVar[str] = ""


class Launch(_Action):
    action: Literal["launch"] = "launch"
    url: str
    params: ClassVar[tuple[str, ...]] = ("url",)
    example: ClassVar[dict[str, str]] = {"url": "http://localhost:3000"}

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str, info: ValidationInfo) -> str:
        return check_url(v.strip(), _ctx(info))


class _PointAction(_Action):
    coordinate: Point
    params: ClassVar[tuple[str, ...]] = ("coordinate",)
    example: ClassVar[dict[str, str]] = {"coordinate": "450,300"}

    @field_validator("coordinate", mode="before")
    @classmethod
    def _coord(cls, v: object, info: ValidationInfo) -> object:
        return parse_coordinate(v, _ctx(info).viewport) if isinstance(v, str) else v


class Click(_PointAction):
    action: Literal["click"] = "click"


class Hover(_PointAction):
    action: Literal["hover"] = "hover"


class Type(_Action):
    action: Literal["type"] = "type"
    text: str
    params: ClassVar[tuple[str, ...]] = ("text",)
    example: ClassVar[dict[str, str]] = {"text": "hello@example.com"}

    @field_validator("text")
    @classmethod
    def _len(cls, v: str, info: ValidationInfo) -> str:
        limit = _ctx(info).max_text_chars
        if not v:
            raise ValueError("the text is empty: put the characters to type inside <text>")
        if len(v) > limit:
            raise ValueError(f"the text is {len(v)} characters long; at most {limit} can be typed at once")
        return v


class Press(_Action):
    action: Literal["press"] = "press"
    text: str
    params: ClassVar[tuple[str, ...]] = ("text",)
    example: ClassVar[dict[str, str]] = {"text": "Control+A"}

    @field_validator("text")
    @classmethod
    def _keys(cls, v: str) -> str:
        return normalize_keys(v)


class ScrollDown(_Action):
    action: Literal["scroll_down"] = "scroll_down"


class ScrollUp(_Action):
    action: Literal["scroll_up"] = "scroll_up"


class Resize(_Action):
    action: Literal["resize"] = "resize"
    size: Viewport
    params: ClassVar[tuple[str, ...]] = ("size",)
    example: ClassVar[dict[str, str]] = {"size": "1280x800"}

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: object) -> object:
        return parse_size(v) if isinstance(v, str) else v


class Close(_Action):
    action: Literal["close"] = "close"


BrowserAction: TypeAlias = Annotated[
    Launch | Click | Hover | Type | Press | ScrollDown | ScrollUp | Resize | Close,
    Field(discriminator="action"),
]

ACTION_MODELS: dict[str, type[_Action]] = {
    m.model_fields["action"].default: m for m in get_args(get_args(BrowserAction)[0])
}
ACTION_NAMES: tuple[str, ...] = tuple(ACTION_MODELS)


def check_url(url: str, ctx: ActionContext) -> str:
    """Allow http and https, file URLs under the host's roots, and other schemes only when allowed."""
    if not url:
        raise ValueError("the URL is empty")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        if not parts.netloc:
            raise ValueError(f"{quoted(url)} has no host: write it in full, such as http://localhost:3000/")
        reason = ctx.url_policy.check(url)
        if reason is not None:
            raise ValueError(f"{quoted(url)} may not be opened: {shorten(reason, 300)}")
        return url
    if scheme == "file":
        if scheme in ctx.allowed_schemes:
            return url
        if "\\" in unquote(parts.path):
            raise ValueError(f"{quoted(url)} has a backslash; write file paths with / only")
        raw_path = unquote(parts.path)
        if len(raw_path) > _MAX_PATH or "\x00" in raw_path:  # resolving 450,000 folders took minutes
            raise ValueError(f"{quoted(url)} is not a file path this system can open")
        path = Path(raw_path).resolve()
        for root in ctx.allowed_file_roots:
            r = root.resolve()
            if path == r or r in path.parents:
                return url
        if not ctx.allowed_file_roots:
            raise ValueError("file URLs are not allowed in this session; use an http or https URL")
        roots = ", ".join(str(r) for r in ctx.allowed_file_roots)
        raise ValueError(f"{quoted(url)} is outside the folders this session may open ({roots})")
    if scheme and scheme in ctx.allowed_schemes:
        return url
    if not scheme:
        raise ValueError(f"{quoted(url)} has no scheme: write it in full, such as http://{shorten(url, 40)}")
    raise ValueError(f"{shorten(scheme, 40)}: URLs are not allowed; use an http or https URL")


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
    """

    name: str
    params: type[BaseModel]
    handler: Handler
    description: str = ""
    template: str = "system/tool.j2"
    raw: frozenset[str] = frozenset()
    completes: bool = False

    def __post_init__(self) -> None:
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
    param: str | None = None
    example: str = ""


@dataclass(frozen=True)
class ValidCall:
    tool: str
    args: BaseModel  # a browser action model, or the host tool's parameter model
    block: ToolUse = field(compare=False)

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
    """The tools a session offers: ``browser_action`` (with a chosen set of actions) and host tools."""

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        browser: bool = True,
        actions: Iterable[str] | None = None,
    ) -> None:
        self.browser = browser
        acts = tuple(actions) if actions is not None else ACTION_NAMES
        unknown = [a for a in acts if a not in ACTION_MODELS]
        if unknown:
            raise ConfigError(f"unknown browser actions {unknown}; known: {', '.join(ACTION_NAMES)}")
        if browser and ("launch" not in acts or "close" not in acts):
            raise ConfigError("the launch and close actions cannot be turned off")
        self.actions: tuple[str, ...] = tuple(a for a in ACTION_NAMES if a in acts)
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
                from .parser import BROWSER_ACTION

                syn.insert(0, BROWSER_ACTION)
            self._vocab = Vocabulary(syn)
        return self._vocab

    # validation

    def example(self, action: str) -> str:
        model = ACTION_MODELS[action]
        return format_call(BROWSER_TOOL, {"action": action, **model.example})

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
        if not action:
            return CallError(
                "missing_action",
                "the call has no <action>: say which action to take",
                BROWSER_TOOL,
                "action",
                self.example("launch"),
            )
        if action not in ACTION_MODELS:
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
        model = ACTION_MODELS[action]
        for p in params:
            if p != "action" and p not in model.params:
                takes = (
                    f"takes only <{'>, <'.join(model.params)}>"
                    if model.params
                    else "takes no other parameters"
                )
                return CallError(
                    "unexpected_param",
                    f"<{p}> does not belong to the {action} action, which {takes}",
                    BROWSER_TOOL,
                    p,
                    self.example(action),
                )
        for p in model.params:
            if p not in params:
                return CallError(
                    "missing_param",
                    f"the {action} action needs <{p}>",
                    BROWSER_TOOL,
                    p,
                    self.example(action),
                )
        try:
            args = model.model_validate(params, context={"ctx": ctx})
        except ValidationError as e:
            return self._from_validation(e, BROWSER_TOOL, self.example(action))
        except Exception as e:  # the last guard: the model's text never ends the host's loop
            return CallError(
                "invalid_param",
                f"the {action} call could not be read ({type(e).__name__}); check its values",
                BROWSER_TOOL,
                None,
                self.example(action),
            )
        return ValidCall(BROWSER_TOOL, args, block)

    @staticmethod
    def _from_validation(e: ValidationError, tool: str, example: str) -> CallError:
        err = e.errors(include_url=False)[0]
        loc = err.get("loc") or ()
        param = str(loc[0]) if loc else None
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
