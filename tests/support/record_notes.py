"""Record docs/examples/todo/notes.jsonl, the MCP guide's recording, for real: a scripted model's
messages run through the interpreter, with a Chromium and the two MCP servers of todo/mcp.json.

Run it from the repository's root when the flow or the servers change::

    .venv/bin/python tests/support/record_notes.py

The pages are observed as ARIA snapshots rather than screenshots, so that a live replay compares
text that is the same on every machine, whatever its fonts.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from xmltools import Config, Interpreter, loop_registry, serve_directory

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
TASK = (
    "Put the blue mug from {base}/shop.html on the to-do list with its price, as 'mug: PRICE', and say when."
)
STEPS = [
    "I'll read the mug's price in the shop first.\n<browser_action>\n<action>launch</action>\n"
    "<url>{base}/shop.html</url>\n</browser_action>",
    "The blue mug costs $12.50.\n<browser_action>\n<action>close</action>\n</browser_action>",
    "<use_mcp_tool>\n<server_name>todo</server_name>\n<tool_name>add_todo</tool_name>\n"
    '<arguments>{{"text": "mug: $12.50"}}</arguments>\n</use_mcp_tool>',
    "<use_mcp_tool>\n<server_name>time</server_name>\n<tool_name>get_current_time</tool_name>\n"
    '<arguments>{{"timezone": "UTC"}}</arguments>\n</use_mcp_tool>',
    "<attempt_completion>\n<result>The blue mug is on the to-do list as 'mug: $12.50', added just now"
    " (see the time above).</result>\n</attempt_completion>",
]


def servers() -> dict[str, object]:
    """todo/mcp.json, with its commands found beside this Python (the shipped file names them
    as the examples' folder runs them: from the environment that has xmltools)."""
    data = json.loads((EXAMPLES / "todo" / "mcp.json").read_text(encoding="utf-8"))
    here = Path(sys.executable).parent
    for entry in data["mcpServers"].values():
        entry["command"] = str(here / entry["command"])
    return dict(data)


def main() -> None:
    os.chdir(EXAMPLES)
    config = Config(mcp_servers=servers(), observe="snapshot")
    with serve_directory("site") as base, Interpreter(config, registry=loop_registry(config)) as it:
        rec = it.record("todo/notes.jsonl", base_url=base)
        rec.message("user", TASK.format(base=base))
        for step in STEPS:
            turn = it.handle(step.format(base=base))
            assert all(o.status == "ok" for o in turn.outcomes), turn.outcomes
    print(f"wrote {EXAMPLES / 'todo' / 'notes.jsonl'}")


if __name__ == "__main__":
    main()
