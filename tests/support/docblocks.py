"""The Python blocks of README.md and docs/, found with pytest-examples, and the folder they run in.

A block's fence says how it is tested, with ``{test="..."}`` after the language (an
attribute list, which the site's Markdown accepts and GitHub ignores):

- nothing: it runs here, with no browser (tests/unit/test_docs_examples.py);
- ``{test="browser"}``: it runs, and starts a Chromium (tests/browser/test_docs_examples_chromium.py);
- ``{test="pytest"}``: it is a test module for the pytest plugin, run by pytest in a
  subprocess (tests/browser/test_docs_examples_chromium.py);
- ``{test="compile" reason="..."}``: it cannot run here (a paid API key, say): it is
  compiled, and the reason is required.

Every block that runs has its ``print`` output checked against the ``#>`` lines
under it, so the output a page shows is the output the code gives.  Each block
runs in a fresh folder of its own that looks like a checkout of this repository
to it: ``fixtures/`` (the bundled pages, transcripts and variants), and a copy of
docs/examples (``flows/``, the scenarios the pages show, and ``experiment.toml``).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from pytest_examples import CodeExample, find_examples

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
MODES = ("run", "browser", "pytest", "compile")


def mode(example: CodeExample) -> str:
    """How the block is tested: run, browser, pytest or compile (see the module's docstring)."""
    return example.prefix_settings().get("test", "run")


def examples(*modes: str) -> list[CodeExample]:
    """The Python blocks of every page, those of the given modes (all when none is given)."""
    found = [e for page in PAGES for e in find_examples(page)]
    return [e for e in found if not modes or mode(e) in modes]


def python_fences(page: Path) -> int:
    """How many fences open a Python block on a page, counted apart from pytest-examples."""
    return len(re.findall(r"^ *```\s*(?:python|py)\b", page.read_text(encoding="utf-8"), re.M))


def project(folder: Path) -> Path:
    """Lay out ``folder`` as the blocks expect to find a checkout: fixtures/ and docs/examples' files."""
    (folder / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
    shutil.copytree(DOCS / "examples", folder, dirs_exist_ok=True)
    return folder


def enter_project(folder: Path, monkeypatch: pytest.MonkeyPatch, keep: tuple[str, ...] = ()) -> Path:
    """Run a block in ``folder`` laid out as a checkout, with no XMLTOOLS_ variable of this shell but
    those in ``keep`` (a block reads the settings a user would have)."""
    for name in [k for k in os.environ if k.startswith("XMLTOOLS_") and k not in keep]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(project(folder))
    return folder
