"""The Python blocks of README.md and docs/ that need no browser run, and print what the page shows.

See tests/support/docblocks.py for how a block says how it is tested; the blocks that
start a Chromium or run pytest are in tests/browser/test_docs_examples_chromium.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample
from support.docblocks import MODES, PAGES, ROOT, enter_project, examples, mode, python_fences


@pytest.fixture
def in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return enter_project(tmp_path, monkeypatch)


@pytest.mark.parametrize("example", examples("run"), ids=str)
def test_block_runs(example: CodeExample, eval_example: EvalExample, in_project: Path) -> None:
    eval_example.set_config(line_length=120)
    eval_example.run_print_check(example)


@pytest.mark.parametrize("example", examples("compile"), ids=str)
def test_block_that_cannot_run_here_compiles(example: CodeExample) -> None:
    reason = example.prefix_settings().get("reason", "").strip()
    assert reason, f'{example}: a block that is only compiled says why, with reason="..."'
    compile(example.source, str(example.path), "exec")


@pytest.mark.parametrize("example", examples(), ids=str)
def test_block_is_clean(example: CodeExample, eval_example: EvalExample) -> None:
    eval_example.set_config(ruff_ignore=["E501"], target_version="py311", upgrade=True)
    eval_example.lint_ruff(example)


def test_every_python_block_is_found_and_has_a_known_mode() -> None:
    found = examples()
    for page in PAGES:
        on_page = [e for e in found if e.path == page]
        assert len(on_page) == python_fences(page), f"{page.relative_to(ROOT)}: a Python block was missed"
    assert all(mode(e) in MODES for e in found), [str(e) for e in found if mode(e) not in MODES]
    assert sum(1 for e in found if mode(e) == "run") >= 20
