"""The streaming parser: ``StreamParser.feed()`` chunks, ``close()``, ``blocks()``.

This module owns the parser's public face: taking chunks in (host misuse and
the message size limit), choosing the step table for the mode, and the
snapshot of the blocks so far (what is final, what is still partial).  The
scanning itself is ``scanner.py`` (and ``compat.py`` for the anchors' modes).
It is pure: it must import neither jinja2 nor playwright nor pydantic (nor
anything that does).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ..errors import ConfigError, StreamClosedError, UsageError
from .blocks import Block, Diagnostic, Event, ParamDelta, Span, TextBlock, TextDelta, ToolUse
from .compat import ANCHOR_STEPS, VALUE_RULES
from .scanner import STEPS, TRIM, advance, tuple_new
from .state import PARAM, PENDING, TEXT, TOOL, OpenCall, ScanState, default_value
from .text import MERGE
from .vocabulary import WS, HasVocabulary, Limits, ToolSyntax, Vocabulary

__all__ = ["Compat", "Fenced", "StreamParser"]

Compat = Literal["default", "roo", "cline"]
Fenced = Literal["call", "text"]


def _held_back(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


class StreamParser(ScanState):
    """An incremental parser: ``feed()`` chunks, then ``close()``.

    After every feed, :meth:`blocks` equals ``parse(text_so_far, final=False)``;
    after :meth:`close` it equals ``parse(text)``.  ``feed`` returns the events
    that the new text caused.

    The text is kept as joined parts of at least ``MERGE`` characters plus a tail of
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
        "_mark",
        "_max_len",
        "_overflow",
        "compat",
        "fenced",
        "limits",
    )

    def __init__(
        self,
        tools: Vocabulary | HasVocabulary | Iterable[ToolSyntax] | None = None,
        *,
        compat: Compat = "default",
        fenced: Fenced = "call",
        limits: Limits | None = None,
    ) -> None:
        if compat not in ("default", "roo", "cline"):
            raise ConfigError(f"compat must be 'default', 'roo' or 'cline', not {compat!r}")
        if fenced not in ("call", "text"):
            raise ConfigError(f"fenced must be 'call' or 'text', not {fenced!r}")
        vocab = Vocabulary.coerce(tools)
        self.compat: Compat = compat
        self.fenced: Fenced = fenced
        self.limits = limits or Limits()
        anchor = compat != "default"
        super().__init__(
            vocab,
            ANCHOR_STEPS if anchor else STEPS,
            VALUE_RULES[compat] if anchor else default_value,
            anchor=anchor,
            fenced_text=fenced == "text",
            max_param=self.limits.max_param_chars,
        )
        self._max_len = self.limits.max_message_chars
        # feed() checks its chunk more closely once the text would reach this length: the
        # size limit or the next merge of the tail (-1 once closed)
        self._mark = min(self._max_len, MERGE)
        self._closed = False
        self._overflow: Diagnostic | None = None
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
            new = self._append(chunk, length)
        # The fast paths handle a chunk that cannot change the state; they give exactly the
        # events of the general scan (scanner.advance), and None when it must run.
        st = self._state
        if st == TEXT:
            done = self._feed_text(chunk, length, new)
        elif st == PARAM:
            done = self._feed_param(chunk, length, new)
        elif st == TOOL:
            done = self._feed_tool(chunk, length, new)
        else:
            self._win += chunk
            done = None
        return advance(self, False) if done is None else done

    def _append(self, chunk: str, length: int) -> int:
        """Keep a checked chunk, merging the tail when it has grown; the new length."""
        self._len = new = length + len(chunk)
        self._tail.append(chunk)
        if new - self._tail_start >= MERGE:
            self._merge()
        self._mark = min(self._max_len, self._tail_start + MERGE)
        return new

    def _feed_text(self, chunk: str, length: int, new: int) -> list[Event] | None:
        """In text: a chunk that starts no tag is text, and one that ends none holds back its last '<'."""
        pos = self._pos
        if pos == length and "<" not in chunk:
            # nothing is held back and no tag starts here: it is all text
            self._pos = new
            self._win = chunk
            self._wbase = length
            return [tuple_new(TextDelta, (chunk,))]
        # the undecided part, the chunk, and one character of look-behind (backtick rule)
        i = pos - self._wbase
        if i:
            i = 1
        s = self._win[pos - self._wbase - i :] + chunk
        self._win = s
        self._wbase = base = pos - i
        if ">" in chunk:
            return None
        # No opening tag can end here (what is held back has no '>').  Hold back the
        # last '<' if it may still begin one; the rest is text.
        lo = len(s) - self.vocab.max_open
        j = s.rfind("<", lo if lo > i else i)
        if j < 0 or s[j:] not in self.vocab.opener_prefixes:
            j = len(s)
        self._pos = base + j
        return [tuple_new(TextDelta, (s[i:j],))] if j > i else []

    def _feed_param(self, chunk: str, length: int, new: int) -> list[Event] | None:
        """In a value: text up to what may begin its closing tag is value; a short value may close."""
        pos = self._pos
        tool = self._tool
        if pos == length:
            if "<" not in chunk:
                # no closing tag can start here: the chunk is value
                self._pos = new
                self._win = chunk
                self._wbase = length
                return [tuple_new(ParamDelta, (tool.index, tool.param, chunk))]
            s = chunk
        else:
            s = self._win[pos - self._wbase :] + chunk
            if "<" not in s:
                # no closing tag can start here: what was held back and the chunk are value
                self._pos = new
                self._win = s
                self._wbase = pos
                return [tuple_new(ParamDelta, (tool.index, tool.param, s))]
        self._win = s
        self._wbase = pos
        close = tool.param_close
        if close not in s:
            # the value goes on; hold back what may begin its closing tag
            safe = len(s) - len(close) + 1
            if safe > 0:
                self._pos = pos + safe
                return [tuple_new(ParamDelta, (tool.index, tool.param, s[:safe]))]
            return []
        k = s.find(close)
        i = k + len(close)
        if self._anchor or len(s) > TRIM or s.find(">", i) >= 0:
            return None
        # The value ends here, and no tag can end after it: close the value and wait
        # in the call's body at the last '<' (what the steps do, in short).
        ev: list[Event] = [tuple_new(ParamDelta, (tool.index, tool.param, s[:k]))] if k else []
        self._close_value(tool, pos + k)
        self._state = TOOL
        j = s.rfind("<", i)
        self._pos = pos + (j if j >= 0 else len(s))
        return ev

    def _feed_tool(self, chunk: str, length: int, new: int) -> list[Event] | None:
        """In a call's body, between values: nothing happens until a tag can end."""
        if self._pos == length and "<" not in chunk:
            self._pos = new
            self._win = chunk
            self._wbase = length
            return []
        self._win += chunk
        if ">" not in chunk and len(self._win) < 1024:
            # Every tag ends with '>': this chunk cannot complete one.  (The bound keeps the
            # window, which each such feed copies, short.)
            return []
        return None

    def _load(self, text: str) -> None:
        """parse(): the whole text at once, without events."""
        self._emit = False
        text = self._check_chunk(text)
        if text:
            self._tail.append(text)
            self._len = len(text)
            self._merge()
            self._mark = min(self._max_len, self._len + MERGE)
            self._win = text
            advance(self, False)

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
        return advance(self, True)

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

    # -- snapshots -------------------------------------------------------

    def _text_block(self, a: int, b: int, partial: bool) -> list[Block]:
        raw = self._slice(a, b)
        content = raw.strip(WS)
        if not content:
            return []
        lead = len(raw) - len(raw.lstrip(WS))
        return [TextBlock(content, partial, (a + lead, a + lead + len(content)))]

    def _tool_block(self, tool: OpenCall, final: bool) -> ToolUse:
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
            if not self._anchor:
                tail = self._slice(max(a, b - len(tool.param) - 2), b)
                b -= _held_back(tail, tool.param_close)
            if b - a > self._max_param and tool.param not in tool.too_big:
                diags.append(self._too_big_diag(tool.param, a))
            b = min(b, a + self._max_param)
            if tool.param not in tool.spans or self._anchor:
                params[tool.param] = self._value(tool, tool.param, a, b)
                spans[tool.param] = (a, b)
        if final and not self._anchor:
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
        if st == TEXT:
            end = length if (final or self._anchor) else self._pos
            out.extend(self._text_block(self._text_start, end, self._anchor or not final))
        elif st == PENDING:
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
