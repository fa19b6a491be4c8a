"""The commands other than ``run``.

parse, demo, replay, prompt, rerender, score, experiment, doctor and config.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import BrowserError, UsageError
from ..parser import StreamParser, parse

if TYPE_CHECKING:
    from ..models.adapters import AnyModel
    from ..replaying.run import ReplayStep
    from ..replaying.runner import ReplayOptions


from ..errors import EXIT_FAILED, EXIT_OK
from .common import secret_args
from .interrupt import kept, run_interruptibly


def cmd_parse(args: argparse.Namespace) -> int:
    from ..profiles import get_profile

    text = sys.stdin.read()
    tools = [*get_profile(args.profile).tools, *args.tool]
    if args.chunk:
        p = StreamParser(tools, compat=args.compat, fenced=args.fenced)
        for i in range(0, len(text), args.chunk):
            p.feed(text[i : i + args.chunk])
        p.close()
        blocks = p.blocks()
    else:
        blocks = parse(text, tools=tools, compat=args.compat, fenced=args.fenced)
    json.dump([b.to_json() for b in blocks], sys.stdout, indent=args.indent, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(args.out)


def cmd_replay(args: argparse.Namespace) -> int:
    import functools

    from ..replaying.runner import ReplayRunner

    if args.update and (args.offline or args.record or args.report):
        raise UsageError(
            "--update replays live and rewrites the transcript: --offline, --record and --report do not apply"
        )
    runner = ReplayRunner(args.file, _replay_options(args), say=print, named=_option_flag)
    total = len(runner.transcript.assistant_messages)
    steps: list[ReplayStep] = []
    show = functools.partial(_show_step, total, steps)
    try:
        done = run_interruptibly(runner.run(on_step=show))
    except KeyboardInterrupt:
        kept(f"{len(steps)} of {total} steps replayed")
        for note in runner.kept:
            kept(note)
        raise
    print(done.summary())
    return EXIT_OK if done.ok else EXIT_FAILED


def _replay_options(args: argparse.Namespace) -> ReplayOptions:
    """The replay's options, as the command line gives them; the secrets and the healing model are
    made once the folder is served."""
    import functools

    from ..replaying.runner import ReplayOptions

    return ReplayOptions(
        serve=args.serve or None,
        base_url=args.base_url,
        secrets=functools.partial(secret_args, args.secret),
        screenshot_threshold=args.screenshot_threshold,
        max_diff_pixel_ratio=args.max_diff_pixel_ratio,
        max_diff_pixels=args.max_diff_pixels,
        mask_text=args.mask,
        mask_selectors=args.mask_selector,
        ignore_console=args.ignore_console,
        ignore_snapshot=args.ignore_snapshot,
        ignore_mcp=args.ignore_mcp,
        mcp_calls=args.mcp_calls,
        allow_failures=args.allow_failures,
        rematch=args.rematch,
        drift=args.drift,
        executable=args.executable,
        headed=args.headed,
        remote=args.remote,
        offline=args.offline,
        update=args.update,
        record=args.record,
        report=args.report,
        embed=args.embed,
        diff_dir=args.diffs,
        tracing=args.tracing,
        trace_dir=args.trace_dir,
        heal=functools.partial(_heal_model, args) if args.heal else None,
    )


def _heal_model(args: argparse.Namespace) -> AnyModel:
    from ..models.adapters import build_model

    return build_model(
        args.heal_provider,
        args.heal,
        base_url=args.heal_base_url,
        api_key_env=args.heal_api_key_env,
        flag="--heal-base-url",
    )


def _option_flag(name: str) -> str:
    """A replay option's flag: ``max_diff_pixels`` is ``--max-diff-pixels``."""
    return "--" + name.replace("_", "-")


def _show_step(total: int, steps: list[ReplayStep], step: ReplayStep) -> None:
    """A replayed step as it is done: its line, then what failed, drifted, re-matched, healed, held."""
    from ..loop import turn_line

    steps.append(step)
    line = turn_line(step.index - 1, step.turn)
    print(f"[{step.index}/{total}] {line.split(': ', 1)[1]} ({step.duration:.2f} s)", flush=True)
    for f in step.failures:
        print(f"    FAILED {f}")
    for d in step.drifts:
        print(f"    DRIFT {str(d).split(': ', 1)[1]}")
    for r in step.rematched:
        now = r.reached or "nothing"
        print(f"    RE-MATCHED {r.expected} with {r.found_by} (the target now reaches {now})")
    if step.healed:
        print(f"    HEALED by the model: {' '.join(step.healed.split())[:200]}")
    for v in step.verdicts:
        print(f"    {'HOLDS' if v.ok else 'FAILED'} {v}")


def cmd_prompt(args: argparse.Namespace) -> int:
    from ..lab.variants import Variant
    from ..render.prompts import Renderer
    from ..tools import ToolRegistry, parse_size

    if args.list:
        from ..render.prompts import format_templates

        print(format_templates(args.templates))
        return 0
    from ..config.settings import Config

    variant = Variant.named(args.variant) if args.variant else Variant.default()
    config = variant.make_config(Config.load())  # the settings every command reads, then the variant's
    try:
        viewport = parse_size(args.viewport) if args.viewport else config.viewport
    except ValueError as e:
        raise UsageError(f"--viewport: {e}") from e
    actions = [a.strip() for a in args.actions.split(",") if a.strip()] if args.actions else None
    registry = ToolRegistry(actions=actions, profile=args.profile or config.profile)
    renderer = Renderer(args.templates or config.templates, policy=args.policy or config.policy)
    renderer.use_profile(registry.profile)
    if args.variant:
        print(f"# variant: {variant.name}\n")
    files = bool(config.allowed_file_roots) or "file" in config.allowed_schemes
    print(
        renderer.system_prompt(
            registry,
            viewport,
            file_urls=files,
            observe=args.observe or config.observe,
            upload_folders=config.action_context().upload_roots,
        )
    )
    return 0


def cmd_rerender(args: argparse.Namespace) -> int:
    import asyncio

    from ..lab.variants import Variant, format_rerender, rerender

    variant = Variant.named(args.variant)
    before = Variant.named(args.before) if args.before else None
    diffs = asyncio.run(rerender(args.file, variant, before=before))
    print(f"{args.file}: {'recorded' if before is None else before.name} -> {variant.name}")
    print(format_rerender(diffs, show_diff=not args.no_diff))
    return 0


def _check_corpus(paths: Sequence[str]) -> None:
    """Read each corpus file first, so that a file problem is one line naming the file and the line.

    A transcript is loaded whole (every record checked); a file of raw outputs
    has its first record checked here and the others as it is scored.
    """
    from ..errors import TranscriptError
    from ..record.transcript import load_transcript, not_json, read_lines

    for path in paths:
        for n, line in enumerate(read_lines(path, "corpus"), 1):
            if not line.strip():
                continue
            try:
                first = json.loads(line)
            except ValueError as e:
                raise TranscriptError(f"{path}:{n}: {not_json(e)}", path=path, line=n) from e
            if isinstance(first, dict) and "xmltools_transcript" in first:
                load_transcript(path)
            break


def cmd_score(args: argparse.Namespace) -> int:
    import json

    from ..lab.variants import Variant, format_scores, scores_for

    variants = [Variant.named(v) for v in args.variant] or [Variant.default()]
    _check_corpus(args.corpus)
    scores = scores_for(args.corpus, variants)
    if args.json:
        print(json.dumps([s.to_json() for s in scores], indent=2))
    else:
        print(format_scores(scores))
    return 0


# the settings the doctor shows: where the browser comes from and what a session looks like
DOCTOR_SETTINGS = (
    "executable",
    "remote",
    "headless",
    "viewport",
    "screenshot_format",
    "screenshot_quality",
    "device_scale_factor",
    "launch_timeout",
    "navigation_timeout",
    "profile_dir",
    "downloads_dir",
)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Check the browser the configuration names, as every other command would start it."""
    import asyncio
    import tempfile
    from pathlib import Path

    from ..base.results import Failure
    from ..base.serve import serve_directory
    from ..browser.locate import browser_version, find_chromium, install_hint
    from ..browser.session import BrowserSession
    from ..config.explain import explain, format_settings
    from ..config.settings import Config
    from ..errors import BrowserNotFoundError

    def step(ok: bool, what: str, fix: str = "") -> bool:
        print(f"[{'ok' if ok else 'FAIL'}] {what}")
        if not ok and fix:
            print("       " + fix.replace("\n", "\n       "))
        return ok

    overrides = {k: v for k in ("executable", "remote") if (v := getattr(args, k)) is not None}
    config = Config.load(args.config, **overrides)
    shown = [s for s in explain(args.config, **overrides) if s.name in DOCTOR_SETTINGS]
    print("settings (the layered configuration, as every command reads it):")
    print("    " + format_settings(shown).replace("\n", "\n    "))
    settings = config.browser_settings()
    if settings.remote:
        step(True, f"remote mode: {settings.remote}")
    else:
        try:
            found = find_chromium(settings.executable)
        except BrowserNotFoundError as e:
            step(False, "find a browser", str(e))
            return 1
        version = browser_version(found.path) or "version unknown"
        step(True, f"browser: {found.path} (found via {found.source}; {version})")

    async def check() -> int:
        with tempfile.TemporaryDirectory() as d:
            Path(d, "index.html").write_text(
                "<!doctype html><title>xmltools doctor</title><h1>It works</h1>"
                "<script>console.log('ok')</script>"
            )
            with serve_directory(d) as base:
                async with BrowserSession(settings) as b:
                    try:
                        res = await b.launch(base + "/index.html")
                    except BrowserError as e:
                        fix = install_hint() if not settings.remote else ""
                        step(False, f"launch and load a page: {e}", fix)
                        return 1
                    if isinstance(res, Failure):
                        fix = install_hint() if res.kind == "launch" and not settings.remote else ""
                        step(False, f"launch and load a page: {res.message}", fix)
                        return 1
                    step(True, f"launched {b.browser_version or 'the browser'} and loaded {res.url}")
                    shot = res.screenshot
                    if shot is None or not shot.data:
                        step(False, "take a screenshot")
                        return 1
                    step(
                        True, f"screenshot: {shot.width}x{shot.height} {shot.format}, {len(shot.data)} bytes"
                    )
                    step(res.title == "xmltools doctor", f"page title: {res.title!r}")
                    closed = await b.close()
                    step(closed is None, "close the browser")
        return 0

    rc = asyncio.run(check())
    print("all good" if rc == 0 else "doctor found a problem")
    return rc


def cmd_config(args: argparse.Namespace) -> int:
    from ..config.explain import explain, format_settings

    print(format_settings(explain(args.config)))
    return 0


# -- each command's parser, beside the command; xmltools.cli.args calls them in the order of --help

if TYPE_CHECKING:
    from .options import Subparsers


def add_parse_parser(sub: Subparsers) -> None:
    """``xmltools parse``: the dialect, the tools added to it, and how the text is fed."""
    from .common import tool_arg
    from .options import profile_option

    p = sub.add_parser("parse", help="read a model message on stdin, print its blocks as JSON")
    p.add_argument(
        "--compat",
        choices=["default", "roo", "cline"],
        default="default",
        help="default: only complete calls run; roo or cline: read as that agent's own parser reads",
    )
    profile_option(
        p,
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
    p.add_argument("--indent", type=int, default=None, metavar="N", help="indent the JSON by N spaces")
    p.set_defaults(func=cmd_parse)


def add_prompt_parser(sub: Subparsers) -> None:
    """``xmltools prompt``: what the system prompt is rendered with, or ``--list`` its templates."""
    from .options import profile_option

    p = sub.add_parser("prompt", help="print the tools' section of the system prompt")
    p.add_argument("--viewport", default=None, help="WIDTHxHEIGHT (default 900x600, or the variant's)")
    p.add_argument("--actions", default="", help="comma-separated actions to offer (default: all)")
    p.add_argument("--templates", default=None, metavar="DIR", help="a folder of template overrides")
    p.add_argument(
        "--variant",
        default=None,
        metavar="DIR",
        help="a variant: a folder of template overrides and variant.toml, or 'default' for the bundled"
        " prompts (the default)",
    )
    p.add_argument(
        "--policy",
        choices=["reject", "auto_close", "allow"],
        default=None,
        help="what the prompt says of other tools while the browser is open: refused (reject, the"
        " default), the browser closed first (auto_close), or allowed (allow)",
    )
    profile_option(
        p,
        default=None,
        help="roo: the nine classic actions (the default); cline: Cline's six, with task_progress;"
        " full: refs, selectors, forms, tabs; aleph, fractal, forge: those tools' dialects",
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


def add_config_parser(sub: Subparsers) -> None:
    """``xmltools config [--config FILE]``."""
    from .options import config_option

    p = sub.add_parser("config", help="print every setting's effective value and where it came from")
    config_option(p, help="a TOML configuration file (default: xmltools.toml)")
    p.set_defaults(func=cmd_config)


def add_rerender_parser(sub: Subparsers) -> None:
    """``xmltools rerender FILE --variant DIR``."""
    p = sub.add_parser(
        "rerender", help="re-render a recorded transcript under a variant and diff it, offline"
    )
    p.add_argument("file", metavar="FILE.jsonl", help="the recorded transcript")
    p.add_argument(
        "--variant",
        required=True,
        metavar="DIR",
        help="the variant to re-render under: a folder of template overrides and variant.toml, or"
        " 'default' for the bundled prompts",
    )
    p.add_argument(
        "--before",
        default=None,
        metavar="DIR",
        help="compare with this variant (a folder, or 'default'), not with the recording",
    )
    p.add_argument("--no-diff", action="store_true", help="only the table")
    p.set_defaults(func=cmd_rerender)


def add_score_parser(sub: Subparsers) -> None:
    """``xmltools score CORPUS... [--variant DIR]...``."""
    p = sub.add_parser("score", help="score a corpus of model outputs (transcripts or JSONL of raw outputs)")
    p.add_argument(
        "corpus",
        nargs="+",
        metavar="FILE",
        help='transcripts, or JSONL files of raw outputs ({"content": ...} a line)',
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="DIR",
        help="score under this variant: a folder, or 'default' for the bundled prompts (repeatable;"
        " default: default)",
    )
    p.add_argument("--json", action="store_true", help="print the scores as JSON, a record a variant")
    p.set_defaults(func=cmd_score)


def add_doctor_parser(sub: Subparsers) -> None:
    """``xmltools doctor``: the browser to check, as the settings would give it."""
    from .options import config_option

    p = sub.add_parser("doctor", help="find the browser, launch it, load a page, take a screenshot")
    p.add_argument("--executable", default=None, help="a Chromium or Chrome to use")
    p.add_argument("--remote", default=None, help="a DevTools endpoint (http://127.0.0.1:9222) or 'auto'")
    config_option(p, help="a TOML file of settings (default: xmltools.toml here)", metavar=None)
    p.set_defaults(func=cmd_doctor)


def add_demo_parser(sub: Subparsers) -> None:
    """``xmltools demo [--out DIR]``."""
    p = sub.add_parser("demo", help="the main job on the bundled default")
    p.add_argument("--out", default="out/demo", help="where the recording and the report go")
    p.set_defaults(func=cmd_demo)


def add_replay_parser(sub: Subparsers) -> None:
    """``xmltools replay FILE``: where it runs, what it leaves, what is drift, this machine's browser."""
    from .options import headed_option

    p = sub.add_parser(
        "replay",
        help="replay a transcript and report every step that drifted or failed",
        description="Exit codes: 0 every step as recorded (with --update: written, or already up to"
        " date); 1 a step drifted or failed (with --update: nothing written); 2 a usage error"
        " (a bad argument, a missing {base_url} or secret); 3 the environment (no browser).",
    )
    p.add_argument("file", metavar="FILE.jsonl", help="the recorded transcript")
    _add_replay_source_arguments(p)
    _add_replay_output_arguments(p)
    _add_replay_comparison_arguments(p)
    p.add_argument("--secret", action="append", default=[], metavar="NAME=VALUE", help="fill {secret:NAME}")
    p.add_argument("--executable", default=None, help="the Chromium to run (this machine's)")
    headed_option(p)
    p.add_argument("--remote", default=None, metavar="URL", help="connect to this browser endpoint")
    p.set_defaults(func=cmd_replay)


def _add_replay_source_arguments(p: argparse.ArgumentParser) -> None:
    """Where the replay runs (offline, a served folder, a base URL), its recording, and the healer."""
    from .options import api_key_env_option, provider_option, serve_option

    p.add_argument("--offline", action="store_true", help="feed back the recorded observations; no browser")
    serve_option(p, help="serve a folder on 127.0.0.1 and fill {base_url} with its address")
    p.add_argument("--base-url", default=None, help="fill {base_url} with this")
    p.add_argument("--record", default=None, metavar="OUT.jsonl", help="record the replay")
    p.add_argument(
        "--heal",
        default=None,
        metavar="MODEL",
        help="ask this model once about each step whose recorded element is gone, and use its call"
        " when it runs (reported as healed; --update writes it back)",
    )
    provider_option(p, "--heal-provider", help="the healing model's API: openai or anthropic")
    p.add_argument(
        "--heal-base-url", default=None, help="the healing model's server (openai reads OPENAI_BASE_URL)"
    )
    api_key_env_option(p, "--heal-api-key-env", help="the variable holding its key")


def _add_replay_output_arguments(p: argparse.ArgumentParser) -> None:
    """What the replay leaves: traces, the transcript updated, the report, the diffs; --allow-failures."""
    from ..base.tracing import CLI_TRACING
    from .options import report_options, tracing_options

    tracing_options(p, CLI_TRACING)
    p.add_argument(
        "--update",
        action="store_true",
        help="write what the live app does now back into the transcript (new identities and targets"
        " of re-matched steps, new observations); nothing is written when a step fails",
    )
    report_options(p, metavar="OUT.html", help="write the HTML report")
    p.add_argument("--diffs", default=None, metavar="DIR", help="write each drifted screenshot's diff here")
    p.add_argument(
        "--allow-failures", action="store_true", help="a failed step that was not recorded is no failure"
    )


def _add_replay_comparison_arguments(p: argparse.ArgumentParser) -> None:
    """What a step is compared by: re-matching, drift, the screenshot's limits, what is left out."""
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
    p.add_argument(
        "--ignore-mcp",
        action="append",
        default=[],
        metavar="REGEX",
        help="lines of MCP servers' answers to ignore",
    )
    p.add_argument(
        "--mcp-calls",
        choices=("read-only", "all", "none"),
        default="read-only",
        help="which MCP calls a live replay makes again and compares (default: read-only tools and"
        " resources; the others are answered from the recording)",
    )
