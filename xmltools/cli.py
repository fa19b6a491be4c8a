"""The ``xmltools`` command line: a thin layer over the library.

Each subcommand parses its arguments, calls the library and prints.  Heavy
imports (Playwright, Jinja2) happen inside the subcommands that need them, so
``xmltools parse`` starts fast.

A host error is one line on stderr (``xmltools: <message>``, no traceback),
and the exit code says whose problem it is: 0 success; 1 the run failed or
drifted; 2 a usage error (bad arguments, a bad setting, a file that cannot be
read); 3 the environment (no browser, a browser or model endpoint that cannot
be reached).  ``-v`` shows the ``xmltools`` logger's INFO records on stderr
(one line a turn), ``-vv`` its DEBUG records too (each browser action).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .errors import BrowserError, MistakeLimitError, ModelError, UsageError, XmltoolsError
from .parser import StreamParser, ToolSyntax, parse

if TYPE_CHECKING:
    from .config import Config
    from .interpreter import AsyncInterpreter
    from .tools import Tool
    from .transcript import TranscriptWriter

__all__ = ["main"]


def _tool_arg(spec: str) -> ToolSyntax:
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


def cmd_parse(args: argparse.Namespace) -> int:
    from .profiles import get_profile

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


def _secret_args(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--secret takes NAME=VALUE (got {pair!r}); or set XMLTOOLS_SECRET_<NAME>")
        out[name.strip()] = value
    return out


def _machine_args(args: argparse.Namespace) -> dict[str, Any]:
    """The browser settings given on the command line: they win over the recording and the files."""
    from .browser.locate import browser_options

    return browser_options(args.executable, args.headed, args.remote)


def cmd_replay(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib
    import tempfile
    from pathlib import Path

    from pydantic import ValidationError

    from .compare import Region
    from .loop import turn_line
    from .report import write_report
    from .serve import serve_directory
    from .transcript import ReplaySettings, ReplayStep, load_transcript, replay, replay_config

    transcript = load_transcript(args.file)
    total = len(transcript.assistant_messages)
    try:
        settings = ReplaySettings(
            screenshot_threshold=args.screenshot_threshold,
            max_diff_pixel_ratio=args.max_diff_pixel_ratio,
            max_diff_pixels=args.max_diff_pixels,
            mask=[Region.parse(m) for m in args.mask],
            mask_selectors=args.mask_selector,
            ignore_console=args.ignore_console,
        )
    except ValidationError as e:
        first = e.errors()[0]
        where = "--" + str(first["loc"][0]).replace("_", "-") if first.get("loc") else "an option"
        raise UsageError(f"{where}: {first['msg']} (got {first.get('input')!r})") from e
    config, differences = replay_config(transcript, overrides=_machine_args(args))
    for d in differences:  # before the run: they may explain what follows
        print(f"setting {d}")

    def show(step: ReplayStep) -> None:
        line = turn_line(step.index - 1, step.turn)
        print(f"[{step.index}/{total}] {line.split(': ', 1)[1]} ({step.duration:.2f} s)", flush=True)
        for f in step.failures:
            print(f"    FAILED {f}")
        for d in step.drifts:
            print(f"    DRIFT {str(d).split(': ', 1)[1]}")

    with contextlib.ExitStack() as stack:
        base = args.base_url
        if args.serve:
            base = stack.enter_context(serve_directory(args.serve))
            print(f"serving {args.serve} at {base}")
        record = args.record
        if args.report and not record:
            record = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "replay.jsonl")
        result = asyncio.run(
            replay(
                transcript,
                offline=args.offline,
                base_url=base,
                config=config,
                settings=settings,
                secrets=_secret_args(args.secret),
                allow_failures=args.allow_failures,
                record=record,
                diff_dir=args.diffs,
                on_step=show,
            )
        )
        result.differences = differences
        if args.report:
            path = write_report(args.report, record, result, embed=args.embed)
            print(f"report: {path}")
    print(result.summary())
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_prompt(args: argparse.Namespace) -> int:
    from .experiment import Variant
    from .render import Renderer
    from .tools import ToolRegistry, parse_size

    if args.list:
        from .render import format_templates

        print(format_templates(args.templates))
        return 0
    from .config import Config

    variant = Variant.load(args.variant) if args.variant else Variant.default()
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

    from .experiment import Variant, format_rerender, rerender

    variant = Variant.load(args.variant)
    before = Variant.load(args.before) if args.before else None
    diffs = asyncio.run(rerender(args.file, variant, before=before))
    print(f"{args.file}: {'recorded' if before is None else before.name} -> {variant.name}")
    print(format_rerender(diffs, show_diff=not args.no_diff))
    return 0


def _check_corpus(paths: Sequence[str]) -> None:
    """Read each corpus file first, so that a file problem is one line naming the file and the line.

    A transcript is loaded whole (every record checked); a file of raw outputs
    has its first record checked here and the others as it is scored.
    """
    from .errors import TranscriptError
    from .transcript import load_transcript, not_json, read_lines

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

    from .experiment import Variant, format_scores, scores_for

    variants = [Variant.default() if v == "default" else Variant.load(v) for v in args.variant] or [
        Variant.default()
    ]
    _check_corpus(args.corpus)
    scores = scores_for(args.corpus, variants)
    if args.json:
        print(json.dumps([s.to_json() for s in scores], indent=2))
    else:
        print(format_scores(scores))
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    import asyncio
    import os

    import openai

    from .experiment import Variant, format_trials, run_trials
    from .loop import OpenAIModel

    key = (
        os.environ.get(args.api_key_env, "") if args.api_key_env else os.environ.get("OPENAI_API_KEY", "none")
    )
    if args.api_key_env and not key:
        raise UsageError(f"--api-key-env {args.api_key_env}: that variable is not set")
    variants = [Variant.load(v) if v != "default" else Variant.default() for v in args.variants]

    def model() -> OpenAIModel:
        return OpenAIModel(openai.AsyncOpenAI(base_url=args.base_url, api_key=key, max_retries=2), args.model)

    stats = asyncio.run(
        run_trials(
            variants,
            args.task,
            model,
            trials=args.trials,
            out_dir=args.out,
            max_turns=args.max_turns,
            progress=lambda line: print(line, flush=True),
        )
    )
    print()
    print(format_trials(stats))
    print(f"\nsummary: {args.out}/summary.html")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    import asyncio
    import tempfile
    from pathlib import Path

    from .browser.locate import browser_version, find_chromium, install_hint
    from .browser.session import BrowserSession
    from .browser.settings import BrowserConfig
    from .errors import BrowserNotFoundError
    from .results import Failure
    from .serve import serve_directory

    def step(ok: bool, what: str, fix: str = "") -> bool:
        print(f"[{'ok' if ok else 'FAIL'}] {what}")
        if not ok and fix:
            print("       " + fix.replace("\n", "\n       "))
        return ok

    if args.remote:
        found = None
        step(True, f"remote mode: {args.remote}")
    else:
        try:
            found = find_chromium(args.executable)
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
                cfg = BrowserConfig(executable=args.executable, remote=args.remote)
                async with BrowserSession(cfg) as b:
                    try:
                        res = await b.launch(base + "/index.html")
                    except BrowserError as e:
                        fix = install_hint() if not args.remote else ""
                        step(False, f"launch and load a page: {e}", fix)
                        return 1
                    if isinstance(res, Failure):
                        fix = install_hint() if res.kind == "launch" and not args.remote else ""
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
    from .config import explain, format_settings

    print(format_settings(explain(args.config)))
    return 0


def _load_config(args: argparse.Namespace) -> Config:
    from .config import Config

    overrides = {}
    if getattr(args, "viewport", None):
        overrides["viewport"] = args.viewport
    return Config.load(args.config, **overrides)


# create-call options that the run command sets itself; --extra may not set them
_RUN_RESERVED = {
    "model": "--model",
    "messages": "--task",
    "stream": "--no-stream",
    "system": "the system prompt the interpreter writes",
}


def _run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The model's other create-call options: ``--extra``, then ``--temperature`` and ``--max-tokens``."""
    options: dict[str, Any] = {}
    if args.extra is not None:
        try:
            extra = json.loads(args.extra)
        except ValueError as e:
            raise UsageError(
                f"--extra is not valid JSON ({e}): give an object such as '{{\"top_p\": 0.9}}'"
            ) from e
        if not isinstance(extra, dict):
            raise UsageError(f"--extra must be a JSON object of model options, not {type(extra).__name__}")
        for key in extra:
            if key in _RUN_RESERVED:
                raise UsageError(f"--extra may not set {key!r}: it comes from {_RUN_RESERVED[key]}")
        options.update(extra)
    if args.temperature is not None:
        options["temperature"] = args.temperature
    if args.max_tokens is not None:
        if args.max_tokens < 1:
            raise UsageError("--max-tokens must be at least 1")
        options["max_tokens"] = args.max_tokens
    return options


def cmd_run(args: argparse.Namespace) -> int:
    import os

    options = _run_options(args)  # before anything else: a bad --extra is a one-line error
    key: str | None = None
    if args.api_key_env:
        if args.api_key_env not in os.environ:
            raise UsageError(f"--api-key-env {args.api_key_env}: that variable is not set")
        key = os.environ[args.api_key_env]

    import tempfile
    from pathlib import Path

    from .interpreter import AsyncInterpreter
    from .loop import AnthropicModel, LoopEvent, OpenAIModel, loop_registry, run_loop, turn_line
    from .report import write_report
    from .tools import COMPLETION_TOOL

    model: OpenAIModel | AnthropicModel
    config = _load_config(args)
    if args.provider == "anthropic":
        try:
            import anthropic
        except ImportError as e:  # pragma: no cover - the extra is missing
            raise UsageError(
                "xmltools run --provider anthropic needs the anthropic package:"
                " pip install 'xmltools[anthropic]'"
            ) from e
        config = config.model_copy(update={"shape": "anthropic"})
        # without --base-url and --api-key-env the SDK reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
        client_args: dict[str, Any] = {"max_retries": args.retries}
        if args.base_url:
            client_args["base_url"] = args.base_url
        if key is not None:
            client_args["api_key"] = key
        max_tokens = options.pop("max_tokens", 4096)
        model = AnthropicModel(
            anthropic.Anthropic(**client_args),
            args.model,
            stream=not args.no_stream,
            max_tokens=max_tokens,
            **options,
        )
    else:
        try:
            import openai
        except ImportError as e:  # pragma: no cover - the extra is missing
            raise UsageError("xmltools run needs the openai package: pip install 'xmltools[openai]'") from e
        base_url = args.base_url or os.environ.get("OPENAI_BASE_URL")  # as the SDK itself reads it
        if not base_url:
            raise UsageError(
                "--base-url (or OPENAI_BASE_URL) is needed with --provider openai,"
                " such as http://127.0.0.1:8000/v1"
            )
        if key is None:
            key = os.environ.get("OPENAI_API_KEY") or "not-needed"
        client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=args.retries)
        model = OpenAIModel(client, args.model, stream=not args.no_stream, **options)

    completion = None if args.no_completion_tool else COMPLETION_TOOL
    interp = AsyncInterpreter(config, registry=loop_registry(config, completion))
    messages = [
        {"role": "system", "content": interp.system_prompt()},
        {"role": "user", "content": args.task},
    ]

    with contextlib.ExitStack() as stack:
        record = args.record
        if args.report and not record:  # the report is made from a recording: keep one for the while
            record = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "run.jsonl")
        writer = None
        if record:
            writer = stack.enter_context(_run_writer(record, args, config, interp, completion, key))
            writer.message("system", messages[0]["content"])
            writer.message("user", args.task)

        def progress(e: LoopEvent) -> None:
            if e.turn is not None:
                if writer is not None:
                    writer.turn(e.turn)
                print(turn_line(e.index, e.turn), flush=True)

        try:
            res = run_loop(model, messages, interpreter=interp, max_turns=args.max_turns, on_event=progress)
        except XmltoolsError as e:
            if writer is not None:
                with contextlib.suppress(XmltoolsError, OSError):
                    writer.end("failed", type(e).__name__, str(e).splitlines()[0] if str(e) else None)
            if writer is not None and args.report:  # the turns before the failure are worth a report
                writer.close()
                with contextlib.suppress(XmltoolsError, OSError):
                    failed = write_report(args.report, record, embed=args.embed)
                    print(f"report (up to the failure): {failed}")
            raise
        print(f"stopped: {res.stop_reason} after {len(res.turns)} turns; {res.usage.describe()}")
        if writer is not None:
            ended = "completed" if res.stop_reason in ("no_tool", "completed") else "stopped"
            writer.end(ended, res.stop_reason, f"{len(res.turns)} turns; {res.usage.describe()}")
            writer.close()
            if args.record:
                print(f"recording: {args.record}")
            if args.report:
                print(f"report: {write_report(args.report, record, embed=args.embed)}")
    # 0: the model ended the run (it completed, or answered without a tool); 1: the loop stopped it
    # (the mistake limit, out of turns, or a call held for an approval the command cannot give)
    return 0 if res.stop_reason in ("no_tool", "completed") else 1


def _run_writer(
    record: str,
    args: argparse.Namespace,
    config: Config,
    interp: AsyncInterpreter,
    completion: Tool | None,
    key: str | None,
) -> TranscriptWriter:
    """A fresh transcript for ``run --record``: the settings, the template hashes and the tools offered."""
    from pathlib import Path

    from .transcript import Header, TranscriptWriter

    path = Path(record)
    if path.exists() and not path.is_file():
        raise UsageError(f"--record {record}: is a folder, not a file")
    header = Header(
        config=config.model_dump(mode="json"),
        templates=interp.renderer.template_hashes(),
        tools=[completion.name] if completion is not None else [],
        title=f"xmltools run, model {args.model}",
        description=args.task,
    )
    secrets = [key] if key and key != "not-needed" else []  # never written, should a page show it
    return TranscriptWriter(path, header, secrets=secrets)


PROFILE_NAMES = ("roo", "full", "aleph", "fractal", "forge")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

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
        type=_tool_arg,
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

    p = sub.add_parser("experiment", help="live trials of prompt variants against an OpenAI-compatible model")
    p.add_argument(
        "--variants", nargs="+", required=True, metavar="DIR", help="variant folders ('default' for none)"
    )
    p.add_argument("--task", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--base-url", required=True)
    p.add_argument("--api-key-env", default=None, metavar="VAR")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--max-turns", type=int, default=20)
    p.add_argument("--out", default="out/experiment", help="where transcripts, reports and the summary go")
    p.set_defaults(func=cmd_experiment)

    p = sub.add_parser("doctor", help="find the browser, launch it, load a page, take a screenshot")
    p.add_argument("--executable", default=None, help="a Chromium or Chrome to use")
    p.add_argument("--remote", default=None, help="a DevTools endpoint (http://127.0.0.1:9222) or 'auto'")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "run", help="run the browser_action loop against an OpenAI-compatible server or Anthropic's API"
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
        description="Exit codes: 0 every step as recorded; 1 a step drifted or failed; 2 a usage error"
        " (a bad argument, a missing {base_url} or secret); 3 the environment (no browser).",
    )
    p.add_argument("file")
    p.add_argument("--offline", action="store_true", help="feed back the recorded observations; no browser")
    p.add_argument(
        "--serve", default=None, metavar="DIR", help="serve a folder on 127.0.0.1 and fill {base_url}"
    )
    p.add_argument("--base-url", default=None, help="fill {base_url} with this")
    p.add_argument("--record", default=None, metavar="OUT.jsonl", help="record the replay")
    p.add_argument("--report", default=None, metavar="OUT.html", help="write the HTML report")
    p.add_argument(
        "--embed", action="store_true", help="embed the report's images (default: files beside it)"
    )
    p.add_argument("--diffs", default=None, metavar="DIR", help="write each drifted screenshot's diff here")
    p.add_argument(
        "--allow-failures", action="store_true", help="a failed step that was not recorded is no failure"
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
    p.add_argument("--secret", action="append", default=[], metavar="NAME=VALUE", help="fill {secret:NAME}")
    p.add_argument("--executable", default=None, help="the Chromium to run (this machine's)")
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument("--remote", default=None, metavar="URL", help="connect to this browser endpoint")
    p.set_defaults(func=cmd_replay)
    return ap


EXIT_OK = 0
EXIT_FAILED = 1  # the run failed or drifted
EXIT_USAGE = 2  # bad arguments, a bad setting, a file that cannot be read (argparse exits 2 too)
EXIT_ENVIRONMENT = 3  # no browser, a browser or model endpoint that cannot be reached

_VERBOSE_HELP = "show the xmltools log on stderr: -v one line a turn, -vv each browser action too"


def _verbose_everywhere(ap: argparse.ArgumentParser) -> None:
    """Let ``-v`` come after the subcommand too (``xmltools run -v ...``)."""
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for p in action.choices.values():
                if "-v" not in p._option_string_actions:
                    p.add_argument(
                        "-v", "--verbose", action="count", default=argparse.SUPPRESS, help=_VERBOSE_HELP
                    )


def exit_code(e: BaseException) -> int:
    """The exit code for an error a command raised (see the module's docstring)."""
    if isinstance(e, BrowserError | ModelError):
        return EXIT_ENVIRONMENT
    if isinstance(e, UsageError):
        return EXIT_USAGE
    if isinstance(e, OSError):  # a file named on the command line; otherwise the machine's problem
        return EXIT_USAGE if e.filename is not None else EXIT_ENVIRONMENT
    if isinstance(e, MistakeLimitError):
        return EXIT_FAILED
    return EXIT_FAILED  # any other XmltoolsError: the run did not succeed


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
    if rest and not verbose:
        first += " (-v shows more)"
    print(f"xmltools: {first}", file=sys.stderr)
    if verbose:
        for line in rest:
            print(f"    {line}", file=sys.stderr)
    logging.getLogger("xmltools").debug("the error's traceback", exc_info=e)
    return exit_code(e)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code: 0 ok, 1 failed or drifted, 2 usage, 3 environment."""
    ap = build_parser()
    _verbose_everywhere(ap)
    args = ap.parse_args(argv)
    if getattr(args, "chunk", 0) and args.chunk < 0:
        ap.error("--chunk must be positive")
    verbose: int = args.verbose or 0
    with _log_to_stderr(verbose):
        try:
            rc: int = args.func(args)
        except BrokenPipeError:  # the reader went away (``xmltools parse | head``): stop quietly
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_FAILED
        except (XmltoolsError, OSError) as e:
            return _report_error(e, verbose)
    return rc


if __name__ == "__main__":
    sys.exit(main())
