"""The ``cline`` profile: Cline's ``browser_action``, with its own words and its own trimming.

Cline is where ``browser_action`` began; Roo-Code forked from it.  Its browser
has six actions (``launch``, ``click``, ``type``, ``scroll_down``,
``scroll_up``, ``close``), by coordinates only, and four parameters (``action``,
``url``, ``coordinate``, ``text``).  Every value is trimmed, ``text`` too.

Every tool of the dialect, the host's too, takes ``<task_progress>``: the
model's checklist of the task, which Cline's prompt asks for on every call.  It
is given to the host (the turn's ``progress``), never checked and never an
error.  The ``roo`` profile has no such parameter and keeps refusing it.

:data:`CLINE_TOOLS` is Cline's whole vocabulary of its last XML era (before its
move to native tool calls, late October 2025): with ``compat="cline"`` it reads
a Cline conversation as Cline did.  Pure data.
"""

from __future__ import annotations

from types import MappingProxyType

from ..actions import Click, Close, Launch, ScrollDown, ScrollUp, Type
from ..parser import ToolSyntax
from .classic import BY_POINT
from .forms import ActionForm, Profile, words

__all__ = ["CLINE", "CLINE_TOOLS", "PROGRESS_PARAM"]

PROGRESS_PARAM = "task_progress"

CLINE = Profile(
    "cline",
    MappingProxyType(
        {
            "launch": ActionForm(Launch),
            "click": ActionForm(Click, BY_POINT, BY_POINT, example={"coordinate": "450,300"}),
            "type": ActionForm(Type, ("text",)),
            "scroll_down": ActionForm(ScrollDown),
            "scroll_up": ActionForm(ScrollUp),
            "close": ActionForm(Close),
        }
    ),
    # no raw parameter: Cline trims every value, the text to type too
    (ToolSyntax("browser_action", words(f"action url coordinate text {PROGRESS_PARAM}")),),
    "system/browser_cline.j2",
    progress_param=PROGRESS_PARAM,
)


def _tool(name: str, params: str = "") -> ToolSyntax:
    return ToolSyntax(name, (*words(params), PROGRESS_PARAM))


CLINE_TOOLS: tuple[ToolSyntax, ...] = (
    _tool("execute_command", "command requires_approval timeout"),
    _tool("read_file", "path"),
    _tool("write_to_file", "path content"),
    _tool("replace_in_file", "path diff"),
    _tool("search_files", "path regex file_pattern"),
    _tool("list_files", "path recursive"),
    _tool("list_code_definition_names", "path"),
    _tool("browser_action", "action url coordinate text"),
    _tool("use_mcp_tool", "server_name tool_name arguments"),
    _tool("access_mcp_resource", "server_name uri"),
    _tool("load_mcp_documentation"),
    _tool("ask_followup_question", "question options"),
    _tool("attempt_completion", "result command"),
    _tool("new_task", "context"),
    _tool("plan_mode_respond", "response needs_more_exploration"),
    _tool("focus_chain"),
    _tool("web_fetch", "url"),
    _tool("condense", "context"),
    _tool("summarize_task", "context"),
    _tool("report_bug", "title what_happened steps_to_reproduce api_request_output additional_context"),
    _tool("new_rule", "path content"),
)
"""Cline's 21 tools of its last XML era, each with its parameters and ``task_progress``.

In ``compat="cline"`` any tool's parameter opens a value in any call, as in
Cline; in our dialect each tool takes only its own.
"""
