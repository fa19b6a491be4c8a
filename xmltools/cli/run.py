"""``xmltools run``: a task for a model, with the browser, recorded and reported if asked."""

from __future__ import annotations

import argparse
import contextlib
import json
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, XmltoolsError

if TYPE_CHECKING:
    from ..config.settings import Config
    from ..interpreter import AsyncInterpreter
    from ..record.transcript import TranscriptWriter
    from ..tools import Tool


from .common import load_config

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

    import tempfile
    from pathlib import Path

    from ..base.threadloop import run_sync
    from ..interpreter import AsyncInterpreter
    from ..loop import LoopEvent, LoopResult, arun_loop, loop_registry, turn_line
    from ..models.adapters import aclose_client, build_model
    from ..record.report import write_report
    from ..tools import COMPLETION_TOOL, result_tool

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

    completion = None if args.no_completion_tool else COMPLETION_TOOL
    shape = _result_schema(args.result_schema) if args.result_schema else None
    if shape is not None:
        if completion is None:
            raise UsageError("--result-schema needs the completion tool: leave out --no-completion-tool")
        completion = result_tool(shape)
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
            if e.kind == "turn" and e.turn is not None:
                if writer is not None:
                    writer.turn(e.turn, e.usage)
                print(turn_line(e.index, e.turn), flush=True)
            elif e.kind in ("nudge", "budget") and e.note is not None:
                if writer is not None:
                    writer.note(e.kind, e.note)
                print(f"  {e.kind}: {e.note.splitlines()[0]}", flush=True)

        async def drive() -> LoopResult:
            try:
                return await arun_loop(
                    model,
                    messages,
                    interpreter=interp,
                    max_turns=args.max_turns,
                    on_event=progress,
                    result=shape,
                )
            finally:
                await aclose_client(model.client)  # its connections, on the loop they belong to

        try:
            res = run_sync(drive())
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
        if res.output is not None:
            print(f"result: {json.dumps(res.output, ensure_ascii=False)}")
        if writer is not None:
            ended = "completed" if res.stop_reason in ("no_tool", "completed") else "stopped"
            writer.end(ended, res.stop_reason, f"{len(res.turns)} turns; {res.usage.describe()}")
            writer.close()
            if args.record:
                print(f"recording: {args.record}")
            if args.report:
                print(f"report: {write_report(args.report, record, embed=args.embed)}")
    # 0: the model ended the run (it completed, or answered without a tool); 1: the loop stopped it
    # (the mistake limit; out of turns, even when the model answered on the last turn it was given,
    # since it did not finish on its own; or a call held for an approval the command cannot give)
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

    from ..record.transcript import Header, TranscriptWriter

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
