"""MCP servers as tools, with the official ``mcp`` SDK as the client (the ``xmltools[mcp]`` extra).

The parts: :mod:`.settings` (the ``mcpServers`` entries), :mod:`.guard` (no
server outlives its host), :mod:`.server` (one connection in one task),
:mod:`.hub` (the servers of an interpreter), :mod:`.calls` (``<use_mcp_tool>``
and ``<access_mcp_resource>`` as host tools, with their checks) and
:mod:`.results` (answers as plain data for the templates).  Importing this
package does not import the SDK: a server that starts does.  It imports
neither the configuration, the templates nor the interpreter.
"""

from __future__ import annotations

from .settings import DEFAULT_TIMEOUT, ServerSettings, read_servers

__all__ = ["DEFAULT_TIMEOUT", "ServerSettings", "read_servers"]
