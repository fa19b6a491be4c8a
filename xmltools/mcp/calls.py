"""The two calls of the Roo/Cline dialect: ``<use_mcp_tool>`` and ``<access_mcp_resource>``.

:func:`mcp_tools` makes them host tools of the registry, bound to a hub: their
parameters, the check of a call before it runs (the server, the tool, and the
arguments against the tool's JSON Schema, with ``jsonschema``), the approval
category of each call (from the tool's ``readOnlyHint`` and
``destructiveHint``), and
the handler that asks the server.  :func:`listing` is what the system prompt
shows of the servers, within a size cap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from ..base.quoting import quoted, shorten
from ..profiles import format_call
from ..tools import CallError, Tool
from .hub import McpHub
from .results import McpResult
from .server import ServerLost

__all__ = ["ACCESS_RESOURCE", "MCP_TOOLS", "USE_TOOL", "AccessParams", "UseParams", "listing", "mcp_tools"]

USE_TOOL = "use_mcp_tool"
ACCESS_RESOURCE = "access_mcp_resource"
MCP_TOOLS = (USE_TOOL, ACCESS_RESOURCE)
MAX_SCHEMA_IN_ERROR = 1_500  # the longest schema an argument error shows
MAX_DESCRIPTION = 300  # the longest description of one tool or resource in the prompt


class UseParams(BaseModel):
    server_name: str = Field(description="the MCP server's name, as listed below")
    tool_name: str = Field(description="the tool's name on that server")
    arguments: str = Field(
        "{}", description="the tool's arguments: one JSON object that fits its input schema"
    )


class AccessParams(BaseModel):
    server_name: str = Field(description="the MCP server's name, as listed below")
    uri: str = Field(description="the resource's URI")


def compact(schema: Mapping[str, Any]) -> str:
    """A schema in one line, without the keys that only annotate it."""
    return json.dumps(_lean(schema), separators=(",", ":"), ensure_ascii=False)


def _lean(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: _lean(v) for k, v in value.items() if k not in ("$schema", "title", "additionalProperties")
        }
    if isinstance(value, list):
        return [_lean(v) for v in value]
    return value


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments that show the shape: each required property with a value of its type."""
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        p = props.get(str(name)) or {}
        kind = p.get("type")
        if p.get("enum"):
            out[str(name)] = p["enum"][0]
        elif "default" in p:
            out[str(name)] = p["default"]
        else:
            out[str(name)] = {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(
                str(kind), "..."
            )
    return out


def _example(server: str, tool: str, schema: Mapping[str, Any] | None) -> str:
    args = json.dumps(example_arguments(schema or {}), ensure_ascii=False)
    return format_call(USE_TOOL, {"server_name": server, "tool_name": tool, "arguments": args})


class _Calls:
    """The hub seen from the registry: checks, categories and handlers."""

    def __init__(self, hub: McpHub) -> None:
        self.hub = hub

    async def prepare(self, params: Mapping[str, str]) -> None:
        """Start the server a call names (a server that cannot start is raised to the host)."""
        await self.hub.ensure(params.get("server_name", "").strip())

    def _server_error(self, tool: str, name: str) -> CallError | None:
        if name in self.hub.servers:
            return None
        known = ", ".join(self.hub.names)
        example = (
            _example(self.hub.names[0], "TOOL_NAME", None)
            if tool == USE_TOOL
            else format_call(ACCESS_RESOURCE, {"server_name": self.hub.names[0], "uri": "URI"})
        )
        message = f"there is no MCP server named {quoted(name, 60)}; the servers are: {known}"
        return CallError("invalid_param", message, tool, "server_name", example)

    def check_use(self, args: BaseModel) -> CallError | None:
        assert isinstance(args, UseParams)
        server, name = args.server_name.strip(), args.tool_name.strip()
        wrong = self._server_error(USE_TOOL, server)
        if wrong is not None:
            return wrong
        s = self.hub.servers[server]
        if not s.running:
            return None  # the call says the server is unavailable
        info = s.tools.get(name)
        if info is None:
            tools = shorten(", ".join(s.tools) or "none", 600)
            message = f"the server {server} has no tool named {quoted(name, 60)}; its tools are: {tools}"
            example = _example(server, next(iter(s.tools), "TOOL_NAME"), None)
            return CallError("invalid_param", message, USE_TOOL, "tool_name", example)
        problem = _argument_problem(args.arguments, info.schema)
        if problem is None:
            return None
        schema = shorten(compact(info.schema), MAX_SCHEMA_IN_ERROR)
        message = f"<arguments>: {problem}; the tool's input schema: {schema}"
        return CallError("invalid_param", message, USE_TOOL, "arguments", _example(server, name, info.schema))

    def check_access(self, args: BaseModel) -> CallError | None:
        assert isinstance(args, AccessParams)
        return self._server_error(ACCESS_RESOURCE, args.server_name.strip())

    def category_of_use(self, args: BaseModel) -> str:
        """From the tool's hints: read-only is read, not destructive is input, anything else mutate.
        (A server's autoApprove is an approval rule by name: see the interpreter.)"""
        assert isinstance(args, UseParams)
        s = self.hub.servers.get(args.server_name.strip())
        info = s.tools.get(args.tool_name.strip()) if s is not None else None
        if info is not None and info.read_only:
            return "read"
        return "input" if info is not None and info.destructive is False else "mutate"

    def category_of_access(self, args: BaseModel) -> str:
        return "read"

    async def use(self, args: UseParams) -> McpResult:
        server = args.server_name.strip()
        try:
            return await self.hub.call_tool(
                server, args.tool_name.strip(), json.loads(args.arguments or "{}")
            )
        except ServerLost as e:
            await self.hub.lost(server, e.why)
            raise ServerLost(e.why, server) from None

    async def access(self, args: AccessParams) -> McpResult:
        server = args.server_name.strip()
        try:
            return await self.hub.read_resource(server, args.uri.strip())
        except ServerLost as e:
            await self.hub.lost(server, e.why)
            raise ServerLost(e.why, server) from None


def _argument_problem(text: str, schema: Mapping[str, Any]) -> str | None:
    """What is wrong with the arguments (None: they fit the schema)."""
    try:
        value = json.loads(text or "{}")
    except ValueError as e:
        return f"not JSON ({e})"
    if not isinstance(value, dict):
        return f"a JSON object is needed, not {type(value).__name__}"
    import jsonschema

    try:
        cls = jsonschema.validators.validator_for(schema)
        errors = sorted(cls(schema).iter_errors(value), key=lambda e: e.path)
    except jsonschema.SchemaError:
        return None  # the server's schema is broken: the server decides
    if not errors:
        return None
    best = jsonschema.exceptions.best_match(errors)
    where = "/".join(str(p) for p in best.absolute_path)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where + ': ' if where else ''}{shorten(best.message, 300)}{more}"


def mcp_tools(hub: McpHub) -> list[Tool]:
    """The two tools, bound to ``hub``, for a registry."""
    calls = _Calls(hub)
    return [
        Tool(
            USE_TOOL,
            UseParams,
            calls.use,
            "Run a tool of a connected MCP server. The servers and their tools are listed below.",
            raw=frozenset({"arguments"}),
            prepare=calls.prepare,
            check=calls.check_use,
            category_for=calls.category_of_use,
        ),
        Tool(
            ACCESS_RESOURCE,
            AccessParams,
            calls.access,
            "Read a resource of a connected MCP server, by its URI. The resources are listed below.",
            prepare=calls.prepare,
            check=calls.check_access,
            category_for=calls.category_of_access,
        ),
    ]


def listing(hub: McpHub, cap: int) -> list[dict[str, Any]]:
    """Each server with its tools (compact schemas) and resources, for the prompt.

    Past ``cap`` characters of tool entries, the tools are listed by name only
    (``schemas`` false): a call with wrong arguments gets its schema back.
    """
    servers: list[dict[str, Any]] = []
    size = 0
    for name, s in hub.servers.items():
        tools = [
            {
                "name": t.name,
                "description": shorten(t.description, MAX_DESCRIPTION),
                "schema": compact(t.schema),
            }
            for t in s.tools.values()
        ]
        size += sum(len(t["name"]) + len(t["description"]) + len(t["schema"]) + 8 for t in tools)
        resources = [
            {"uri": r.uri, "name": r.name, "description": shorten(r.description, MAX_DESCRIPTION)}
            for r in s.resources
        ]
        servers.append({"name": name, "running": s.running, "tools": tools, "resources": resources})
    full = size <= cap
    for entry in servers:
        entry["schemas"] = full
        if not full:
            names = ", ".join(t["name"] for t in entry["tools"])
            entry["names"] = shorten(names, max(200, cap // max(1, len(servers))))
        entry["resources"] = entry["resources"][:50]
    return servers
