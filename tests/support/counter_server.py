"""A stateful MCP server for the tests of sharing: it counts the bumps it was given, and says its pid.

Run over stdio: ``python counter_server.py``.  ``bump`` changes its state; ``count`` and the resource
``counter://count`` only read it.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("counter")
bumps = 0


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def bump() -> str:
    """Add one to the count; the new count and this process's pid."""
    global bumps
    bumps += 1
    return f"count {bumps} pid {os.getpid()}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def count() -> str:
    """The count."""
    return f"count {bumps}"


@server.resource("counter://count", name="count")
def count_resource() -> str:
    return f"count {bumps}"


if __name__ == "__main__":
    server.run()
