"""A to-do list served over MCP, for the examples of the MCP guide.

The list lives in this process's memory: each process starts with an empty one, so each trial of an
experiment that starts its own server sees only what its model added.  ``add_todo`` changes the
list; ``list_todos`` and the resource ``todo://count`` only read it, and say so to the client.

Run it over stdio from the examples' folder with ``python todo/server.py`` (it needs the MCP SDK:
``pip install 'xmltools[mcp]'``); ``todo/mcp.json`` and ``mcp-experiment.toml`` start it so.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("todo")
todos: list[str] = []


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def add_todo(text: str) -> str:
    """Add an item to the end of the to-do list."""
    todos.append(text)
    return f"added {text!r}; the list has {count()}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_todos() -> str:
    """Every item of the to-do list, one a line."""
    return "\n".join(todos) if todos else "the list is empty"


@server.resource("todo://count", name="count", mime_type="text/plain")
def count() -> str:
    """How many items the list holds."""
    return "1 item" if len(todos) == 1 else f"{len(todos)} items"


if __name__ == "__main__":
    server.run()
