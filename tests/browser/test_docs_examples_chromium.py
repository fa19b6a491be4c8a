"""The Python blocks of README.md and docs/ that start a Chromium, and those that are pytest modules.

See tests/support/docblocks.py.  A ``test="pytest"`` block is written as a test module
into a folder laid out like a checkout, and pytest runs it there in a process
of its own, with the plugin as a user has it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample
from support.docblocks import enter_project, examples


@pytest.fixture
def in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return enter_project(tmp_path, monkeypatch, ("XMLTOOLS_EXECUTABLE",))


def _lab_long(example: CodeExample) -> object:
    """An example of the experiments guide runs whole experiments: make test-long's, as the lab's tests."""
    long = example.path.name == "experiments.md"
    return pytest.param(example, marks=pytest.mark.long, id=str(example)) if long else example


@pytest.mark.parametrize("example", [_lab_long(e) for e in examples("browser")], ids=str)
def test_block_runs_in_chromium(example: CodeExample, eval_example: EvalExample, in_project: Path) -> None:
    eval_example.set_config(line_length=120)
    eval_example.run_print_check(example)


@pytest.mark.parametrize("example", examples("pytest"), ids=str)
@pytest.mark.long
def test_block_passes_under_pytest(example: CodeExample, in_project: Path) -> None:
    (in_project / "test_example.py").write_text(example.source)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"],
        cwd=in_project,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"{example}:\n{done.stdout}\n{done.stderr}"
