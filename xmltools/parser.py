"""Finding tool calls in raw model text, whole or chunk by chunk.

This module owns the tool-call dialect (DESIGN §3): which tags are structure,
where a parameter value ends, what is partial, and the diagnostics that say
what is wrong with a call.  It is pure: no I/O, and it must import neither
jinja2 nor playwright (nor anything that does).

Two modes exist:

* ``compat="default"``: our dialect.  Tags mentioned in prose stay text,
  truncated calls never count as complete, duplicate and unknown tags make a
  call invalid, and the ``text``-like raw parameters keep their spaces.
* ``compat="roo"``: the block output of the Cline / Roo-Code whole-message
  parser, reproduced for migration and comparison.

The scanner is incremental.  Every decision it makes depends only on the text
up to a bounded look-ahead, so feeding a message in chunks of any size gives
exactly the blocks of parsing it whole, and the total cost stays linear.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Protocol, TypeAlias, runtime_checkable

from .errors import ConfigError, StreamClosedError, UsageError

__all__ = [
    "BROWSER_ACTION",
    "Block",
    "Diagnostic",
    "Event",
    "Limits",
    "ParamDelta",
    "StreamParser",
    "TextBlock",
    "TextDelta",
    "ToolCompleted",
    "ToolStarted",
    "ToolSyntax",
    "ToolUse",
    "Vocabulary",
    "parse",
]

Compat = Literal["default", "roo"]
Fenced = Literal["call", "text"]
Span: TypeAlias = tuple[int, int]

# JavaScript's String.prototype.trim() whitespace, so that roo mode trims
# exactly as the anchors do.  Default mode uses the same set for consistency.
_WS = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*\Z")
# A tag inside a call: a name (optionally closing) and, for unknown tags, attributes.
_TAG_RE = re.compile(r"<(/?[A-Za-z_][A-Za-z0-9_.:-]{0,127})(\s[^<>]{0,127}|/)?>")
_TAG_PREFIX_RE = re.compile(r"<(?:/?(?:[A-Za-z_][A-Za-z0-9_.:-]{0,127}(?:\s[^<>]{0,127}|/)?)?)?\Z")
_FENCE_RE = re.compile(r"\n[ ]{0,3}(?:```|~~~)")
_NOT_WS_RE = re.compile(r"[^ \t\r\n]")
_TAG_START = frozenset("/_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Bounded look-aheads: how far the scanner may look before it decides.
_MAX_TAG = 260  # a tag inside a call is at most this long (see _TAG_RE)
_MAX_GAP = 1024  # whitespace allowed between a tool's opening tag and its first tag


# --------------------------------------------------------------------------
# Vocabulary


@dataclass(frozen=True, slots=True)
class ToolSyntax:
    """What the parser knows of one tool: its name and its parameter names.

    ``raw`` names the parameters that carry free text (such as ``text``): their
    values keep inner spaces (only one leading and one trailing newline are
    removed) and run to the *last* closing tag before the tool's own.
    """

    name: str
    params: tuple[str, ...]
    raw: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ConfigError(f"invalid tool name {self.name!r}: use letters, digits and _ . : -")
        params = tuple(self.params)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "raw", frozenset(self.raw))
        for p in params:
            if not isinstance(p, str) or not _NAME_RE.match(p):
                raise ConfigError(f"tool {self.name!r}: invalid parameter name {p!r}")
        if len(set(params)) != len(params):
            raise ConfigError(f"tool {self.name!r}: a parameter name is listed twice")
        unknown = self.raw - set(params)
        if unknown:
            raise ConfigError(f"tool {self.name!r}: raw parameters {sorted(unknown)} are not parameters")


BROWSER_ACTION = ToolSyntax(
    "browser_action", ("action", "url", "coordinate", "text", "size"), frozenset({"text"})
)


@runtime_checkable
class HasVocabulary(Protocol):
    """Anything that can say which tools exist (a tool registry, for instance)."""

    @property
    def vocabulary(self) -> Vocabulary: ...


class Vocabulary:
    """The set of tools a parser recognises."""

    __slots__ = ("_tools", "all_params", "max_open", "opener_prefix_re", "opener_re")

    def __init__(self, tools: Iterable[ToolSyntax] = (BROWSER_ACTION,)) -> None:
        self._tools: dict[str, ToolSyntax] = {}
        for t in tools:
            if not isinstance(t, ToolSyntax):
                raise ConfigError(f"expected ToolSyntax, got {type(t).__name__}")
            if t.name in self._tools:
                raise ConfigError(f"tool {t.name!r} is defined twice")
            self._tools[t.name] = t
        # Roo's vocabulary of parameters is global: any parameter tag of any tool.
        self.all_params: frozenset[str] = frozenset(p for t in self._tools.values() for p in t.params)
        self.max_open = max((len(n) + 2 for n in self._tools), default=2)
        names = sorted(self._tools, key=len, reverse=True)
        alts = "|".join(re.escape(n) for n in names) or "(?!)"
        self.opener_re = re.compile(f"<({alts})>")
        prefixes = {n[:k] for n in names for k in range(len(n) + 1)}
        palts = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
        self.opener_prefix_re = re.compile(f"<(?:{palts})\\Z")

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> ToolSyntax:
        return self._tools[name]

    def __iter__(self) -> Iterator[ToolSyntax]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"Vocabulary({list(self._tools)!r})"

    @classmethod
    def coerce(cls, tools: Vocabulary | HasVocabulary | Iterable[ToolSyntax] | None) -> Vocabulary:
        if tools is None:
            return _DEFAULT_VOCAB
        if isinstance(tools, Vocabulary):
            return tools
        if isinstance(tools, HasVocabulary):
            return tools.vocabulary
        if isinstance(tools, (str, bytes)):
            raise ConfigError("tools must be ToolSyntax objects, a Vocabulary or a registry")
        return cls(tools)


_DEFAULT_VOCAB = Vocabulary()


@dataclass(frozen=True, slots=True)
class Limits:
    """Size limits.  Past either one the parser reports a diagnostic; it never raises."""

    max_message_chars: int = 8_000_000
    max_param_chars: int = 1_000_000

    def __post_init__(self) -> None:
        if self.max_message_chars < 1 or self.max_param_chars < 1:
            raise ConfigError("limits must be positive")


# --------------------------------------------------------------------------
# Blocks, diagnostics and events


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A structured problem found in the model's text: a code, a message and a span."""

    code: str
    message: str
    span: Span

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "span": list(self.span)}


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text between calls (trimmed; its span covers the trimmed content)."""

    content: str
    partial: bool = False
    span: Span = (0, 0)
    diagnostics: tuple[Diagnostic, ...] = ()
    type: Literal["text"] = "text"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"type": "text", "content": self.content, "partial": self.partial}
        out["span"] = list(self.span)
        if self.diagnostics:
            out["diagnostics"] = [d.to_json() for d in self.diagnostics]
        return out


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call.  ``partial`` means its closing tag has not arrived.

    A call is *complete* (fit to run) when it is closed and has no diagnostics.
    """

    name: str
    params: Mapping[str, str] = field(default_factory=dict)
    partial: bool = False
    span: Span = (0, 0)
    param_spans: Mapping[str, Span] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()
    type: Literal["tool_use"] = "tool_use"

    @property
    def complete(self) -> bool:
        return not self.partial and not self.diagnostics

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "type": "tool_use",
            "name": self.name,
            "params": dict(self.params),
            "partial": self.partial,
            "span": list(self.span),
        }
        if self.diagnostics:
            out["diagnostics"] = [d.to_json() for d in self.diagnostics]
        return out


Block: TypeAlias = TextBlock | ToolUse


class TextDelta(NamedTuple):
    """Raw text was added to the current text block (untrimmed)."""

    text: str


class ToolStarted(NamedTuple):
    """A tool call opened.  ``call_index`` is its position among the calls of the message."""

    call_index: int
    name: str
    start: int


class ParamDelta(NamedTuple):
    """Raw characters were added to a parameter value (untrimmed)."""

    call_index: int
    name: str
    text: str


class ToolCompleted(NamedTuple):
    """A tool call's closing tag arrived; ``block.complete`` says whether it is fit to run."""

    call_index: int
    block: ToolUse


Event: TypeAlias = TextDelta | ToolStarted | ParamDelta | ToolCompleted


# --------------------------------------------------------------------------
# Internals


class _Rope:
    """Append-only text with cheap slicing; small chunks are merged so memory stays near 1x.

    StreamParser.feed appends to ``_tail`` itself (the hot path of streaming), then calls
    ``_merge`` once the tail reaches ``MERGE`` characters.
    """

    __slots__ = ("_parts", "_starts", "_tail", "_tail_len", "length")

    MERGE = 4096

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._starts: list[int] = []
        self._tail: list[str] = []
        self._tail_len = 0
        self.length = 0

    def _merge(self) -> None:
        self._starts.append(self.length - self._tail_len)
        self._parts.append(self._tail[0] if len(self._tail) == 1 else "".join(self._tail))
        self._tail = []
        self._tail_len = 0

    def slice(self, a: int, b: int) -> str:
        if not self._parts and len(self._tail) == 1:
            return self._tail[0][a:b] if a >= 0 else self._tail[0][0:b]
        if not self._tail and len(self._parts) == 1:
            return self._parts[0][a:b] if a >= 0 else self._parts[0][0:b]
        a = max(a, 0)
        b = min(b, self.length)
        if b <= a:
            return ""
        tail_start = self.length - self._tail_len
        out: list[str] = []
        if a < tail_start:
            k = bisect_right(self._starts, a) - 1
            while k < len(self._parts) and a < b and a < tail_start:
                s0 = self._starts[k]
                part = self._parts[k]
                hi = min(b - s0, len(part))
                out.append(part[a - s0 : hi])
                a = s0 + hi
                k += 1
        if a < b:
            if len(self._tail) > 1:
                self._tail = ["".join(self._tail)]
            out.append(self._tail[0][a - tail_start : b - tail_start])
        return out[0] if len(out) == 1 else "".join(out)


class _Tool:
    __slots__ = (
        "body",
        "close_name",
        "diags",
        "end",
        "index",
        "name",
        "order",
        "param",
        "param_close",
        "param_emitted",
        "param_start",
        "raw_ext",
        "spans",
        "start",
        "syntax",
        "too_big",
        "unknown",
    )

    def __init__(self, syntax: ToolSyntax, index: int, start: int, body: int) -> None:
        self.syntax = syntax
        self.name = syntax.name
        self.index = index
        self.start = start
        self.body = body
        self.end = -1
        self.spans: dict[str, Span] = {}
        self.order: list[str] = []
        self.diags: list[Diagnostic] = []
        self.param = ""  # name of the open parameter, "" when none
        self.param_start = 0
        self.param_emitted = 0
        self.raw_ext: tuple[str, int] | None = None
        self.too_big: set[str] = set()
        self.unknown: set[str] = set()
        self.close_name = "/" + syntax.name
        self.param_close = ""


_TEXT, _PENDING, _TOOL, _PARAM = 0, 1, 2, 3


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


def _strip_roo_content(s: str) -> str:
    if s.startswith("\n"):
        s = s[1:]
    if s.endswith("\n"):
        s = s[:-1]
    return s


def _held_back(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


class StreamParser:
    """An incremental parser: ``feed()`` chunks, then ``close()``.

    After every feed, :meth:`blocks` equals ``parse(text_so_far, final=False)``;
    after :meth:`close` it equals ``parse(text)``.  ``feed`` returns the events
    that the new text caused.
    """

    def __init__(
        self,
        tools: Vocabulary | HasVocabulary | Iterable[ToolSyntax] | None = None,
        *,
        compat: Compat = "default",
        fenced: Fenced = "call",
        limits: Limits | None = None,
    ) -> None:
        if compat not in ("default", "roo"):
            raise ConfigError(f"compat must be 'default' or 'roo', not {compat!r}")
        if fenced not in ("call", "text"):
            raise ConfigError(f"fenced must be 'call' or 'text', not {fenced!r}")
        self.vocab = Vocabulary.coerce(tools)
        self.compat: Compat = compat
        self.fenced: Fenced = fenced
        self.limits = limits or Limits()
        self._roo = compat == "roo"
        self._rope = _Rope()
        self._room = self.limits.max_message_chars
        self._win = ""
        self._wbase = 0
        self._pos = 0
        self._state = _TEXT
        self._text_start = 0
        self._opener: tuple[int, int, str] = (0, 0, "")  # start, end, name (pending)
        self._tool: _Tool | None = None
        self._ntools = 0
        self._done: list[Block] = []
        self._closed = False
        self._overflow: Diagnostic | None = None
        self._emit = True
        self._events: list[Event] = []
        self._fence_pos = 0
        self._fence_line = True
        self._in_fence = False
        self._cache: tuple[int, bool, list[Block]] | None = None

    # -- public API --------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def text(self) -> str:
        """All the text fed so far (up to the message size limit)."""
        return self._rope.slice(0, self._rope.length)

    def feed(self, chunk: str) -> list[Event]:
        """Add text; return the events it caused.  Raises only for host misuse."""
        ln = len(chunk) if type(chunk) is str else -1
        if ln >= self._room or ln < 0:  # also when closed: close() sets the room to -1
            chunk = self._check_chunk(chunk)
            ln = len(chunk)
        if not ln:
            return []
        self._room -= ln
        rope = self._rope
        length = rope.length
        # Rope.append, inlined: this is the hot path of streaming.
        rope._tail.append(chunk)
        rope._tail_len += ln
        rope.length = new = length + ln
        if rope._tail_len >= rope.MERGE:
            rope._merge()
        st = self._state
        if st != _PENDING and "<" not in chunk:
            # Fast path: no tag can start or end in this chunk or in the held-back tail.
            pos = self._pos
            held = self._win[pos - self._wbase :] if pos != length else ""
            if "<" not in held:
                self._pos = new
                self._win = chunk[-1]
                self._wbase = new - 1
                if st == _TOOL or not self._emit:
                    return []
                if st == _PARAM:
                    tool = self._tool
                    assert tool is not None
                    tool.param_emitted = new
                    return [ParamDelta(tool.index, tool.param, held + chunk if held else chunk)]
                return [TextDelta(held + chunk if held else chunk)]
        if ">" not in chunk and len(self._win) < 256 and st in (_TOOL, _PARAM):
            # Every tag ends with '>', and the held-back tail is too short to hold a whole one:
            # nothing can open or close here.  Inside a value, the part that cannot start the
            # closing tag is value now.
            self._win = w = self._win + chunk
            if st == _PARAM:
                tool = self._tool
                assert tool is not None
                base = self._wbase
                safe = len(w) - len(tool.param_close) + 1
                done = tool.param_emitted - base
                if safe > done:
                    tool.param_emitted = self._pos = base + safe
                    if self._emit:
                        return [ParamDelta(tool.index, tool.param, w[done:safe])]
            return []
        self._win += chunk
        self._advance(False)
        ev = self._events
        self._events = []
        return ev

    def _check_chunk(self, chunk: str) -> str:
        if self._closed:
            raise StreamClosedError("feed() after close(): start a new StreamParser")
        if not isinstance(chunk, str):
            raise UsageError(f"feed() takes str, not {type(chunk).__name__}")
        if self._overflow is not None:
            return ""
        if len(chunk) > self._room:
            chunk = chunk[: self._room]
            end = self._rope.length + len(chunk)
            self._overflow = Diagnostic(
                "message_too_large",
                f"the message is longer than {self.limits.max_message_chars} characters; "
                "the rest was ignored",
                (end, end),
            )
            self._cache = None
        return chunk

    def close(self) -> list[Event]:
        """End the stream.  Idempotent."""
        if self._closed:
            return []
        self._closed = True
        self._room = -1
        self._advance(True)
        return self._take_events()

    def blocks(self) -> list[Block]:
        """The blocks so far; partial ones are marked."""
        key = (self._rope.length, self._closed)  # the text only grows, so its length is a version
        if self._cache is not None and self._cache[:2] == key:
            return list(self._cache[2])
        out = self._snapshot(self._closed)
        self._cache = (key[0], key[1], out)
        return list(out)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for b in self.blocks() for d in b.diagnostics]

    # -- scanning ----------------------------------------------------------

    def _take_events(self) -> list[Event]:
        ev = self._events
        self._events = []
        return ev

    def _char_before(self, j: int, w: str) -> str:
        if j > 0:
            return w[j - 1]
        a = self._wbase
        return self._rope.slice(a - 1, a) if a > 0 else ""

    def _advance(self, final: bool) -> None:
        w = self._win
        base = self._wbase
        n = len(w)
        i = self._pos - base
        roo = self._roo
        vocab = self.vocab
        emit = self._emit
        events = self._events
        while True:
            st = self._state
            if st == _TEXT:
                m = vocab.opener_re.search(w, i)
                if m is None:
                    # wait if the end of the window may still become an opening tag
                    j = n
                    if not final:
                        lo = n - vocab.max_open
                        j = w.rfind("<", i if i > lo else lo)
                        if j < 0 or not vocab.opener_prefix_re.match(w, j):
                            j = n
                    if emit and j > i:
                        events.append(TextDelta(w[i:j]))
                    i = j
                    break
                j = m.start()
                k = m.end()
                name = m.group(1)
                if not roo and (
                    self._char_before(j, w) == "`" or (self.fenced == "text" and self._fenced_at(base + j))
                ):
                    self._emit_text(i, j + 1, w)
                    i = j + 1
                    continue
                self._emit_text(i, j, w)
                if roo:
                    self._open_tool(name, base + j, base + k)
                else:
                    self._opener = (base + j, base + k, name)
                    self._state = _PENDING
                i = k
            elif st == _PENDING:
                ostart, oend, name = self._opener
                limit = oend - base + _MAX_GAP
                m = _NOT_WS_RE.search(w, i, min(n, limit + 1))
                if m is None:
                    if n > limit:
                        i = self._not_a_call(ostart - base, base, w)  # only whitespace: prose
                        continue
                    if final:  # the message ends right after an opening tag
                        self._open_tool(name, ostart, oend)
                    i = n
                    break
                p = m.start()
                if w[p] != "<":
                    i = self._not_a_call(ostart - base, base, w)
                    continue
                if p + 1 >= n and not final:
                    i = p
                    break
                if p + 1 >= n or w[p + 1] in _TAG_START:
                    self._open_tool(name, ostart, oend)
                    i = p
                else:
                    i = self._not_a_call(ostart - base, base, w)
            elif st == _TOOL:
                tool = self._tool
                assert tool is not None
                m = _TAG_RE.search(w, i)
                if m is None:
                    j = n
                    if not final:  # wait if the end of the window may still become a tag
                        lo = n - _MAX_TAG
                        j = w.rfind("<", i if i > lo else lo)
                        if j < 0 or not _TAG_PREFIX_RE.match(w, j):
                            j = n
                    i = j
                    break
                j = m.start()
                k = m.end()
                tag = m.group(1)
                i = k
                if roo:
                    if m.group(2) is None:
                        if tag in vocab.all_params:
                            self._open_param(tool, tag, base + k)
                        elif tag == tool.close_name:
                            self._close_tool_roo(tool, base + j, base + k)
                    continue
                if m.group(2) is None:
                    if tag == tool.close_name:
                        self._finish_tool(tool, base + k)
                        continue
                    if tag in tool.syntax.params:
                        tool.raw_ext = None
                        if tag in tool.spans:
                            tool.diags.append(
                                Diagnostic(
                                    "duplicate_param",
                                    f"<{tag}> appears twice in <{tool.name}>; give each parameter once",
                                    (base + j, base + k),
                                )
                            )
                        self._open_param(tool, tag, base + k)
                        continue
                    if tool.raw_ext is not None and tag == "/" + tool.raw_ext[0]:
                        self._extend_raw(tool, base + j)
                        continue
                bare = tag.lstrip("/")
                if tag[0] == "/" and bare in tool.unknown:
                    continue  # the closing half of an unknown tag already reported
                tool.unknown.add(bare)
                tool.diags.append(
                    Diagnostic(
                        "unknown_tag",
                        f"{w[j:k]} is not a parameter of <{tool.name}>"
                        f" (its parameters: {', '.join(tool.syntax.params)})",
                        (base + j, base + k),
                    )
                )
            else:  # _PARAM
                tool = self._tool
                assert tool is not None
                pname = tool.param
                close = tool.param_close
                k = w.find(close, i)
                if k < 0:
                    safe = n - len(close) + 1
                    if safe < i:
                        safe = i
                    self._emit_param(tool, base + safe, base, w)
                    i = safe
                    break
                self._emit_param(tool, base + k, base, w)
                vend = base + k
                if vend - tool.param_start > self.limits.max_param_chars:
                    vend = tool.param_start + self.limits.max_param_chars
                    self._param_too_big(tool, pname, tool.param_start)
                if roo or pname not in tool.spans:
                    tool.spans[pname] = (tool.param_start, vend)
                tool.param = ""
                self._state = _TOOL
                if not roo and pname in tool.syntax.raw:
                    tool.raw_ext = (pname, len(tool.diags))
                i = k + len(close)
        # keep only what is still needed
        keep = i
        if self._state == _PENDING:
            keep = min(keep, self._opener[0] - base)
        keep = keep - 1 if keep > 0 else 0  # one character of look-behind for the backtick rule
        self._pos = base + i
        if keep:
            self._win = w[keep:]
            self._wbase = base + keep

    def _extend_raw(self, tool: _Tool, upto: int) -> None:
        """A later closing tag of a raw parameter: its value runs on to this one."""
        assert tool.raw_ext is not None
        pname, ndiags = tool.raw_ext
        s0, s1 = tool.spans[pname]
        if self._emit:
            self._events.append(ParamDelta(tool.index, pname, self._rope.slice(s1, upto)))
        tool.spans[pname] = (s0, min(upto, s0 + self.limits.max_param_chars))
        del tool.diags[ndiags:]  # tags seen since were part of the value
        tool.unknown.clear()
        if upto - s0 > self.limits.max_param_chars:
            self._param_too_big(tool, pname, s0)

    def _emit_text(self, a: int, b: int, w: str) -> None:
        if self._emit and b > a:
            self._events.append(TextDelta(w[a:b]))

    def _not_a_call(self, j: int, base: int, w: str) -> int:
        """The pending opening tag at window index ``j`` was prose: resume as text after its '<'."""
        self._state = _TEXT
        self._emit_text(j, j + 1, w)
        return j + 1

    def _emit_param(self, tool: _Tool, upto: int, base: int, w: str) -> None:
        if upto > tool.param_emitted:
            if self._emit:
                self._events.append(
                    ParamDelta(tool.index, tool.param, w[tool.param_emitted - base : upto - base])
                )
            tool.param_emitted = upto

    def _param_too_big(self, tool: _Tool, pname: str, start: int) -> None:
        if pname not in tool.too_big:
            tool.too_big.add(pname)
            tool.diags.append(self._too_big_diag(pname, start))

    def _too_big_diag(self, pname: str, start: int) -> Diagnostic:
        return Diagnostic(
            "param_too_large",
            f"<{pname}> is longer than {self.limits.max_param_chars} characters",
            (start, start + self.limits.max_param_chars),
        )

    def _fenced_at(self, pos: int) -> bool:
        seg = self._rope.slice(self._fence_pos, pos)
        if seg:
            probe = ("\n" + seg) if self._fence_line else seg
            for _ in _FENCE_RE.finditer(probe):
                self._in_fence = not self._in_fence
            self._fence_line = seg.endswith("\n")
        self._fence_pos = pos
        return self._in_fence

    def _open_tool(self, name: str, start: int, body: int) -> None:
        if self._text_start < start:
            self._done.extend(self._text_block(self._text_start, start, False))
        tool = _Tool(self.vocab[name], self._ntools, start, body)
        self._ntools += 1
        self._tool = tool
        self._state = _TOOL
        if self._emit:
            self._events.append(ToolStarted(tool.index, name, start))

    def _open_param(self, tool: _Tool, pname: str, vstart: int) -> None:
        tool.param = pname
        tool.param_close = "</" + pname + ">"
        tool.param_start = vstart
        tool.param_emitted = vstart
        if pname not in tool.order:
            tool.order.append(pname)
        self._state = _PARAM

    def _finish_tool(self, tool: _Tool, end: int) -> None:
        tool.end = end
        block = self._tool_block(tool, final=True)
        self._done.append(block)
        self._tool = None
        self._state = _TEXT
        self._text_start = end
        self._fence_pos = end
        self._fence_line = False
        if self._emit:
            self._events.append(ToolCompleted(tool.index, block))

    def _close_tool_roo(self, tool: _Tool, tag_start: int, end: int) -> None:
        if "content" in tool.syntax.params:
            body = self._rope.slice(tool.body, tag_start)
            a = body.find("<content>")
            b = body.rfind("</content>")
            if a != -1 and b != -1 and b > a:
                tool.spans["content"] = (tool.body + a + 9, tool.body + b)
                if "content" not in tool.order:
                    tool.order.append("content")
        self._finish_tool(tool, end)

    # -- snapshots -------------------------------------------------------

    def _text_block(self, a: int, b: int, partial: bool) -> list[Block]:
        raw = self._rope.slice(a, b)
        content = raw.strip(_WS)
        if not content:
            return []
        lead = len(raw) - len(raw.lstrip(_WS))
        return [TextBlock(content, partial, (a + lead, a + lead + len(content)))]

    def _value(self, tool: _Tool, pname: str, a: int, b: int) -> str:
        v = self._rope.slice(a, b)
        if self._roo:
            return _strip_roo_content(v) if pname == "content" else v.strip(_WS)
        if pname in tool.syntax.raw:
            return _strip_raw(v)
        return v.strip(_WS)

    def _tool_block(self, tool: _Tool, final: bool) -> ToolUse:
        params: dict[str, str] = {}
        spans: dict[str, Span] = {}
        diags = list(tool.diags)
        for pname in tool.order:
            if pname in tool.spans:
                a, b = tool.spans[pname]
                params[pname] = self._value(tool, pname, a, b)
                spans[pname] = (a, b)
        partial = tool.end < 0
        end = tool.end if tool.end >= 0 else self._rope.length
        if partial and tool.param:
            a = tool.param_start
            b = self._rope.length
            if not self._roo:
                tail = self._rope.slice(max(a, b - len(tool.param) - 2), b)
                b -= _held_back(tail, "</" + tool.param + ">")
            if b - a > self.limits.max_param_chars and tool.param not in tool.too_big:
                diags.append(self._too_big_diag(tool.param, a))
            b = min(b, a + self.limits.max_param_chars)
            if tool.param not in tool.spans or self._roo:
                params[tool.param] = self._value(tool, tool.param, a, b)
                spans[tool.param] = (a, b)
        if partial and final and not self._roo:
            if tool.param:
                diags.append(
                    Diagnostic(
                        "truncated_param",
                        f"the message ended inside <{tool.param}>: </{tool.param}> is missing",
                        (tool.param_start, end),
                    )
                )
            diags.append(
                Diagnostic(
                    "truncated_call",
                    f"the message ended before </{tool.name}>: the call is incomplete",
                    (tool.start, end),
                )
            )
        return ToolUse(tool.name, params, partial, (tool.start, end), spans, tuple(diags))

    def _snapshot(self, final: bool) -> list[Block]:
        out = list(self._done)
        st = self._state
        length = self._rope.length
        if st == _TEXT:
            end = length if (final or self._roo) else self._pos
            out.extend(self._text_block(self._text_start, end, self._roo or not final))
        elif st == _PENDING:
            ostart = self._opener[0]
            out.extend(self._text_block(self._text_start, ostart, not final))
        else:
            assert self._tool is not None
            out.append(self._tool_block(self._tool, final))
        if self._overflow is not None:
            if out:
                last = out[-1]
                if isinstance(last, TextBlock):
                    out[-1] = TextBlock(
                        last.content, last.partial, last.span, (*last.diagnostics, self._overflow)
                    )
                else:
                    out[-1] = ToolUse(
                        last.name,
                        last.params,
                        last.partial,
                        last.span,
                        last.param_spans,
                        (*last.diagnostics, self._overflow),
                    )
            else:
                out.append(TextBlock("", False, self._overflow.span, (self._overflow,)))
        return out


def parse(
    text: str,
    *,
    tools: Vocabulary | HasVocabulary | Iterable[ToolSyntax] | None = None,
    compat: Compat = "default",
    fenced: Fenced = "call",
    limits: Limits | None = None,
    final: bool = True,
) -> list[Block]:
    """Parse a whole assistant message into text and tool-use blocks.

    ``final=False`` gives the view of a stream that has not ended yet: the
    last text block is partial and a fragment that may begin a tag is held back.
    """
    if not isinstance(text, str):
        raise UsageError(f"parse() takes str, not {type(text).__name__}")
    p = StreamParser(tools, compat=compat, fenced=fenced, limits=limits)
    p._emit = False
    p.feed(text)
    if final:
        p.close()
    return p.blocks()
