"""Helpers the commands share: tool and secret arguments, the machine's browser flags, the settings."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, XmltoolsError
from ..parser import ToolSyntax

if TYPE_CHECKING:
    from ..config.settings import Config


def tool_arg(spec: str) -> ToolSyntax:
    """``NAME=PARAM,PARAM,...``; a parameter ending in ``*`` is raw text (``content*``)."""
    name, sep, plist = spec.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--tool takes NAME=PARAM,PARAM,... (got {spec!r})")
    params = [p.strip() for p in plist.split(",") if p.strip()]
    raw = {p.rstrip("*") for p in params if p.endswith("*")}
    try:
        return ToolSyntax(name.strip(), tuple(p.rstrip("*") for p in params), frozenset(raw))
    except XmltoolsError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def secret_args(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--secret takes NAME=VALUE (got {pair!r}); or set XMLTOOLS_SECRET_<NAME>")
        out[name.strip()] = value
    return out


def machine_args(args: argparse.Namespace) -> dict[str, Any]:
    """The browser settings given on the command line: they win over the recording and the files."""
    from ..browser.locate import browser_options

    return browser_options(args.executable, args.headed, args.remote)


def load_config(args: argparse.Namespace) -> Config:
    from ..config.settings import Config

    overrides = {}
    if getattr(args, "viewport", None):
        overrides["viewport"] = args.viewport
    return Config.load(args.config, **overrides)


# create-call options that the run command sets itself; --extra may not set them
