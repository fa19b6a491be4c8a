"""MCP calls in a replay: answered from the recording, or called again and compared with it.

Offline, every call is answered with what its server answered when the run
was recorded; a call the recording holds no answer for gets an error result
that says so.  Live, the configured servers are started, and ``mcp_calls``
says which calls go to them:

- ``read-only`` (the default): the tools their server marks read-only
  (``readOnlyHint``), and every resource read;
- ``all``: every call;
- ``none``: no call.

A call that goes to its server has its answer compared with the recorded one
(:func:`compare_mcp`: the error flag, each part's text less the lines
``ignore_mcp`` matches, each image's bytes); any other is answered from the
recording, so that a replay does not change the world a second time.

Sits beside :mod:`xmltools.replaying.offline`, above the MCP hub it stands in for.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Literal, get_args

from ..errors import UsageError
from ..mcp.hub import McpHub
from ..mcp.results import McpContent, McpResult
from ..mcp.server import McpServer, ServerLost, ToolInfo
from ..mcp.settings import ServerSettings
from ..record.format import McpRecord, ToolResultRecord
from ..record.replayed import Drift
from ..record.transcript import Transcript
from ..record.turn import Turn

__all__ = ["MCP_CALLS", "McpCalls", "RecordedServer", "ReplayHub", "compare_mcp", "mcp_preflight"]

McpCalls = Literal["read-only", "all", "none"]
MCP_CALLS: tuple[str, ...] = get_args(McpCalls)
SHOWN_LINE = 160  # the longest line a drift quotes


def recorded_calls(t: Transcript) -> list[McpRecord]:
    """Every MCP answer the transcript holds, in order."""
    return [r.mcp for r in t.records if isinstance(r, ToolResultRecord) and r.mcp is not None]


def mcp_preflight(t: Transcript, servers: Iterable[ServerSettings], offline: bool, calls: str) -> None:
    """Said before any browser starts: a way of calling that does not exist, or a live replay of calls
    to a server this machine does not configure."""
    if calls not in MCP_CALLS:
        raise UsageError(f"mcp_calls is {', '.join(MCP_CALLS)}, not {calls!r}")
    if offline or calls == "none":
        return
    here = {s.name for s in servers}
    missing = sorted({r.server for r in recorded_calls(t)} - here)
    if missing:
        raise UsageError(
            f"{t.path or 'the transcript'} calls the MCP server {missing[0]!r}, which is not configured"
            " here: give it in mcp_servers, replay offline, or answer every call from the recording"
            " (mcp_calls = 'none')"
        )


class RecordedServer(McpServer):
    """A server of the recording, offline: always up, its tools as the recorded calls saw them."""

    def __init__(self, name: str, tools: dict[str, ToolInfo]) -> None:
        super().__init__(ServerSettings(name, command="(recorded)"))
        self.tools = tools

    @property
    def running(self) -> bool:
        return True

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _recorded_servers(t: Transcript) -> dict[str, RecordedServer]:
    tools: dict[str, dict[str, ToolInfo]] = {}
    for r in recorded_calls(t):
        known = tools.setdefault(r.server, {})
        if r.tool is None or (r.input_schema is None and r.tool in known):
            continue
        # a call whose server broke recorded no schema: its tool is still known, taking any arguments
        known[r.tool] = ToolInfo(r.tool, "", r.input_schema or {}, r.read_only, r.destructive)
    return {name: RecordedServer(name, known) for name, known in tools.items()}


class ReplayHub(McpHub):
    """The MCP servers of a replay: the recording's stand-ins offline, the configured ones live.

    Before each assistant message, :meth:`begin_step` hands it the step's
    recorded answers; one call runs per message, so the first is this call's.
    """

    def __init__(
        self,
        transcript: Transcript,
        live: Sequence[ServerSettings] | None,
        *,
        calls: McpCalls = "read-only",
        result_chars: int = 20_000,
    ) -> None:
        super().__init__(live or (), result_chars=result_chars)
        self.transcript = transcript
        self.offline = live is None
        self.calls = calls
        self._step: list[McpRecord] = []
        self.unrecorded = 0  # calls answered with no recording to answer from
        if self.offline:
            self.servers = dict(_recorded_servers(transcript))

    def begin_step(self, recorded: Sequence[ToolResultRecord]) -> None:
        self._step = [r.mcp for r in recorded if r.mcp is not None]

    def _take(self) -> McpRecord | None:
        return self._step.pop(0) if self._step else None

    async def call_tool(self, server: str, tool: str, arguments: dict[str, object]) -> McpResult:
        rec = self._take()
        if self._calls_tool(server, tool):
            return await super().call_tool(server, tool, arguments)
        return self._answer(rec, server, tool=tool)

    async def read_resource(self, server: str, uri: str) -> McpResult:
        rec = self._take()
        if not self.offline and self.calls != "none":
            return await super().read_resource(server, uri)
        return self._answer(rec, server, uri=uri)

    def _calls_tool(self, server: str, tool: str) -> bool:
        if self.offline or self.calls == "none":
            return False
        if self.calls == "all":
            return True
        info = self.tool(server, tool)
        return info is not None and info.read_only

    def _answer(
        self, rec: McpRecord | None, server: str, *, tool: str | None = None, uri: str | None = None
    ) -> McpResult:
        """The recorded answer to this call; an error result when the recording holds none."""
        if rec is None or (rec.server, rec.tool, rec.uri) != (server, tool, uri):
            self.unrecorded += 1
            why = "replayed: the recording holds no answer for this call"
            if not self.offline:
                why += (
                    "; a tool that may change the world is not called again in a replay"
                    " (mcp_calls = 'all' calls it)"
                )
            return McpResult(
                server, (McpContent("text", why),), tool=tool, uri=uri, is_error=True, source="recording"
            )
        if rec.unavailable is not None:
            raise ServerLost(rec.unavailable, server)
        return self.transcript.mcp_result(rec)


def ignore_patterns(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    try:
        return [re.compile(p) for p in patterns]
    except re.error as e:
        raise UsageError(f"ignore_mcp: {e.pattern!r} is not a regular expression ({e})") from e


def compare_mcp(
    index: int,
    turn: Turn,
    recorded: Sequence[ToolResultRecord],
    t: Transcript,
    ignore: Sequence[re.Pattern[str]] = (),
) -> list[Drift]:
    """A drift for each MCP call its server answered again, where the answer is not the recorded one
    (the outcomes are taken to be the recorded ones: compared before)."""
    drifts: list[Drift] = []
    for o, r in zip(turn.outcomes, recorded, strict=False):
        if o.mcp is None or r.mcp is None or o.mcp.source != "server":
            continue
        want, got = _said(t.mcp_result(r.mcp), ignore), _said(o.mcp, ignore)
        if want == got:
            continue
        what = f"{o.mcp.server} {o.mcp.tool or o.mcp.uri}"
        drifts.append(
            Drift(index, "mcp", want, got, detail=f"{what} answered differently: {_first(want, got)}")
        )
    return drifts


def _said(result: McpResult, ignore: Sequence[re.Pattern[str]]) -> list[str]:
    """An answer as the lines that are compared."""
    lines = [f"error: {result.unavailable or result.is_error}"]
    for p in result.parts:
        if p.image is not None:
            lines.append(f"image {p.image.width}x{p.image.height} sha256:{_digest(p.image.data)}")
        else:
            lines.extend(_kept(p.text, ignore))
    lines.extend(_kept(result.structured or "", ignore))
    return lines


def _kept(text: str, ignore: Sequence[re.Pattern[str]]) -> list[str]:
    return [line for line in text.splitlines() if not any(x.search(line) for x in ignore)]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _first(want: list[str], got: list[str]) -> str:
    """The first line that differs, recorded then now."""
    for a, b in zip(want, got, strict=False):
        if a != b:
            return f"{a[:SHOWN_LINE]!r} recorded, {b[:SHOWN_LINE]!r} now"
    if len(want) > len(got):
        return f"{want[len(got)][:SHOWN_LINE]!r} recorded, nothing now"
    return f"nothing recorded, {got[len(want)][:SHOWN_LINE]!r} now"
