"""The commands other than ``run``.

parse, demo, replay, prompt, rerender, score, experiment, doctor and config.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import BrowserError, UsageError
from ..parser import StreamParser, parse

if TYPE_CHECKING:
    pass


from ..errors import EXIT_FAILED, EXIT_OK
from .common import machine_args, secret_args


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
    import asyncio
    import tempfile
    from pathlib import Path

    from pydantic import ValidationError

    from ..base.serve import serve_directory
    from ..loop import turn_line
    from ..record.report import write_report
    from ..record.transcript import ReplaySettings, load_transcript
    from ..replaying.compare import Region
    from ..replaying.run import ReplayStep, replay, replay_config
    from ..replaying.update import update

    if args.update and (args.offline or args.record or args.report):
        raise UsageError(
            "--update replays live and rewrites the transcript: --offline, --record and --report do not apply"
        )
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
            ignore_snapshot=args.ignore_snapshot,
        )
    except ValidationError as e:
        first = e.errors()[0]
        where = "--" + str(first["loc"][0]).replace("_", "-") if first.get("loc") else "an option"
        raise UsageError(f"{where}: {first['msg']} (got {first.get('input')!r})") from e
    overrides = machine_args(args)
    for name in ("rematch", "drift"):
        if getattr(args, name) is not None:
            overrides[name] = getattr(args, name)
    config, differences = replay_config(transcript, overrides=overrides)
    for d in differences:  # before the run: they may explain what follows
        print(f"setting {d}")

    def show(step: ReplayStep) -> None:
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

    with contextlib.ExitStack() as stack:
        base = args.base_url
        if args.serve:
            base = stack.enter_context(serve_directory(args.serve))
            print(f"serving {args.serve} at {base}")
        record = args.record
        if args.report and not record:
            record = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "replay.jsonl")
        common: dict[str, Any] = {
            "base_url": base,
            "config": config,
            "settings": settings,
            "secrets": secret_args(args.secret),
            "allow_failures": args.allow_failures,
            "diff_dir": args.diffs,
            "on_step": show,
            "tracing": args.tracing,
            "trace_dir": args.trace_dir,
        }
        if args.heal:
            from ..models.adapters import build_model

            common["heal"] = build_model(
                args.heal_provider,
                args.heal,
                base_url=args.heal_base_url,
                api_key_env=args.heal_api_key_env,
                flag="--heal-base-url",
            )
        if args.update:
            done = asyncio.run(update(args.file, **common))
            done.result.differences = differences
            print(done.result.summary())
            print(done.summary())
            return EXIT_FAILED if done.why_not is not None else EXIT_OK
        result = asyncio.run(replay(transcript, offline=args.offline, record=record, **common))
        result.differences = differences
        for trace in result.traces:
            print(f"trace: {trace} (playwright show-trace {trace})")
        if args.report:
            path = write_report(args.report, record, result, embed=args.embed)
            print(f"report: {path}")
    print(result.summary())
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_prompt(args: argparse.Namespace) -> int:
    from ..lab.variants import Variant
    from ..render.prompts import Renderer
    from ..tools import ToolRegistry, parse_size

    if args.list:
        from ..render.prompts import format_templates

        print(format_templates(args.templates))
        return 0
    from ..config.settings import Config

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

    from ..lab.variants import Variant, format_rerender, rerender

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
