"""``compat="roo"`` and ``compat="cline"``: the block output of the anchors' whole-message parsers.

Kept apart from our dialect, for migration and comparison.  Roo-Code's V2
parser and Cline's last XML-era parser (``parseAssistantMessageV2``) build the
same blocks: an opening tag starts a call wherever it stands (no backtick or
fence rule), any tool's parameter tag opens a value, other tags are ignored, a
value runs to its own first closing tag (a repeated parameter takes the last
value; the closing tag of a parameter named as its tool closes the call too),
and when a call named ``write_to_file`` closes, its ``content`` is read again
from the first ``<content>`` to the last ``</content>`` of the call (only for
that tool).  A call still open when the message ends is partial, with what its
open value holds so far, and the text after the last call is partial.

They differ only in how a value is trimmed: Cline trims every value, ``content``
too (:func:`cline_value`); Roo trims every value but ``content``, which loses
one newline at each end (:func:`roo_value`).

This module owns the anchors' steps (``ANCHOR_STEPS``, keyed like
``scanner.STEPS``) and their value rules.  It may import the scanner, never the
other way round, and nothing outside this package.  It is pure.
"""

from __future__ import annotations

from .blocks import Event, ParamDelta, TextDelta, ToolCompleted, ToolStarted
from .scanner import TAG_RE, body_tail, text_tail, tuple_new, value_tail
from .state import PARAM, TEXT, TOOL, OpenCall, ScanState, Step, ValueRule
from .vocabulary import WS

__all__ = ["ANCHOR_STEPS", "VALUE_RULES", "cline_value", "roo_value"]


def roo_value(call: OpenCall, pname: str, v: str) -> str:
    """Roo's rule: every value trimmed, but ``content`` loses only one newline at each end."""
    if pname == "content":
        if v.startswith("\n"):
            v = v[1:]
        if v.endswith("\n"):
            v = v[:-1]
        return v
    return v.strip(WS)


def cline_value(call: OpenCall, pname: str, v: str) -> str:
    """Cline's rule: every value trimmed as JavaScript's ``trim()`` does, ``content`` too."""
    return v.strip(WS)


def anchor_text(p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]) -> tuple[int, int]:
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


def anchor_tool(p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]) -> tuple[int, int]:
    tool = p._tool
    params = p.vocab.all_params  # the anchors' parameters are global: any tool's
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


def anchor_param(
    p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]
) -> tuple[int, int]:
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
    end = k + len(close)
    if tool.close_name == "/" + pname:
        # a parameter named as its tool: the anchors close the call with the same tag
        _write_to_file_content(p, tool, base + k)
        block = p._finish_tool(tool, base + end)
        if p._emit:
            events.append(tuple_new(ToolCompleted, (tool.index, block)))
        return TEXT, end
    return TOOL, end


def _write_to_file_content(p: ScanState, tool: OpenCall, tag_start: int) -> None:
    # The anchors' special case, for write_to_file only: the value of <content> runs from
    # the first <content> to the last </content> before the tool's closing tag.
    if tool.name == "write_to_file":
        body = p._slice(tool.body, tag_start)
        a = body.find("<content>")
        b = body.rfind("</content>")
        if a != -1 and b != -1 and b > a:
            tool.spans["content"] = (tool.body + a + 9, tool.body + b)


# The anchors never wait after an opening tag, so they have no PENDING step.
ANCHOR_STEPS: dict[int, Step] = {TEXT: anchor_text, TOOL: anchor_tool, PARAM: anchor_param}
# how each anchor trims a value, by the name of its mode
VALUE_RULES: dict[str, ValueRule] = {"roo": roo_value, "cline": cline_value}
