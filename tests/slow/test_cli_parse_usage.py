"""`xmltools parse` as a command in a subprocess: a bad tool spec is a usage error."""

from __future__ import annotations

import subprocess
import sys


def test_bad_tool_spec_is_a_usage_error() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "xmltools.cli", "parse", "--tool", "bad name=x"],
        input="",
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "invalid tool name" in r.stderr
