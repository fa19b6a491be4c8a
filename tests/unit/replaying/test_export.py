"""Export: a hand-made transcript written as a pytest-playwright test, line by line, checked by ruff.

Each transcript here is written as a recording writes one (a header, assistant and tool_result
records, assertions), then read back with load_transcript, so the records are of the real shape.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from xmltools.base.secrets import ENV_PREFIX
from xmltools.cli import main
from xmltools.errors import EXIT_USAGE, UsageError
from xmltools.record.transcript import load_transcript
from xmltools.replaying.export import export_pytest

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
LONG = "a note long enough that no line of 88 columns can hold it beside the call that types it"


def obs(
    url: str = "{base_url}/order.html", *locators: str, frame: str | None = None, **more: Any
) -> dict[str, Any]:
    o: dict[str, Any] = {"url": url, "title": "Orders", "viewport": {"width": 900, "height": 600}, **more}
    if locators:
        o["identity"] = {"described": "x", "locators": list(locators), "frame": frame}
    return o


def call(
    action: str, o: dict[str, Any] | None = None, status: str = "ok", **params: str
) -> list[dict[str, Any]]:
    """An assistant message and the result of its one browser_action call."""
    result: dict[str, Any] = {
        "role": "tool_result",
        "call": {"name": "browser_action", "params": {"action": action, **params}, "index": 0},
        "status": status,
        "action": action,
        "observation": o,
    }
    if status != "ok":
        result["error"] = {"kind": "timeout", "message": f"the {action} took too long"}
    return [
        {"role": "assistant", "content": f"<browser_action><action>{action}</action></browser_action>"},
        result,
    ]


def expect(**exp: Any) -> dict[str, Any]:
    return {"role": "expect", "expectation": exp}


def written(
    tmp_path: Path, *records: dict[str, Any], profile: str = "full", name: str = "flow", **config: Any
) -> str:
    header = {
        "xmltools_transcript": 1,
        "config": {
            "profile": profile,
            "viewport": {"width": 900, "height": 600},
            "action_timeout": 5.0,
            **config,
        },
        "base_url": "http://127.0.0.1:8000",
    }
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [header, *records]) + "\n")
    return export_pytest(load_transcript(path))


def body(text: str) -> list[str]:
    """The test function's code lines, comments left out, stripped."""
    lines = text.split("\ndef test_", 1)[1].splitlines()[1:]
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


LAUNCH = call("launch", obs(), url="{base_url}/order.html")


@pytest.mark.parametrize(
    ("locators", "frame", "code"),
    [
        (('testid="save"', 'role=button[name="Save"s]'), None, 'page.get_by_test_id("save")'),
        (
            ('role=button[name="Save"s]', 'text="Save"'),
            None,
            'page.get_by_role("button", name="Save", exact=True)',
        ),
        (
            ('role=button[name="Say \\"hi\\""s]',),
            None,
            'page.get_by_role("button", name=\'Say "hi"\', exact=True)',
        ),
        (('label="Note"', 'placeholder="Add a note"'), None, 'page.get_by_label("Note", exact=True)'),
        (('placeholder="Add a note"', "#note"), None, 'page.get_by_placeholder("Add a note", exact=True)'),
        (('text="Save"', "css=body > div > button"), None, 'page.get_by_text("Save", exact=True)'),
        (("#note", 'input[name="note"]'), None, 'page.locator("#note")'),
        (('input[name="note"]',), None, "page.locator('input[name=\"note\"]')"),
        (
            ("css=body > div > button:nth-of-type(1)",),
            None,
            'page.locator("css=body > div > button:nth-of-type(1)")',
        ),
        (('testid="save"',), "#panel", 'page.frame_locator("#panel").get_by_test_id("save")'),
    ],
)
def test_the_first_recorded_locator_becomes_playwrights_own_lookup(
    tmp_path: Path, locators: tuple[str, ...], frame: str | None, code: str
) -> None:
    """The identity's locators are ranked (test id, role, label, placeholder, text, CSS): the first
    one is used, whatever the model aimed with (here a point)."""
    text = written(
        tmp_path,
        *LAUNCH,
        *call("click", obs("{base_url}/order.html", *locators, frame=frame), coordinate="100,108"),
    )
    assert body(text)[-1] == f"{code}.click()"


def test_without_an_identity_a_point_is_the_mouse_and_a_selector_is_looked_up(tmp_path: Path) -> None:
    text = written(
        tmp_path,
        *LAUNCH,
        *call("click", obs(), coordinate="100,108"),
        *call("hover", obs(), coordinate="5,7"),
        *call("click", obs(), selector="label=Email"),
        *call("fill", obs(), selector='label="Email"', text="ada@example.com"),
        *call("click", obs(), ref="e12"),
    )
    code = body(text)
    assert code[-4:] == [
        "page.mouse.click(100, 108)",
        "page.mouse.move(5, 7)",
        'page.get_by_label("Email").click()',
        'page.get_by_label("Email", exact=True).fill("ada@example.com")',
    ]
    # a ref means nothing outside its snapshot: said, not dropped
    assert "# step 6 cannot be written with Playwright's API: the ref e12 was not recorded with its" in text


def test_the_classic_profile_types_where_the_focus_is_and_presses_keys(tmp_path: Path) -> None:
    text = written(
        tmp_path,
        *LAUNCH,
        *call("click", obs("{base_url}/order.html", 'role=textbox[name="Note"s]'), coordinate="140,186"),
        *call("type", obs(), text="rush"),
        *call("press", obs(), text="ctrl+a"),
        *call("scroll_down", obs(mouse={"x": 140, "y": 186})),
        *call("resize", obs(), size="1280x800"),
        *call("close"),
        profile="roo",
    )
    assert body(text)[-6:] == [
        'page.get_by_role("textbox", name="Note", exact=True).click()',
        'page.keyboard.type("rush")',
        'page.keyboard.press("Control+a")',
        "page.mouse.move(450, 300)",  # where xmltools scrolls while the mouse has not moved: the middle
        "page.mouse.wheel(0, 600)",  # one viewport height
        'page.set_viewport_size({"width": 1280, "height": 800})',
    ]
    assert "# the recording closed the browser here" in text
    assert "def test_flow(page: Page, base_url: str) -> None:" in text


def test_typing_into_an_element_goes_after_what_it_holds_and_long_text_is_inserted(tmp_path: Path) -> None:
    text = written(
        tmp_path,
        *LAUNCH,
        *call("type", obs("{base_url}/order.html", "#note"), selector="#note", text="more"),
        *call("type", obs(), text="x" * 201),
    )
    assert body(text)[-6:] == [
        'field = page.locator("#note")',
        "field.focus()",
        'field.evaluate("el => { try { el.setSelectionRange(9e9, 9e9) } catch {} }")',
        'page.keyboard.type("more")',
        f'text = "{"x" * 201}"',
        "page.keyboard.insert_text(text)",  # as xmltools does beyond 200 characters
    ]


def test_secrets_are_read_from_the_variables_a_replay_reads(tmp_path: Path) -> None:
    text = written(
        tmp_path,
        *LAUNCH,
        *call("fill", obs("{base_url}/order.html", 'label="Password"'), ref="e3", text="{secret:PASSWORD}"),
        *call("type", obs(), text="user {secret:USER} {not a placeholder}"),
    )
    code = body(text)
    assert f'secret_PASSWORD = os.environ["{ENV_PREFIX}PASSWORD"]' in code
    assert f'secret_USER = os.environ["{ENV_PREFIX}USER"]' in code
    assert 'page.get_by_label("Password", exact=True).fill(secret_PASSWORD)' in code
    assert 'page.keyboard.type(f"user {secret_USER} {{not a placeholder}}")' in code
    assert "hunter2" not in text and "{secret:" not in "\n".join(code)


def test_base_url_is_pytest_playwrights_fixture_and_only_asked_for_when_used(tmp_path: Path) -> None:
    text = written(tmp_path, *LAUNCH)
    assert 'page.goto(f"{base_url}/order.html")' in body(text)
    assert 'assert base_url, "give --base-url: the address of the site under test"' in body(text)
    plain = written(
        tmp_path, *call("launch", obs("https://example.com/"), url="https://example.com/"), name="plain"
    )
    assert "def test_plain(page: Page) -> None:" in plain and "base_url" not in "\n".join(body(plain))


def test_a_step_that_took_the_page_elsewhere_waits_for_the_address(tmp_path: Path) -> None:
    text = written(
        tmp_path,
        *LAUNCH,
        *call("click", obs("{base_url}/done.html?id=42", 'testid="save"'), coordinate="100,108"),
        *call("click", obs("{base_url}/list/*.html", 'testid="all"'), coordinate="100,108"),
        *call("navigate", obs("{base_url}/other.html"), url="{base_url}/other.html"),
        *call("back", obs("{base_url}/list/*.html")),
    )
    code = body(text)
    assert code[-6:] == [
        'page.get_by_test_id("save").click()',
        'page.wait_for_url(f"{base_url}/done.html?id=42")',
        'page.get_by_test_id("all").click()',
        # a "*" would be a glob to wait_for_url: the address is compared whole instead
        'expect(page).to_have_url(f"{base_url}/list/*.html")',
        'page.goto(f"{base_url}/other.html")',  # a load of its own: nothing to wait for
        "page.go_back()",
    ]


def test_each_recorded_assertion_becomes_an_expect(tmp_path: Path) -> None:
    text = written(
        tmp_path,
        *LAUNCH,
        expect(kind="text", value="Order 42"),
        expect(kind="text", value=r"Order \d+", regex=True),
        expect(kind="element", role="button", name="Save"),
        expect(kind="element", role="status"),
        expect(kind="value", target="label=Note", value="rush"),
        expect(kind="url", value="{base_url}/order.html"),
        expect(kind="url", value=r"/order\.html$", regex=True),
        expect(kind="aria", value='- heading "Order 42"'),
    )
    assert body(text)[-10:] == [
        'expect(page.get_by_text("Order 42").filter(visible=True).first).to_be_visible()',
        'target = page.get_by_text(re.compile(r"Order \\d+"))',  # named: the line would be too long
        "expect(target.filter(visible=True).first).to_be_visible()",
        'target = page.get_by_role("button", name="Save", exact=True)',
        "expect(target.filter(visible=True).first).to_be_visible()",
        'expect(page.get_by_role("status").filter(visible=True).first).to_be_visible()',
        'expect(page.get_by_label("Note")).to_have_value("rush")',
        'expect(page).to_have_url(f"{base_url}/order.html")',
        'expect(page).to_have_url(re.compile(r"/order\\.html$"))',
        'expect(page.locator("body")).to_match_aria_snapshot(\'- heading "Order 42"\')',
    ]
    assert "import re\n" in text and "from playwright.sync_api import Page, expect\n" in text
    assert "# expect: text 'Order 42' is visible" in text  # each one says what it checks


def test_the_models_own_checks_become_expects(tmp_path: Path) -> None:
    """verify_text, verify_url, verify_element and verify_value (the testing capability) check as the
    recorded assertions do; a check of a ref, which records no identity, is said in a comment."""
    text = written(
        tmp_path,
        *LAUNCH,
        *call("verify_text", obs(), text="Order 42"),
        *call("verify_url", obs(), url="{base_url}/order.html"),
        *call("verify_element", obs(), selector="testid=save"),
        *call("verify_value", obs(), selector="label=Note", value="rush"),
        *call("verify_element", obs(), ref="e3"),
        capabilities=["testing"],
    )
    assert body(text)[-4:] == [
        'expect(page.get_by_text("Order 42").filter(visible=True).first).to_be_visible()',
        'expect(page).to_have_url(f"{base_url}/order.html")',
        'expect(page.get_by_test_id("save").first).to_be_visible()',
        'expect(page.get_by_label("Note")).to_have_value("rush")',
    ]
    assert "# step 6 cannot be written with Playwright's API: a check of the ref e3, which was not" in text


def test_what_the_test_cannot_do_is_said_in_a_comment_never_dropped(tmp_path: Path) -> None:
    text = written(
        tmp_path,
        *LAUNCH,
        *call("click", obs(), "failed", selector="#late"),
        *call("click", None, "refused", selector="#pay"),
        *call("snapshot", obs()),
        *call("get_text", obs(), selector="main"),
        *call("click", obs(), selector="#other", session="shop"),
        expect(kind="text", value="Paid", session="shop"),
    )
    comments = [line.strip() for line in text.splitlines() if line.strip().startswith("# ")]
    for n in range(1, 7):
        assert any(c.startswith(f"# step {n}") for c in comments), n
    assert "# step 2: click skipped, the recording's call was failed: the click took too long" in comments
    assert "# step 3: click skipped, the recording's call was refused: the click took too long" in comments
    assert "# snapshot only reads the page: there is nothing to repeat" in comments
    assert "# get_text only reads the page: there is nothing to repeat" in comments
    assert any("click in the session shop, which this test is not" in c for c in comments)
    assert "# the session shop is not this test's: the assertion cannot be checked here" in comments
    assert body(text)[-1] == 'page.goto(f"{base_url}/order.html")'  # nothing else became code


def test_a_tab_the_page_opened_is_followed_and_tabs_are_switched(tmp_path: Path) -> None:
    opened = ["a new tab opened, and you now see it (the earlier tab stays open behind it)"]
    text = written(
        tmp_path,
        *LAUNCH,
        *call("click", obs("{base_url}/help.html", 'text="Help"', notes=opened), selector="a.help"),
        *call("switch_tab", obs(), tab="t1"),
        *call("open_tab", obs("{base_url}/new.html"), url="{base_url}/new.html"),
        *call("close_tab", obs()),
    )
    assert body(text)[-10:] == [
        "with page.context.expect_page() as new_tab:",
        'page.get_by_text("Help", exact=True).click()',
        "page = new_tab.value",
        'page.wait_for_url(f"{base_url}/help.html")',
        "page = page.context.pages[0]",
        "page.bring_to_front()",
        "page = page.context.new_page()",
        'page.goto(f"{base_url}/new.html")',
        "page.close()",
        "page = page.context.pages[-1]",
    ]
    assert "    with page.context.expect_page() as new_tab:\n        page.get_by_text(" in text


def test_the_viewport_and_the_browser_of_this_machine_come_from_fixtures(tmp_path: Path) -> None:
    text = written(tmp_path, *LAUNCH)
    assert 'return {**browser_context_args, "viewport": {"width": 900, "height": 600}}' in text
    assert 'for name in ("XMLTOOLS_EXECUTABLE", "XMLTOOLS_CHROMIUM"):' in text
    assert 'return {**browser_type_launch_args, "executable_path": os.environ[name]}' in text
    assert "page.context.set_default_timeout(5000)" in text  # the recording's action bound


def test_long_values_are_named_first_and_the_module_is_ruff_clean(tmp_path: Path) -> None:
    text = written(
        tmp_path,
        *LAUNCH,
        *call("type", obs(), text=LONG),
        *call(
            "click", obs("{base_url}/order.html", f'role=button[name="{LONG}"s]', frame="#panel"), ref="f1e2"
        ),
        *call(
            "fill",
            obs("{base_url}/order.html", "css=" + " > ".join(["div"] * 20)),
            ref="e3",
            text='it\'s "quoted"',
        ),
        expect(kind="element", role="button", name=LONG),
        expect(kind="aria", value='- heading "Order 42"\n- button "Save"\n- textbox "Note"'),
    )
    code = body(text)
    assert f'text = "{LONG}"' in code and "page.keyboard.type(text)" in code
    assert 'page.frame_locator("#panel").get_by_role("button", name=name, exact=True).click()' in code
    for line in text.splitlines():
        if len(line) > 88 and not line.lstrip().startswith("#"):
            assert line.lstrip().split(" = ")[1][0] in "\"'", line  # only a literal too long for any line
    compile(text, "test_flow.py", "exec")
    ruff_clean(tmp_path, text)


def ruff_clean(tmp_path: Path, text: str) -> None:
    """ruff check and ruff format --check, with ruff's own defaults (no settings of this repository)."""
    if RUFF is None:
        pytest.skip("ruff is not installed")
    out = tmp_path / "ruffed" / "test_flow.py"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    for args in (["check", "--no-cache"], ["format", "--check", "--diff"]):
        r = subprocess.run(
            [RUFF, *args, "--isolated", str(out)], capture_output=True, text=True, cwd=out.parent
        )
        assert r.returncode == 0, r.stdout + r.stderr


def test_a_transcript_with_nothing_recorded_cannot_be_exported(tmp_path: Path) -> None:
    path = tmp_path / "scenario.jsonl"
    path.write_text('{"xmltools_transcript": 1}\n{"role": "assistant", "content": "hi"}\n')
    with pytest.raises(UsageError, match="nothing was recorded of what its calls did"):
        export_pytest(load_transcript(path))


def test_the_command_writes_to_stdout_or_a_file_and_host_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = written(tmp_path, *LAUNCH)
    path = tmp_path / "flow.jsonl"
    assert main(["export", str(path), "--pytest"]) == 0
    assert capsys.readouterr().out == expected
    out = tmp_path / "test_flow.py"
    assert main(["export", str(path), "--pytest", "-o", str(out)]) == 0
    assert out.read_text() == expected and "run it with pytest --base-url URL" in capsys.readouterr().err

    scenario = tmp_path / "scenario.jsonl"
    scenario.write_text('{"xmltools_transcript": 1}\n{"role": "assistant", "content": "hi"}\n')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(path.read_text().replace('"profile": "full"', '"profile": "klingon"'))
    for argv, said in [
        ([str(tmp_path / "missing.jsonl"), "--pytest"], "missing.jsonl: no such file"),
        ([str(bad), "--pytest"], "bad.jsonl:1: not JSON"),
        ([str(scenario), "--pytest"], "nothing was recorded of what its calls did"),
        ([str(unknown), "--pytest"], "a profile this version does not have: 'klingon'"),
        ([str(path), "--pytest", "-o", str(tmp_path / "no" / "such" / "t.py")], "No such file or directory"),
    ]:
        assert main(["export", *argv]) == EXIT_USAGE, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("xmltools: ") and said in err, err
    with pytest.raises(SystemExit) as stopped:  # the one format there is must be asked for
        main(["export", str(path)])
    assert stopped.value.code == EXIT_USAGE
    assert "--pytest" in capsys.readouterr().err
