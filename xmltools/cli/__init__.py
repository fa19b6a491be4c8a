"""The ``xmltools`` command line: a thin layer over the library.

Each subcommand parses its arguments, calls the library and prints.  Heavy
imports (Playwright, Jinja2) happen inside the subcommands that need them, so
``xmltools parse`` starts fast.

A host error is one line on stderr (``xmltools: <message>``, no traceback),
and the exit code says whose problem it is: 0 success; 1 the run failed or
drifted; 2 a usage error (bad arguments, a bad setting, a file that cannot be
read); 3 the environment (no browser, a browser or model endpoint that cannot
be reached); 130 interrupted by Ctrl-C, 143 stopped by SIGTERM (one line saying what
was kept, see :mod:`.interrupt`).  ``-v`` shows the ``xmltools`` logger's INFO records on stderr
(one line a turn), ``-vv`` its DEBUG records too (each browser action).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence

from ..errors import EXIT_FAILED, XmltoolsError, exit_code
from .args import PROFILE_NAMES, build_parser, verbose_everywhere
from .interrupt import exit_status, handling, said

__all__ = ["PROFILE_NAMES", "build_parser", "main"]


@contextlib.contextmanager
def _log_to_stderr(verbose: int) -> Iterator[None]:
    """Show the ``xmltools`` logger's records on stderr for the command's duration (none without -v)."""
    if not verbose:
        yield
        return
    logger = logging.getLogger("xmltools")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _report_error(e: BaseException, verbose: int) -> int:
    """One line on stderr (the whole message with -v, and the traceback with -vv); the exit code."""
    if isinstance(e, OSError) and not isinstance(e, XmltoolsError) and e.filename is not None:
        text = f"{e.filename}: {e.strerror or e}"
    else:
        text = str(e).strip() or type(e).__name__
    first, *rest = text.splitlines()
    shown = rest if verbose else rest[: getattr(e, "shown", 1) - 1]
    if len(shown) < len(rest):
        first += " (-v shows more)"
    print(f"xmltools: {first}", file=sys.stderr)
    for line in shown:
        print(f"    {line}", file=sys.stderr)
    logging.getLogger("xmltools").debug("the error's traceback", exc_info=e)
    return exit_code(e)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code: 0 ok, 1 failed or drifted, 2 usage, 3 environment,
    130 interrupted (Ctrl-C), 143 stopped (SIGTERM)."""
    ap = build_parser()
    verbose_everywhere(ap)
    args = ap.parse_args(argv)
    if getattr(args, "chunk", 0) and args.chunk < 0:
        ap.error("--chunk must be positive")
    verbose: int = args.verbose or 0
    with _log_to_stderr(verbose), handling():
        try:
            rc: int = args.func(args)
        except BrokenPipeError:  # the reader went away (``xmltools parse | head``): stop quietly
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_FAILED
        except (XmltoolsError, OSError) as e:
            return _report_error(e, verbose)
        except KeyboardInterrupt:
            sys.stdout.flush()
            print(f"xmltools: {said()}", file=sys.stderr, flush=True)
            return exit_status()
    return rc


if __name__ == "__main__":
    sys.exit(main())
