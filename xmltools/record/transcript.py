"""Transcripts: the file format, its writer and its loader.

A transcript is a header line, then one record per conversation message:

* ``{"role": "system" | "user", "content": "..."}``: plain messages (the task);
* ``{"role": "assistant", "content": "..."}``: what the model wrote;
* ``{"role": "tool_result", "call": {...}, "status": ..., "text": ..., "observation": {...}}``
  (or ``"error": {...}`` instead of an observation): one per call outcome, the
  screenshot saved as a file beside the transcript.
* ``{"role": "expect", ...}`` and ``{"role": "note", ...}``: the host's
  assertions, and what the loop told the model between messages.

A file of only a header and assistant records is valid: that is how a scenario
is written by hand.  Recording appends and flushes each record as it happens.
URLs may use a ``{base_url}`` placeholder, filled in at replay time.

The records themselves are in :mod:`xmltools.record.format` (re-exported
here).  Replaying lives above this module, in :mod:`xmltools.replaying.run`; this
one imports :mod:`xmltools.record.turn` (what a turn produced) and never the interpreter.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from ..base.expectations import Expectation, ExpectationFailed
from ..base.results import Failure, Observation, Screenshot
from ..base.secrets import Hider, Secret, check_secret_names, fixed_values, recording_ended, recording_secrets
from ..config.settings import Config
from ..errors import ConfigError, TranscriptError, UsageError
from ..mcp.results import McpResult
from ..parser import ToolUse
from ..profiles import PROFILES
from ..tools import STANDARD_TOOLS, ToolRegistry
from .format import (
    FORMAT_VERSION,
    AssistantRecord,
    CallRef,
    EndRecord,
    ErrorRecord,
    ExpectRecord,
    Header,
    McpRecord,
    MessageRecord,
    NoteRecord,
    ObservationRecord,
    Record,
    ReplaySettings,
    ToolResultRecord,
    Usage,
    _Record,
)
from .mcp import from_record, to_record
from .turn import CallOutcome, Turn

__all__ = [
    "MACHINE_SETTINGS",
    "AssistantRecord",
    "EndRecord",
    "ErrorRecord",
    "ExpectRecord",
    "Header",
    "MessageRecord",
    "NoteRecord",
    "ObservationRecord",
    "ReplaySettings",
    "ToolResultRecord",
    "Transcript",
    "TranscriptWriter",
    "load_transcript",
    "new_header",
    "read_lines",
    "registry_for",
]

OFFLINE_BASE_URL = "http://localhost"
FAILURE_KINDS = frozenset(get_args(Failure.model_fields["kind"].annotation))
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # what UTF-8 cannot encode
# settings of this machine, never of the recording: where the browser is and how it is shown
MACHINE_SETTINGS = (
    "mcp_servers",  # a server's command, folders and keys belong to the machine that runs it
    "executable",
    "headless",
    "remote",
    "downloads_dir",
    "profile_dir",
    "launch_timeout",
    "trace_dir",
)
_PLACEHOLDER = re.compile(r"\{(base_url|secret:[A-Za-z_][A-Za-z0-9_]*)\}")


R = TypeVar("R", NoteRecord, ExpectRecord)


@dataclass
class Transcript:
    """A transcript as read from its file: the header, then every record in order."""

    path: Path | None
    header: Header
    records: list[Record]

    @property
    def assistant_messages(self) -> list[AssistantRecord]:
        return [r for r in self.records if isinstance(r, AssistantRecord)]

    def message(self, role: Literal["system", "user"]) -> str | None:
        """The first system or user message (the system prompt, the task), when one was recorded."""
        return next(
            (r.content for r in self.records if isinstance(r, MessageRecord) and r.role == role), None
        )

    @property
    def end(self) -> EndRecord | None:
        """How the run ended, when that was recorded."""
        return next((r for r in reversed(self.records) if isinstance(r, EndRecord)), None)

    @property
    def has_observations(self) -> bool:
        """Whether anything was recorded of what the calls did (a hand-written scenario has nothing)."""
        return any(isinstance(r, ToolResultRecord) for r in self.records)

    def placeholders(self) -> set[str]:
        """The placeholders the transcript uses: ``base_url`` and ``secret:NAME``."""
        found: set[str] = set()
        for r in self.records:
            if isinstance(r, AssistantRecord | ToolResultRecord):
                found.update(m.group(1) for m in _PLACEHOLDER.finditer(r.model_dump_json()))
        return found

    def steps(self) -> Iterator[tuple[AssistantRecord, list[ToolResultRecord]]]:
        """Each assistant message with the tool results recorded for it."""
        current: AssistantRecord | None = None
        results: list[ToolResultRecord] = []
        for r in self.records:
            if isinstance(r, AssistantRecord):
                if current is not None:
                    yield current, results
                current, results = r, []
            elif isinstance(r, ToolResultRecord) and current is not None:
                results.append(r)
        if current is not None:
            yield current, results

    def notes(self) -> dict[int, list[NoteRecord]]:
        """What the loop told the model after each step (1-based): nudges and budget warnings."""
        return self._after_steps(NoteRecord)

    def expectations(self) -> dict[int, list[Expectation]]:
        """The assertions recorded after each step (1-based; 0: before the first message)."""
        return {k: [r.expectation for r in rs] for k, rs in self._after_steps(ExpectRecord).items()}

    def _after_steps(self, kind: type[R]) -> dict[int, list[R]]:
        """The records of ``kind`` by the step they follow (1-based; 0: before the first message)."""
        out: dict[int, list[R]] = {}
        step = 0
        for r in self.records:
            if isinstance(r, AssistantRecord):
                step += 1
            elif isinstance(r, kind):
                out.setdefault(step, []).append(r)
        return out

    def screenshot(self, rec: ObservationRecord) -> Screenshot | None:
        """The recorded screenshot; TranscriptError (one line, naming the file) when it cannot be read."""
        if rec.screenshot is None or self.path is None:
            return None
        try:
            data = (self.path.parent / rec.screenshot).read_bytes()
        except OSError as e:
            raise TranscriptError(self._missing_shot(rec.screenshot, e), path=str(self.path)) from e
        fmt = Path(rec.screenshot).suffix.lstrip(".").lower()
        w, h = rec.screenshot_size or (rec.viewport.width, rec.viewport.height)
        return Screenshot(
            data=data, format=fmt if fmt in ("webp", "png", "jpeg") else "png", width=w, height=h
        )

    def _missing_shot(self, name: str, e: OSError | None = None) -> str:
        gone = e is None or isinstance(e, FileNotFoundError)
        why = "is missing" if gone else f"cannot be read ({e.strerror if e is not None else ''})"
        return (
            f"{self.path}: the screenshot {name} {why}"
            f" (a transcript's screenshots are kept in {Path(name).parent}/ beside it)"
        )

    def missing_screenshots(self) -> list[str]:
        """The screenshots the records name that are not beside the transcript (as the records name them)."""
        if self.path is None:
            return []
        names = [
            r.observation.screenshot
            for r in self.records
            if isinstance(r, ToolResultRecord) and r.observation is not None and r.observation.screenshot
        ]
        return [n for n in names if not (self.path.parent / n).is_file()]

    def mcp_result(self, rec: McpRecord) -> McpResult:
        """The MCP server's answer a record holds (an image gone from beside the transcript is
        described instead)."""
        folder = self.path.parent if self.path is not None else Path()
        return from_record(rec, lambda name: (folder / name).read_bytes())

    def observation(self, rec: ObservationRecord) -> Observation:
        return Observation(
            url=rec.url,
            title=rec.title,
            console=tuple(rec.console),
            screenshot=self.screenshot(rec),
            viewport=rec.viewport,
            mouse=rec.mouse,
            notes=tuple(rec.notes),
            target=rec.target,
            snapshot=rec.snapshot,
        )


def new_header(config: Config, templates: Mapping[str, str] | None = None, **fields: Any) -> Header:
    """The header of a new recording: the configuration it runs under, the hashes of the templates
    that rendered its prompts, and ``fields`` (title, description, tools, variant, ...)."""
    return Header(config=config.model_dump(mode="json"), templates=dict(templates or {}), **fields)


def read_lines(path: str | Path, what: str = "transcript") -> list[str]:
    """The lines of a UTF-8 text file; a file that cannot be read raises TranscriptError in one line.

    Lines end at "\\n" only: ``str.splitlines()`` would also split at U+2028 or
    U+0085 inside a JSON string.
    """
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError as e:
        raise TranscriptError(f"{p}: no such file", path=str(p)) from e
    except IsADirectoryError as e:
        raise TranscriptError(f"{p}: is a folder, not a {what} file", path=str(p)) from e
    except PermissionError as e:
        raise TranscriptError(f"{p}: permission denied", path=str(p)) from e
    except OSError as e:
        raise TranscriptError(f"{p}: cannot be read ({e.strerror or e})", path=str(p)) from e
    except UnicodeDecodeError as e:
        byte = e.object[e.start] if e.start < len(e.object) else 0
        raise TranscriptError(
            f"{p}: not UTF-8 text (byte 0x{byte:02x} at offset {e.start}): a {what} is JSON lines",
            path=str(p),
        ) from e


_RECORD_MODELS: dict[str, type[_Record]] = {
    "system": MessageRecord,
    "user": MessageRecord,
    "assistant": AssistantRecord,
    "tool_result": ToolResultRecord,
    "expect": ExpectRecord,
    "note": NoteRecord,
    "end": EndRecord,
}


def not_json(e: ValueError) -> str:
    """What is wrong with a line that is not JSON, for a message that already names the line."""
    if isinstance(e, json.JSONDecodeError):
        return f"not JSON ({e.msg} at column {e.colno})"
    return f"not JSON ({e})"


def _record_kind(data: dict[str, Any]) -> str | None:
    """The kind of record a JSON object is meant to be, from its role (or its fields when it has none)."""
    role = data.get("role")
    if role is None:  # the roles that have a default: a tool result has a call or a status
        return "tool_result" if "call" in data or "status" in data else "assistant"
    return role if isinstance(role, str) and role in _RECORD_MODELS else None


def _validation_problem(e: ValidationError, kind: str) -> tuple[str, str | None]:
    """One line for a record's first validation error, and the field it names."""
    errors = e.errors()
    if not errors:
        return f"not a valid {kind}", None
    first = errors[0]
    field = ".".join(str(x) for x in first.get("loc", ())) or None
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    kind_name = "the header" if kind == "header" else f"a {kind} record"
    if first.get("type") == "extra_forbidden":
        return f"unknown field {field!r} in {kind_name}{more}", field
    if first.get("type") == "missing":
        return f"{kind_name} lacks the field {field!r}{more}", field
    where = f"field {field!r} of {kind_name}" if field else kind_name
    return f"{where}: {first.get('msg', 'invalid')}{more}", field


def load_transcript(path: str | Path) -> Transcript:
    """Read a transcript.

    Every problem raises :class:`~xmltools.errors.TranscriptError` (a
    ConfigError) with one line naming the file, the line and the field: a
    missing file, a folder, a file that is not UTF-8, a line that is not JSON,
    an unknown role, an unknown or missing field.
    """
    p = Path(path)
    lines = read_lines(p)
    header: Header | None = None
    records: list[Record] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue

        def problem(message: str, field: str | None = None, *, n: int = n) -> TranscriptError:
            return TranscriptError(f"{p}:{n}: {message}", path=str(p), line=n, field=field)

        try:
            data = json.loads(line)
        except ValueError as e:
            raise problem(not_json(e)) from e
        if not isinstance(data, dict):
            raise problem(f"a record is a JSON object, not {type(data).__name__}")
        if header is not None and "xmltools_transcript" in data:
            raise problem(
                "a second header: this file holds two runs (record with append=False, the default,"
                " to start the file afresh)"
            )
        if header is None:
            if "xmltools_transcript" not in data:
                raise problem("the first line must be the header ({'xmltools_transcript': 1, ...})")
            try:
                header = Header.model_validate(data)
            except ValidationError as e:
                raise problem(*_validation_problem(e, "header")) from e
            if header.xmltools_transcript != FORMAT_VERSION:
                raise problem(f"format version {header.xmltools_transcript} is not supported")
            continue
        kind = _record_kind(data)
        if kind is None:
            raise problem(
                f"unknown role {data.get('role')!r}: a record's role is system, user, assistant,"
                " tool_result, expect, note or end",
                "role",
            )
        try:
            records.append(_RECORD_MODELS[kind].model_validate(data))  # type: ignore[arg-type]
        except ValidationError as e:
            raise problem(*_validation_problem(e, kind)) from e
    if header is None:
        raise TranscriptError(f"{p}: empty: a transcript starts with a header line", path=str(p))
    return Transcript(p, header, records)


def registry_for(transcript: Transcript) -> ToolRegistry:
    """The tools a recorded run offered: browser_action in its profile, and the standard tools it names."""
    unknown = [n for n in transcript.header.tools if n not in STANDARD_TOOLS]
    if unknown:
        raise ConfigError(f"the transcript names tools this version does not have: {unknown}")
    profile = transcript.header.config.get("profile", "roo")  # older transcripts: the classic actions
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ConfigError(f"the transcript names a profile this version does not have: {profile!r}")
    capabilities = transcript.header.config.get("capabilities") or ()
    return ToolRegistry(
        [STANDARD_TOOLS[n] for n in transcript.header.tools],
        profile=PROFILES[profile],
        capabilities=[str(c) for c in capabilities] if isinstance(capabilities, list | tuple) else (),
    )


def fill_base_url(text: str, base_url: str | None) -> str:
    return text.replace("{base_url}", base_url) if base_url else text


def unfill_base_url(text: str, base_url: str | None) -> str:
    return text.replace(base_url, "{base_url}") if base_url else text


class TranscriptWriter:
    """Writes a transcript, flushing each record; screenshots go in a folder beside it.

    ``TranscriptWriter(path, config=cfg)`` starts the file afresh (and the
    screenshots folder with it), its header holding ``cfg`` (by default the
    layered configuration, ``Config.load()``, which is what an interpreter made
    without one uses).  ``append=True`` adds records to an existing file instead.

    ``secrets`` keeps secrets out of the file: a mapping ``{"PASSWORD": "hunter2"}``
    writes each value as ``{secret:PASSWORD}``, which a replay fills in again;
    plain values (an API key) are written as ``[redacted]``.  Until the writer
    is closed, a field an interpreter types one of these values into is painted
    over in its screenshots, as a replay paints it (see :mod:`xmltools.base.secrets`).

    Every record given is written, whatever text it holds.  The file is UTF-8,
    and the one thing UTF-8 cannot encode, a lone surrogate (``'T\\udc00'``, as
    a page title or console line may hold), is written as its JSON escape
    (``\\udc00``) instead.  The line stays valid UTF-8 and valid JSON, and
    reading it back gives the very same string.
    """

    def __init__(
        self,
        path: str | Path,
        header: Header | None = None,
        *,
        config: Config | None = None,
        append: bool = False,
        secrets: Mapping[str, str | Secret] | Iterable[str] = (),
        base_url: str | None = None,
    ) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise UsageError(f"{self.path}: is a folder, not a transcript file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.shots = self.path.parent / (self.path.stem + ".shots")
        named = fixed_values(secrets) if isinstance(secrets, Mapping) else {}
        plain = [] if isinstance(secrets, Mapping) else [s for s in secrets if s]
        check_secret_names(named)
        self._hide = Hider(named, plain)
        # while it is open, a field one of these values is typed into is masked in screenshots, so
        # that the recorded screenshots show it as a replay (which types {secret:NAME}) will
        recording_secrets(self, [*named.values(), *plain])
        self.base_url = base_url
        self._n = 0
        # an interpreter's writer checks each assertion in its browser before writing it: at once
        # (``verifier``), or, for the async interpreter, before its next message (``pending``)
        self.verifier: Callable[[Expectation], str | None] | None = None
        self.defer = False
        self.pending: list[Expectation] = []
        if not append:
            self.path.unlink(missing_ok=True)
            if self.shots.is_dir():
                shutil.rmtree(self.shots)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        self.fresh = fresh  # the file was started here (with its header)
        self._f = self.path.open("a", encoding="utf-8")
        if fresh:
            if header is None:
                header = new_header(config or Config.load())
            elif config is not None:
                header = header.model_copy(update={"config": config.model_dump(mode="json")})
            if base_url is not None and header.base_url is None:
                header = header.model_copy(update={"base_url": base_url})
            # this machine's browser settings stay out of the file (a remote endpoint may hold a
            # token, a path is of no use elsewhere): a replay takes them from its own machine
            config_kept = {k: v for k, v in header.config.items() if k not in MACHINE_SETTINGS}
            names = sorted({*(header.secrets or ()), *named})
            self._write(header.model_copy(update={"config": config_kept, "secrets": names}))
        elif self.shots.exists():
            self._n = len(list(self.shots.iterdir()))

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        recording_ended(self)
        if not self._f.closed:
            self._f.close()

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            return unfill_base_url(self._hide(value), self.base_url)
        if isinstance(value, dict):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        return value

    def _write(self, record: BaseModel, *, sync: bool = True) -> None:
        if isinstance(record, Header) and record.base_url is not None:
            # the address {base_url} stands for is written as itself, not as {base_url}
            data = self._clean(record.model_copy(update={"base_url": None}).model_dump(mode="json"))
            data["base_url"] = record.base_url
            self._write_line(data, sync=sync)
            return
        data = self._clean(record.model_dump(mode="json", exclude_defaults=False))
        if isinstance(data, dict) and data.get("role") == "assistant":
            for key in ("usage", "progress"):  # what nobody gave (a call's usage, a checklist) is left out
                if data.get(key) is None:
                    data.pop(key, None)
        if isinstance(data, dict) and data.get("role") == "tool_result" and data.get("mcp") is None:
            data.pop("mcp", None)  # only an MCP call has an answer of its server
        observation = data.get("observation") if isinstance(data, dict) else None
        if isinstance(observation, dict):  # what only some steps have is left out where they have none
            for key in ("identity", "rematch"):
                if observation.get(key) is None:
                    observation.pop(key, None)
        self._write_line(data, sync=sync)

    def _write_line(self, data: Any, *, sync: bool) -> None:
        if self._f.closed:
            raise UsageError("this transcript writer is closed")
        line = json.dumps(data, ensure_ascii=False)
        # Outside its strings, JSON text is ASCII: every surrogate found is inside a string.
        line = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
        self._f.write(line + "\n")
        self._f.flush()
        if sync:
            os.fsync(self._f.fileno())

    def message(self, role: Literal["system", "user"], content: str) -> None:
        self._write(MessageRecord(role=role, content=content))

    def expect_text(self, text: str, *, regex: bool = False, session: str | None = None) -> Expectation:
        """Assert that ``text`` is visible on the page now, and on replay at this point."""
        return self.expectation(Expectation(kind="text", value=text, regex=regex, session=session))

    def expect_element(
        self, role: str, name: str | None = None, *, session: str | None = None
    ) -> Expectation:
        """Assert that an element with this role (and whole accessible name) is visible."""
        return self.expectation(Expectation(kind="element", role=role, name=name, session=session))

    def expect_value(self, target: str, value: str, *, session: str | None = None) -> Expectation:
        """Assert that the field ``target`` (a selector: ``label=Email``, ``#email``) holds ``value``."""
        return self.expectation(Expectation(kind="value", target=target, value=value, session=session))

    def expect_url(self, url: str, *, regex: bool = False, session: str | None = None) -> Expectation:
        """Assert the page's address (whole, or ``re.search``-matched with ``regex``)."""
        return self.expectation(Expectation(kind="url", value=url, regex=regex, session=session))

    def expect_aria(self, snapshot: str, *, session: str | None = None) -> Expectation:
        """Assert that the page contains this partial ARIA snapshot (YAML, as ``toMatchAriaSnapshot``)."""
        return self.expectation(Expectation(kind="aria", value=snapshot, session=session))

    def expectation(self, exp: Expectation) -> Expectation:
        """Record an assertion; an interpreter's writer first checks it in the browser and raises
        :class:`~xmltools.base.expectations.ExpectationFailed` (writing nothing) when it does not hold."""
        if self.defer:
            self.pending.append(exp)
            return exp
        if self.verifier is not None:
            problem = self.verifier(exp)
            if problem is not None:
                raise ExpectationFailed(f"{exp.describe()}: {problem}")
        self.write_expectation(exp)
        return exp

    def write_expectation(self, exp: Expectation) -> None:
        """Write an assertion as it is, unchecked (a replay's recording of the ones that held)."""
        self._write(ExpectRecord(expectation=exp))

    def end(self, outcome: str, reason: str | None = None, detail: str | None = None) -> None:
        """Record how the run ended (the last record)."""
        self._write(EndRecord(outcome=outcome, reason=reason, detail=detail))

    def note(self, kind: Literal["nudge", "budget"], text: str) -> None:
        """Record what the loop told the model between messages (a nudge, a budget warning)."""
        self._write(NoteRecord(kind=kind, text=text))

    def answer(self, turn: Turn, call: ToolUse) -> None:
        """Record the host's answer to a call held for approval: its result, after the held one's."""
        index = {id(c): i for i, c in enumerate(turn.calls)}
        for o in turn.outcomes:
            if o.call is call:
                self._write(self._result(o, turn, [], index.get(id(call), 0)))

    def turn(self, turn: Turn, usage: object | None = None) -> None:
        """Record an assistant message and what became of each of its calls; ``usage`` is what its
        model call took (a loop event's :class:`~xmltools.loop.TurnUsage`), when known."""
        # each record is flushed as it is written; the disk is synced once per turn, since a message
        # may hold thousands of calls
        assistant = AssistantRecord(
            content=turn.assistant["content"],
            cut=turn.cut,
            duration=round(turn.duration, 4),
            usage=Usage.model_validate(usage, from_attributes=True) if usage is not None else None,
            progress=turn.progress.text if turn.progress is not None else None,
        )
        self._write(assistant, sync=False)
        index = {id(c): i for i, c in enumerate(turn.calls)}
        for k, outcome in enumerate(turn.outcomes):
            last = k == len(turn.outcomes) - 1
            record = self._result(outcome, turn, turn.notes if last else [], index.get(id(outcome.call), 0))
            self._write(record, sync=False)
        self._write_sync()

    def _save_shot(self, shot: Screenshot) -> str:
        self.shots.mkdir(exist_ok=True)
        self._n += 1
        name = f"{self._n:04d}.{shot.format}"
        (self.shots / name).write_bytes(shot.data)
        return f"{self.shots.name}/{name}"

    def _obs(self, obs: Observation) -> ObservationRecord:
        shot = obs.screenshot
        return ObservationRecord(
            url=obs.url,
            title=obs.title,
            console=list(obs.console),
            screenshot=self._save_shot(shot) if shot is not None else None,
            screenshot_size=(shot.width, shot.height) if shot is not None else None,
            viewport=obs.viewport,
            mouse=obs.mouse,
            notes=list(obs.notes),
            target=obs.target,
            snapshot=obs.snapshot,
            identity=obs.identity,
            rematch=obs.rematch,
        )

    def _write_sync(self) -> None:
        os.fsync(self._f.fileno())

    def _result(self, o: CallOutcome, turn: Turn, notes: list[str], index: int) -> ToolResultRecord:
        text = "\n\n".join(t for t in (o.text, *notes) if t)
        error: ErrorRecord | None = None
        if o.failure is not None:
            error = ErrorRecord(
                kind=o.failure.kind, message=o.failure.message, browser_closed=o.failure.browser_closed
            )
        elif o.error is not None:
            error = ErrorRecord(kind=o.error.code, message=o.error.message)
        elif o.violation is not None:
            error = ErrorRecord(kind=o.violation, message=o.text)
        elif o.status == "not_run":
            error = ErrorRecord(kind="not_run", message=o.text)
        obs = o.observation or (o.failure.observation if o.failure is not None else None)
        return ToolResultRecord(
            call=CallRef(name=o.call.name, params=dict(o.call.params), index=index),
            status=o.status,
            action=o.action,
            text=text,
            observation=self._obs(obs) if obs is not None else None,
            error=error,
            state=turn.state,
            mistakes=turn.mistakes,
            mcp=to_record(o.mcp, self._save_shot) if o.mcp is not None else None,
        )
