"""The top-level parser, which each command adds its own to, and ``-v`` wherever it is written.

A command's parser is declared beside the command (see :mod:`.options`);
:data:`COMMANDS` lists them in the order ``xmltools --help`` shows them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from .commands import (
    add_config_parser,
    add_demo_parser,
    add_doctor_parser,
    add_parse_parser,
    add_prompt_parser,
    add_replay_parser,
    add_rerender_parser,
    add_score_parser,
)
from .examples import add_parser as add_examples_parser
from .experiment import add_parser as add_experiment_parser
from .export import add_parser as add_export_parser
from .options import PROFILE_NAMES
from .run import add_parser as add_run_parser

if TYPE_CHECKING:
    from .options import Subparsers

__all__ = ["COMMANDS", "PROFILE_NAMES", "build_parser", "verbose_everywhere"]

# each command's parser, in the order of ``xmltools --help``
COMMANDS: tuple[Callable[[Subparsers], None], ...] = (
    add_parse_parser,
    add_prompt_parser,
    add_config_parser,
    add_rerender_parser,
    add_score_parser,
    add_experiment_parser,
    add_doctor_parser,
    add_run_parser,
    add_demo_parser,
    add_examples_parser,
    add_replay_parser,
    add_export_parser,
)


def build_parser() -> argparse.ArgumentParser:
    """``xmltools``: ``--version``, ``-v`` and a subcommand, each with its own arguments."""
    from .. import __version__

    ap = argparse.ArgumentParser(
        prog="xmltools",
        description="Interpret XML tool calls written by a model.",
        epilog="exit codes: 0 success; 1 the run failed or drifted; 2 a usage error (arguments, settings,"
        " files); 3 the environment (no browser, an endpoint that cannot be reached, an MCP server that"
        " does not start); 130 interrupted by Ctrl-C, 143 stopped by SIGTERM (what was finished is kept)",
    )
    ap.add_argument("--version", action="version", version=f"xmltools {__version__}")
    ap.add_argument("-v", "--verbose", action="count", default=0, help=_VERBOSE_HELP)
    sub = ap.add_subparsers(dest="command", required=True)
    for add_parser in COMMANDS:
        add_parser(sub)
    _everywhere(ap, lambda p: setattr(p, "formatter_class", ShowDefaults))
    return ap


class ShowDefaults(argparse.HelpFormatter):
    """An option's help ends with its default when the default says something (a number, a name, a
    path), and the help does not give it already; a flag, or an option whose absence means "none",
    shows nothing more.  argparse's ArgumentDefaultsHelpFormatter would add ``(default: None)`` and
    ``(default: False)`` to half the options."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        quiet = default is None or isinstance(default, bool) or default == [] or default == argparse.SUPPRESS
        if quiet or not action.option_strings or "default" in text or "%(default)" in text:
            return action.help
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


def _everywhere(ap: argparse.ArgumentParser, do: Callable[[argparse.ArgumentParser], object]) -> None:
    """``do`` to a parser and to every subcommand's below it."""
    do(ap)
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for p in action.choices.values():
                _everywhere(p, do)


_VERBOSE_HELP = "show the xmltools log on stderr: -v one line a turn, -vv each browser action too"


def verbose_everywhere(ap: argparse.ArgumentParser) -> None:
    """Let ``-v`` come after the subcommand too (``xmltools run -v ...``), and after a subcommand's
    own (``xmltools experiment run -v ...``)."""
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for p in action.choices.values():
                if "-v" not in p._option_string_actions:
                    p.add_argument(
                        "-v", "--verbose", action="count", default=argparse.SUPPRESS, help=_VERBOSE_HELP
                    )
                verbose_everywhere(p)
