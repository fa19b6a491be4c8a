"""``xmltools examples DIR``: the folder it writes is docs/examples, links followed; a folder with files is refused.

tests/slow/test_examples_from_wheel.py runs every example of the pages from the folder the
installed wheel writes; here the command runs in this process, from the tree's own install.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from support.helpers import ROOT

from xmltools import load_experiment
from xmltools.cli import main
from xmltools.cli.examples import CONTENTS, copy_examples
from xmltools.errors import EXIT_OK, EXIT_USAGE, UsageError

EXAMPLES = ROOT / "docs" / "examples"
NOT_COPIED = {"__init__.py", "__pycache__"}  # what makes docs/examples a package, and its bytecode


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (links followed), by its path there, with its bytes."""
    found = {}
    for top, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = [d for d in dirs if d not in NOT_COPIED]
        for name in files:
            if name not in NOT_COPIED and not name.endswith(".pyc"):
                path = Path(top, name)
                found[path.relative_to(folder).as_posix()] = path.read_bytes()
    return found


def test_the_folder_written_is_docs_examples_with_its_links_followed(tmp_path: Path) -> None:
    written = copy_examples(tmp_path / "ex")
    assert tree(tmp_path / "ex") == tree(EXAMPLES)
    assert sum(written.values()) == len(tree(EXAMPLES))
    assert (tmp_path / "ex" / "site" / "shop.html").is_file() and not (tmp_path / "ex" / "site").is_symlink()
    assert (tmp_path / "ex" / "todo" / "server.py").is_file()


def test_docs_examples_holds_what_the_command_lists_and_links_the_fixtures_it_names() -> None:
    on_disk = {p.name for p in EXAMPLES.iterdir()} - NOT_COPIED
    assert on_disk == {e.name for e in CONTENTS}
    for entry in CONTENTS:
        path = EXAMPLES / entry.name
        if entry.fixtures is None:
            assert not path.is_symlink(), entry.name
        else:  # the fixtures' own folder, shipped once (in xmltools.fixtures)
            assert path.is_symlink() and os.readlink(path) == f"../../fixtures/{entry.fixtures}", entry.name


def test_setup_leaves_out_of_the_examples_package_the_folders_taken_from_the_fixtures() -> None:
    tree_ = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    [names] = [
        ast.literal_eval(node.value)
        for node in ast.walk(tree_)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "EXAMPLES_FROM_FIXTURES" for t in node.targets)
    ]
    assert sorted(names) == sorted(e.name for e in CONTENTS if e.fixtures is not None)


def test_the_command_prints_each_entry_and_the_next_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["examples", "my examples"]) == EXIT_OK
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"wrote {len(tree(EXAMPLES))} files to my examples:"
    assert [line.split()[0] for line in out[1:-1]] == [
        e.name + ("/" if (EXAMPLES / e.name).is_dir() else "") for e in CONTENTS
    ]
    assert out[-1] == "next: cd 'my examples' && xmltools replay flows/signin.jsonl --serve site"


def test_a_folder_that_holds_files_is_refused_in_one_line_unless_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ex").mkdir()
    (tmp_path / "ex" / "notes.txt").write_text("mine")
    assert main(["examples", "ex"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err == "xmltools: ex is not empty: name a new folder, or give --force to write over its files\n"
    assert sorted(p.name for p in (tmp_path / "ex").iterdir()) == ["notes.txt"]  # nothing written

    (tmp_path / "ex" / "experiment.toml").write_text("changed")
    assert main(["examples", "ex", "--force"]) == EXIT_OK
    assert (tmp_path / "ex" / "experiment.toml").read_bytes() == (EXAMPLES / "experiment.toml").read_bytes()
    assert (tmp_path / "ex" / "notes.txt").read_text() == "mine"  # the others are left


def test_a_file_in_the_way_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "ex").write_text("")
    with pytest.raises(UsageError, match="ex: not a folder"):
        copy_examples(tmp_path / "ex", force=True)


@pytest.mark.parametrize("name", ["experiment.toml", "mcp-experiment.toml"])
def test_the_experiment_files_load_where_they_lie(name: str) -> None:
    """Their folders (the variant's templates, the served site and its start page) are read relative
    to the file, in the repository as in the folder the command writes."""
    experiment = load_experiment(EXAMPLES / name)
    assert all((EXAMPLES / task.serve / task.start).is_file() for task in experiment.tasks if task.serve)
