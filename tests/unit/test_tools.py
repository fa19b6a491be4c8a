"""Typed actions, parameter formats, and the tool registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, Field
from support.helpers import ba_inline as ba

from xmltools import ConfigError, parse
from xmltools.base.results import Point, Viewport
from xmltools.parser import ToolUse
from xmltools.tools import (
    ActionContext,
    CallError,
    Click,
    Launch,
    Press,
    Resize,
    Tool,
    ToolRegistry,
    Type,
    ValidCall,
    normalize_keys,
    parse_coordinate,
    parse_size,
)

VP = Viewport(width=900, height=600)


def call(
    text: str, registry: ToolRegistry | None = None, ctx: ActionContext | None = None
) -> ValidCall | CallError:
    registry = registry or ToolRegistry()
    blocks = [b for b in parse(text, tools=registry) if isinstance(b, ToolUse)]
    assert blocks, text
    return registry.validate(blocks[0], ctx)


# -- formats -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("450,300", (450, 300)),
        (" 450 , 300 ", (450, 300)),
        ("0,0", (0, 0)),
        ("899,599", (899, 599)),
        ("12.4,12.6", (12, 13)),
        ("640,400@1280x800", (450, 300)),  # measured on a 1280x800 screenshot
        ("1279,799@1280x800", (899, 599)),
        ("100,100@450x300", (200, 200)),
    ],
)
def test_coordinates(text: str, expected: tuple[int, int]) -> None:
    assert parse_coordinate(text, VP) == Point(x=expected[0], y=expected[1])


@pytest.mark.parametrize("text", ["900,10", "10,600", "-1,5", "1280,10@1280x800"])
def test_coordinates_outside_the_viewport(text: str) -> None:
    with pytest.raises(ValueError, match="outside the viewport, which is 900x600"):
        parse_coordinate(text, VP)


@pytest.mark.parametrize("text", ["450", "450;300", "x,y", "450,300@", "450,300@0x0", "(450, 300)"])
def test_malformed_coordinates(text: str) -> None:
    with pytest.raises(ValueError):
        parse_coordinate(text, VP)


@pytest.mark.parametrize("text", ["1280x800", "1280,800", " 1280 X 800 ", "1280×800"])
def test_sizes_in_both_forms(text: str) -> None:
    assert parse_size(text) == Viewport(width=1280, height=800)


@pytest.mark.parametrize("text", ["1280", "100x800", "1280x5000", "wide"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("Enter", "Enter"),
        ("enter", "Enter"),
        ("ctrl+a", "Control+a"),
        ("Control+A", "Control+A"),
        ("cmd+shift+p", "Shift+Meta+p"),
        ("option+Left", "Alt+ArrowLeft"),
        ("esc", "Escape"),
        ("space", "Space"),
        ("f5", "F5"),
        ("+", "+"),
        ("shift++", "Shift++"),
    ],
)
def test_key_aliases(keys: str, expected: str) -> None:
    assert normalize_keys(keys) == expected


@pytest.mark.parametrize("keys", ["", "a+b", "ctrl+ctrl+a", "Hyper+x", "F99"])
def test_bad_keys(keys: str) -> None:
    with pytest.raises(ValueError):
        normalize_keys(keys)


# -- validation of calls --------------------------------------------------------------


def test_each_action_becomes_a_typed_model() -> None:
    assert isinstance(c := call(ba(action="launch", url="http://127.0.0.1:8000/")), ValidCall)
    assert isinstance(c.args, Launch) and c.action == "launch"
    c = call(ba(action="click", coordinate="640,400@1280x800"))
    assert isinstance(c, ValidCall) and isinstance(c.args, Click) and c.args.coordinate == Point(x=450, y=300)
    c = call(ba(action="type", text="  two spaces  "))
    assert isinstance(c, ValidCall) and isinstance(c.args, Type) and c.args.text == "  two spaces  "
    c = call(ba(action="press", text="ctrl+a"))
    assert isinstance(c, ValidCall) and isinstance(c.args, Press) and c.args.text == "Control+a"
    c = call(ba(action="resize", size="1280x800"))
    assert (
        isinstance(c, ValidCall)
        and isinstance(c.args, Resize)
        and c.args.size == Viewport(width=1280, height=800)
    )
    for a in ("scroll_down", "scroll_up", "close"):
        c = call(ba(action=a))
        assert isinstance(c, ValidCall) and c.action == a


def test_coordinate_outside_is_a_model_error_with_the_viewport() -> None:
    err = call(ba(action="click", coordinate="950,20"))
    assert isinstance(err, CallError) and err.code == "invalid_param" and err.param == "coordinate"
    assert "900x600" in err.message
    assert "<coordinate>450,300</coordinate>" in err.example
    # the viewport comes from the session
    ok = call(
        ba(action="click", coordinate="950,20"), ctx=ActionContext(viewport=Viewport(width=1280, height=800))
    )
    assert isinstance(ok, ValidCall)


def test_bad_coordinate_format_is_named_as_such() -> None:
    err = call(ba(action="click", coordinate="left button"))
    assert isinstance(err, CallError) and err.code == "invalid_param"
    assert "is not a coordinate" in err.message  # not a generic "missing parameter"


@pytest.mark.parametrize(
    ("params", "code", "param"),
    [
        ({}, "missing_action", "action"),
        ({"action": "dance"}, "unknown_action", "action"),
        ({"action": "click"}, "missing_param", "coordinate"),
        ({"action": "launch"}, "missing_param", "url"),
        ({"action": "click", "coordinate": "1,1", "url": "http://a"}, "unexpected_param", "url"),
        ({"action": "close", "text": "bye"}, "unexpected_param", "text"),
        ({"action": "resize", "size": "1280"}, "invalid_param", "size"),
        ({"action": "type", "text": ""}, "invalid_param", "text"),
    ],
)
def test_invalid_calls_say_what_is_wrong(params: dict[str, str], code: str, param: str) -> None:
    err = call(ba(**params))
    assert isinstance(err, CallError)
    assert (err.code, err.param) == (code, param)
    assert err.example.startswith("<browser_action>") and err.example.endswith("</browser_action>")


def test_text_length_limit() -> None:
    err = call(ba(action="type", text="x" * 11), ctx=ActionContext(max_text_chars=10))
    assert isinstance(err, CallError) and "at most 10" in err.message


def test_truncated_and_malformed_calls_become_errors() -> None:
    err = call("<browser_action><action>click</action><coordinate>1,2</coord")
    assert isinstance(err, CallError) and err.code == "truncated_call" and "</coordinate>" in err.message
    err = call(ba(action="click", coordinate="1,2").replace("</action>", "</action><x>1</x>"))
    assert isinstance(err, CallError) and err.code == "malformed_call" and "<x>" in err.message


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://localhost:3000", True),
        ("https://example.test/path?q=1", True),
        ("localhost:3000", False),
        ("javascript:alert(1)", False),
        ("data:text/html,hi", False),
        ("ftp://host/file", False),
        ("http://", False),
        ("chrome://crash", False),
    ],
)
def test_url_schemes(url: str, ok: bool) -> None:
    assert isinstance(call(ba(action="launch", url=url)), ValidCall) is ok


def test_file_urls_only_under_allowed_roots(tmp_path: Path) -> None:
    inside = tmp_path / "site" / "index.html"
    outside = tmp_path / "secret.txt"
    ctx = ActionContext(allowed_file_roots=(tmp_path / "site",))
    assert isinstance(call(ba(action="launch", url=inside.as_uri()), ctx=ctx), ValidCall)
    err = call(ba(action="launch", url=outside.as_uri()), ctx=ctx)
    assert isinstance(err, CallError) and "outside the folders" in err.message
    sneaky = (tmp_path / "site" / ".." / "secret.txt").as_posix()
    assert isinstance(call(ba(action="launch", url="file://" + sneaky), ctx=ctx), CallError)
    assert isinstance(call(ba(action="launch", url=inside.as_uri())), CallError)  # no roots: no files


def test_other_schemes_when_the_host_allows() -> None:
    ctx = ActionContext(allowed_schemes=frozenset({"data"}))
    assert isinstance(call(ba(action="launch", url="data:text/html,hi"), ctx=ctx), ValidCall)


def test_disabled_actions() -> None:
    reg = ToolRegistry(actions=["launch", "click", "close"])
    err = call(ba(action="type", text="x"), reg)
    assert isinstance(err, CallError) and err.code == "disabled_action"
    with pytest.raises(ConfigError):
        ToolRegistry(actions=["click"])
    with pytest.raises(ConfigError):
        ToolRegistry(actions=["launch", "close", "teleport"])


# -- host tools ---------------------------------------------------------------------


class NoteParams(BaseModel):
    title: str = Field(description="a short title")
    body: str = Field(description="the note itself")
    pinned: bool = False


def test_host_tools_register_and_join_the_vocabulary() -> None:
    reg = ToolRegistry()

    @reg.tool(NoteParams, raw=["body"])
    def write_note(p: NoteParams) -> str:
        """Save a note for later."""
        return f"saved {p.title}"

    assert "write_note" in reg.vocabulary and "browser_action" in reg.vocabulary
    c = call("<write_note><title> T </title><body>  keep  </body><pinned>true</pinned></write_note>", reg)
    assert isinstance(c, ValidCall) and isinstance(c.args, NoteParams)
    assert c.args == NoteParams(title="T", body="  keep  ", pinned=True)
    tool = reg.get("write_note")
    assert tool is not None and tool.description == "Save a note for later."
    err = call("<write_note><title>T</title></write_note>", reg)
    assert isinstance(err, CallError) and err.code == "missing_param" and err.param == "body"
    err = call("<write_note><title>T</title><body>b</body><pinned>maybe</pinned></write_note>", reg)
    assert isinstance(err, CallError) and err.code == "invalid_param" and err.param == "pinned"


def test_host_tool_mistakes_are_configuration_errors() -> None:
    with pytest.raises(ConfigError):
        Tool("browser_action", NoteParams, print)
    with pytest.raises(ConfigError):
        Tool("bad name", NoteParams, print)
    with pytest.raises(ConfigError):
        Tool("t", dict, print)  # type: ignore[arg-type]
    reg = ToolRegistry([Tool("t", NoteParams, print)])
    with pytest.raises(ConfigError):
        reg.register(Tool("t", NoteParams, print))


def test_a_registry_without_the_browser() -> None:
    reg = ToolRegistry([Tool("t", NoteParams, print)], browser=False)
    assert "browser_action" not in reg.vocabulary
    blocks = parse(
        "<browser_action><action>close</action></browser_action><t><title>a</title><body>b</body></t>",
        tools=reg,
    )
    assert [b.type for b in blocks] == ["text", "tool_use"]
