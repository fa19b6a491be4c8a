"""``xmltools export FILE --pytest [-o OUT]``: a recorded transcript as a pytest-playwright test.

The module goes to stdout, or to ``OUT``.  A transcript that cannot be read, or has nothing
recorded to export, is one line on stderr and exit code 2, as for every command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_OK

if TYPE_CHECKING:
    from .options import Subparsers

__all__ = ["add_parser", "cmd_export"]


def cmd_export(args: argparse.Namespace) -> int:
    from ..record.transcript import load_transcript
    from ..replaying.export import export_pytest

    text = export_pytest(load_transcript(args.file))
    if args.output in (None, "-"):
        sys.stdout.write(text)
        return EXIT_OK
    out = Path(args.output)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}: run it with pytest --base-url URL {out}", file=sys.stderr)
    return EXIT_OK


def add_parser(sub: Subparsers) -> None:
    """``xmltools export FILE --pytest [-o OUT.py]``."""
    p = sub.add_parser(
        "export",
        help="write a recorded transcript as a plain pytest-playwright test",
        description="Exit codes: 0 written; 2 a usage error (a transcript that cannot be read, or has"
        " nothing recorded to export; an output file that cannot be written).",
    )
    p.add_argument("file", metavar="FILE.jsonl", help="the recorded transcript")
    p.add_argument("--pytest", action="store_true", required=True, help="a pytest-playwright test module")
    p.add_argument("-o", "--output", default=None, metavar="OUT.py", help="write it here (default: stdout)")
    p.set_defaults(func=cmd_export)
