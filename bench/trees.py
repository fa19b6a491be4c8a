"""Another commit of this repository, checked out beside it, for a bench to measure in the same run."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TREE = Path(__file__).resolve().parent.parent


@contextmanager
def checkout(rev: str | None) -> Iterator[Path | None]:
    """A temporary checkout of ``rev`` (a git worktree), removed afterwards; None for no ``rev``."""
    if rev is None:
        yield None
        return
    where = Path(tempfile.mkdtemp(prefix="xmltools-before-")) / "tree"
    git = ["git", "-C", str(TREE), "worktree"]
    subprocess.run([*git, "add", "--detach", str(where), rev], check=True, capture_output=True)
    try:
        yield where
    finally:
        subprocess.run([*git, "remove", "--force", str(where)], check=False, capture_output=True)
        shutil.rmtree(where.parent, ignore_errors=True)  # the folder made to hold it
