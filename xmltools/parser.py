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
  parser, reproduced for migration and comparison.  It follows Roo-Code's V2
  parser: a value runs to its own first closing tag, and when a call named
  ``write_to_file`` closes, its ``content`` is read again from the first
  ``<content>`` to the last ``</content>`` of the call (only for that tool).

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

    __slots__ = ("_tools", "all_params", "max_open", "opener_prefixes", "opener_re")

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
        # what the end of a text may be while it could still become an opening tag
        self.opener_prefixes = frozenset("<" + n[:k] for n in names for k in range(len(n) + 1))

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

_MERGE = 4096  # recent chunks are joined into one string once they reach this many characters
_TRIM = 256  # the scanner drops the decided part of its window once it is this long
_tuple_new = tuple.__new__  # builds an event without the Python-level __new__ of a NamedTuple


class _Tool:
    __slots__ = (
        "body",
        "close_name",
        "diags",
        "end",
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
        "syntax",
        "too_big",
        "unknown",
    )

    def __init__(self, syntax: ToolSyntax, index: int, start: int, body: int) -> None:
        self.syntax = syntax
        self.name = syntax.name
        self.params = syntax.params
        self.raw = syntax.raw
        self.index = index
        self.start = start
        self.body = body
        self.end = -1
        # closed parameters: name -> span of the value, in the order they were first closed
        self.spans: dict[str, Span] = {}
        self.diags: list[Diagnostic] = []
        self.param = ""  # name of the open parameter, "" when none
        self.param_close = ""
        self.param_start = 0
        self.raw_ext: tuple[str, int] | None = None
        self.too_big: set[str] = set()
        self.unknown: set[str] = set()
        self.close_name = "/" + syntax.name


_NO_TOOL = _Tool(ToolSyntax("_", ()), -1, 0, 0)  # the parser's tool while there is none

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

    The text is kept as joined parts of at least ``_MERGE`` characters plus a tail of
    recent chunks, so that memory stays near the message size.  The scanner works on
    a *window*: the end of the text from ``_wbase`` on.  It always reaches the end of
    the text, holds the undecided part (from ``_pos``) and usually one character
    before it (the backtick rule looks there; without it the text is read).  Each
    feed scans only the undecided part and the new chunk, and the window is trimmed
    as it grows, so the total cost is linear in the message length.
    """

    __slots__ = (
        "__weakref__",
        "_cache",
        "_closed",
        "_done",
        "_emit",
        "_fence_line",
        "_fence_pos",
        "_fenced_text",
        "_in_fence",
        "_len",
        "_mark",
        "_max_len",
        "_max_param",
        "_ntools",
        "_opener",
        "_overflow",
        "_parts",
        "_pos",
        "_roo",
        "_starts",
        "_state",
        "_tail",
        "_tail_start",
        "_text_start",
        "_tool",
        "_wbase",
        "_win",
        "compat",
        "fenced",
        "limits",
        "vocab",
    )

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
        self._fenced_text = fenced == "text"
        self._max_param = self.limits.max_param_chars
        self._parts: list[str] = []
        self._starts: list[int] = []
        self._tail: list[str] = []
        self._tail_start = 0
        self._len = 0
        self._max_len = self.limits.max_message_chars
        # feed() checks its chunk more closely once the text would reach this length: the
        # size limit or the next merge of the tail (-1 once closed)
        self._mark = min(self._max_len, _MERGE)
        self._win = ""
        self._wbase = 0
        self._pos = 0
        self._state = _TEXT
        self._text_start = 0
        self._opener: tuple[int, int, str] = (0, 0, "")  # start, end, name (pending)
        self._tool = _NO_TOOL
        self._ntools = 0
        self._done: list[Block] = []
        self._closed = False
        self._overflow: Diagnostic | None = None
        self._emit = True
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
        return self._slice(0, self._len)

    def feed(self, chunk: str) -> list[Event]:
        """Add text; return the events it caused.  Raises only for host misuse."""
        length = self._len
        if type(chunk) is str and chunk and (new := length + len(chunk)) < self._mark:
            self._tail.append(chunk)
            self._len = new
        else:  # misuse, an empty chunk, the size limit, or time to merge the tail
            chunk = self._check_chunk(chunk)
            if not chunk:
                return []
            self._len = new = length + len(chunk)
            self._tail.append(chunk)
            if new - self._tail_start >= _MERGE:
                self._merge()
            self._mark = min(self._max_len, self._tail_start + _MERGE)
        # The fast paths below handle a chunk that cannot change the state; they give
        # exactly the events of the general scan (_advance).
        pos = self._pos
        st = self._state
        if not st:  # _TEXT
            if pos == length and "<" not in chunk:
                # nothing is held back and no tag starts here: it is all text
                self._pos = new
                self._win = chunk
                self._wbase = length
                return [_tuple_new(TextDelta, (chunk,))]
            # the undecided part, the chunk, and one character of look-behind (backtick rule)
            i = pos - self._wbase
            if i:
                i = 1
            s = self._win[pos - self._wbase - i :] + chunk
            self._win = s
            self._wbase = base = pos - i
            if ">" not in chunk:
                # No opening tag can end here (what is held back has no '>').  Hold back the
                # last '<' if it may still begin one; the rest is text.
                lo = len(s) - self.vocab.max_open
                j = s.rfind("<", lo if lo > i else i)
                if j < 0 or s[j:] not in self.vocab.opener_prefixes:
                    j = len(s)
                self._pos = base + j
                return [_tuple_new(TextDelta, (s[i:j],))] if j > i else []
        elif st == _PARAM:
            tool = self._tool
            if pos == length:
                if "<" not in chunk:
                    # no closing tag can start here: the chunk is value
                    self._pos = new
                    self._win = chunk
                    self._wbase = length
                    return [_tuple_new(ParamDelta, (tool.index, tool.param, chunk))]
                s = chunk
            else:
                s = self._win[pos - self._wbase :] + chunk
                if "<" not in s:
                    # no closing tag can start here: what was held back and the chunk are value
                    self._pos = new
                    self._win = s
                    self._wbase = pos
                    return [_tuple_new(ParamDelta, (tool.index, tool.param, s))]
            self._win = s
            self._wbase = pos
            close = tool.param_close
            if close not in s:
                # the value goes on; hold back what may begin its closing tag
                safe = len(s) - len(close) + 1
                if safe > 0:
                    self._pos = pos + safe
                    return [_tuple_new(ParamDelta, (tool.index, tool.param, s[:safe]))]
                return []
            k = s.find(close)
            i = k + len(close)
            if len(s) <= _TRIM and s.find(">", i) < 0:
                # The value ends here, and no tag can end after it: close the value and wait
                # in the call's body at the last '<' (what _advance does, in short).
                pname = tool.param
                ev: list[Event] = [_tuple_new(ParamDelta, (tool.index, pname, s[:k]))] if k else []
                vstart = tool.param_start
                vend = pos + k
                if vend - vstart > self._max_param:
                    vend = vstart + self._max_param
                    self._param_too_big(tool, pname, vstart)
                if self._roo or pname not in tool.spans:
                    tool.spans[pname] = (vstart, vend)
                tool.param = ""
                if not self._roo and pname in tool.raw:
                    tool.raw_ext = (pname, len(tool.diags))
                self._state = _TOOL
                j = s.rfind("<", i)
                self._pos = pos + (j if j >= 0 else len(s))
                return ev
        elif st == _TOOL:
            if pos == length and "<" not in chunk:
                self._pos = new
                self._win = chunk
                self._wbase = length
                return []
            self._win += chunk
            if ">" not in chunk and len(self._win) < 1024:
                # Every tag ends with '>': this chunk cannot complete one.  (The bound keeps the
                # window, which each such feed copies, short.)
                return []
        else:
            self._win += chunk
        return self._advance(False)

    def _load(self, text: str) -> None:
        """parse(): the whole text at once, without events."""
        self._emit = False
        text = self._check_chunk(text)
        if text:
            self._tail.append(text)
            self._len = len(text)
            self._merge()
            self._mark = min(self._max_len, self._len + _MERGE)
            self._win = text
            self._advance(False)

    def _check_chunk(self, chunk: str) -> str:
        if self._closed:
            raise StreamClosedError("feed() after close(): start a new StreamParser")
        if not isinstance(chunk, str):
            raise UsageError(f"feed() takes str, not {type(chunk).__name__}")
        if self._overflow is not None:
            return ""
        room = self._max_len - self._len
        if len(chunk) > room:
            chunk = chunk[:room]
            end = self._len + len(chunk)
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
        self._mark = -1
        return self._advance(True)

    def blocks(self) -> list[Block]:
        """The blocks so far; partial ones are marked."""
        key = (self._len, self._closed)  # the text only grows, so its length is a version
        if self._cache is not None and self._cache[:2] == key:
            return list(self._cache[2])
        out = self._snapshot(self._closed)
        self._cache = (key[0], key[1], out)
        return list(out)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for b in self.blocks() for d in b.diagnostics]

    # -- the text ------------------------------------------------------------

    def _merge(self) -> None:
        tail = self._tail
        self._starts.append(self._tail_start)
        self._parts.append(tail[0] if len(tail) == 1 else "".join(tail))
        tail.clear()
        self._tail_start = self._len

    def _slice(self, a: int, b: int) -> str:
        """The text from ``a`` to ``b`` (``0 <= a`` and ``b <= len``)."""
        wb = self._wbase
        if a >= wb:
            return self._win[a - wb : b - wb]
        if b <= a:
            return ""
        tail = self._tail
        ts = self._tail_start
        if a >= ts:
            if len(tail) > 1:
                tail[:] = ["".join(tail)]  # in place: feed appends to this very list
            return tail[0][a - ts : b - ts]
        parts = self._parts
        k = bisect_right(self._starts, a) - 1
        s0 = self._starts[k]
        part = parts[k]
        if b - s0 <= len(part):
            return part[a - s0 : b - s0]
        out = [part[a - s0 :]]
        p = s0 + len(part)
        k += 1
        while p < b and k < len(parts):
            part = parts[k]
            out.append(part[: b - p])
            p += len(part)
            k += 1
        if p < b:
            if len(tail) > 1:
                tail[:] = ["".join(tail)]
            out.append(tail[0][: b - ts])
        return "".join(out)

    # -- scanning ----------------------------------------------------------

    def _char_before(self, j: int, w: str) -> str:
        if j > 0:
            return w[j - 1]
        a = self._wbase
        return self._slice(a - 1, a) if a > 0 else ""

    def _advance(self, final: bool) -> list[Event]:
        """Scan the undecided part of the window; return the events it caused."""
        w = self._win
        base = self._wbase
        n = len(w)
        i = self._pos - base
        roo = self._roo
        emit = self._emit
        events: list[Event] = []
        state = self._state
        tool = self._tool
        while True:
            if state == _PARAM:
                close = tool.param_close
                k = w.find(close, i)
                if k < 0:
                    safe = n - len(close) + 1
                    if safe > i:
                        if emit:
                            events.append(_tuple_new(ParamDelta, (tool.index, tool.param, w[i:safe])))
                        i = safe
                    break
                pname = tool.param
                if k > i and emit:
                    events.append(_tuple_new(ParamDelta, (tool.index, pname, w[i:k])))
                vstart = tool.param_start
                vend = base + k
                if vend - vstart > self._max_param:
                    vend = vstart + self._max_param
                    self._param_too_big(tool, pname, vstart)
                if roo or pname not in tool.spans:
                    tool.spans[pname] = (vstart, vend)
                tool.param = ""
                state = _TOOL
                if not roo and pname in tool.raw:
                    tool.raw_ext = (pname, len(tool.diags))
                i = k + len(close)
            elif state == _TOOL:
                m = _TAG_RE.search(w, i)
                if m is None:
                    if final:
                        i = n
                    else:
                        # Wait at the last '<', the only one that may still begin a tag.  (Waiting
                        # where no tag can begin changes nothing: a call's body emits no events.)
                        lo = n - _MAX_TAG
                        j = w.rfind("<", i if i > lo else lo)
                        i = j if j >= 0 else n
                    break
                j, k = m.span()
                tag, attrs = m.group(1, 2)
                i = k
                if attrs is None:
                    if tag == tool.close_name:
                        if roo:
                            self._roo_content(tool, base + j)
                        block = self._finish_tool(tool, base + k)
                        if emit:
                            events.append(_tuple_new(ToolCompleted, (tool.index, block)))
                        state = _TEXT
                        continue
                    if tag in (self.vocab.all_params if roo else tool.params):
                        if not roo:
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
                        state = _PARAM
                        continue
                    if roo:
                        continue
                    if tool.raw_ext is not None and tag == "/" + tool.raw_ext[0]:
                        self._extend_raw(tool, base + j, events)
                        continue
                elif roo:
                    continue
                self._unknown_tag(tool, tag, w[j:k], base + j, base + k)
            elif state == _TEXT:
                m = self.vocab.opener_re.search(w, i)
                if m is None:
                    # wait if the end of the window may still become an opening tag
                    j = n
                    if not final:
                        lo = n - self.vocab.max_open
                        j = w.rfind("<", i if i > lo else lo)
                        if j < 0 or w[j:] not in self.vocab.opener_prefixes:
                            j = n
                    if emit and j > i:
                        events.append(_tuple_new(TextDelta, (w[i:j],)))
                    i = j
                    break
                j, k = m.span()
                if not roo and (
                    (w[j - 1] if j else self._char_before(j, w)) == "`"
                    or (self._fenced_text and self._fenced_at(base + j))
                ):
                    if emit:
                        events.append(_tuple_new(TextDelta, (w[i : j + 1],)))
                    i = j + 1
                    continue
                if emit and j > i:
                    events.append(_tuple_new(TextDelta, (w[i:j],)))
                if roo:
                    tool = self._open_tool(m.group(1), base + j, base + k)
                    if emit:
                        events.append(_tuple_new(ToolStarted, (tool.index, tool.name, tool.start)))
                    state = _TOOL
                else:
                    self._opener = (base + j, base + k, m.group(1))
                    state = _PENDING
                i = k
            else:  # _PENDING
                if i >= n and not final:
                    break
                ostart, oend, name = self._opener
                limit = oend - base + _MAX_GAP
                m = _NOT_WS_RE.search(w, i, min(n, limit + 1))
                if m is None:
                    if n > limit:  # only whitespace: prose
                        i = self._not_a_call(ostart - base, w, events)
                        state = _TEXT
                        continue
                    if final:  # the message ends right after an opening tag
                        tool = self._open_tool(name, ostart, oend)
                        if emit:
                            events.append(_tuple_new(ToolStarted, (tool.index, name, ostart)))
                        state = _TOOL
                    i = n
                    break
                p = m.start()
                if w[p] != "<":
                    i = self._not_a_call(ostart - base, w, events)
                    state = _TEXT
                    continue
                if p + 1 >= n and not final:
                    i = p
                    break
                if p + 1 >= n or w[p + 1] in _TAG_START:
                    tool = self._open_tool(name, ostart, oend)
                    if emit:
                        events.append(_tuple_new(ToolStarted, (tool.index, name, ostart)))
                    state = _TOOL
                    i = p
                else:
                    i = self._not_a_call(ostart - base, w, events)
                    state = _TEXT
        self._state = state
        self._pos = base + i
        if i > _TRIM:
            # Drop the decided part of the window, but one character of look-behind (for the
            # backtick rule) and a pending opening tag.
            keep = i - 1
            if state == _PENDING and self._opener[0] - base < keep:
                keep = self._opener[0] - base
            self._win = w[keep:]
            self._wbase = base + keep
        return events

    def _unknown_tag(self, tool: _Tool, tag: str, source: str, start: int, end: int) -> None:
        bare = tag.lstrip("/")
        if tag[0] == "/" and bare in tool.unknown:
            return  # the closing half of an unknown tag already reported
        tool.unknown.add(bare)
        tool.diags.append(
            Diagnostic(
                "unknown_tag",
                f"{source} is not a parameter of <{tool.name}> (its parameters: {', '.join(tool.params)})",
                (start, end),
            )
        )

    def _extend_raw(self, tool: _Tool, upto: int, events: list[Event]) -> None:
        """A later closing tag of a raw parameter: its value runs on to this one."""
        assert tool.raw_ext is not None
        pname, ndiags = tool.raw_ext
        s0, s1 = tool.spans[pname]
        if self._emit:
            events.append(ParamDelta(tool.index, pname, self._slice(s1, upto)))
        tool.spans[pname] = (s0, min(upto, s0 + self._max_param))
        del tool.diags[ndiags:]  # tags seen since were part of the value
        tool.unknown.clear()
        if upto - s0 > self._max_param:
            self._param_too_big(tool, pname, s0)

    def _not_a_call(self, j: int, w: str, events: list[Event]) -> int:
        """The pending opening tag at window index ``j`` was prose: resume as text after its '<'."""
        if self._emit:
            events.append(TextDelta(w[j : j + 1]))
        return j + 1

    def _param_too_big(self, tool: _Tool, pname: str, start: int) -> None:
        if pname not in tool.too_big:
            tool.too_big.add(pname)
            tool.diags.append(self._too_big_diag(pname, start))

    def _too_big_diag(self, pname: str, start: int) -> Diagnostic:
        return Diagnostic(
            "param_too_large",
            f"<{pname}> is longer than {self._max_param} characters",
            (start, start + self._max_param),
        )

    def _fenced_at(self, pos: int) -> bool:
        seg = self._slice(self._fence_pos, pos)
        if seg:
            probe = ("\n" + seg) if self._fence_line else seg
            for _ in _FENCE_RE.finditer(probe):
                self._in_fence = not self._in_fence
            self._fence_line = seg.endswith("\n")
        self._fence_pos = pos
        return self._in_fence

    def _open_tool(self, name: str, start: int, body: int) -> _Tool:
        ts = self._text_start
        if ts < start:
            raw = self._slice(ts, start)
            content = raw.strip(_WS)
            if content:
                lead = 0 if raw[0] == content[0] else len(raw) - len(raw.lstrip(_WS))
                self._done.append(TextBlock(content, False, (ts + lead, ts + lead + len(content))))
        self._tool = tool = _Tool(self.vocab[name], self._ntools, start, body)
        self._ntools += 1
        return tool

    def _finish_tool(self, tool: _Tool, end: int) -> ToolUse:
        tool.end = end
        params: dict[str, str] = {}
        for pname, (a, b) in tool.spans.items():
            params[pname] = self._value(tool, pname, a, b)
        # the tool is done with: its spans become the block's
        block = ToolUse(tool.name, params, False, (tool.start, end), tool.spans, tuple(tool.diags))
        self._done.append(block)
        self._tool = _NO_TOOL
        self._text_start = end
        self._fence_pos = end
        self._fence_line = False
        return block

    def _roo_content(self, tool: _Tool, tag_start: int) -> None:
        # Roo-Code's special case, for write_to_file only: the value of <content> runs from
        # the first <content> to the last </content> before the tool's closing tag.
        if tool.name == "write_to_file":
            body = self._slice(tool.body, tag_start)
            a = body.find("<content>")
            b = body.rfind("</content>")
            if a != -1 and b != -1 and b > a:
                tool.spans["content"] = (tool.body + a + 9, tool.body + b)

    # -- snapshots -------------------------------------------------------

    def _text_block(self, a: int, b: int, partial: bool) -> list[Block]:
        raw = self._slice(a, b)
        content = raw.strip(_WS)
        if not content:
            return []
        lead = len(raw) - len(raw.lstrip(_WS))
        return [TextBlock(content, partial, (a + lead, a + lead + len(content)))]

    def _value(self, tool: _Tool, pname: str, a: int, b: int) -> str:
        v = self._slice(a, b)
        if self._roo:
            return _strip_roo_content(v) if pname == "content" else v.strip(_WS)
        if pname in tool.raw:
            return _strip_raw(v)
        return v.strip(_WS)

    def _tool_block(self, tool: _Tool, final: bool) -> ToolUse:
        """The open (partial) call as it stands."""
        params: dict[str, str] = {}
        spans: dict[str, Span] = {}
        diags = list(tool.diags)
        for pname, (a, b) in tool.spans.items():
            params[pname] = self._value(tool, pname, a, b)
            spans[pname] = (a, b)
        end = self._len
        if tool.param:
            a = tool.param_start
            b = end
            if not self._roo:
                tail = self._slice(max(a, b - len(tool.param) - 2), b)
                b -= _held_back(tail, tool.param_close)
            if b - a > self._max_param and tool.param not in tool.too_big:
                diags.append(self._too_big_diag(tool.param, a))
            b = min(b, a + self._max_param)
            if tool.param not in tool.spans or self._roo:
                params[tool.param] = self._value(tool, tool.param, a, b)
                spans[tool.param] = (a, b)
        if final and not self._roo:
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
        return ToolUse(tool.name, params, True, (tool.start, end), spans, tuple(diags))

    def _snapshot(self, final: bool) -> list[Block]:
        out = list(self._done)
        st = self._state
        length = self._len
        if st == _TEXT:
            end = length if (final or self._roo) else self._pos
            out.extend(self._text_block(self._text_start, end, self._roo or not final))
        elif st == _PENDING:
            ostart = self._opener[0]
            out.extend(self._text_block(self._text_start, ostart, not final))
        else:
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
    p._load(text)
    if final:
        p.close()
    return p.blocks()
