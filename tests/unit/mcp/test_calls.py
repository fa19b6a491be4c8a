"""The MCP calls without a server: the argument check against a schema, the example, the prompt's cap."""

from __future__ import annotations

import json
import subprocess
import sys

from xmltools import ToolUse
from xmltools.mcp.calls import USE_TOOL, _argument_problem, compact, example_arguments, listing, mcp_tools
from xmltools.mcp.hub import McpHub
from xmltools.mcp.server import ToolInfo
from xmltools.mcp.settings import ServerSettings
from xmltools.tools import CallError, ToolRegistry, ValidCall

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"a": {"type": "number"}, "unit": {"type": "string", "enum": ["m", "s"]}},
    "required": ["a", "unit"],
    "additionalProperties": False,
}


def hub_with(tools: int = 1) -> McpHub:
    hub = McpHub([ServerSettings("calc", command="calc", auto_approve=frozenset({"free"}))])
    server = hub.servers["calc"]
    server.tools = {"add": ToolInfo("add", "Adds.", SCHEMA, read_only=True)}
    server.tools |= {f"t{i}": ToolInfo(f"t{i}", "x" * 100, SCHEMA) for i in range(tools - 1)}
    server._session = object()  # as if started

    class Done:
        def done(self) -> bool:
            return False

    server._task = Done()  # type: ignore[assignment]
    return hub


def call(server: str, tool: str, arguments: str) -> ToolUse:
    params = {"server_name": server, "tool_name": tool, "arguments": arguments}
    return ToolUse(name=USE_TOOL, params=params, partial=False)


def test_arguments_are_checked_against_the_tool_s_schema() -> None:
    assert _argument_problem('{"a": 1, "unit": "m"}', SCHEMA) is None
    assert _argument_problem('{"a": "one", "unit": "m"}', SCHEMA) == "a: 'one' is not of type 'number'"
    assert "'unit' is a required property" in (_argument_problem('{"a": 1}', SCHEMA) or "")
    assert (_argument_problem("[1]", SCHEMA) or "").startswith("a JSON object is needed")
    assert (_argument_problem("{a: 1}", SCHEMA) or "").startswith("not JSON")
    assert example_arguments(SCHEMA) == {"a": 1, "unit": "m"}
    assert compact(SCHEMA) == (
        '{"type":"object","properties":{"a":{"type":"number"},"unit":{"type":"string","enum":["m","s"]}},'
        '"required":["a","unit"]}'
    )


def test_a_wrong_call_is_the_model_s_mistake_with_the_schema_and_a_correct_example() -> None:
    reg = ToolRegistry(mcp_tools(hub_with()), browser=False)
    ok = reg.validate(call("calc", "add", '{"a": 2, "unit": "s"}'))
    assert isinstance(ok, ValidCall)
    wrong = reg.validate(call("calc", "add", '{"a": "2"}'))
    assert isinstance(wrong, CallError) and wrong.param == "arguments"
    assert "the tool's input schema: {" in wrong.message
    assert '<arguments>{"a": 1, "unit": "m"}</arguments>' in wrong.example
    no_server = reg.validate(call("clac", "add", "{}"))
    assert isinstance(no_server, CallError) and "the servers are: calc" in no_server.message
    no_tool = reg.validate(call("calc", "sub", "{}"))
    assert isinstance(no_tool, CallError) and "its tools are: add" in no_tool.message


def test_approval_categories_come_from_the_hints() -> None:
    hub = hub_with()
    hub.servers["calc"].tools["rm"] = ToolInfo("rm", "", {}, destructive=True)
    hub.servers["calc"].tools["put"] = ToolInfo("put", "", {}, destructive=False)
    hub.servers["calc"].tools["plain"] = ToolInfo("plain", "", {})
    use, access = mcp_tools(hub)
    assert use.category_for is not None and access.category_for is not None
    categories = {
        t: use.category_for(use.params.model_validate({"server_name": "calc", "tool_name": t}))
        for t in ("add", "rm", "put", "plain")
    }
    assert categories == {"add": "read", "rm": "mutate", "put": "input", "plain": "mutate"}
    assert (
        access.category_for(access.params.model_validate({"server_name": "calc", "uri": "x://y"})) == "read"
    )


async def test_approval_rules_by_server_and_tool_come_before_the_category() -> None:
    from xmltools.protocol.approval import Allow, ApprovalPolicy, Deny

    policy = ApprovalPolicy({"read": "deny", "mcp:calc": "allow", "mcp:calc/rm": "deny"})
    assert isinstance(
        await policy.decide(None, USE_TOOL, None, "read", names=("mcp:calc/add", "mcp:calc")), Allow
    )
    denied = await policy.decide(None, USE_TOOL, None, "mutate", names=("mcp:calc/rm", "mcp:calc"))
    assert isinstance(denied, Deny) and denied.reason == "calc/rm is not allowed in this session"
    assert isinstance(await policy.decide(None, USE_TOOL, None, "read", names=("mcp:other",)), Deny)


def test_past_the_cap_the_prompt_lists_tools_by_name_only() -> None:
    hub = hub_with(tools=60)
    full = listing(hub, 1_000_000)
    assert full[0]["schemas"] and len(full[0]["tools"]) == 60
    capped = listing(hub, 2_000)
    assert not capped[0]["schemas"] and capped[0]["names"].startswith("add, t0, t1")


def test_the_package_imports_without_the_sdk() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "import xmltools, xmltools.mcp, xmltools.mcp.calls, xmltools.interpreter\n"
        "from xmltools import Config, AsyncInterpreter, McpServerError\n"
        "AsyncInterpreter(Config())\n"
        "try:\n"
        "    AsyncInterpreter(Config(mcp_servers={'t': {'command': 'x'}}))\n"
        "except McpServerError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "pip install 'xmltools[mcp]'" in out.stdout


def test_a_secret_goes_into_the_json_arguments_escaped() -> None:
    """A secret holding quotes and backslashes stays one JSON string value: it cannot end the string
    and add arguments of its own."""
    from xmltools.base.secrets import Secret
    from xmltools.interpreter.secrecy import SecretGuard

    value = 'pa"ss\\word", "admin": true, "x": "'
    guard = SecretGuard(
        {"TOKEN": Secret(value, origins=["mcp:calc"]), "OTHER": Secret("o", origins=["mcp:x"])}
    )
    reg = ToolRegistry(mcp_tools(hub_with()), browser=False)
    filled = guard.fill(call("calc", "add", '{"token": "{secret:TOKEN}", "unit": "m"}'), reg)
    assert isinstance(filled, ToolUse)
    assert json.loads(filled.params["arguments"]) == {"token": value, "unit": "m"}
    assert filled.params["server_name"] == "calc"
    held = guard.fill(call("calc", "add", '{"token": "{secret:OTHER}"}'), reg)
    assert isinstance(held, ToolUse) and "{secret:OTHER}" in held.params["arguments"]  # not for this server
