"""The seeds' dialects (aleph, fractal, forge) as profiles: their calls, their protocol words, their transcripts.

The transcripts in fixtures/transcripts are written the way a model prompted
with each tool writes; they replay in a real Chromium against fixtures/site.
"""

from __future__ import annotations

from pathlib import Path

from support.fakes import FakeBrowser
from support.helpers import said

from xmltools import Config, Interpreter, parse
from xmltools.actions import InTab
from xmltools.parser import ToolUse
from xmltools.profiles import PROFILES
from xmltools.tools import CallError, ToolRegistry, ValidCall


def call(text: str, reg: ToolRegistry) -> ToolUse:
    blocks = [b for b in parse(text, tools=reg) if isinstance(b, ToolUse)]
    assert blocks, text
    return blocks[0]


def test_aleph_names_parameters_its_own_way() -> None:
    reg = ToolRegistry(profile="aleph")
    got = reg.validate(
        call("<browser><action>click</action><tab_id>T2</tab_id><ref_id>e7</ref_id></browser>", reg)
    )
    assert isinstance(got, ValidCall) and got.tab == "t2" and got.args.target.ref == "e7"  # type: ignore[attr-defined]
    assert got.written == "click" and got.action == "click"
    err = reg.validate(call("<browser><action>click</action><tab_id>t1</tab_id></browser>", reg))
    assert isinstance(err, CallError) and "<ref_id>" in err.message and "<ref>" not in err.message
    err = reg.validate(
        call("<browser><action>click</action><tab_id>first</tab_id><selector>a</selector></browser>", reg)
    )
    assert isinstance(err, CallError) and err.param == "tab_id" and "is not a tab" in err.message
    got = reg.validate(call("<browser><action>evaluate</action><js>1 + 1</js></browser>", reg))
    assert isinstance(got, ValidCall) and got.args.script == "1 + 1"  # type: ignore[attr-defined]
    closing = reg.validate(call("<browser><action>close_tab</action><tab_id>t3</tab_id></browser>", reg))
    assert isinstance(closing, ValidCall) and closing.tab is None and closing.args.tab == "t3"  # type: ignore[attr-defined]


def test_aleph_runs_each_action_in_the_tab_it_names() -> None:
    fake = FakeBrowser()
    with Interpreter(Config(profile="aleph"), browser=fake) as it:
        it.handle("<browser><action>start</action></browser>")
        it.handle("<browser><action>hover</action><tab_id>t2</tab_id><selector>#a</selector></browser>")
    hovered = fake.actions[-1]
    assert isinstance(hovered, InTab) and hovered.tab == "t2" and hovered.inner.action == "hover"


def test_fractal_navigate_opens_the_session_then_navigates() -> None:
    fake = FakeBrowser()
    with Interpreter(Config(profile="fractal"), browser=fake) as it:
        turn = it.handle("<webBrowser><action>get_visible_text</action></webBrowser>")
        assert turn.outcomes[0].violation == "launch_first" and "<action>navigate</action>" in said(turn)
        it.handle("<webBrowser><action>navigate</action><url>http://127.0.0.1:1/a</url></webBrowser>")
        it.handle("<webBrowser><action>navigate</action><url>http://127.0.0.1:1/b</url></webBrowser>")
        turn = it.handle("<webBrowser><action>delete</action><selector>#x</selector></webBrowser>")
        assert "The delete action ran" in said(turn)
    kinds = [a.action for a in fake.actions if not isinstance(a, str)]
    assert kinds == ["launch", "navigate", "press"]
    assert fake.actions[1].wait_until == "load" and fake.actions[2].text == "Delete"


def test_forge_offers_its_session_tools_only_while_a_session_is_open() -> None:
    with Interpreter(Config(profile="forge"), browser_factory=lambda name: FakeBrowser()) as it:
        assert "browser_click" not in it.system_prompt()
        asked = it.handle("<start_browser_session><name>shop</name></start_browser_session>")
        assert asked.approval_required is not None  # starting a session asks, as the ADR has it
        started = it.approve(asked.approval_required)
        assert "These tools work now" in said(started) and "browser_click" in it.system_prompt()
        turn = it.handle("<browser_click><selector>#send</selector></browser_click>")
        assert turn.outcomes[0].error is not None and "needs <session>" in said(turn)
        turn = it.handle("<close_browser_session><name>shop</name></close_browser_session>")
        assert "gone until you start one" in said(turn) and "browser_click" not in it.system_prompt()
    fixed = Interpreter(Config(profile="forge", dynamic_tools=False), browser=FakeBrowser())
    assert (
        "browser_click" in fixed.system_prompt()
        and "only while their session is open" in fixed.system_prompt()
    )
    allowed = Interpreter(
        Config(profile="forge", approval={"navigate": "allow"}), browser_factory=lambda n: FakeBrowser()
    )
    assert (
        allowed.handle("<start_browser_session><name>a</name></start_browser_session>").approval_required
        is None
    )


def test_forge_extracts_by_mode_and_fills_from_json() -> None:
    reg = ToolRegistry(profile="forge")
    got = reg.validate(
        call(
            "<browser_extract_content><session>s</session><selector>a</selector><mode>attribute</mode>"
            "<attribute>href</attribute><multiple>true</multiple></browser_extract_content>",
            reg,
        )
    )
    assert isinstance(got, ValidCall) and got.action == "get_attribute" and got.args.all  # type: ignore[attr-defined]
    err = reg.validate(
        call(
            "<browser_extract_content><session>s</session><selector>a</selector><mode>attribute</mode></browser_extract_content>",
            reg,
        )
    )
    assert isinstance(err, CallError) and "needs <attribute>" in err.message
    err = reg.validate(
        call("<browser_fill_form><session>s</session><fields>{oops</fields></browser_fill_form>", reg)
    )
    assert isinstance(err, CallError) and "not JSON" in err.message and err.param == "fields"
    got = reg.validate(
        call(
            '<browser_fill_form><session>s</session><fields>{"#a": "x", "#b": 3}</fields></browser_fill_form>',
            reg,
        )
    )
    assert isinstance(got, ValidCall) and got.args.fields == (("#a", "x"), ("#b", "3"))  # type: ignore[attr-defined]
    got = reg.validate(call("<browser_wait><session>s</session><timeout>2</timeout></browser_wait>", reg))
    assert isinstance(got, ValidCall) and got.args.seconds == 2  # type: ignore[attr-defined]


def test_every_profile_has_a_prompt_and_a_correct_example_for_every_action(tmp_path: Path) -> None:
    from xmltools.actions import ActionContext

    (tmp_path / "report.pdf").write_bytes(b"%PDF")
    ctx = ActionContext(workspace=tmp_path)
    for name, profile in PROFILES.items():
        reg = ToolRegistry(profile=name)  # type: ignore[arg-type]
        for action in profile.names:
            got = reg.validate(call(reg.example(action), reg), ctx)
            assert isinstance(got, ValidCall), (name, action, got)
        it = Interpreter(Config(profile=name), browser=FakeBrowser())  # type: ignore[arg-type]
        assert profile.label in it.system_prompt() or name == "forge"


def test_the_docs_show_the_dialects_as_they_are() -> None:
    from docgen import part

    from xmltools.cli import PROFILE_NAMES
    from xmltools.profiles import dialect_table

    assert part("dialects/index.md", "xmltools.profiles.dialect_table()") == dialect_table(), (
        "docs/dialects/index.md's dialect table is stale: run python tests/docgen.py"
    )
    assert tuple(PROFILES) == PROFILE_NAMES
