"""The incremental scanner: one small step per state, looked up as ``STEPS[state]``.

This module owns how the window is read in our dialect (``compat="default"``):
the four steps (``TEXT``, ``PENDING``, ``TOOL``, ``PARAM``) and the driver
``advance`` that runs them until one needs more text.  A step works on locals
and returns the next state and index; it loops within its own state, so
returning its own state means "wait for more text".  (``feed`` has quick paths
of its own for a chunk that cannot change the state.)
Every decision depends only on the text up to a bounded look-ahead, so any
chunking gives the blocks of the whole text.  The anchors' steps live in
``compat.py``; this module must not import it (nor ``stream.py``).  It is pure.
"""

from __future__ import annotations

import re

from .blocks import Diagnostic, Event, ParamDelta, TextDelta, ToolCompleted, ToolStarted
from .state import PARAM, PENDING, TEXT, TOOL, ScanState, Step

__all__ = ["STEPS", "TAG_RE", "TRIM", "advance", "body_tail", "text_tail", "tuple_new", "value_tail"]

# A tag inside a call: a name (optionally closing) and, for unknown tags, attributes.
TAG_RE = re.compile(r"<(/?[A-Za-z_][A-Za-z0-9_.:-]{0,127})(\s[^<>]{0,127}|/)?>")
_NOT_WS_RE = re.compile(r"[^ \t\r\n]")
_TAG_START = frozenset("/_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Bounded look-aheads: how far the scanner may look before it decides.
MAX_TAG = 260  # a tag inside a call is at most this long (see TAG_RE)
_MAX_GAP = 1024  # whitespace allowed between a tool's opening tag and its first tag
TRIM = 256  # the decided part of the window is dropped once it is this long

tuple_new = tuple.__new__  # builds an event without the Python-level __new__ of a NamedTuple


def advance(p: ScanState, final: bool) -> list[Event]:
    """Scan the undecided part of the window; return the events it caused."""
    w = p._win
    base = p._wbase
    i = p._pos - base
    events: list[Event] = []
    steps = p._steps
    state = p._state
    while True:
        nxt, i = steps[state](p, w, base, i, final, events)
        if nxt == state:
            break
        state = nxt
    p._state = state
    p._pos = base + i
    if i > TRIM:
        # Drop the decided part of the window, but one character of look-behind (for the
        # backtick rule) and a pending opening tag.
        keep = i - 1
        if state == PENDING and p._opener[0] - base < keep:
            keep = p._opener[0] - base
        p._win = w[keep:]
        p._wbase = base + keep
    return events


# --------------------------------------------------------------------------
# The steps


def text_step(p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]) -> tuple[int, int]:
    """Prose: look for a tool's opening tag that is not quoted by a backtick or a fence."""
    search = p.vocab.opener_re.search
    while True:
        m = search(w, i)
        if m is None:
            return TEXT, text_tail(p, w, i, final, events)
        j, k = m.span()
        if (w[j - 1] if j else p._char_before(j, w)) == "`" or (p._fenced_text and p._fenced_at(base + j)):
            if p._emit:
                events.append(tuple_new(TextDelta, (w[i : j + 1],)))
            i = j + 1
            continue
        if j > i and p._emit:
            events.append(tuple_new(TextDelta, (w[i:j],)))
        p._opener = (base + j, base + k, m.group(1))
        return PENDING, k


def text_tail(p: ScanState, w: str, i: int, final: bool, events: list[Event]) -> int:
    """No opening tag from ``i`` on: the text is prose, but what may still become one waits."""
    n = len(w)
    j = n
    if not final:
        vocab = p.vocab
        lo = n - vocab.max_open
        j = w.rfind("<", i if i > lo else lo)
        if j < 0 or w[j:] not in vocab.opener_prefixes:
            j = n
    if j > i and p._emit:
        events.append(tuple_new(TextDelta, (w[i:j],)))
    return j


def pending_step(
    p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]
) -> tuple[int, int]:
    """After an opening tag: a call only if a tag follows, after whitespace at most."""
    n = len(w)
    if i >= n and not final:
        return PENDING, i
    ostart, oend, name = p._opener
    limit = oend - base + _MAX_GAP
    m = _NOT_WS_RE.search(w, i, min(n, limit + 1))
    if m is None:
        if n > limit:  # only whitespace: prose
            return TEXT, p._not_a_call(ostart - base, w, events)
        if final:  # the message ends right after an opening tag
            tool = p._open_tool(name, ostart, oend)
            if p._emit:
                events.append(tuple_new(ToolStarted, (tool.index, name, ostart)))
            return TOOL, n
        return PENDING, n
    q = m.start()
    if w[q] != "<":
        return TEXT, p._not_a_call(ostart - base, w, events)
    if q + 1 >= n and not final:
        return PENDING, q
    if q + 1 >= n or w[q + 1] in _TAG_START:
        tool = p._open_tool(name, ostart, oend)
        if p._emit:
            events.append(tuple_new(ToolStarted, (tool.index, name, ostart)))
        return TOOL, q
    return TEXT, p._not_a_call(ostart - base, w, events)


def tool_step(p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]) -> tuple[int, int]:
    """A call's body: parameter tags open values, its own closing tag ends it, others are reported."""
    tool = p._tool
    search = TAG_RE.search
    while True:
        m = search(w, i)
        if m is None:
            return TOOL, body_tail(w, i, final)
        j, k = m.span()
        tag, attrs = m.group(1, 2)
        i = k
        if attrs is None:
            if tag == tool.close_name:
                block = p._finish_tool(tool, base + k)
                if p._emit:
                    events.append(tuple_new(ToolCompleted, (tool.index, block)))
                return TEXT, k
            if tag in tool.params:
                tool.raw_ext = None
                if tag in tool.spans:
                    tool.diags.append(
                        Diagnostic(
                            "duplicate_param",
                            f"<{tag}> appears twice in <{tool.name}>; give each parameter once",
                            (base + j, base + k),
                        )
                    )
                tool.param = tag
                tool.param_close = "</" + tag + ">"
                tool.param_start = base + k
                return PARAM, k
            if tool.raw_ext is not None and tag == "/" + tool.raw_ext[0]:
                p._extend_raw(tool, base + j, events)
                continue
        p._unknown_tag(tool, tag, w[j:k], base + j, base + k)


def body_tail(w: str, i: int, final: bool) -> int:
    """No tag from ``i`` on in a call's body: where to wait for more text."""
    n = len(w)
    if final:
        return n
    # Wait at the last '<', the only one that may still begin a tag.  (Waiting where
    # no tag can begin changes nothing: a call's body emits no events.)
    lo = n - MAX_TAG
    j = w.rfind("<", i if i > lo else lo)
    return j if j >= 0 else n


def param_step(p: ScanState, w: str, base: int, i: int, final: bool, events: list[Event]) -> tuple[int, int]:
    """A parameter's value: raw text up to its own closing tag."""
    tool = p._tool
    close = tool.param_close
    k = w.find(close, i)
    if k < 0:
        return PARAM, value_tail(p, w, i, events)
    pname = tool.param
    if k > i and p._emit:
        events.append(tuple_new(ParamDelta, (tool.index, pname, w[i:k])))
    # the value is decided (as ScanState._close_value, inline on this hot path)
    vstart = tool.param_start
    vend = base + k
    if vend - vstart > p._max_param:
        vend = vstart + p._max_param
        p._param_too_big(tool, pname, vstart)
    if pname not in tool.spans:
        tool.spans[pname] = (vstart, vend)
    tool.param = ""
    if pname in tool.raw:
        tool.raw_ext = (pname, len(tool.diags))
    return TOOL, k + len(close)


def value_tail(p: ScanState, w: str, i: int, events: list[Event]) -> int:
    """The open value goes on past the window: hold back what may begin its closing tag."""
    tool = p._tool
    safe = len(w) - len(tool.param_close) + 1
    if safe > i:
        if p._emit:
            events.append(tuple_new(ParamDelta, (tool.index, tool.param, w[i:safe])))
        return safe
    return i


STEPS: dict[int, Step] = {TEXT: text_step, PENDING: pending_step, TOOL: tool_step, PARAM: param_step}
