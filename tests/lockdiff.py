"""What moved between the committed lock (constraints.txt) and an environment: ``make test-latest`` prints it.

``python tests/lockdiff.py VENV`` compares the packages installed in the
virtual environment ``VENV`` with the versions ``constraints.txt`` pins, and
prints one line per package that moved, appeared or went away, then a count.
``python tests/lockdiff.py VENV --write`` writes the environment's versions as
the new lock instead (``make lock``).

The lock pins what ``make test`` installs (``pip install -c constraints.txt``),
so that a fresh machine resolves what was tested; the supported ranges stay in
pyproject.toml.  Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "constraints.txt"
HEAD = """\
# The development environment as make test installs it: every package's version, pinned.
# pyproject.toml keeps the ranges xmltools supports; this file keeps what was tested.
# make lock writes it anew from the newest releases; make test-latest shows what moved since.
"""


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def read_pins(text: str) -> dict[str, str]:
    """``name==version`` lines (comments, blank lines and editable installs skipped), by canonical name."""
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-") or "==" not in line:
            continue
        name, _, version = line.partition("==")
        pins[_canonical(name.split("[", 1)[0].strip())] = version.strip()
    return pins


def installed(venv: Path) -> dict[str, str]:
    """The packages of ``venv``, pip's own among them, the editable project left out."""
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "freeze", "--all", "--exclude-editable"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {k: v for k, v in read_pins(out).items() if k != "xmltools"}


def moved(locked: dict[str, str], now: dict[str, str]) -> list[str]:
    """One line per difference, sorted by name: ``name 1.0 -> 2.0``, ``name new 2.0``, ``name gone``."""
    lines = []
    for name in sorted(locked.keys() | now.keys()):
        was, isnow = locked.get(name), now.get(name)
        if was == isnow:
            continue
        if was is None:
            lines.append(f"{name}: new, {isnow}")
        elif isnow is None:
            lines.append(f"{name}: gone (was {was})")
        else:
            lines.append(f"{name}: {was} -> {isnow}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("venv", type=Path, help="the virtual environment to compare with the lock")
    ap.add_argument("--write", action="store_true", help="write its versions as the lock instead")
    args = ap.parse_args(argv)
    now = installed(args.venv)
    if args.write:
        LOCK.write_text(HEAD + "".join(f"{name}=={v}\n" for name, v in sorted(now.items())))
        print(f"lockdiff: wrote {len(now)} pins to {LOCK.name}")
        return 0
    lines = moved(read_pins(LOCK.read_text()), now)
    for line in lines:
        print(f"moved since the lock: {line}")
    print(f"lockdiff: {len(lines)} of {len(now)} packages differ from {LOCK.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
