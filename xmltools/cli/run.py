"""``xmltools run``: a task for a model, with the browser, recorded and reported if asked."""

from __future__ import annotations

import argparse
import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, XmltoolsError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..config.settings import Config
    from ..interpreter import AsyncInterpreter
    from ..loop import LoopEvent, LoopResult
    from ..models.adapters import AnthropicModel, OpenAIModel
    from ..record.transcript import TranscriptWriter
    from ..tools import Tool
    from .options import Subparsers


from . import interrupt
from .common import load_config
from .options import api_key_env_option, config_option, provider_option, report_options

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


@dataclass
class _Run:
    """A run made ready: its arguments, settings, model and interpreter, and the opening messages."""

    args: argparse.Namespace
    config: Config
    model: OpenAIModel | AnthropicModel
    key: str | None  # the API key, which the recording leaves out
    completion: Tool | None
    shape: dict[str, Any] | None  # the JSON Schema the result must satisfy (--result-schema)
    interp: AsyncInterpreter
    messages: list[dict[str, Any]]


@dataclass
class _Recording:
    """The transcript a run writes: the --record file, or a temporary one that --report is made from."""

    path: str
    writer: TranscriptWriter
    turns: int = 0  # written so far


def cmd_run(args: argparse.Namespace) -> int:
    """Run the task: make the run ready, record it if asked, drive the loop, say how it ended."""
    options = _run_options(args)  # before anything else: a bad --extra is a one-line error
    run = _prepare(args, options)
    with contextlib.ExitStack() as stack:
        recording = _start_recording(run, stack)
        res = _drive(run, recording)
        _finish(run, res, recording)
    # 0: the model ended the run (it completed, or answered without a tool); 1: the loop stopped it
    # (the mistake limit; out of turns, even when the model answered on the last turn it was given,
    # since it did not finish on its own; or a call held for an approval the command cannot give)
    return 0 if res.stop_reason in ("no_tool", "completed") else 1


def _prepare(args: argparse.Namespace, options: dict[str, Any]) -> _Run:
    """The settings, the model and its key, the tools offered, the interpreter and the first messages."""
    import os

    from ..interpreter import AsyncInterpreter
    from ..loop import loop_registry
    from ..models.adapters import build_model

    config = load_config(args)
    model = build_model(
        args.provider,
        args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        retries=args.retries,
        stream=not args.no_stream,
        options=options,
    )
    if args.provider == "anthropic":
        config = config.model_copy(update={"shape": "anthropic"})
    # the key is kept out of the recording
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if key is None and args.provider == "openai":
        key = os.environ.get("OPENAI_API_KEY") or "not-needed"
    completion, shape = _completion(args)
    interp = AsyncInterpreter(config, registry=loop_registry(config, completion))
    messages = [
        {"role": "system", "content": interp.system_prompt()},
        {"role": "user", "content": args.task},
    ]
    return _Run(args, config, model, key, completion, shape, interp, messages)


def _completion(args: argparse.Namespace) -> tuple[Tool | None, dict[str, Any] | None]:
    """The completion tool (none with --no-completion-tool; its result checked with --result-schema)."""
    from ..tools import COMPLETION_TOOL, result_tool

    completion = None if args.no_completion_tool else COMPLETION_TOOL
    shape = _result_schema(args.result_schema) if args.result_schema else None
    if shape is not None:
        if completion is None:
            raise UsageError("--result-schema needs the completion tool: leave out --no-completion-tool")
        completion = result_tool(shape)
    return completion, shape


def _start_recording(run: _Run, stack: contextlib.ExitStack) -> _Recording | None:
    """The transcript, opened with the first two messages, when --record or --report asks for one."""
    import tempfile
    from pathlib import Path

    args = run.args
    record = args.record
    if args.report and not record:  # the report is made from a recording: keep one for the while
        record = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "run.jsonl")
    if not record:
        return None
    writer = stack.enter_context(_run_writer(record, args, run.config, run.interp, run.completion, run.key))
    writer.message("system", run.messages[0]["content"])
    writer.message("user", args.task)
    return _Recording(record, writer)


def _drive(run: _Run, recording: _Recording | None) -> LoopResult:
    """The loop, a line a turn; a failure ends the recording as failed before it is raised."""
    from ..loop import arun_loop
    from ..models.adapters import aclose_client

    progress = _progress(recording)

    async def drive() -> LoopResult:
        try:
            return await arun_loop(
                run.model,
                run.messages,
                interpreter=run.interp,
                max_turns=run.args.max_turns,
                on_event=progress,
                result=run.shape,
            )
        finally:
            await aclose_client(run.model.client)  # its connections, on the loop they belong to

    try:
        return interrupt.run(drive())
    except XmltoolsError as e:
        if recording is not None:
            _record_failure(run.args, recording, e)
        raise
    except KeyboardInterrupt:
        if recording is not None:
            _record_interrupt(run.args, recording)
        raise


def _progress(recording: _Recording | None) -> Callable[[LoopEvent], None]:
    """A line for each turn, checklist, nudge and budget note, each also in the transcript if any."""
    from ..loop import turn_line

    writer = recording.writer if recording is not None else None

    def progress(e: LoopEvent) -> None:
        if e.kind == "turn" and e.turn is not None:
            if recording is not None:
                recording.writer.turn(e.turn, e.usage)
                recording.turns += 1
            print(turn_line(e.index, e.turn), flush=True)
        elif e.kind in ("nudge", "budget") and e.note is not None:
            if writer is not None:
                writer.note(e.kind, e.note)
            print(f"  {e.kind}: {e.note.splitlines()[0]}", flush=True)
        elif e.kind == "progress" and e.turn is not None and e.turn.progress is not None:
            print(f"  progress: {e.turn.progress.summary()}", flush=True)  # the transcript has it on the turn

    return progress


def _record_failure(args: argparse.Namespace, recording: _Recording, e: XmltoolsError) -> None:
    """End the transcript as failed; with --report, report the turns before the failure."""
    from ..record.report import write_report

    with contextlib.suppress(XmltoolsError, OSError):
        recording.writer.end("failed", type(e).__name__, str(e).splitlines()[0] if str(e) else None)
    if args.report:  # the turns before the failure are worth a report
        recording.writer.close()
        with contextlib.suppress(XmltoolsError, OSError):
            failed = write_report(args.report, recording.path, embed=args.embed)
            print(f"report (up to the failure): {failed}")


def _record_interrupt(args: argparse.Namespace, recording: _Recording) -> None:
    """End the transcript as interrupted, write the report asked for, and say what was kept."""
    from ..record.report import write_report

    turns = recording.turns
    with contextlib.suppress(XmltoolsError, OSError):
        recording.writer.end("interrupted", "interrupted", f"{turns} turns before the interrupt")
    recording.writer.close()
    if args.record:
        interrupt.kept(f"the transcript {args.record} ({turns} turns, ended)")
    if args.report:
        with contextlib.suppress(XmltoolsError, OSError):
            interrupt.kept(f"the report {write_report(args.report, recording.path, embed=args.embed)}")


def _finish(run: _Run, res: LoopResult, recording: _Recording | None) -> None:
    """Say how the run stopped and its result; end the transcript, and write the report from it."""
    from ..record.report import write_report

    args = run.args
    print(f"stopped: {res.stop_reason} after {len(res.turns)} turns; {res.usage.describe()}")
    if res.output is not None:
        print(f"result: {json.dumps(res.output, ensure_ascii=False)}")
    if recording is None:
        return
    ended = "completed" if res.stop_reason in ("no_tool", "completed") else "stopped"
    recording.writer.end(ended, res.stop_reason, f"{len(res.turns)} turns; {res.usage.describe()}")
    recording.writer.close()
    if args.record:
        print(f"recording: {args.record}")
    if args.report:
        print(f"report: {write_report(args.report, recording.path, embed=args.embed)}")


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

    from ..record.transcript import TranscriptWriter, new_header

    path = Path(record)
    if path.exists() and not path.is_file():
        raise UsageError(f"--record {record}: is a folder, not a file")
    header = new_header(
        config,
        interp.renderer.template_hashes(),
        tools=[completion.name] if completion is not None else [],
        title=f"xmltools run, model {args.model}",
        description=args.task,
    )
    secrets = [key] if key and key != "not-needed" else []  # never written, should a page show it
    return TranscriptWriter(path, header, secrets=secrets)


def _result_schema(path: str) -> dict[str, Any]:
    """The JSON Schema a run's result must satisfy; a file that is not one is a one-line usage error."""
    from pathlib import Path

    try:
        schema = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--result-schema {path}: no such file") from None
    except (OSError, ValueError) as e:
        raise UsageError(f"--result-schema {path}: not a JSON file ({e})") from None
    if not isinstance(schema, dict):
        raise UsageError(f"--result-schema {path}: a JSON Schema is an object, not {type(schema).__name__}")
    return schema


def add_parser(sub: Subparsers) -> None:
    """``xmltools run --model M --task T``: the model, the loop's limits, the recording and the report."""
    p = sub.add_parser(
        "run",
        help="run the browser_action loop against an OpenAI-compatible server or Anthropic's API",
        description="Exit codes: 0 the model ended the run (it completed, or answered without a tool);"
        " 1 the loop stopped it (the mistake limit; --max-turns, even when the model answered on the"
        " last turn it was given; a call held for approval); 2 a usage error; 3 the environment (no"
        " browser, a model endpoint that fails, an MCP server that does not start).",
    )
    provider_option(
        p,
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
    api_key_env_option(
        p, help="the variable holding the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)"
    )
    p.add_argument("--task", required=True, help="what the model should do")
    p.add_argument("--max-turns", type=int, default=20)
    config_option(p, help="a TOML configuration file")
    p.add_argument("--viewport", default=None, help="WIDTHxHEIGHT")
    _add_model_call_arguments(p)
    p.add_argument(
        "--record",
        default=None,
        metavar="FILE",
        help="record the run as a transcript (screenshots beside it), for replay and score",
    )
    report_options(p, metavar="FILE", help="write the run's HTML report")
    p.set_defaults(func=cmd_run)


def _add_model_call_arguments(p: argparse.ArgumentParser) -> None:
    """How the model is called, and how the run ends: --no-stream to --no-completion-tool."""
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
