"""One MCP server's connection, held in one long-lived task, through the official ``mcp`` SDK.

:class:`McpServer` enters the SDK's transport (stdio under
:mod:`xmltools.mcp.guard`, or streamable HTTP) and its ``ClientSession`` in a
task of its own and leaves them in that same task, as anyio's cancel scopes
require; calls are sent from any task of the same loop.  It keeps the server's
tools and resources as it last listed them, and notes a ``tools/list_changed``.
A server that cannot be started is the host's problem
(:class:`~xmltools.errors.McpServerError`); one that breaks during a call is
:class:`ServerLost`, which the model is told of.  The SDK is imported here, and
only when a server starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ..errors import McpServerError
from .settings import ServerSettings

__all__ = ["McpServer", "ResourceInfo", "ServerLost", "ToolInfo", "require_sdk"]

log = logging.getLogger("xmltools.mcp")
EXTRA = "xmltools[mcp]"


class ServerLost(Exception):
    """A started server that crashed, closed or did not answer in time during a call."""

    def __init__(self, why: str, server: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.server = server


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the server listed it."""

    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool = False
    destructive: bool | None = None


@dataclass(frozen=True)
class ResourceInfo:
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None


def require_sdk() -> None:
    """The host's error when the ``mcp`` extra is not installed."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise McpServerError(
            f"MCP servers are configured, but the mcp package is not installed: pip install '{EXTRA}'"
        ) from None


class McpServer:
    """A configured server: started by :meth:`start`, closed by :meth:`aclose`."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.name = settings.name
        self.tools: dict[str, ToolInfo] = {}
        self.resources: tuple[ResourceInfo, ...] = ()
        self.changed = False  # a tools/list_changed came since the last listing
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._errlog: Any = None
        self._said = ""  # the last line the server wrote on stderr, once its transport closed
        self._starting = asyncio.Lock()  # one start at a time, whoever asks

    @property
    def running(self) -> bool:
        return self._session is not None and self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Connect, initialize and list; :class:`McpServerError` with one line when it cannot."""
        require_sdk()
        async with self._starting:
            if self.running:
                return
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self._hold(ready), name=f"xmltools-mcp-{self.name}")
            await ready

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        """The task that owns the transport and the session, from start to close."""
        from mcp.client.session import ClientSession

        try:
            async with (
                self._transport() as streams,
                ClientSession(
                    streams[0], streams[1], message_handler=self._on_message, list_roots_callback=_roots
                ) as session,
            ):
                async with asyncio.timeout(self.settings.timeout):
                    await session.initialize()
                    self._session = session
                    await self.relist()
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as e:
            self._session = None
            if not ready.done():
                ready.set_exception(self._start_error(e))
            elif not isinstance(e, asyncio.CancelledError):
                log.warning("MCP server %s ended: %s", self.name, _one_line(e))
            if isinstance(e, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                raise
        finally:
            self._session = None

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        s = self.settings
        if s.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers=dict(s.headers) or None)
            async with client, streamable_http_client(s.url, http_client=client) as streams:
                yield streams[0], streams[1]
            return
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command = s.command or ""
        path = {**os.environ, **s.env}.get("PATH")
        found = shutil.which(command, path=path)
        if found is None:
            raise McpServerError(f"MCP server {self.name}: the command {command!r} was not found")
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "xmltools.mcp.guard", found, *s.args],
            env=dict(s.env) or None,
            cwd=s.cwd,
        )
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
            self._errlog = errlog  # what the server says on stderr: its last line explains a failed start
            try:
                async with stdio_client(params, errlog=errlog) as streams:
                    yield streams[0], streams[1]
            finally:
                self._said = self._stderr_tail()

    def _start_error(self, e: BaseException) -> BaseException:
        if isinstance(e, McpServerError):
            return e
        if isinstance(e, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
            return e
        said = self._said
        if isinstance(e, TimeoutError):
            why = f"did not answer within {self.settings.timeout:g} s"
        else:
            why = f"could not be started ({_one_line(e)})"
        more = f"; it said: {said}" if said else ""
        return McpServerError(f"MCP server {self.name} ({self.settings.describe()}) {why}{more}")

    def _stderr_tail(self) -> str:
        f = self._errlog
        if f is None or f.closed:
            return ""
        try:
            f.flush()
            f.seek(0)
            lines = [ln.strip() for ln in f.read()[-4000:].splitlines() if ln.strip()]
        except (OSError, ValueError):
            return ""
        return lines[-1][:300] if lines else ""

    async def _on_message(self, message: object) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.changed = True
            log.info("MCP server %s: its tools changed", self.name)

    async def relist(self) -> None:
        """List the tools (and the resources, when the server has any) again."""
        session = self._session
        tools: dict[str, ToolInfo] = {}
        cursor: str | None = None
        while True:
            page = await session.list_tools(params=_page(cursor))
            for t in page.tools:
                hints = t.annotations
                tools[t.name] = ToolInfo(
                    t.name,
                    (t.description or "").strip(),
                    dict(t.input_schema or {}),
                    bool(getattr(hints, "read_only_hint", None)),
                    getattr(hints, "destructive_hint", None),
                )
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools = tools
        self.resources = await self._resources(session)

    async def _resources(self, session: Any) -> tuple[ResourceInfo, ...]:
        caps = session.server_capabilities
        if caps is None or getattr(caps, "resources", None) is None:
            return ()
        page = await session.list_resources()
        return tuple(
            ResourceInfo(str(r.uri), r.name, (r.description or "").strip(), getattr(r, "mime_type", None))
            for r in page.resources
        )

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        return await self._request(lambda s: s.call_tool(tool, arguments))

    async def read_resource(self, uri: str) -> Any:
        return await self._request(lambda s: s.read_resource(uri))

    async def _request(self, send: Any) -> Any:
        session = self._session
        if session is None or not self.running:
            raise ServerLost("it is not running")
        try:
            async with asyncio.timeout(self.settings.timeout):
                return await send(session)
        except TimeoutError:
            raise ServerLost(f"it did not answer within {self.settings.timeout:g} s") from None
        except (OSError, EOFError) as e:
            raise ServerLost(_one_line(e)) from None
        except Exception as e:
            if _is_protocol_error(e) and self.running:
                raise  # the server answered with an error: the caller tells the model
            raise ServerLost(_one_line(e)) from None

    async def aclose(self) -> None:
        """Leave the session and the transport (the server and its children end); safe twice."""
        task, self._task = self._task, None
        self._stop.set()
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 10)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        except Exception as e:  # the task logged its own end
            log.debug("MCP server %s closed: %s", self.name, _one_line(e))


async def _roots(context: object) -> Any:
    from mcp import types

    return types.ListRootsResult(roots=[])


def _page(cursor: str | None) -> Any:
    if cursor is None:
        return None
    from mcp import types

    return types.PaginatedRequestParams(cursor=cursor)


CONNECTION_CLOSED = -32000  # the SDK's code for a connection that closed under a request


def _is_protocol_error(e: Exception) -> bool:
    """An error answer from the server (JSON-RPC), as opposed to a broken connection."""
    code = getattr(getattr(e, "error", None), "code", None)
    return isinstance(code, int) and code != CONNECTION_CLOSED


def _one_line(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup):
        return _one_line(e.exceptions[0])
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:300]
