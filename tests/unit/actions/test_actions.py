"""The full profile's typed actions, their targets and value formats, and the roo profile left as it was.

No browser here: the controller's side of targets is tested in test_targets.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from support.fakes import FakeBrowser
from support.helpers import ba_inline as ba
from support.helpers import text_of

from xmltools import ConfigError, parse
from xmltools.base.results import Failure, Observation, Point, Viewport
from xmltools.cli import main
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.parser import ToolUse
from xmltools.profiles import FULL, ROO, get_profile
from xmltools.record.transcript import Header, TranscriptWriter, load_transcript
from xmltools.render.prompts import Renderer
from xmltools.replaying.run import replay
from xmltools.tools import (
    ActionContext,
    CallError,
    Click,
    Drag,
    Fill,
    Hover,
    Press,
    Scroll,
    Select,
    Snapshot,
    Target,
    ToolRegistry,
    Type,
    Upload,
    ValidCall,
    selector_kind,
)

FULL_REG = ToolRegistry(profile="full")
ROO_REG = ToolRegistry()


def call(
    text: str, registry: ToolRegistry = FULL_REG, ctx: ActionContext | None = None
) -> ValidCall | CallError:
    blocks = [b for b in parse(text, tools=registry) if isinstance(b, ToolUse)]
    assert blocks, text
    return registry.validate(blocks[0], ctx)


def ok(text: str, registry: ToolRegistry = FULL_REG, ctx: ActionContext | None = None) -> object:
    c = call(text, registry, ctx)
    assert isinstance(c, ValidCall), c
    return c.args


def err(text: str, registry: ToolRegistry = FULL_REG, ctx: ActionContext | None = None) -> CallError:
    c = call(text, registry, ctx)
    assert isinstance(c, CallError), c
    assert c.example.startswith("<browser_action>\n<action>") and c.example.endswith("</browser_action>")
    return c


# -- targets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "kind"),
    [
        ({"coordinate": "450,300"}, "coordinate"),
        ({"ref": "e12"}, "ref"),
        ({"ref": "f1e3"}, "ref"),
        ({"selector": "#email"}, "selector"),
        ({"selector": "#email", "frame": "iframe#pay"}, "selector"),
    ],
)
def test_a_target_is_exactly_one_of_three(params: dict[str, str], kind: str) -> None:
    t = Target.model_validate(params)
    assert t.kind == kind
    assert t.frame == params.get("frame")


def test_a_coordinate_target_uses_the_session_viewport() -> None:
    ctx = ActionContext(viewport=Viewport(width=1280, height=800))
    t = Target.model_validate({"coordinate": "640,400@1280x800"}, context={"ctx": ctx})
    assert t.coordinate == Point(x=640, y=400) and str(t) == "coordinate 640,400"


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({}, "a target is one of"),
        ({"ref": "e1", "selector": "#a"}, "one target only"),
        ({"coordinate": "1,1", "ref": "e1", "selector": "#a"}, "one target only"),
        ({"ref": "e1", "frame": "iframe"}, "a ref already knows its frame"),
        ({"coordinate": "1,1", "frame": "iframe"}, "a point of the whole viewport"),
        ({"frame": "iframe"}, "a target is one of"),
        ({"ref": "button"}, "is not a ref"),
        ({"ref": "E12"}, "is not a ref"),
        ({"ref": "e1 e2"}, "is not a ref"),
        ({"ref": "e" + "1" * 40}, "is not a ref"),
        ({"ref": "e١٢"}, "is not a ref"),  # digits of another script are not a ref's
        ({"selector": "   "}, "the selector is empty"),
        ({"selector": "x" * 3000}, "write a shorter one"),
        ({"selector": "label=  "}, "nothing after the ="),
        ({"selector": "#a", "frame": ""}, "the frame is empty"),
    ],
)
def test_every_target_mistake_is_a_value_error_in_words(params: dict[str, str], words: str) -> None:
    with pytest.raises(ValidationError) as e:
        Target.model_validate(params)
    assert words in str(e.value)


@pytest.mark.parametrize("written", ["e12", " e12 ", "[ref=e12]", "ref=e12", "[ref = e12]"])
def test_a_ref_copied_with_its_brackets_is_read(written: str) -> None:
    assert Target(ref=written).ref == "e12"


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("label=Email", ("label", "Email")),
        ("Label = Email address ", ("label", "Email address")),
        ("placeholder=Search", ("placeholder", "Search")),
        ("alt=Company logo", ("alt", "Company logo")),
        ("title=Close", ("title", "Close")),
        ("testid=submit", ("testid", "submit")),
        ('label="Email"', ("label", '"Email"')),  # quotes kept: the caller may read them as exact
        ("label=a=b", ("label", "a=b")),
        ("#email", ("playwright", "#email")),
        ("text=Sign in", ("playwright", "text=Sign in")),
        ('role=button[name="Send"]', ("playwright", 'role=button[name="Send"]')),
        ("xpath=//h1", ("playwright", "xpath=//h1")),
        ("[title=Close]", ("playwright", "[title=Close]")),
        ("input[placeholder=Search]", ("playwright", "input[placeholder=Search]")),
        ("label=", ("playwright", "label=")),
    ],
)
def test_selector_kind(selector: str, expected: tuple[str, str]) -> None:
    assert selector_kind(selector) == expected


# -- the full profile's actions ------------------------------------------------------------------


def test_click_and_hover_by_each_kind_of_target() -> None:
    c = ok(ba(action="click", ref="e12"))
    assert isinstance(c, Click) and c.target == Target(ref="e12") and c.coordinate is None
    c = ok(ba(action="click", coordinate="640,400@1280x800"))
    assert isinstance(c, Click) and c.target.kind == "coordinate" and c.coordinate == Point(x=450, y=300)
    h = ok(ba(action="hover", selector='role=link[name="Docs"]'))
    assert isinstance(h, Hover) and h.target.selector == 'role=link[name="Docs"]' and h.coordinate is None
    c = ok(ba(action="click", selector="button", frame="iframe#pay"))
    assert isinstance(c, Click) and (c.target.selector, c.target.frame) == ("button", "iframe#pay")


def test_type_and_press_take_an_optional_target() -> None:
    t = ok(ba(action="type", text="  two  spaces "))
    assert isinstance(t, Type) and t.text == "  two  spaces " and t.target is None
    t = ok(ba(action="type", text="ada", selector="label=Email"))
    assert isinstance(t, Type) and t.target == Target(selector="label=Email")
    p = ok(ba(action="press", text="ctrl+a", ref="e4"))
    assert isinstance(p, Press) and p.text == "Control+a" and p.target == Target(ref="e4")
    p = ok(ba(action="press", text="Enter"))
    assert isinstance(p, Press) and p.target is None


def test_fill_replaces_and_may_clear() -> None:
    f = ok(ba(action="fill", ref="e5", text=" Ada Lovelace "))
    assert isinstance(f, Fill) and f.text == " Ada Lovelace " and f.target.ref == "e5"
    f = ok(ba(action="fill", ref="e5", text=""))
    assert isinstance(f, Fill) and f.text == ""
    e = err(ba(action="fill", ref="e5", text="x" * 11), ctx=ActionContext(max_text_chars=10))
    assert e.param == "text" and "at most 10" in e.message


def test_select_takes_one_option_a_line() -> None:
    s = ok(ba(action="select", ref="e7", value="\n  Small \n\n Extra large\n"))
    assert isinstance(s, Select) and s.values == ("Small", "Extra large")
    e = err(ba(action="select", ref="e7", value=""))
    assert (e.code, e.param) == ("invalid_param", "value") and "no option" in e.message
    e = err(ba(action="select", ref="e7", value="\n".join(str(i) for i in range(101))))
    assert e.param == "value" and "at most 100" in e.message
    e = err(ba(action="select", ref="e7"))
    assert (e.code, e.param) == ("missing_param", "value")


def test_drag_has_one_source_and_one_place_to_drop() -> None:
    d = ok(ba(action="drag", ref="e3", to_ref="e9"))
    assert isinstance(d, Drag) and d.target == Target(ref="e3") and d.to == Target(ref="e9")
    d = ok(ba(action="drag", coordinate="10,10", to_coordinate="20,30"))
    assert isinstance(d, Drag) and d.to.coordinate == Point(x=20, y=30)
    d = ok(ba(action="drag", selector="li >> nth=0", to_selector="#done", frame="iframe#board"))
    assert isinstance(d, Drag) and d.target.frame == d.to.frame == "iframe#board"
    d = ok(ba(action="drag", ref="e3", to_selector="#done", frame="iframe#board"))
    assert isinstance(d, Drag) and d.target.frame is None and d.to.frame == "iframe#board"
    e = err(ba(action="drag", ref="e3"))
    assert (e.code, e.param) == ("missing_param", "to") and "place to drop" in e.message
    e = err(ba(action="drag", ref="e3", to_ref="e4", to_selector="#x"))
    assert (e.code, e.param) == ("invalid_param", "to") and "<to_ref> and <to_selector>" in e.message
    e = err(ba(action="drag", ref="e3", to_ref="nope"))
    assert e.param == "to_ref" and "is not a ref" in e.message
    e = err(ba(action="drag", ref="e3", to_coordinate="5000,1"))
    assert e.param == "to_coordinate" and "outside the viewport" in e.message
    e = err(ba(action="drag", to_ref="e4"))
    assert (e.code, e.param) == ("missing_param", "target")


def test_scroll_in_four_directions() -> None:
    for d in ("up", "down", "left", "right", " Down "):
        s = ok(ba(action="scroll", direction=d))
        assert isinstance(s, Scroll) and s.direction == d.strip().lower() and s.target is None
    s = ok(ba(action="scroll", direction="right", selector=".carousel"))
    assert isinstance(s, Scroll) and s.target == Target(selector=".carousel")
    e = err(ba(action="scroll", direction="sideways"))
    assert (e.code, e.param) == ("invalid_param", "direction") and "up, down, left or right" in e.message
    e = err(ba(action="scroll"))
    assert (e.code, e.param) == ("missing_param", "direction")


def test_snapshot_of_the_page_a_part_a_depth_or_a_text() -> None:
    s = ok(ba(action="snapshot"))
    assert isinstance(s, Snapshot) and (s.target, s.depth, s.find) == (None, None, None)
    s = ok(ba(action="snapshot", ref="e20", depth="3", find=" Sign in "))
    assert isinstance(s, Snapshot) and s.target == Target(ref="e20") and s.depth == 3 and s.find == "Sign in"
    s = ok(ba(action="snapshot", depth="9999"))
    assert isinstance(s, Snapshot) and s.depth == 50  # capped
    for bad, words in (
        ("0", "shows nothing"),
        ("-2", "shows nothing"),
        ("3.5", "not a depth"),
        ("x", "not a depth"),
    ):
        e = err(ba(action="snapshot", depth=bad))
        assert e.param == "depth" and words in e.message
    e = err(ba(action="snapshot", find="  "))
    assert e.param == "find" and "nothing to look for" in e.message
    e = err(ba(action="snapshot", find="x" * 201))
    assert e.param == "find"


@pytest.mark.parametrize(
    ("params", "code", "param", "words"),
    [
        ({"action": "click"}, "missing_param", "target", "needs a target"),
        ({"action": "hover"}, "missing_param", "target", "needs a target"),
        ({"action": "fill", "text": "x"}, "missing_param", "target", "needs a target"),
        ({"action": "upload", "path": "a"}, "missing_param", "target", "needs a target"),
        ({"action": "click", "ref": "e1", "coordinate": "1,1"}, "invalid_param", "target", "one target only"),
        ({"action": "fill", "ref": "e1", "selector": "#a", "text": "x"}, "invalid_param", "target", "only"),
        ({"action": "click", "ref": "e1", "frame": "iframe"}, "invalid_param", "frame", "knows its frame"),
        ({"action": "click", "coordinate": "1,1", "frame": "f"}, "invalid_param", "frame", "whole viewport"),
        ({"action": "type", "text": "x", "frame": "iframe"}, "invalid_param", "frame", "add the <selector>"),
        ({"action": "click", "ref": "button"}, "invalid_param", "ref", "latest snapshot"),
        ({"action": "click", "selector": ""}, "invalid_param", "selector", "the selector is empty"),
        ({"action": "click", "coordinate": "950,20"}, "invalid_param", "coordinate", "900x600"),
        ({"action": "click", "ref": "e1", "text": "x"}, "unexpected_param", "text", "does not belong"),
        ({"action": "snapshot", "text": "x"}, "unexpected_param", "text", "does not belong"),
        ({"action": "scroll_down", "ref": "e1"}, "unexpected_param", "ref", "takes no other parameters"),
        (
            {"action": "drag", "ref": "e1", "frame": "iframe", "to_ref": "e2"},
            "invalid_param",
            "frame",
            "frame",
        ),
    ],
)
def test_target_mistakes_in_calls(params: dict[str, str], code: str, param: str, words: str) -> None:
    e = err(ba(**params))
    assert (e.code, e.param) == (code, param), e
    assert words in e.message


def test_the_example_of_an_error_writes_the_target_the_model_used() -> None:
    assert "<selector>label=Email</selector>" in err(ba(action="fill", selector="label=", text="a")).example
    assert "<coordinate>450,300</coordinate>" in err(ba(action="fill", coordinate="9999,1", text="a")).example
    assert "<ref>e12</ref>" in err(ba(action="fill", ref="x1", text="a")).example
    assert "<ref>e12</ref>\n<text>" in err(ba(action="type", ref="x1", text="a")).example


def test_every_example_is_a_correct_call(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(b"%PDF")
    ctx = ActionContext(workspace=tmp_path)
    for action in FULL.names:
        for kind in (None, "coordinate", "ref", "selector"):
            got = call(FULL_REG.example(action, kind), ctx=ctx)
            assert isinstance(got, ValidCall), (action, kind, got)
    for action in ROO.names:
        assert isinstance(call(ROO_REG.example(action), ROO_REG), ValidCall)


# -- uploads -----------------------------------------------------------------------------------


@pytest.fixture
def disk(tmp_path: Path) -> dict[str, Path]:
    ws = tmp_path / "work"
    roots = tmp_path / "shared"
    outside = tmp_path / "secret"
    for d in (ws, ws / "sub", roots, outside):
        d.mkdir()
    (ws / "cv.pdf").write_bytes(b"%PDF")
    (ws / "sub" / "photo.png").write_bytes(b"\x89PNG")
    (roots / "notes.txt").write_text("shared")
    (outside / "key.txt").write_text("secret")
    (ws / "escape.txt").symlink_to(outside / "key.txt")  # inside, but leads outside
    (ws / "hole").symlink_to(outside, target_is_directory=True)
    (outside / "back.pdf").symlink_to(ws / "cv.pdf")  # outside, but leads inside
    (ws / "loop").symlink_to(ws / "loop")
    return {"ws": ws, "roots": roots, "outside": outside, "tmp": tmp_path}


def upload(path: str, ctx: ActionContext) -> Upload | CallError:
    c = call(ba(action="upload", selector="input[type=file]", path=path), ctx=ctx)
    return c.args if isinstance(c, ValidCall) else c  # type: ignore[return-value]


def test_upload_takes_resolved_files_inside_the_workspace_or_the_file_roots(disk: dict[str, Path]) -> None:
    ws, roots = disk["ws"], disk["roots"]
    ctx = ActionContext(workspace=ws, allowed_file_roots=(roots,))
    u = upload(f"cv.pdf\n\n  sub/photo.png  \n{roots}/notes.txt\n{ws}/sub/../cv.pdf", ctx)
    assert isinstance(u, Upload)
    assert u.paths == (
        (ws / "cv.pdf").resolve(),
        (ws / "sub" / "photo.png").resolve(),
        (roots / "notes.txt").resolve(),
        (ws / "cv.pdf").resolve(),
    )
    assert all(p.is_absolute() for p in u.paths)
    back = upload(str(disk["outside"] / "back.pdf"), ctx)  # what counts is where the link leads
    assert isinstance(back, Upload) and back.paths == ((ws / "cv.pdf").resolve(),)


@pytest.mark.parametrize(
    ("written", "words"),
    [
        ("../secret/key.txt", "is outside the folders"),
        ("sub/../../secret/key.txt", "is outside the folders"),
        ("escape.txt", "is outside the folders"),  # a symlink out of the workspace
        ("hole/key.txt", "is outside the folders"),  # a linked folder out of it
        ("/etc/passwd", "is outside the folders"),
        ("missing.pdf", "no file has that path"),
        ("sub", "a folder, not a file"),
        (".", "a folder, not a file"),
        ("loop", "cannot be read as a path"),
        ("a\x00b", "not a file path"),
        ("x" * 5000, "not a file path"),
    ],
)
def test_upload_refuses_everything_else(disk: dict[str, Path], written: str, words: str) -> None:
    e = upload(written, ActionContext(workspace=disk["ws"]))
    assert isinstance(e, CallError) and (e.code, e.param) == ("invalid_param", "path"), e
    assert words in e.message
    if "outside" in words:
        assert str(disk["ws"]) in e.message  # names the folders that are allowed


def test_upload_needs_a_folder_and_not_too_many_files(disk: dict[str, Path]) -> None:
    e = upload(str(disk["ws"] / "cv.pdf"), ActionContext())
    assert isinstance(e, CallError) and "no folder to take files from" in e.message
    only_roots = ActionContext(allowed_file_roots=(disk["roots"],))
    assert isinstance(upload("notes.txt", only_roots), Upload)  # relative: from the first folder
    e = upload("\n".join(["cv.pdf"] * 51), ActionContext(workspace=disk["ws"]))
    assert isinstance(e, CallError) and "at most 50" in e.message
    e = upload(" \n ", ActionContext(workspace=disk["ws"]))
    assert isinstance(e, CallError) and e.code == "invalid_param" and "no file given" in e.message


def test_the_config_gives_validation_its_workspace_and_profile(disk: dict[str, Path]) -> None:
    cfg = Config(profile="full", workspace=disk["ws"], allowed_file_roots=(disk["roots"],))
    ctx = cfg.action_context()
    assert (ctx.profile, ctx.workspace) == ("full", disk["ws"])
    assert ctx.upload_roots == (disk["ws"], disk["roots"])
    assert isinstance(upload("cv.pdf", ctx), Upload)
    with pytest.raises(ConfigError):
        Config.build(profile="cursor")
    with pytest.raises(ConfigError):
        Config.build(observe="video")
    with pytest.raises(ConfigError):
        Config.build(max_snapshot_chars=10)


# -- profiles and vocabulary ----------------------------------------------------------------


def test_roo_is_unchanged_a_ref_is_still_an_unknown_tag() -> None:
    e = err(ba(action="click", ref="e12"), ROO_REG)
    assert e.code == "malformed_call"
    assert e.message == (
        "<ref> is not a parameter of <browser_action> (its parameters: action, url, coordinate, text, size)"
    )
    assert (
        e.example
        == "<browser_action>\n<action>click</action>\n<coordinate>450,300</coordinate>\n</browser_action>"
    )
    e = err(ba(action="fill", text="x"), ROO_REG)
    assert e.code == "unknown_action" and e.message == (
        "'fill' is not an action; the actions are:"
        " launch, click, hover, type, press, scroll_down, scroll_up, resize, close"
    )
    e = err(ba(action="click"), ROO_REG)
    assert (e.code, e.param, e.message) == (
        "missing_param",
        "coordinate",
        "the click action needs <coordinate>",
    )
    e = err(ba(action="click", coordinate="1,1", text="x"), ROO_REG)
    assert e.message == "<text> does not belong to the click action, which takes only <coordinate>"
    # a call built by hand with a full-profile parameter is still refused in roo
    block = ToolUse("browser_action", {"action": "click", "ref": "e1"})
    e2 = ROO_REG.validate(block)
    assert isinstance(e2, CallError) and (e2.code, e2.param) == ("unexpected_param", "ref")
    c = ok(ba(action="click", coordinate="450,300"), ROO_REG)
    assert isinstance(c, Click) and c.coordinate == Point(x=450, y=300) and c.target.kind == "coordinate"
    t = ok(ba(action="type", text="hi"), ROO_REG)
    assert isinstance(t, Type) and t.target is None


def test_the_vocabulary_follows_the_profile() -> None:
    new = {"ref", "selector", "frame", "value", "path", "direction", "depth", "find"}
    new |= {"to_coordinate", "to_ref", "to_selector"}
    new |= {"wait_until", "tab", "all", "attribute", "state", "seconds", "full_page", "format", "script"}
    new |= {"session"}
    roo = set(ROO_REG.vocabulary.all_params)
    full = set(FULL_REG.vocabulary.all_params)
    assert roo == {"action", "url", "coordinate", "text", "size"} and not roo & new
    assert full == roo | new
    assert FULL.syntax.raw == frozenset({"text"})  # value and path are trimmed, one item a line
    (b,) = [
        x
        for x in parse(ba(action="fill", ref=" e5 ", text="  keep  "), tools=FULL_REG)
        if isinstance(x, ToolUse)
    ]
    assert dict(b.params) == {"action": "fill", "ref": "e5", "text": "  keep  "}


def test_registry_profiles_and_action_sets() -> None:
    assert FULL_REG.actions == FULL.names and ROO_REG.actions == ROO.names
    assert ToolRegistry(profile=FULL).profile is FULL and get_profile("roo") is ROO
    assert set(FULL.names) >= set(ROO.names) | {"fill", "select", "drag", "upload", "scroll", "snapshot"}
    small = ToolRegistry(profile="full", actions=["launch", "snapshot", "click", "close"])
    e = err(ba(action="fill", ref="e1", text="x"), small)
    assert e.code == "disabled_action" and "launch, snapshot, click, close" in e.message
    with pytest.raises(ConfigError, match="unknown profile"):
        ToolRegistry(profile="cursor")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown browser actions"):
        ToolRegistry(actions=["launch", "fill", "close"])  # fill is not a roo action
    with pytest.raises(ConfigError):
        ToolRegistry(profile="full", actions=["snapshot"])


def test_the_system_prompt_follows_the_profile_and_the_observe_mode() -> None:
    r = Renderer()
    roo = r.system_prompt(ROO_REG)
    full = r.system_prompt(FULL_REG)
    assert "<ref>" not in roo and "`fill`" not in roo
    for action in FULL.names:
        assert f"- `{action}`" in full
    for shortcut in ("label=", "placeholder=", "alt=", "title=", "testid=", "<frame>", "xpath="):
        assert shortcut in full
    assert "screenshot of the viewport" in full
    text_only = r.system_prompt(FULL_REG, observe="snapshot")
    assert "no screenshot" in text_only
    assert "screenshot" not in r.system_prompt(FULL_REG, observe="snapshot").split("Rules:")[0].replace(
        "no screenshot", ""
    )
    assert "uploads will be refused" in full
    assert "inside /w or /r" in r.system_prompt(FULL_REG, upload_folders=["/w", "/r"])


def test_the_interpreter_builds_its_registry_from_the_config() -> None:
    it = AsyncInterpreter(Config(profile="full", observe="snapshot"), browser=FakeBrowser())
    assert it.registry.profile is FULL
    assert "no screenshot" in it.system_prompt() and "<ref>" in it.system_prompt()
    assert AsyncInterpreter(Config(), browser=FakeBrowser()).registry.profile is ROO


def test_cli_prompt_and_parse_know_the_profile(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["prompt", "--profile", "full"]) == 0
    assert capsys.readouterr().out == Renderer().system_prompt(FULL_REG) + "\n"
    assert main(["prompt", "--profile", "full", "--observe", "snapshot"]) == 0
    assert "no screenshot" in capsys.readouterr().out
    assert main(["prompt"]) == 0
    assert capsys.readouterr().out == Renderer().system_prompt(ROO_REG) + "\n"
    msg = ba(action="click", ref="e3")
    for profile, expected in (("full", {"action": "click", "ref": "e3"}), ("roo", {"action": "click"})):
        monkeypatch.setattr(sys, "stdin", io.StringIO(msg))
        assert main(["parse", "--profile", profile]) == 0
        (block,) = json.loads(capsys.readouterr().out)
        assert block["params"] == expected


# -- the interpreter: a wrong target is the model's mistake --------------------------------------


async def test_a_target_failure_counts_as_a_mistake_other_failures_do_not() -> None:
    stale = Failure(kind="target", message="e40 is not in the latest snapshot. Take a new snapshot.")
    slow = Failure(kind="timeout", message="the page did not settle within 3 s.")
    browser = FakeBrowser(fail={"click": stale, "hover": slow})
    it = AsyncInterpreter(Config(profile="full", mistake_limit=2), browser=browser)
    t = await it.handle(ba(action="launch", url="http://127.0.0.1:9/"))
    assert t.mistakes == 0
    t = await it.handle(ba(action="click", ref="e40"))
    assert t.ran is not None and t.ran.status == "failed" and t.ran.failure == stale
    assert t.mistakes == 1 and not t.mistake_limit_reached and t.state.name == "ACTIVE"
    assert "did not run: its target could not be used. e40 is not in the latest snapshot" in text_of(t)
    t = await it.handle(ba(action="hover", ref="e2"))  # the browser's trouble neither counts nor resets
    assert t.ran is not None and t.ran.status == "failed" and t.mistakes == 1
    t = await it.handle(ba(action="click", selector="text=Send"))
    assert t.mistakes == 2 and t.mistake_limit_reached
    t = await it.handle(ba(action="fill", ref="e5", text="ada"))  # a success resets the count
    assert t.ran is not None and t.ran.status == "ok" and t.mistakes == 0
    filled = browser.actions[-1]
    assert isinstance(filled, Fill) and filled.target == Target(ref="e5")


async def test_a_snapshot_observation_reaches_the_model_as_text() -> None:
    class TextBrowser(FakeBrowser):
        def observation(self, action: object, mouse: Point | None) -> Observation:
            seen = super().observation(action, mouse)
            return seen.model_copy(
                update={
                    "screenshot": None,
                    "snapshot": '- button "Send <now> & a > b" [ref=e9]\n- text: </browser_action>',
                }
            )

    it = AsyncInterpreter(Config(profile="full", observe="snapshot"), browser=TextBrowser())
    await it.handle(ba(action="launch", url="http://127.0.0.1:9/"))
    t = await it.handle(ba(action="snapshot"))
    text = text_of(t)
    # shown as the page has it; only what could close or open a tool call is escaped
    assert '- button "Send <now> & a > b" [ref=e9]' in text and "screenshot:" not in text
    assert "- text: &lt;/browser_action>" in text
    assert t.result is not None and [p["type"] for p in t.result["content"]] == ["text"]


async def test_a_full_profile_run_records_and_replays_offline(tmp_path: Path) -> None:
    class TextBrowser(FakeBrowser):
        def observation(self, action: object, mouse: Point | None) -> Observation:
            seen = super().observation(action, mouse)
            return seen.model_copy(
                update={"snapshot": '- textbox "Email" [ref=e5]', "target": 'textbox "Email"'}
            )

    cfg = Config(profile="full", observe="both")
    it = AsyncInterpreter(cfg, browser=TextBrowser())
    out = tmp_path / "run.jsonl"
    with TranscriptWriter(out, Header(config=cfg.model_dump(mode="json"))) as w:
        for msg in (
            ba(action="launch", url="http://127.0.0.1:9/"),
            ba(action="fill", ref="e5", text="ada"),
            ba(action="close"),
        ):
            w.turn(await it.handle(msg))
    t = load_transcript(out)
    _, results = list(t.steps())[1]
    rec = results[0].observation
    assert (
        rec is not None and rec.snapshot == '- textbox "Email" [ref=e5]' and rec.target == 'textbox "Email"'
    )
    again = await replay(out, offline=True)
    assert again.ok, again.summary()
    assert "[ref=e5]" in again.steps[1].turn.parts[0].text


# -- hostile input ----------------------------------------------------------------------------

_WORKSPACE = Path(tempfile.mkdtemp(prefix="xmltools-actions-"))
(_WORKSPACE / "a.txt").write_text("a")
_CTX = ActionContext(workspace=_WORKSPACE)
_NAMES = [p for p in FULL.syntax.params if p != "action"] + ["target", "to", "values", "paths", "bogus"]
_VALUES = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "e1",
            "f1e2",
            "[ref=e3]",
            "450,300",
            "1,1@2x2",
            "label=Email",
            "label=",
            "#a",
            "up",
            "3",
            "0",
            "a.txt",
            "../a.txt",
            str(_WORKSPACE / "a.txt"),
            "/etc/passwd",
            "\x00",
            "ctrl+a",
            "1280x800",
            "http://localhost/",
            "a\nb\n\n",
            " ",
            "-1",
            "9" * 500,
        ]
    ),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    action=st.one_of(st.sampled_from(FULL.names), st.text(max_size=12)),
    params=st.dictionaries(st.sampled_from(_NAMES), _VALUES, max_size=6),
)
def test_any_params_in_the_full_profile_give_a_call_or_a_call_error(
    action: str, params: dict[str, str]
) -> None:
    block = ToolUse("browser_action", {"action": action, **params})
    got = FULL_REG.validate(block, _CTX)
    assert isinstance(got, (ValidCall, CallError))
    if isinstance(got, CallError):
        assert got.message and len(got.message) <= 1_100 and got.example.startswith("<browser_action>")
    else:
        assert got.action == action


def test_long_hostile_values_get_short_errors() -> None:
    for text in (
        ba(action="upload", ref="e1", path="a.txt\n" * 10_000),
        ba(action="click", ref="e" + "9" * 9000),
        ba(action="select", ref="e1", value="x" * 100_000),
        ba(action="click", selector="y" * 100_000),
    ):
        got = call(text, ctx=_CTX)
        assert isinstance(got, CallError) and len(got.message) < 1_100
