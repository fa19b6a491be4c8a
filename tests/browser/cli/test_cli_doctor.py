"""`xmltools doctor`: finds, launches and checks the browser, or says how to fix it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def doctor(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "xmltools.cli", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def test_doctor_reports_a_working_browser() -> None:
    r = doctor()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[ok] browser:" in r.stdout and "screenshot: 900x600 webp" in r.stdout and "all good" in r.stdout


def test_doctor_fails_with_a_fix() -> None:
    r = doctor(env={"XMLTOOLS_CHROMIUM": "/nonexistent/chrome"})
    assert r.returncode == 1
    assert "[FAIL] find a browser" in r.stdout and "XMLTOOLS_CHROMIUM" in r.stdout


@pytest.mark.long
def test_doctor_remote_unreachable_says_how_to_start_chrome() -> None:
    r = doctor("--remote", "http://127.0.0.1:9")
    assert r.returncode == 1
    assert "--remote-debugging-port=9222" in r.stdout


@pytest.mark.long
def test_doctor_reads_the_layered_configuration(tmp_path: Path) -> None:
    """The browser checked is the one every command would start: xmltools.toml and XMLTOOLS_* count."""
    (tmp_path / "xmltools.toml").write_text('viewport = "640x480"\nscreenshot_format = "png"\n')
    r = doctor(cwd=tmp_path, env={"XMLTOOLS_NAVIGATION_TIMEOUT": "20"})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert any("viewport" in ln and "640x480" in ln and "xmltools.toml" in ln for ln in lines), r.stdout
    assert any("navigation_timeout" in ln and "XMLTOOLS_NAVIGATION_TIMEOUT" in ln for ln in lines), r.stdout
    assert "screenshot: 640x480 png" in r.stdout


def test_doctor_refuses_a_bad_setting_with_one_line() -> None:
    r = doctor(env={"XMLTOOLS_VIEWPROT": "1x1"})
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "xmltools: XMLTOOLS_VIEWPROT is not a setting; did you mean XMLTOOLS_VIEWPORT?"
    ]
