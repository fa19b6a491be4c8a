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
runs in a fresh folder of its own, the one ``xmltools examples DIR`` writes (a copy of
docs/examples: the served ``site/``, ``flows/``, ``variants/``, ``corpus/``, ``todo/`` and
the experiment files), as a user runs the examples after ``xmltools examples ex && cd ex``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_examples import CodeExample, find_examples

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
MODES = ("run", "browser", "pytest", "compile")
# the pages whose every example runs from the folder ``xmltools examples`` writes, in the order a
# newcomer reads them (getting-started makes the folder): tests/slow/test_examples_from_wheel.py
USER_PAGES = [
    DOCS / "getting-started.md",
    ROOT / "README.md",
    *(DOCS / "guides" / f"{name}.md" for name in ("loop", "transcripts", "experiments", "mcp")),
]


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


@dataclass(frozen=True)
class Command:
    """A command of a ``console`` block (the text after its ``$ ``) and the output shown under it, where
    a line ``...`` stands for any lines and ``...`` within a line for any text."""

    page: Path
    line: int
    text: str
    output: tuple[str, ...]


FENCE = re.compile(r"^ *```([^\n]*)\n(.*?)^ *```", re.M | re.S)


def fences(page: Path) -> list[tuple[int, str, str]]:
    """Every fenced block of a page: the line of its opening fence (from 1), its info string, its text."""
    text = page.read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 1, m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)]


def console_blocks(page: Path) -> list[tuple[int, list[Command]]]:
    """The ``console`` blocks of a page, each as the line of its fence and its commands in order."""
    blocks = []
    for line, info, body in fences(page):
        if info != "console":
            continue
        commands: list[Command] = []
        for n, row in enumerate(body.splitlines(), line + 1):
            if row.startswith("$ "):
                commands.append(Command(page, n, row[2:].strip(), ()))
            elif commands:
                last = commands[-1]
                commands[-1] = Command(page, last.line, last.text, (*last.output, row.rstrip()))
        blocks.append((line, commands))
    return blocks


def project(folder: Path) -> Path:
    """Write into ``folder`` what ``xmltools examples`` writes: the folder every block runs in."""
    from xmltools.cli.examples import copy_examples

    copy_examples(folder, force=True)
    return folder


def enter_project(folder: Path, monkeypatch: pytest.MonkeyPatch, keep: tuple[str, ...] = ()) -> Path:
    """Run a block in ``folder``, made the examples' folder, with no XMLTOOLS_ variable of this shell
    but those in ``keep`` (a block reads the settings a user would have)."""
    for name in [k for k in os.environ if k.startswith("XMLTOOLS_") and k not in keep]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(project(folder))
    return folder
