"""The arguments of ``xmltools run``: the model, the task and its site, the browser, what is kept.

Declared for the command (:mod:`.run`), from the options several commands
share (:mod:`.options`): ``--headed``, ``--serve`` and ``--tracing`` are
declared once for ``run`` and ``replay``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..base.tracing import RUN_TRACING
from .options import (
    api_key_env_option,
    config_option,
    headed_option,
    provider_option,
    report_options,
    serve_option,
    tracing_options,
)

if TYPE_CHECKING:
    from .options import Subparsers

__all__ = ["run_parser"]

DESCRIPTION = (
    "stdout holds only the model's final answer (the completion tool's result, or its last reply when it"
    " ended without a tool), or with --json one JSON object; each turn, the run's notes and how it stopped"
    " go to stderr, with a spinner while it waits when stderr is a terminal."
    " Exit codes: 0 the model ended the run (it completed, or answered without a tool);"
    " 1 the loop stopped it (the mistake limit; --max-turns, even when the model answered on the"
    " last turn it was given; a call held for approval); 2 a usage error (a headed browser without a"
    " display among them); 3 the environment (no browser, a model endpoint that cannot be reached or"
    " fails, an MCP server that does not start)."
)


def run_parser(sub: Subparsers) -> argparse.ArgumentParser:
    """``xmltools run --model M --task T``: the model, the task and its site, the browser, the output
    (the command sets its function, :func:`xmltools.cli.run.add_parser`)."""
    p = sub.add_parser(
        "run",
        help="run the browser_action loop against an OpenAI-compatible server or Anthropic's API",
        description=DESCRIPTION,
    )
    _add_model_arguments(p)
    p.add_argument(
        "--task",
        required=True,
        help="what the model should do; {base_url} in it stands for the site's address (--site-url, --serve)",
    )
    p.add_argument(
        "--max-turns",
        type=int,
        default=20,
        metavar="N",
        help="the most model calls; the last is asked for the final answer (default: 20)",
    )
    config_option(p, help="a TOML file of settings (default: xmltools.toml here)")
    _add_site_arguments(p)
    _add_model_call_arguments(p)
    _add_output_arguments(p)
    return p


def _add_model_arguments(p: argparse.ArgumentParser) -> None:
    """Which model, where, with which key."""
    provider_option(
        p,
        help="openai: any OpenAI-compatible chat server (the default); anthropic: the Messages API"
        " (with it, results are sent in Anthropic's shape)",
    )
    p.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="the model's server, such as http://127.0.0.1:8000/v1 (default: OPENAI_BASE_URL, or"
        " ANTHROPIC_BASE_URL with anthropic); the site's address is --site-url",
    )
    p.add_argument("--model", required=True, help="the model's name, as its server knows it")
    api_key_env_option(
        p, help="the variable holding the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)"
    )


def _add_site_arguments(p: argparse.ArgumentParser) -> None:
    """The site the task is about, and the browser that visits it."""
    p.add_argument(
        "--site-url",
        default=None,
        metavar="URL",
        help="the site's address: it fills {base_url} in the task, and the recording writes it as"
        " {base_url}, so that a replay can serve the site elsewhere",
    )
    serve_option(
        p,
        help="serve this folder on 127.0.0.1 for the run: its address is the site's (as --site-url)",
    )
    p.add_argument(
        "--viewport",
        default=None,
        metavar="WxH",
        help="the browser's viewport, such as 1280x800 (default: the settings', 900x600)",
    )
    headed_option(p)


def _add_model_call_arguments(p: argparse.ArgumentParser) -> None:
    """How the model is called, and how the run ends: --no-stream to --no-completion-tool."""
    p.add_argument(
        "--no-stream",
        action="store_true",
        help="ask for whole replies instead of a stream (default: streamed, and cut after the first"
        " complete call)",
    )
    p.add_argument(
        "--retries", type=int, default=2, metavar="N", help="HTTP retries of the client (default: 2)"
    )
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        metavar="T",
        help="the model's sampling temperature (default: the server's)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the longest reply, in tokens (default: the server's; anthropic's: 4096)",
    )
    p.add_argument(
        "--extra",
        default=None,
        metavar="JSON",
        help="other options of the model's create call, as a JSON object, such as '{\"top_p\": 0.9}'",
    )
    p.add_argument(
        "--result-schema",
        default=None,
        metavar="SCHEMA.json",
        help="the result must be JSON of this schema: the completion tool refuses one that is not, and"
        " the result is printed as JSON",
    )
    p.add_argument(
        "--no-completion-tool",
        action="store_true",
        help="do not offer attempt_completion (the model then ends by answering without a tool)",
    )


def _add_output_arguments(p: argparse.ArgumentParser) -> None:
    """What the run prints and keeps: --json, the recording, the report, the traces."""
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object on stdout instead of the answer: stop_reason, turns, usage, cost,"
        " answer, result (with --result-schema), site_url, recording, report, traces",
    )
    p.add_argument(
        "--record",
        default=None,
        metavar="FILE",
        help="record the run as a transcript (screenshots beside it), for replay and score",
    )
    report_options(p, metavar="FILE", help="write the run's HTML report")
    tracing_options(p, RUN_TRACING)
