"""What a user installs: the wheel built from the working tree, and a fresh virtual environment outside it.

The environment borrows nothing from the development one: it gets the wheel and its dependencies
from the package index, and every command runs with the tree out of sight (another working folder,
no ``PYTHONPATH``).  tests/slow/test_packaging.py checks what the wheel holds and what a bare
install runs; tests/slow/test_examples_from_wheel.py runs every example of the README and the
guides with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(out: Path) -> Path:
    """The sdist, then the wheel built from that sdist (as ``python -m build`` does by default), in ``out``."""
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "-q", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return out


def wheel(dist: Path) -> Path:
    [found] = dist.glob("xmltools-*.whl")
    return found


class Fresh:
    """A fresh virtual environment with ``requirements`` installed (the wheel among them), and a
    working folder outside the tree."""

    def __init__(self, home: Path, *requirements: str) -> None:
        self.home = home
        self.bin = home / "venv" / "bin"
        self.work = home / "work"
        self.work.mkdir()
        venv.create(home / "venv", with_pip=True)
        self.env = {
            k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
        }
        self.env.update(
            PATH=f"{self.bin}{os.pathsep}{self.env.get('PATH', '')}", PIP_DISABLE_PIP_VERSION_CHECK="1"
        )
        self.run("python", "-m", "pip", "install", "-q", *requirements, timeout=600)

    def run(
        self, *argv: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """Run a command of the environment; it must succeed."""
        r = self.attempt(*argv, cwd=cwd, env=env, timeout=timeout)
        assert r.returncode == 0, (
            f"{' '.join(argv)} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        )
        return r

    def attempt(
        self, *argv: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """Run a command of the environment (``bash`` runs a command line in it); whatever its exit code."""
        program = argv[0] if argv[0] == "bash" else str(self.bin / argv[0])
        return subprocess.run(
            [program, *argv[1:]],
            cwd=cwd or self.work,
            env=dict(env) if env is not None else self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
