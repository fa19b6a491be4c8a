"""``xmltools run``: a task for a model, with the browser, recorded and reported if asked.

What it prints: stdout holds the model's final answer and nothing else (the
completion tool's result, or its last reply when it ended without a tool; a
typed result as JSON), so that ``answer=$(xmltools run ...)`` works; with
``--json``, one JSON object instead (:func:`_summary`).  Each turn, the
loop's notes and how the run stopped go to stderr, through :class:`.status.Status`,
which also shows what the run waits for when stderr is a terminal.  With
``-v`` the log's line a turn takes the place of the run's own, and the log's
lines that of the status line.

The system prompt is taken once the configured MCP servers have started (in
the event loop the run uses them from), so that it lists their tools.  The
site is ``--site-url``, or the folder ``--serve`` serves; its address fills
``{base_url}`` in the task and is written as ``{base_url}`` in the recording.
Its parser is :mod:`.runparser`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ModelError, UsageError, XmltoolsError
from .interrupt import kept, run_interruptibly
from .runparser import run_parser
from .status import Status

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..config.settings import Config
    from ..interpreter import AsyncInterpreter
    from ..loop import LoopEvent, LoopResult
    from ..models.adapters import AnthropicModel, OpenAIModel
    from ..record.transcript import TranscriptWriter
    from ..tools import Tool
    from .options import Subparsers

__all__ = ["add_parser", "cmd_run"]

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
    """A run made ready: its arguments, settings, model and interpreter, where it speaks, its messages."""

    args: argparse.Namespace
    config: Config
    model: OpenAIModel | AnthropicModel
    key: str | None  # the API key, which the recording leaves out
    completion: Tool | None
    shape: dict[str, Any] | None  # the JSON Schema the result must satisfy (--result-schema)
    interp: AsyncInterpreter
    status: Status  # stderr: the run's lines, and what it waits for on a terminal
    verbose: bool  # -v: the log says each turn, so the run's own turn lines are left out
    site: str | None = None  # the site's address (--site-url, --serve): {base_url}
    task: str = ""  # the task as the model reads it ({base_url} filled)
    messages: list[dict[str, Any]] = field(default_factory=list)  # the system prompt and the task
    turns: int = 0  # turns done so far


@dataclass
class _Recording:
    """The transcript a run writes: the --record file, or a temporary one that --report is made from."""

    path: str
    writer: TranscriptWriter
    turns: int = 0  # written so far


def add_parser(sub: Subparsers) -> None:
    """``xmltools run``: its arguments (:mod:`.runparser`), and this command."""
    run_parser(sub).set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    """Run the task: make the run ready, serve its site, record it if asked, drive the loop, say how
    it ended: the answer (or the JSON summary) on stdout, the rest on stderr."""
    options = _run_options(args)  # before anything else: a bad --extra is a one-line error
    run = _prepare(args, options)
    with contextlib.ExitStack() as stack:
        stack.enter_context(run.status)
        run.site = _site(args, stack, run.status)
        run.task = _task(args.task, run.site)
        recording = _start_recording(run, stack)
        traced = _Traces.begin(args)
        try:
            res = _drive(run, recording)
        except KeyboardInterrupt:  # an interrupted run failed: its traces are kept and named
            for trace in traced.kept(ok=False):
                kept(f"the trace {trace}")
            raise
        # 0: the model ended the run (it completed, or answered without a tool); 1: the loop stopped
        # it (the mistake limit; out of turns, even when the model answered on the last turn it was
        # given, since it did not finish on its own; or a call held for an approval it cannot give)
        rc = 0 if res.stop_reason in ("no_tool", "completed") else 1
        summary = _finish(run, res, recording, traced.kept(ok=rc == 0))
    _print_answer(run, res, summary)
    return rc


def _prepare(args: argparse.Namespace, options: dict[str, Any]) -> _Run:
    """The settings, the model and its key, the tools offered and the interpreter; a headed browser
    without a display is refused here, before anything starts."""
    import os

    from ..interpreter import AsyncInterpreter
    from ..loop import loop_registry
    from ..models.adapters import build_model

    config = _config(args)
    _check_display(args, config)
    model = build_model(
        args.provider,
        args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        retries=args.retries,
        stream=not args.no_stream,
        options=options,
    )
    # the key is kept out of the recording
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if key is None and args.provider == "openai":
        key = os.environ.get("OPENAI_API_KEY") or "not-needed"
    completion, shape = _completion(args)
    interp = AsyncInterpreter(config, registry=loop_registry(config, completion))
    verbose = bool(getattr(args, "verbose", 0))
    # with -v the log writes to stderr too, and its lines would run into the status line: none then
    status = Status(live=False) if verbose else Status()
    return _Run(args, config, model, key, completion, shape, interp, status, verbose)


def _config(args: argparse.Namespace) -> Config:
    """The settings, with what the command line says: the viewport, a headed browser, the traces'
    folder, and Anthropic's shape of results with its provider."""
    from ..config.settings import Config

    overrides: dict[str, Any] = {}
    if args.viewport:
        overrides["viewport"] = args.viewport
    if args.headed:
        overrides["headless"] = False
    if args.tracing != "off":
        overrides["trace_dir"] = args.trace_dir
    if args.provider == "anthropic":
        overrides["shape"] = "anthropic"
    return Config.load(args.config, **overrides)


def _check_display(args: argparse.Namespace, config: Config) -> None:
    """A browser to be shown (``--headed``, or ``headless = false`` in the settings) on a machine
    with no display is one line, a usage error (exit 2) as in ``replay --headed``, said before the
    model is asked anything."""
    from ..browser.locate import has_display, no_display

    if config.headless or config.remote or has_display():
        return
    raise UsageError(no_display("--headed" if args.headed else "the setting headless = false"))


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


def _site(args: argparse.Namespace, stack: contextlib.ExitStack, status: Status) -> str | None:
    """The site's address: the folder ``--serve`` serves (for the run's duration), or ``--site-url``."""
    if args.serve and args.site_url:
        raise UsageError("--serve gives the site its address: leave out --site-url, or --serve")
    if args.serve:
        from ..base.serve import serve_directory

        url: str = stack.enter_context(serve_directory(args.serve))
        status.say(f"serving {args.serve} at {url}")
        return url
    if args.site_url:
        if not args.site_url.startswith(("http://", "https://")):
            raise UsageError(f"--site-url {args.site_url}: give an address such as http://127.0.0.1:3000")
        return str(args.site_url).rstrip("/")
    return None


def _task(task: str, site: str | None) -> str:
    """The task as the model reads it: ``{base_url}`` is the site's address; a task that does not name
    the site is told where it is."""
    if site is None:
        if "{base_url}" in task:
            raise UsageError("the task names {base_url}: give the site's address with --site-url or --serve")
        return task
    if "{base_url}" in task:
        return task.replace("{base_url}", site)
    return task if site in task else f"{task}\n\nThe site is at {site}/."


def _start_recording(run: _Run, stack: contextlib.ExitStack) -> _Recording | None:
    """The transcript, opened (its header) when --record or --report asks for one; its first two
    messages are written once the prompt is known (:func:`_begin`)."""
    import tempfile

    args = run.args
    record = args.record
    if args.report and not record:  # the report is made from a recording: keep one for the while
        record = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "run.jsonl")
    if not record:
        return None
    writer = stack.enter_context(_run_writer(record, run))
    return _Recording(record, writer)


def _drive(run: _Run, recording: _Recording | None) -> LoopResult:
    """The loop, a line a turn; a failure ends the recording as failed before it is raised (a model
    that cannot be reached is said with its address)."""
    from ..loop import arun_loop
    from ..models.adapters import aclose_client

    async def drive() -> LoopResult:
        ticker = asyncio.create_task(run.status.ticking()) if run.status.live else None
        try:
            await _begin(run, recording)
            return await arun_loop(
                run.model,
                run.messages,
                interpreter=run.interp,
                max_turns=run.args.max_turns,
                on_event=_progress(run, recording),
                on_wait=lambda what: run.status.wait(f"turn {run.turns + 1}: waiting for {what}"),
                result=run.shape,
            )
        finally:
            if ticker is not None:
                ticker.cancel()
            run.status.done()
            try:
                await aclose_client(run.model.client)  # its connections, on the loop they belong to
            finally:
                await run.interp.aclose()  # the browser (its traces written) and the MCP servers

    try:
        return run_interruptibly(drive())
    except XmltoolsError as e:
        said = _unreachable(run, e) or e
        if recording is not None:
            _record_failure(run, recording, said)
        if said is e:
            raise
        raise said from e
    except KeyboardInterrupt:
        if recording is not None:
            _record_interrupt(run.args, recording)
        raise


async def _begin(run: _Run, recording: _Recording | None) -> None:
    """Start the MCP servers (so that the prompt lists their tools), then the first two messages: the
    system prompt, as the model gets it, and the task; the recording writes them too."""
    if run.interp.mcp:
        run.status.wait("starting the MCP servers")
        await run.interp.start_servers()
        run.status.done()
    system = run.interp.system_prompt()
    run.messages = [{"role": "system", "content": system}, {"role": "user", "content": run.task}]
    if recording is not None:
        recording.writer.message("system", system)
        recording.writer.message("user", run.task)


def _progress(run: _Run, recording: _Recording | None) -> Callable[[LoopEvent], None]:
    """A line for each turn, checklist, nudge and budget note, each also in the transcript if any
    (with -v the log has the turns, nudges and budget notes: the run does not say them again)."""
    from ..loop import turn_line

    writer = recording.writer if recording is not None else None
    say = run.status.say

    def progress(e: LoopEvent) -> None:
        if e.kind == "turn" and e.turn is not None:
            run.status.done()
            run.turns += 1
            if recording is not None:
                recording.writer.turn(e.turn, e.usage)
                recording.turns += 1
            if not run.verbose:
                say(turn_line(e.index, e.turn))
        elif e.kind in ("nudge", "budget") and e.note is not None:
            if writer is not None:
                writer.note(e.kind, e.note)
            if not run.verbose:
                say(f"  {e.kind}: {e.note.splitlines()[0]}")
        elif e.kind == "progress" and e.turn is not None and e.turn.progress is not None:
            say(f"  progress: {e.turn.progress.summary()}")  # the transcript has it on the turn

    return progress


def _unreachable(run: _Run, e: XmltoolsError) -> ModelError | None:
    """A model error that comes from not reaching the model's server at all, said with its address:
    ``cannot reach the model at http://127.0.0.1:9/v1: connection refused``; None for any other."""
    if not isinstance(e, ModelError):
        return None
    why = _connect_failure(e)
    if why is None:
        return None
    url = run.args.base_url or str(getattr(run.model.client, "base_url", "") or "")
    said = ModelError(f"cannot reach the model at {url.rstrip('/')}: {why}")
    said.result = e.result
    return said


def _connect_failure(e: BaseException) -> str | None:
    """Why a connection to the server could not be made, from the exceptions ``e`` was raised from
    (refused, a host name not known, no answer in time); None when a connection was made."""
    import socket

    connect, why, seen = False, None, set()
    cause: BaseException | None = e.__cause__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        name = type(cause).__name__
        if isinstance(cause, ConnectionRefusedError):
            connect, why = True, "connection refused"
        elif isinstance(cause, socket.gaierror):
            connect, why = True, f"the host name is not known ({cause.strerror})"
        elif name in ("ConnectError", "ConnectTimeout"):  # HTTP clients' names for a failed connect
            connect = True
            why = why or ("no answer in time" if "Timeout" in name else str(cause) or name)
        cause = cause.__cause__ or cause.__context__
    return why if connect else None


def _record_failure(run: _Run, recording: _Recording, e: XmltoolsError) -> None:
    """End the transcript as failed; with --report, report the turns before the failure."""
    from ..record.report import write_report

    args = run.args
    with contextlib.suppress(XmltoolsError, OSError):
        recording.writer.end("failed", type(e).__name__, str(e).splitlines()[0] if str(e) else None)
    if args.report:  # the turns before the failure are worth a report
        recording.writer.close()
        with contextlib.suppress(XmltoolsError, OSError):
            failed = write_report(args.report, recording.path, embed=args.embed)
            run.status.say(f"report (up to the failure): {failed}")


def _record_interrupt(args: argparse.Namespace, recording: _Recording) -> None:
    """End the transcript as interrupted, write the report asked for, and say what was kept."""
    from ..record.report import write_report

    turns = recording.turns
    with contextlib.suppress(XmltoolsError, OSError):
        recording.writer.end("interrupted", "interrupted", f"{turns} turns before the interrupt")
    recording.writer.close()
    if args.record:
        kept(f"the transcript {args.record} ({turns} turns, ended)")
    if args.report:
        with contextlib.suppress(XmltoolsError, OSError):
            kept(f"the report {write_report(args.report, recording.path, embed=args.embed)}")


@dataclass
class _Traces:
    """The Playwright traces of a run (``--tracing``): those its folder held before it, to tell its own."""

    folder: Path | None
    mode: str
    before: set[Path]

    @classmethod
    def begin(cls, args: argparse.Namespace) -> _Traces:
        folder = Path(args.trace_dir) if args.tracing != "off" else None
        return cls(folder, args.tracing, set(folder.glob("trace-*.zip")) if folder is not None else set())

    def kept(self, *, ok: bool) -> list[str]:
        """The run's traces; with retain-on-failure, none (removed) when the run ended well."""
        if self.folder is None:
            return []
        made = sorted(set(self.folder.glob("trace-*.zip")) - self.before)
        if self.mode == "retain-on-failure" and ok:
            for path in made:
                path.unlink(missing_ok=True)
            return []
        return [str(p) for p in made]


def _finish(run: _Run, res: LoopResult, recording: _Recording | None, traces: list[str]) -> dict[str, Any]:
    """Say how the run stopped (stderr); end the transcript, write the report from it, say where
    they and the traces are; the summary ``--json`` prints."""
    from ..record.report import write_report

    args, say = run.args, run.status.say
    say(f"stopped: {res.stop_reason} after {len(res.turns)} turns; {res.usage.describe()}")
    report = None
    if recording is not None:
        ended = "completed" if res.stop_reason in ("no_tool", "completed") else "stopped"
        recording.writer.end(ended, res.stop_reason, f"{len(res.turns)} turns; {res.usage.describe()}")
        recording.writer.close()
        if args.record:
            say(f"recording: {args.record}")
        if args.report:
            report = str(write_report(args.report, recording.path, embed=args.embed))
            say(f"report: {report}")
    for trace in traces:
        say(f"trace: {trace}")
    return _summary(run, res, report, traces)


def _summary(run: _Run, res: LoopResult, report: str | None, traces: list[str]) -> dict[str, Any]:
    """What ``--json`` prints: how the run stopped, what it used, the answer, and what it left."""
    u = res.usage
    out: dict[str, Any] = {
        "stop_reason": res.stop_reason,
        "turns": len(res.turns),
        "usage": {
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "calls": u.calls,
            "estimated_calls": u.estimated_calls,  # calls whose tokens are estimates
        },
        "cost": res.cost,
        "answer": res.answer,
    }
    if run.shape is not None:
        out["result"] = res.output  # the typed result: None unless a valid one ended the run
    out.update(site_url=run.site, recording=run.args.record, report=report, traces=traces)
    return out


def _print_answer(run: _Run, res: LoopResult, summary: dict[str, Any]) -> None:
    """stdout: the JSON summary (--json), or the answer alone (a typed result as JSON), or nothing."""
    if run.args.json:
        print(json.dumps(summary, ensure_ascii=False), flush=True)
    elif run.shape is not None and res.output is not None:
        print(json.dumps(res.output, ensure_ascii=False), flush=True)
    elif res.answer:
        print(res.answer, flush=True)


def _run_writer(record: str, run: _Run) -> TranscriptWriter:
    """A fresh transcript for ``run --record``: the settings, the template hashes, the tools offered,
    and the site's address, written as ``{base_url}``."""
    from ..record.transcript import TranscriptWriter, new_header

    path = Path(record)
    if path.exists() and not path.is_file():
        raise UsageError(f"--record {record}: is a folder, not a file")
    header = new_header(
        run.config,
        run.interp.renderer.template_hashes(),
        tools=[run.completion.name] if run.completion is not None else [],
        title=f"xmltools run, model {run.args.model}",
        description=run.args.task,
    )
    key = run.key
    secrets = [key] if key and key != "not-needed" else []  # never written, should a page show it
    return TranscriptWriter(path, header, secrets=secrets, base_url=run.site)


def _result_schema(path: str) -> dict[str, Any]:
    """The JSON Schema a run's result must satisfy; a file that is not one is a one-line usage error."""
    try:
        schema = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--result-schema {path}: no such file") from None
    except (OSError, ValueError) as e:
        raise UsageError(f"--result-schema {path}: not a JSON file ({e})") from None
    if not isinstance(schema, dict):
        raise UsageError(f"--result-schema {path}: a JSON Schema is an object, not {type(schema).__name__}")
    return schema
