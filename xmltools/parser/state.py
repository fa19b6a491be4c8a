"""What the scanner keeps between feeds, and the moves its steps share.

This module owns ``ScanState``: the scanner's state (``TEXT``, ``PENDING``,
``TOOL`` or ``PARAM``), its position in the window, the call being read
(``OpenCall``), the blocks already finished, the fence tracking, and the moves
on them that several steps make (open a call, close a value, finish a call,
report a tag).  The steps themselves live in ``scanner.py`` (and the anchors' in
``compat.py``): this module must import neither of them, nor ``stream.py``,
nor anything outside this package.  It is pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from .blocks import Diagnostic, Event, ParamDelta, Span, TextBlock, TextDelta, ToolUse
from .text import TextStore
from .vocabulary import WS, ToolSyntax, Vocabulary

__all__ = [
    "FENCE_RE",
    "NO_CALL",
    "PARAM",
    "PENDING",
    "TEXT",
    "TOOL",
    "OpenCall",
    "ScanState",
    "Step",
    "ValueRule",
    "default_value",
]

# The scanner's states: the keys of the step tables.
TEXT, PENDING, TOOL, PARAM = 0, 1, 2, 3

FENCE_RE = re.compile(r"\n[ ]{0,3}(?:```|~~~)")


_NONE: frozenset[str] = frozenset()


class OpenCall:
    """A call whose closing tag has not arrived yet (mutable; it becomes a ``ToolUse``)."""

    __slots__ = (
        "body",
        "close_name",
        "diags",
        "index",
        "name",
        "param",
        "param_close",
        "param_start",
        "params",
        "raw",
        "raw_ext",
        "spans",
        "start",
        "too_big",
        "unknown",
    )

    def __init__(self, syntax: ToolSyntax, index: int, start: int, body: int) -> None:
        self.name = syntax.name
        self.params = syntax.params
        self.raw = syntax.raw
        self.index = index
        self.start = start
        self.body = body
        # closed parameters: name -> span of the value, in the order they were first closed
        self.spans: dict[str, Span] = {}
        self.diags: list[Diagnostic] = []
        self.param = ""  # name of the open parameter, "" when none
        self.param_close = ""
        self.param_start = 0
        # the raw parameter closed last, and how many diagnostics the call had then
        self.raw_ext: tuple[str, int] | None = None
        # parameters reported too long, unknown tags reported (rarely any: shared when empty)
        self.too_big = _NONE
        self.unknown = _NONE
        self.close_name = "/" + syntax.name


NO_CALL = OpenCall(ToolSyntax("_", ()), -1, 0, 0)  # the scanner's call while there is none

# A step scans the window ``w`` (text position ``base`` at index 0) from index ``i``; it
# returns the next state and index.  It returns its own state only when it needs more text.
Step = Callable[["ScanState", str, int, int, bool, list[Event]], tuple[int, int]]
# How a parameter's value is read from its raw text.
ValueRule = Callable[[OpenCall, str, str], str]


def _strip_raw(s: str) -> str:
    if s.startswith("\r\n"):
        s = s[2:]
    elif s.startswith("\n"):
        s = s[1:]
    if s.endswith("\r\n"):
        s = s[:-2]
    elif s.endswith("\n"):
        s = s[:-1]
    return s


def default_value(call: OpenCall, pname: str, v: str) -> str:
    """Our rule: trimmed, but a raw parameter loses only one newline at each end."""
    if pname in call.raw:
        return _strip_raw(v)
    return v.strip(WS)


class ScanState(TextStore):
    """The scanner's state over the stored text; ``scanner.advance`` moves it on."""

    __slots__ = (
        "_anchor",
        "_done",
        "_emit",
        "_fence_line",
        "_fence_pos",
        "_fenced_text",
        "_in_fence",
        "_max_param",
        "_ntools",
        "_opener",
        "_pos",
        "_state",
        "_steps",
        "_text_start",
        "_tool",
        "_value_rule",
        "vocab",
    )

    def __init__(
        self,
        vocab: Vocabulary,
        steps: Mapping[int, Step],
        value_rule: ValueRule,
        *,
        anchor: bool,
        fenced_text: bool,
        max_param: int,
    ) -> None:
        super().__init__()
        self.vocab = vocab
        self._steps = steps
        self._value_rule = value_rule
        self._anchor = anchor  # an anchor's mode (compat roo or cline): blocks as the anchors build them
        self._fenced_text = fenced_text
        self._max_param = max_param
        self._pos = 0  # where the undecided text begins
        self._state = TEXT
        self._text_start = 0
        self._opener: tuple[int, int, str] = (0, 0, "")  # start, end, name (pending)
        self._tool = NO_CALL
        self._ntools = 0
        self._done: list[TextBlock | ToolUse] = []
        self._emit = True
        self._fence_pos = 0
        self._fence_line = True
        self._in_fence = False

    # -- calls -----------------------------------------------------------------

    def _open_tool(self, name: str, start: int, body: int) -> OpenCall:
        ts = self._text_start
        if ts < start:
            wb = self._wbase
            raw = self._win[ts - wb : start - wb] if ts >= wb else self._slice(ts, start)
            content = raw.strip(WS)
            if content:
                lead = 0 if raw[0] == content[0] else len(raw) - len(raw.lstrip(WS))
                self._done.append(TextBlock(content, False, (ts + lead, ts + lead + len(content))))
        self._tool = tool = OpenCall(self.vocab[name], self._ntools, start, body)
        self._ntools += 1
        return tool

    def _close_value(self, tool: OpenCall, vend: int) -> None:
        """The open parameter's closing tag begins at ``vend``: its value is decided."""
        pname = tool.param
        vstart = tool.param_start
        if vend - vstart > self._max_param:
            vend = vstart + self._max_param
            self._param_too_big(tool, pname, vstart)
        if pname not in tool.spans:
            tool.spans[pname] = (vstart, vend)
        tool.param = ""
        if pname in tool.raw:
            tool.raw_ext = (pname, len(tool.diags))

    def _finish_tool(self, tool: OpenCall, end: int) -> ToolUse:
        params: dict[str, str] = {}
        rule = self._value_rule
        win = self._win
        wb = self._wbase
        for pname, (a, b) in tool.spans.items():
            params[pname] = rule(tool, pname, win[a - wb : b - wb] if a >= wb else self._slice(a, b))
        # the call is done with: its spans become the block's
        block = ToolUse(tool.name, params, False, (tool.start, end), tool.spans, tuple(tool.diags))
        self._done.append(block)
        self._tool = NO_CALL
        self._text_start = end
        self._fence_pos = end
        self._fence_line = False
        return block

    def _value(self, tool: OpenCall, pname: str, a: int, b: int) -> str:
        return self._value_rule(tool, pname, self._slice(a, b))

    def _unknown_tag(self, tool: OpenCall, tag: str, source: str, start: int, end: int) -> None:
        bare = tag.lstrip("/")
        if tag[0] == "/" and bare in tool.unknown:
            return  # the closing half of an unknown tag already reported
        tool.unknown = tool.unknown | {bare}
        tool.diags.append(
            Diagnostic(
                "unknown_tag",
                f"{source} is not a parameter of <{tool.name}> (its parameters: {', '.join(tool.params)})",
                (start, end),
            )
        )

    def _extend_raw(self, tool: OpenCall, upto: int, events: list[Event]) -> None:
        """A later closing tag of a raw parameter: its value runs on to this one."""
        assert tool.raw_ext is not None
        pname, ndiags = tool.raw_ext
        s0, s1 = tool.spans[pname]
        if self._emit:
            events.append(ParamDelta(tool.index, pname, self._slice(s1, upto)))
        tool.spans[pname] = (s0, min(upto, s0 + self._max_param))
        del tool.diags[ndiags:]  # tags seen since were part of the value
        tool.unknown = _NONE
        if upto - s0 > self._max_param:
            self._param_too_big(tool, pname, s0)

    def _param_too_big(self, tool: OpenCall, pname: str, start: int) -> None:
        if pname not in tool.too_big:
            tool.too_big = tool.too_big | {pname}
            tool.diags.append(self._too_big_diag(pname, start))

    def _too_big_diag(self, pname: str, start: int) -> Diagnostic:
        return Diagnostic(
            "param_too_large",
            f"<{pname}> is longer than {self._max_param} characters",
            (start, start + self._max_param),
        )

    # -- text ------------------------------------------------------------------

    def _fenced_at(self, pos: int) -> bool:
        """Whether ``pos`` lies inside a Markdown code fence (``fenced="text"``)."""
        seg = self._slice(self._fence_pos, pos)
        if seg:
            probe = ("\n" + seg) if self._fence_line else seg
            for _ in FENCE_RE.finditer(probe):
                self._in_fence = not self._in_fence
            self._fence_line = seg.endswith("\n")
        self._fence_pos = pos
        return self._in_fence

    def _not_a_call(self, j: int, w: str, events: list[Event]) -> int:
        """The pending opening tag at window index ``j`` was prose: resume as text after its '<'."""
        if self._emit:
            events.append(TextDelta(w[j : j + 1]))
        return j + 1
