"""``compat="roo"``: the block output of the Cline / Roo-Code whole-message parser.

Kept apart from our dialect, for migration and comparison.  It follows
Roo-Code's V2 parser: an opening tag starts a call wherever it stands (no
backtick or fence rule), any tool's parameter tag opens a value, other tags
are ignored, a value runs to its own first closing tag (a repeated parameter
takes the last value), every value is trimmed, and when a call named
``write_to_file`` closes, its ``content`` is read again from the first
``<content>`` to the last ``</content>`` of the call (only for that tool).

This module owns roo's steps (``ROO_STEPS``, keyed like ``scanner.STEPS``) and
its value rule.  It may import the scanner, never the other way round, and
nothing outside this package.  It is pure.
"""

from __future__ import annotations

from .blocks import Event, ParamDelta, TextDelta, ToolCompleted, ToolStarted
from .scanner import TAG_RE, body_tail, text_tail, tuple_new, value_tail
from .state import PARAM, TEXT, TOOL, OpenCall, ScanState, Step
from .vocabulary import WS

__all__ = ["ROO_STEPS", "roo_value"]


def roo_value(call: OpenCall, pname: str, v: str) -> str:
    """Roo's rule: every value trimmed, but ``content`` loses only one newline at each end."""
    if pname == "content":
        if v.startswith("\n"):
            v = v[1:]
        if v.endswith("\n"):
            v = v[:-1]
        return v
    return v.strip(WS)


def roo_text(p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]) -> tuple[int, int]:
    m = p.vocab.opener_re.search(w, i)
    if m is None:
        return TEXT, text_tail(p, w, i, final, events)
    j, k = m.span()
    emit = p._emit
    if emit and j > i:
        events.append(tuple_new(TextDelta, (w[i:j],)))
    tool = p._open_tool(m.group(1), base + j, base + k)
    if emit:
        events.append(tuple_new(ToolStarted, (tool.index, tool.name, tool.start)))
    return TOOL, k


def roo_tool(p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]) -> tuple[int, int]:
    tool = p._tool
    params = p.vocab.all_params  # Roo's parameters are global: any tool's
    search = TAG_RE.search
    while True:
        m = search(w, i)
        if m is None:
            return TOOL, body_tail(w, i, final)
        j, k = m.span()
        tag, attrs = m.group(1, 2)
        i = k
        if attrs is not None:
            continue
        if tag == tool.close_name:
            _write_to_file_content(p, tool, base + j)
            block = p._finish_tool(tool, base + k)
            if p._emit:
                events.append(tuple_new(ToolCompleted, (tool.index, block)))
            return TEXT, k
        if tag in params:
            tool.param = tag
            tool.param_close = "</" + tag + ">"
            tool.param_start = base + k
            return PARAM, k


def roo_param(p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]) -> tuple[int, int]:
    tool = p._tool
    close = tool.param_close
    k = w.find(close, i)
    if k < 0:
        return PARAM, value_tail(p, w, i, events)
    pname = tool.param
    if k > i and p._emit:
        events.append(tuple_new(ParamDelta, (tool.index, pname, w[i:k])))
    vstart = tool.param_start
    vend = base + k
    if vend - vstart > p._max_param:
        vend = vstart + p._max_param
        p._param_too_big(tool, pname, vstart)
    tool.spans[pname] = (vstart, vend)  # a repeated parameter: the last value wins
    tool.param = ""
    return TOOL, k + len(close)


def _write_to_file_content(p: ScanState, tool: OpenCall, tag_start: int) -> None:
    # Roo-Code's special case, for write_to_file only: the value of <content> runs from
    # the first <content> to the last </content> before the tool's closing tag.
    if tool.name == "write_to_file":
        body = p._slice(tool.body, tag_start)
        a = body.find("<content>")
        b = body.rfind("</content>")
        if a != -1 and b != -1 and b > a:
            tool.spans["content"] = (tool.body + a + 9, tool.body + b)


# Roo never waits after an opening tag, so it has no PENDING step.
ROO_STEPS: dict[int, Step] = {TEXT: roo_text, TOOL: roo_tool, PARAM: roo_param}
