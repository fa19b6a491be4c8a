"""The configured MCP servers of one interpreter: started on first use (or all at once), and closed.

:class:`McpHub` keeps each :class:`~xmltools.mcp.server.McpServer` by name,
starts one the first time a call or the prompt needs it, lists the changed ones
again after a ``tools/list_changed``, and turns the SDK's answers into
:class:`~xmltools.mcp.results.McpResult`.  A server that breaks during a call
is closed, logged for the host, and raised as
:class:`~xmltools.mcp.server.ServerLost` for the model to hear of; the next call
starts it again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from .results import McpContent, McpResult, from_resource, from_tool_result
from .server import McpServer, ServerLost, ToolInfo, require_sdk
from .settings import ServerSettings

__all__ = ["McpHub"]

log = logging.getLogger("xmltools.mcp")


class McpHub:
    """The servers of the configuration, by name; ``result_chars`` bounds each text of an answer.

    ``shared`` lends servers that other hubs use at the same time (an
    experiment's servers that its trials share): this hub starts one when it
    needs it, but never closes it; their owner does.
    """

    def __init__(
        self,
        servers: Iterable[ServerSettings],
        *,
        result_chars: int = 20_000,
        shared: Mapping[str, McpServer] | None = None,
    ) -> None:
        self.servers: dict[str, McpServer] = {s.name: McpServer(s) for s in servers}
        self.servers.update(shared or {})
        self._lent = frozenset(shared or ())
        self.result_chars = result_chars
        if self.servers:
            require_sdk()

    def __bool__(self) -> bool:
        return bool(self.servers)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.servers)

    @property
    def started(self) -> bool:
        """Whether every server has been started (their tools are known)."""
        return all(s.running for s in self.servers.values())

    async def ensure(self, name: str) -> McpServer | None:
        """The server ``name``, started if it was not (None: no such server)."""
        server = self.servers.get(name)
        if server is None:
            return None
        await server.start()  # started once, however many calls ask at the same time
        return server

    async def start_all(self) -> None:
        """Start every server now, side by side (their tools then show in the system prompt); the
        first that cannot start is raised, once the others have started."""
        done = await asyncio.gather(*(self.ensure(n) for n in self.servers), return_exceptions=True)
        failed = next((e for e in done if isinstance(e, BaseException)), None)
        if failed is not None:
            raise failed

    async def refresh(self) -> list[str]:
        """List again the servers whose tools changed; their names."""
        changed = []
        for server in self.servers.values():
            if server.changed and server.running:
                server.changed = False
                try:
                    await server.relist()
                except Exception as e:
                    log.warning("MCP server %s: listing its tools again failed: %s", server.name, e)
                    continue
                changed.append(server.name)
        return changed

    def tool(self, server: str, tool: str) -> ToolInfo | None:
        s = self.servers.get(server)
        return s.tools.get(tool) if s is not None else None

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> McpResult:
        """The server's answer, with the tool's hints and schema as it listed them."""
        s = await self._running(server)
        try:
            answer = await s.call_tool(tool, arguments)
        except ServerLost:
            raise
        except Exception as e:  # the server answered with an error: the tool's error, for the model
            result = McpResult(server, (McpContent("text", _said(e)),), tool=tool, is_error=True)
        else:
            result = from_tool_result(server, tool, answer, self.result_chars)
        info = s.tools.get(tool)
        if info is None:
            return result
        return dataclasses.replace(
            result, read_only=info.read_only, destructive=info.destructive, schema=info.schema
        )

    async def read_resource(self, server: str, uri: str) -> McpResult:
        s = await self._running(server)
        try:
            answer = await s.read_resource(uri)
        except ServerLost:
            raise
        except Exception as e:
            return McpResult(server, (McpContent("text", _said(e)),), uri=uri, is_error=True, read_only=True)
        return dataclasses.replace(from_resource(server, uri, answer, self.result_chars), read_only=True)

    async def _running(self, name: str) -> McpServer:
        s = self.servers[name]
        if not s.running:
            raise ServerLost("it is not running")
        return s

    async def lost(self, name: str, why: str) -> None:
        """A server that broke during a call: logged for the host, and closed (the next use restarts it)."""
        log.warning("MCP server %s is unavailable: %s", name, why)
        server = self.servers.get(name)
        if server is not None:
            await server.aclose()

    async def aclose(self) -> None:
        """Close every server but the lent ones, side by side (each ends with its children); safe to
        call more than once."""
        await asyncio.gather(*(s.aclose() for n, s in self.servers.items() if n not in self._lent))


def _said(e: Exception) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:1000]
