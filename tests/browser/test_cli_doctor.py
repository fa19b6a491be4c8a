"""`xmltools doctor`: finds, launches and checks the browser, or says how to fix it."""

from __future__ import annotations

import subprocess
import sys


def doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "xmltools.cli", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_doctor_reports_a_working_browser() -> None:
    r = doctor()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[ok] browser:" in r.stdout and "screenshot: 900x600 webp" in r.stdout and "all good" in r.stdout


def test_doctor_fails_with_a_fix() -> None:
    r = doctor(env={"XMLTOOLS_CHROMIUM": "/nonexistent/chrome"})
    assert r.returncode == 1
    assert "[FAIL] find a browser" in r.stdout and "XMLTOOLS_CHROMIUM" in r.stdout


def test_doctor_remote_unreachable_says_how_to_start_chrome() -> None:
    r = doctor("--remote", "http://127.0.0.1:9")
    assert r.returncode == 1
    assert "--remote-debugging-port=9222" in r.stdout
