"""The options several commands share, each declared once; a command's help is its own.

Each command declares its parser beside itself (``add_parser`` in :mod:`.run`,
:mod:`.experiment` and :mod:`.export`, ``add_<name>_parser`` in :mod:`.commands`);
:func:`xmltools.cli.args.build_parser` calls them in the order ``--help`` lists
them.  What two commands mean alike is written here: the dialects, the model's
provider and its key, the settings file, the HTML report, the browser shown
(``--headed``), the folder served (``--serve``) and the traces (``--tracing``,
whose modes and each command's help are in :mod:`xmltools.base.tracing`,
beside the pytest plugin's).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeAlias

    from ..base.tracing import TracingOption

    # what ``add_subparsers`` returns: each command's ``add_parser`` is given it
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "PROFILE_NAMES",
    "api_key_env_option",
    "config_option",
    "headed_option",
    "profile_option",
    "provider_option",
    "report_options",
    "serve_option",
    "tracing_options",
]

PROFILE_NAMES = ("roo", "cline", "full", "aleph", "fractal", "forge")


def profile_option(p: argparse.ArgumentParser, *, default: str | None, help: str) -> None:
    """``--profile``: the dialect, one of :data:`PROFILE_NAMES`."""
    p.add_argument("--profile", choices=list(PROFILE_NAMES), default=default, help=help)


def provider_option(p: argparse.ArgumentParser, flag: str = "--provider", help: str | None = None) -> None:
    """``--provider`` (or ``--heal-provider``): the model's API, openai (the default) or anthropic."""
    p.add_argument(flag, choices=["openai", "anthropic"], default="openai", help=help)


def api_key_env_option(
    p: argparse.ArgumentParser, flag: str = "--api-key-env", help: str | None = None
) -> None:
    """``--api-key-env VAR`` (or ``--heal-api-key-env``): the variable holding the model's key."""
    p.add_argument(flag, default=None, metavar="VAR", help=help)


def config_option(p: argparse.ArgumentParser, help: str, metavar: str | None = "FILE") -> None:
    """``--config FILE``: a TOML file of settings instead of ``xmltools.toml``."""
    p.add_argument("--config", default=None, metavar=metavar, help=help)


def report_options(p: argparse.ArgumentParser, metavar: str, help: str) -> None:
    """``--report`` (the HTML report of what ran) and ``--embed`` (its images in the page)."""
    p.add_argument("--report", default=None, metavar=metavar, help=help)
    p.add_argument(
        "--embed", action="store_true", help="embed the report's images (default: files beside it)"
    )


def headed_option(p: argparse.ArgumentParser) -> None:
    """``--headed``: the browser's window shown (on a machine with a display)."""
    p.add_argument(
        "--headed", action="store_true", help="show the browser window (default: headless; needs a display)"
    )


def serve_option(p: argparse.ArgumentParser, help: str) -> None:
    """``--serve DIR``: a folder served on 127.0.0.1 for the command's duration, its address the site's."""
    p.add_argument("--serve", default=None, metavar="DIR", help=help)


def tracing_options(p: argparse.ArgumentParser, option: TracingOption) -> None:
    """``--tracing MODE`` (the command's own help, from :mod:`xmltools.base.tracing`) and
    ``--trace-dir DIR``, where the traces go."""
    p.add_argument(option.flag, **option.keywords())
    p.add_argument(
        "--trace-dir", default="traces", metavar="DIR", help="where the traces go (default: traces)"
    )
