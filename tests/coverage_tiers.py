"""The line coverage of xmltools by make test, beside the whole suite's: ``make coverage`` prints it.

``python tests/coverage_tiers.py TEST_DATA LONG_DATA`` reads the coverage data
that ``make test COVERAGE=1`` and ``make test-long COVERAGE=1`` wrote (each
with the data of the subprocesses their tests started), and prints three
lines: make test's coverage, the whole suite's (both tiers together), and the
difference in points.  It exits 1 when make test's coverage is more than
``--within`` points (3) below the whole suite's, the promise the long tier is
held to: what it leaves out of make test is scenarios, not features.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

import coverage

ROOT = Path(__file__).resolve().parents[1]


def _files(data: Path) -> list[str]:
    """A run's data file, and those its subprocesses wrote beside it (``NAME.<host>.<pid>.<n>``)."""
    return sorted(str(f) for f in data.parent.glob(data.name + "*") if f.is_file())


def percent(*data: Path) -> float:
    """The line coverage of xmltools, in percent, by the union of these runs' data."""
    with tempfile.TemporaryDirectory() as tmp:
        cov = coverage.Coverage(data_file=str(Path(tmp) / "union"), config_file=str(ROOT / "pyproject.toml"))
        cov.combine([f for d in data for f in _files(d)], keep=True)
        cov.load()
        return float(cov.report(file=io.StringIO(), include=[str(ROOT / "xmltools" / "*")]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("test", type=Path, help="make test's coverage data")
    ap.add_argument("long", type=Path, help="make test-long's coverage data")
    ap.add_argument("--within", type=float, default=3.0, help="points make test may lie below (3)")
    args = ap.parse_args(argv)
    for d in (args.test, args.long):
        if not _files(d):
            print(f"coverage: {d}: no data; run make test COVERAGE=1 and make test-long COVERAGE=1 first")
            return 2
    tier, whole = percent(args.test), percent(args.test, args.long)
    print(f"coverage: make test {tier:.1f}% of xmltools' lines")
    print(f"coverage: the whole suite (make test and make test-long) {whole:.1f}%")
    gap = whole - tier
    held = gap <= args.within
    print(f"coverage: make test is {gap:.1f} points below the whole ({'within' if held else 'NOT within'}"
          f" {args.within:g})")  # fmt: skip
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
