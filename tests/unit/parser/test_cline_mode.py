"""compat="cline": the blocks of Cline's own parser, one case for each rule the comparison taught.

Each message below is ours.  For each, the whole parse is checked against the
blocks written out by hand, against the independent reference model of
tests/support/parser_oracle.py, and fed in chunks of several sizes.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.parser_oracle import cline_reference, roo_reference

from xmltools import StreamParser, TextBlock, ToolSyntax, ToolUse, parse
from xmltools.profiles import CLINE_TOOLS

TOOL_PARAMS = {t.name: t.params for t in CLINE_TOOLS}


def blocks(text: str, compat: str = "cline", tools: Any = CLINE_TOOLS) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for b in parse(text, tools=tools, compat=compat):  # type: ignore[arg-type]
        if isinstance(b, TextBlock):
            out.append(("text", b.content, b.partial))
        else:
            out.append(("tool", b.name, dict(b.params), b.partial))
    return out


def as_reference(text: str, compat: str = "cline", tools: Any = CLINE_TOOLS) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for b in parse(text, tools=tools, compat=compat):  # type: ignore[arg-type]
        if isinstance(b, TextBlock):
            out.append({"type": "text", "content": b.content, "partial": b.partial})
        else:
            out.append({"type": "tool_use", "name": b.name, "params": dict(b.params), "partial": b.partial})
    return out


def streamed(text: str, size: int, tools: Any = CLINE_TOOLS) -> list[TextBlock | ToolUse]:
    sp = StreamParser(tools, compat="cline")
    for i in range(0, len(text), size):
        sp.feed(text[i : i + size])
        # mid-stream, the blocks are those of the text so far, as Cline re-parses it
        assert sp.blocks() == parse(text[: i + size], tools=tools, compat="cline", final=False)
    sp.close()
    return sp.blocks()


NOTES = "<write_to_file>\n<path> notes.md </path>\n<content>\n\n# Notes\n\n</content>\n</write_to_file>"

CASES: dict[str, tuple[str, list[tuple[object, ...]]]] = {
    "every value is trimmed, content too": (
        NOTES,
        [("tool", "write_to_file", {"path": "notes.md", "content": "# Notes"}, False)],
    ),
    "trimmed as JavaScript trims: no-break and byte-order spaces go, NEL and zero-width space stay": (
        "<browser_action><action>\u00a0type\ufeff</action><text>\u2028\u0085hi\u200b\u3000</text></browser_action>",
        [("tool", "browser_action", {"action": "type", "text": "\u0085hi\u200b"}, False)],
    ),
    "write_to_file's content runs from its first <content> to its last </content>": (
        "<write_to_file><path>a.xml</path><content>\n<a><content>x</content></a>\n</content></write_to_file>",
        [("tool", "write_to_file", {"path": "a.xml", "content": "<a><content>x</content></a>"}, False)],
    ),
    "only write_to_file: another tool's value ends at its first closing tag": (
        "<new_rule><path>r.md</path><content>a</content>b</content></new_rule>",
        [("tool", "new_rule", {"path": "r.md", "content": "a"}, False)],
    ),
    "a call cut short is partial, and keeps the fragment of a closing tag": (
        "Clicking it.\n<browser_action>\n<action>click</action>\n<coordinate>450,300</coord",
        [
            ("text", "Clicking it.", False),
            ("tool", "browser_action", {"action": "click", "coordinate": "450,300</coord"}, True),
        ],
    ),
    "a call cut between its values is partial with the values it has": (
        "<browser_action>\n<action>close</action>\n",
        [("tool", "browser_action", {"action": "close"}, True)],
    ),
    "the text after the last call is partial, the text before it is not": (
        "First.\n<browser_action><action>close</action></browser_action>\n  Done.  ",
        [
            ("text", "First.", False),
            ("tool", "browser_action", {"action": "close"}, False),
            ("text", "Done.", True),
        ],
    ),
    "a tool named in prose opens a call that swallows the rest": (
        "I will use the <read_file> tool next.\n<path>a.txt</path> and more",
        [("text", "I will use the", False), ("tool", "read_file", {"path": "a.txt"}, True)],
    ),
    "backticks and code fences quote nothing": (
        "Like `<list_files>`:\n```xml\n<list_files><path>.</path></list_files>\n```",
        # the quoted tag opens the call; the fenced one is a tag inside it, dropped
        [("text", "Like `", False), ("tool", "list_files", {"path": "."}, False), ("text", "```", True)],
    ),
    "other tags inside a call are dropped, with their text": (
        "<browser_action><thinking>the button</thinking><action>click</action><div>x</div>"
        "<coordinate> 268, 225 </coordinate></browser_action>",
        [("tool", "browser_action", {"action": "click", "coordinate": "268, 225"}, False)],
    ),
    "any tool's parameter opens a value in any call": (
        "<read_file><path>a.txt</path><command>ls</command></read_file>",
        [("tool", "read_file", {"path": "a.txt", "command": "ls"}, False)],
    ),
    "a repeated parameter keeps its last value": (
        "<browser_action><action>launch</action><action>close</action></browser_action>",
        [("tool", "browser_action", {"action": "close"}, False)],
    ),
    "a value runs to its own closing tag: other tags and entities in it are text": (
        "<browser_action><action>type</action><text>a </browser_action> <b>&amp; c</text></browser_action>",
        [("tool", "browser_action", {"action": "type", "text": "a </browser_action> <b>&amp; c"}, False)],
    ),
    "task_progress is a value of every call": (
        "<execute_command>\n<command>npm test</command>\n<requires_approval>false</requires_approval>\n"
        "<task_progress>\n- [x] Write the test\n- [ ] Make it pass\n</task_progress>\n</execute_command>",
        [
            (
                "tool",
                "execute_command",
                {
                    "command": "npm test",
                    "requires_approval": "false",
                    "task_progress": "- [x] Write the test\n- [ ] Make it pass",
                },
                False,
            )
        ],
    ),
    "every call of a message is a block; empty text between them is dropped": (
        "<browser_action><action>close</action></browser_action>\n\n<attempt_completion><result>Done"
        "</result></attempt_completion>",
        [
            ("tool", "browser_action", {"action": "close"}, False),
            ("tool", "attempt_completion", {"result": "Done"}, False),
        ],
    ),
    "an opening tag with attributes opens nothing": (
        '<browser_action id="1"><action>close</action></browser_action>',
        [("text", '<browser_action id="1"><action>close</action></browser_action>', True)],
    ),
    "a message of whitespace has no blocks": (" \n\t\u00a0", []),
}


@pytest.mark.parametrize("case", list(CASES))
def test_cline_mode_case(case: str) -> None:
    msg, want = CASES[case]
    assert blocks(msg) == want
    assert as_reference(msg) == cline_reference(msg, TOOL_PARAMS)
    whole = parse(msg, tools=CLINE_TOOLS, compat="cline")
    for size in (1, 2, 5, 16):
        assert streamed(msg, size) == whole
    for b in whole:
        assert b.diagnostics == ()  # the anchors report nothing


def test_the_only_difference_from_roo_is_content_trimming() -> None:
    assert blocks(NOTES, "roo") == [
        ("tool", "write_to_file", {"path": "notes.md", "content": "\n# Notes\n"}, False)
    ]
    assert as_reference(NOTES, "roo") == roo_reference(NOTES, TOOL_PARAMS)
    for msg, _ in CASES.values():
        cline, roo = blocks(msg), blocks(msg, "roo")
        if "<content>" not in msg:
            assert cline == roo, msg


def test_a_parameter_named_as_its_tool_closes_the_call_with_the_same_tag() -> None:
    tools = [ToolSyntax("search", ("search", "path"))]
    msg = "<search><path>src</path><search>needle</search> and after"
    want = [("tool", "search", {"path": "src", "search": "needle"}, False), ("text", "and after", True)]
    for compat in ("cline", "roo"):
        assert blocks(msg, compat, tools) == want
    assert as_reference(msg, tools=tools) == cline_reference(msg, {"search": ("search", "path")})
    assert streamed(msg, 3, tools) == parse(msg, tools=tools, compat="cline")


def test_cline_tools_are_cline_s_vocabulary_of_its_xml_era() -> None:
    assert len(CLINE_TOOLS) == 21
    assert all(t.params[-1] == "task_progress" for t in CLINE_TOOLS)
    assert len({p for t in CLINE_TOOLS for p in t.params}) == 29
    assert dict((t.name, t.params) for t in CLINE_TOOLS)["browser_action"] == (
        "action",
        "url",
        "coordinate",
        "text",
        "task_progress",
    )


def test_the_default_dialect_reads_the_same_message_its_own_way() -> None:
    # our dialect: a tag in prose stays text, an unknown tag is reported, a cut call does not run
    msg = "Use <read_file> to read.\n<browser_action><action>click</action><coordinate>450,300</coord"
    [text, call] = parse(msg, tools=CLINE_TOOLS)
    assert isinstance(text, TextBlock) and "<read_file>" in text.content
    assert isinstance(call, ToolUse) and call.params["coordinate"] == "450,300" and not call.complete
