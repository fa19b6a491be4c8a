"""Export in a real Chromium: a flow recorded with identities and assertions, exported as a
pytest-playwright test, passes against the page it was recorded on and fails against a copy
whose Save button is gone, so that it cannot pass without doing what the recording did."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.helpers import ROOT, SITE, ba

from xmltools.base.serve import serve_directory
from xmltools.browser.locate import find_chromium
from xmltools.cli import main
from xmltools.config.settings import Config
from xmltools.interpreter import Interpreter
from xmltools.record.transcript import ToolResultRecord, load_transcript

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
SAVE = '  <button class="primary" data-testid="save" onclick="console.log(\'SAVE\')">Save</button>\n'


def record(site: Path, path: Path) -> None:
    """On order.html: Save clicked by its point, the Note field clicked by its point, "rush" typed
    where the focus is, then the field's value and a text asserted."""
    with serve_directory(site) as base, Interpreter(Config()) as it:
        rec = it.record(path, base_url=base)
        it.handle(ba("launch", url=f"{base}/order.html"))
        it.handle(ba("click", coordinate="100,100"))
        it.handle(ba("click", coordinate="140,186"))
        it.handle(ba("type", text="rush"))
        rec.expect_value("label=Note", "rush")
        rec.expect_text("Order 42")
        it.handle(ba("close"))


def run_exported(test: Path, site: Path, *plugin: str) -> subprocess.CompletedProcess[str]:
    """``pytest --base-url URL test`` in a process of its own, with no settings of this repository
    (an empty pytest.ini beside the test), the Chromium xmltools runs here named by XMLTOOLS_EXECUTABLE."""
    ini = test.parent / "pytest.ini"
    ini.write_text("[pytest]\n")
    env = {**os.environ, "XMLTOOLS_EXECUTABLE": find_chromium().path}
    # its artefacts folder, which pytest-playwright empties first, is the test's own
    where = ["-c", str(ini), "--rootdir", str(test.parent), "--output", str(test.parent / "out")]
    with serve_directory(site) as base:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                *plugin,
                "-p",
                "no:cacheprovider",
                *where,
                "--base-url",
                base,
                str(test),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,  # from here the xmltools plugin is found before pytest-playwright's
            timeout=240,
        )


@pytest.mark.long
def test_an_exported_recording_passes_where_it_was_recorded_and_fails_where_save_is_gone(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    path = tmp_path / "order-flow.jsonl"
    record(site, path)
    results = [r for r in load_transcript(path).records if isinstance(r, ToolResultRecord)]
    assert [r.status for r in results] == ["ok"] * 5, [r.text for r in results]
    identities = [r.observation.identity for r in results if r.observation is not None]
    assert [i.described for i in identities if i is not None] == ['button "Save"', 'textbox "Note"']

    test = tmp_path / "exported" / "test_order_flow.py"
    test.parent.mkdir()
    assert main(["export", str(path), "--pytest", "-o", str(test)]) == 0
    code = test.read_text()
    for line in [
        'page.goto(f"{base_url}/order.html")',
        'page.get_by_test_id("save").click()',  # the best of Save's locators, not the point
        'page.get_by_role("textbox", name="Note", exact=True).click()',
        'page.keyboard.type("rush")',
        'expect(page.get_by_label("Note")).to_have_value("rush")',
        'expect(page.get_by_text("Order 42").filter(visible=True).first).to_be_visible()',
    ]:
        assert f"    {line}\n" in code, (line, code)
    if RUFF is not None:  # with ruff's defaults, none of this repository's settings
        for args in (["check", "--no-cache"], ["format", "--check", "--diff"]):
            r = subprocess.run([RUFF, *args, "--isolated", str(test)], capture_output=True, text=True)
            assert r.returncode == 0, r.stdout + r.stderr

    ran = run_exported(test, site, "-p", "playwright")
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout[-3000:] + ran.stderr[-2000:]

    broken = tmp_path / "broken"
    shutil.copytree(site, broken)
    order = broken / "order.html"
    assert SAVE in order.read_text()
    order.write_text(order.read_text().replace(SAVE, ""))
    # the plugins autoloaded, in the order the environment lists them: both offer --headed
    failed = run_exported(test, broken)
    assert failed.returncode == 1 and "1 failed" in failed.stdout, (
        failed.stdout[-3000:] + failed.stderr[-2000:]
    )
    assert 'get_by_test_id("save")' in failed.stdout, failed.stdout[-3000:]


@pytest.fixture(autouse=True)
def _no_settings_from_the_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The recording takes the defaults: no xmltools.toml or XMLTOOLS_* setting of this machine."""
    for name in [n for n in os.environ if n.startswith("XMLTOOLS_") and n not in ("XMLTOOLS_CHROMIUM",)]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
