"""The argument parser of every command, and ``-v`` wherever it is written."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


from .commands import (
    cmd_config,
    cmd_demo,
    cmd_doctor,
    cmd_parse,
    cmd_prompt,
    cmd_replay,
    cmd_rerender,
    cmd_score,
)
from .common import tool_arg
from .experiment import cmd_experiment
from .run import cmd_run

PROFILE_NAMES = ("roo", "full", "aleph", "fractal", "forge")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    ap = argparse.ArgumentParser(
        prog="xmltools",
        description="Interpret XML tool calls written by a model.",
        epilog="exit codes: 0 success; 1 the run failed or drifted; 2 a usage error (arguments, settings,"
        " files); 3 the environment (no browser, an endpoint that cannot be reached)",
    )
    ap.add_argument("--version", action="version", version=f"xmltools {__version__}")
    ap.add_argument("-v", "--verbose", action="count", default=0, help=_VERBOSE_HELP)
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("parse", help="read a model message on stdin, print its blocks as JSON")
    p.add_argument("--compat", choices=["default", "roo"], default="default")
    p.add_argument(
        "--profile",
        choices=list(PROFILE_NAMES),
        default="roo",
        help="the dialect to read: its browser tools and parameters (full adds ref, selector, frame, ...)",
    )
    p.add_argument(
        "--fenced", choices=["call", "text"], default="call", help="how to read calls in ``` fences"
    )
    p.add_argument(
        "--tool",
        action="append",
        type=tool_arg,
        default=[],
        metavar="NAME=PARAM,...",
        help="add a tool (repeatable); mark raw-text parameters with a trailing *",
    )
    p.add_argument(
        "--chunk", type=int, default=0, metavar="N", help="feed the stream parser N characters at a time"
    )
    p.add_argument("--indent", type=int, default=None)
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("prompt", help="print the tools' section of the system prompt")
    p.add_argument("--viewport", default=None, help="WIDTHxHEIGHT (default 900x600, or the variant's)")
    p.add_argument("--actions", default="", help="comma-separated actions to offer (default: all)")
    p.add_argument("--templates", default=None, metavar="DIR", help="a folder of template overrides")
    p.add_argument(
        "--variant", default=None, metavar="DIR", help="a variant: template overrides and variant.toml"
    )
    p.add_argument("--policy", choices=["reject", "auto_close", "allow"], default=None)
    p.add_argument(
        "--profile",
        choices=list(PROFILE_NAMES),
        default=None,
        help="roo: the nine classic actions (the default); full: refs, selectors, forms, tabs;"
        " aleph, fractal, forge: those tools' dialects",
    )
    p.add_argument(
        "--observe",
        choices=["screenshot", "snapshot", "both"],
        default=None,
        help="what each result shows, as the prompt describes it (default: screenshot)",
    )
    p.add_argument(
        "--list", action="store_true", help="list the templates and the variables each one uses, then stop"
    )
    p.set_defaults(func=cmd_prompt)

    p = sub.add_parser("config", help="print every setting's effective value and where it came from")
    p.add_argument(
        "--config", default=None, metavar="FILE", help="a TOML configuration file (default: xmltools.toml)"
    )
    p.set_defaults(func=cmd_config)

    p = sub.add_parser(
        "rerender", help="re-render a recorded transcript under a variant and diff it, offline"
    )
    p.add_argument("file")
    p.add_argument("--variant", required=True, metavar="DIR")
    p.add_argument(
        "--before", default=None, metavar="DIR", help="compare with this variant, not the recording"
    )
    p.add_argument("--no-diff", action="store_true", help="only the table")
    p.set_defaults(func=cmd_rerender)

    p = sub.add_parser("score", help="score a corpus of model outputs (transcripts or JSONL of raw outputs)")
    p.add_argument("corpus", nargs="+")
    p.add_argument(
        "--variant", action="append", default=[], metavar="DIR", help="score under this variant (repeatable)"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser(
        "experiment",
        help="prompt experiments: a matrix of variants, models and tasks, each trial checked on its page",
        description="xmltools experiment run FILE.toml runs an experiment file; xmltools experiment show"
        " DB prints its matrix again. The flags below run one task as a shorthand. Exit codes: 0 the run"
        " ended; 2 a usage error (a bad file or flag); 3 the environment (no browser, a model that"
        " cannot be reached: what was done is kept, and a rerun resumes).",
    )
    p.add_argument("what", nargs="?", choices=["run", "show"], help="run an experiment file, or show a run")
    p.add_argument("file", nargs="?", help="the experiment file (run), or the results database (show)")
    p.add_argument("--variants", nargs="+", metavar="DIR", help="variant folders ('default' for none)")
    p.add_argument("--task", help="the instruction (shorthand for one task)")
    p.add_argument("--model", help="the model's name")
    p.add_argument("--base-url", default=None)
    p.add_argument("--provider", choices=["openai", "anthropic"], default="openai")
    p.add_argument("--api-key-env", default=None, metavar="VAR")
    p.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="KIND=VALUE",
        help="a check of the final page or answer (url=/done.html, text=Saved, js=..., answer=...)",
    )
    p.add_argument("--trials", type=int, default=None)
    p.add_argument("--max-turns", type=int, default=None)
    p.add_argument("--max-cost", type=float, default=None, help="start no trial once the run cost this much")
    p.add_argument("--concurrency", type=int, default=None, help="trials at once (default: the pool's)")
    p.add_argument(
        "--remote",
        default=None,
        metavar="URL[,URL...]",
        help="run the browsers at these endpoints (Playwright servers ws://HOST:PORT/, or DevTools)",
    )
    p.add_argument("--no-cache", action="store_true", help="ask the model every time")
    p.add_argument("--fresh", action="store_true", help="start over: forget the earlier results in --out")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="render the prompts, count the trials, estimate the cost; call no model",
    )
    p.add_argument("--csv", action="store_true", help="show: the trials as CSV")
    p.add_argument("--json", action="store_true", help="show: the trials as JSON")
    p.add_argument(
        "--out", default="out/experiment", help="where results.sqlite, transcripts and the cache go"
    )
    p.set_defaults(func=cmd_experiment)

    p = sub.add_parser("doctor", help="find the browser, launch it, load a page, take a screenshot")
    p.add_argument("--executable", default=None, help="a Chromium or Chrome to use")
    p.add_argument("--remote", default=None, help="a DevTools endpoint (http://127.0.0.1:9222) or 'auto'")
    p.add_argument("--config", default=None, help="a TOML file of settings (default: xmltools.toml here)")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "run",
        help="run the browser_action loop against an OpenAI-compatible server or Anthropic's API",
        description="Exit codes: 0 the model ended the run (it completed, or answered without a tool);"
        " 1 the loop stopped it (the mistake limit; --max-turns, even when the model answered on the"
        " last turn it was given; a call held for approval); 2 a usage error; 3 the environment (no"
        " browser, a model endpoint that fails).",
    )
    p.add_argument(
        "--provider",
        choices=["openai", "anthropic"],
        default="openai",
        help="openai: any OpenAI-compatible chat server (the default); anthropic: the Messages API"
        " (with it, results are sent in Anthropic's shape)",
    )
    p.add_argument(
        "--base-url",
        default=None,
        help="such as http://127.0.0.1:8000/v1 (openai reads OPENAI_BASE_URL and anthropic"
        " ANTHROPIC_BASE_URL when it is not given)",
    )
    p.add_argument("--model", required=True)
    p.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="the variable holding the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)",
    )
    p.add_argument("--task", required=True, help="what the model should do")
    p.add_argument("--max-turns", type=int, default=20)
    p.add_argument("--config", default=None, metavar="FILE", help="a TOML configuration file")
    p.add_argument("--viewport", default=None, help="WIDTHxHEIGHT")
    p.add_argument("--no-stream", action="store_true", help="ask for whole replies instead of a stream")
    p.add_argument("--retries", type=int, default=2, help="HTTP retries of the client")
    p.add_argument("--temperature", type=float, default=None, help="the model's sampling temperature")
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the longest reply, in tokens (anthropic's default: 4096)",
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
        " the result is printed",
    )
    p.add_argument(
        "--no-completion-tool",
        action="store_true",
        help="do not offer attempt_completion (the model then ends by answering without a tool)",
    )
    p.add_argument(
        "--record",
        default=None,
        metavar="FILE",
        help="record the run as a transcript (screenshots beside it), for replay and score",
    )
    p.add_argument("--report", default=None, metavar="FILE", help="write the run's HTML report")
    p.add_argument(
        "--embed", action="store_true", help="embed the report's images (default: files beside it)"
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="the main job on the bundled default")
    p.add_argument("--out", default="out/demo", help="where the recording and the report go")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "replay",
        help="replay a transcript and report every step that drifted or failed",
        description="Exit codes: 0 every step as recorded (with --update: written, or already up to"
        " date); 1 a step drifted or failed (with --update: nothing written); 2 a usage error"
        " (a bad argument, a missing {base_url} or secret); 3 the environment (no browser).",
    )
    p.add_argument("file")
    p.add_argument("--offline", action="store_true", help="feed back the recorded observations; no browser")
    p.add_argument(
        "--serve", default=None, metavar="DIR", help="serve a folder on 127.0.0.1 and fill {base_url}"
    )
    p.add_argument("--base-url", default=None, help="fill {base_url} with this")
    p.add_argument("--record", default=None, metavar="OUT.jsonl", help="record the replay")
    p.add_argument(
        "--heal",
        default=None,
        metavar="MODEL",
        help="ask this model once about each step whose recorded element is gone, and use its call"
        " when it runs (reported as healed; --update writes it back)",
    )
    p.add_argument("--heal-provider", choices=["openai", "anthropic"], default="openai")
    p.add_argument(
        "--heal-base-url", default=None, help="the healing model's server (openai reads OPENAI_BASE_URL)"
    )
    p.add_argument("--heal-api-key-env", default=None, metavar="VAR", help="the variable holding its key")
    p.add_argument(
        "--tracing",
        choices=("off", "on", "retain-on-failure"),
        default="off",
        help="a Playwright trace of each browser session (playwright show-trace), and each step's"
        " network requests in the report: off (the default), on, or kept only when the replay fails",
    )
    p.add_argument(
        "--trace-dir", default="traces", metavar="DIR", help="where the traces go (default traces)"
    )
    p.add_argument(
        "--update",
        action="store_true",
        help="write what the live app does now back into the transcript (new identities and targets"
        " of re-matched steps, new observations); nothing is written when a step fails",
    )
    p.add_argument("--report", default=None, metavar="OUT.html", help="write the HTML report")
    p.add_argument(
        "--embed", action="store_true", help="embed the report's images (default: files beside it)"
    )
    p.add_argument("--diffs", default=None, metavar="DIR", help="write each drifted screenshot's diff here")
    p.add_argument(
        "--allow-failures", action="store_true", help="a failed step that was not recorded is no failure"
    )
    p.add_argument(
        "--rematch",
        choices=("on", "off", "strict"),
        default=None,
        help="a step whose target now reaches another element than the recorded one: find the recorded"
        " one by its identity (on, the default), fail (strict), or act as written (off)",
    )
    p.add_argument(
        "--drift",
        choices=("fail", "warn"),
        default=None,
        help="a step that differs from its recording fails the replay (fail, the default), or is"
        " reported while the assertions and failed calls alone decide (warn)",
    )
    p.add_argument(
        "--screenshot-threshold",
        type=float,
        default=None,
        metavar="T",
        help="colour distance at which a pixel differs, 0 to 1 (default 0.2)",
    )
    p.add_argument(
        "--max-diff-pixel-ratio",
        type=float,
        default=None,
        metavar="R",
        help="the share of differing pixels that is still no drift (when no limit is set: 0.0001)",
    )
    p.add_argument(
        "--max-diff-pixels", type=int, default=None, metavar="N", help="the count that is still no drift"
    )
    p.add_argument(
        "--mask", action="append", default=[], metavar="X,Y,W,H", help="a region to leave out (CSS px)"
    )
    p.add_argument(
        "--mask-selector", action="append", default=[], metavar="CSS", help="elements to leave out"
    )
    p.add_argument(
        "--ignore-console", action="append", default=[], metavar="REGEX", help="console lines to ignore"
    )
    p.add_argument(
        "--ignore-snapshot",
        action="append",
        default=[],
        metavar="REGEX",
        help="ARIA snapshot lines to ignore where snapshots were recorded",
    )
    p.add_argument("--secret", action="append", default=[], metavar="NAME=VALUE", help="fill {secret:NAME}")
    p.add_argument("--executable", default=None, help="the Chromium to run (this machine's)")
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument("--remote", default=None, metavar="URL", help="connect to this browser endpoint")
    p.set_defaults(func=cmd_replay)

    from .export import cmd_export

    p = sub.add_parser(
        "export",
        help="write a recorded transcript as a plain pytest-playwright test",
        description="Exit codes: 0 written; 2 a usage error (a transcript that cannot be read, or has"
        " nothing recorded to export; an output file that cannot be written).",
    )
    p.add_argument("file")
    p.add_argument("--pytest", action="store_true", required=True, help="a pytest-playwright test module")
    p.add_argument("-o", "--output", default=None, metavar="OUT.py", help="write it here (default: stdout)")
    p.set_defaults(func=cmd_export)
    return ap


_VERBOSE_HELP = "show the xmltools log on stderr: -v one line a turn, -vv each browser action too"


def verbose_everywhere(ap: argparse.ArgumentParser) -> None:
    """Let ``-v`` come after the subcommand too (``xmltools run -v ...``)."""
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for p in action.choices.values():
                if "-v" not in p._option_string_actions:
                    p.add_argument(
                        "-v", "--verbose", action="count", default=argparse.SUPPRESS, help=_VERBOSE_HELP
                    )
