"""``xmltools export FILE --pytest [-o OUT]``: a recorded transcript as a pytest-playwright test.

The module goes to stdout, or to ``OUT``.  A transcript that cannot be read, or has nothing
recorded to export, is one line on stderr and exit code 2, as for every command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import EXIT_OK

__all__ = ["cmd_export"]


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
