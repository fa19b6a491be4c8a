"""``xmltools examples DIR``: the files the README's and the guides' examples use, copied out of the package.

The folder it writes is laid out as ``docs/examples`` is in the repository, and every example of
the README and the guides runs from it as written (``xmltools examples ex && cd ex``).  Its
contents are :data:`CONTENTS`: the examples' own files ship as ``xmltools.examples`` (the wheel
maps ``docs/examples`` there), and the folders they share with the tests and the demo (the site,
the prompt variants, the corpus) ship once, in ``xmltools.fixtures``; in the repository those are
symbolic links from ``docs/examples`` into ``fixtures/``.  A folder that already holds files is
refused (exit code 2) unless ``--force`` is given, which writes over the files of the same name
and leaves the others.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from .options import Subparsers

__all__ = ["CONTENTS", "Entry", "add_parser", "cmd_examples", "copy_examples"]


@dataclass(frozen=True)
class Entry:
    """A file or folder of the examples' folder: its name there, what it is for, and where it ships
    from (``fixtures``: a folder of ``xmltools.fixtures``; otherwise ``xmltools.examples``)."""

    name: str
    about: str
    fixtures: str | None = None


CONTENTS: tuple[Entry, ...] = (
    Entry("experiment.toml", "two prompt variants on one sign-in task (experiments guide, README)"),
    Entry("mcp-experiment.toml", "a task checked by what an MCP server says (MCP guide)"),
    Entry("flows", "signin.jsonl, a scenario written by hand (transcripts guide, README)"),
    Entry("todo", "server.py, a to-do list as an MCP server; mcp.json; notes.jsonl, a recording (MCP guide)"),
    Entry("site", "the pages the examples serve on 127.0.0.1", fixtures="site"),
    Entry("variants", "terse, a prompt variant (experiments guide)", fixtures="variants"),
    Entry("corpus", "outputs.jsonl, model outputs to score offline (experiments guide)", fixtures="corpus"),
)

_SKIP = ("__pycache__", ".pyc")  # bytecode, were the package's folder ever imported from


def source(entry: Entry) -> Traversable:
    """Where an entry is in the installed package."""
    if entry.fixtures is not None:
        return resources.files("xmltools.fixtures").joinpath(entry.fixtures)
    return resources.files("xmltools.examples").joinpath(entry.name)


def _copy(src: Traversable, dest: Path) -> int:
    """Copy a file, or a folder and everything below it; the number of files written."""
    if any(src.name.endswith(s) for s in _SKIP):
        return 0
    if not src.is_dir():
        dest.write_bytes(src.read_bytes())
        return 1
    dest.mkdir(exist_ok=True)
    return sum(_copy(child, dest / child.name) for child in sorted(src.iterdir(), key=lambda c: c.name))


def copy_examples(folder: str | Path, *, force: bool = False) -> dict[str, int]:
    """Write the examples' files into ``folder`` (made when missing); the files written per entry.

    A folder that holds anything is refused with :class:`~xmltools.errors.UsageError` unless
    ``force``, which writes over the files of the same name and leaves the others.
    """
    dest = Path(folder)
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"{folder}: not a folder")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise UsageError(f"{folder} is not empty: name a new folder, or give --force to write over its files")
    dest.mkdir(parents=True, exist_ok=True)
    written = {}
    for entry in CONTENTS:
        src = source(entry)
        if not src.is_file() and not src.is_dir():
            raise UsageError(f"the installed package has no {entry.name} of the examples: reinstall xmltools")
        written[entry.name] = _copy(src, dest / entry.name)
    return written


def cmd_examples(args: argparse.Namespace) -> int:
    written = copy_examples(args.dir, force=args.force)
    print(f"wrote {sum(written.values())} files to {args.dir}:")
    width = max(len(e.name) for e in CONTENTS) + 1
    for entry in CONTENTS:
        shown = entry.name + ("/" if source(entry).is_dir() else "")
        print(f"  {shown:<{width}}  {entry.about}")
    print(f"next: cd {shlex.quote(str(args.dir))} && xmltools replay flows/signin.jsonl --serve site")
    return EXIT_OK


def add_parser(sub: Subparsers) -> None:
    """``xmltools examples DIR [--force]``."""
    p = sub.add_parser(
        "examples",
        help="copy the files the README's and the guides' examples use into a folder",
        description="Copy the files the README's and the guides' examples use (the site they serve,"
        " the transcripts, the experiment files, the prompt variant, the MCP example server) into DIR;"
        " every example runs from there as written. Exit codes: 0 written; 2 DIR is not empty (without"
        " --force) or cannot be written.",
    )
    p.add_argument("dir", metavar="DIR", help="the folder to write (made when missing)")
    p.add_argument(
        "--force",
        action="store_true",
        help="write into a folder that holds files, over those of the same name",
    )
    p.set_defaults(func=cmd_examples)
