"""Transcripts: record a run to JSONL, load it, and replay it live or offline.

A transcript is a header line, then one record per conversation message:

* ``{"role": "system" | "user", "content": "..."}``: plain messages (the task);
* ``{"role": "assistant", "content": "..."}``: what the model wrote;
* ``{"role": "tool_result", "call": {...}, "status": ..., "text": ..., "observation": {...}}``
  (or ``"error": {...}`` instead of an observation): one per call outcome, the
  screenshot saved as a file beside the transcript.

A file of only a header and assistant records is valid: that is how a scenario
is written by hand.  Recording appends and flushes each record as it happens.
URLs may use a ``{base_url}`` placeholder, filled in at replay time.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import secrets as secrets_mod
from .compare import Comparison, Region, compare_images, comparison_library
from .config import Config
from .errors import ConfigError, TranscriptError, UsageError
from .interpreter import AsyncInterpreter, CallOutcome, Turn
from .parser import ToolUse
from .profiles import DEFAULT_SESSION, PROFILES
from .protocol import State
from .results import ConsoleEntry, Failure, Observation, Point, Screenshot, Viewport
from .tools import STANDARD_TOOLS, Resize, ToolRegistry

__all__ = [
    "AssistantRecord",
    "Drift",
    "EndRecord",
    "Header",
    "MessageRecord",
    "RecordedBrowser",
    "ReplayResult",
    "ReplaySettings",
    "ReplayStep",
    "ShotCheck",
    "ToolResultRecord",
    "Transcript",
    "TranscriptWriter",
    "load_transcript",
    "read_lines",
    "registry_for",
    "replay",
]

FORMAT_VERSION = 1
OFFLINE_BASE_URL = "http://localhost"
FAILURE_KINDS = frozenset(get_args(Failure.model_fields["kind"].annotation))
REDACTED = secrets_mod.REDACTED
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # what UTF-8 cannot encode
_PLACEHOLDER = re.compile(r"\{(base_url|secret:[A-Za-z_][A-Za-z0-9_]*)\}")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReplaySettings(_Record):
    """How a transcript is compared when replayed (a header's ``replay``; a test or the command line
    may add to it).  Unset fields fall back to the configuration (``screenshot_threshold``,
    ``max_diff_pixel_ratio``, ``max_diff_pixels``)."""

    screenshot_threshold: float | None = Field(None, ge=0, le=1)
    max_diff_pixel_ratio: float | None = Field(None, ge=0, le=1)
    max_diff_pixels: int | None = Field(None, ge=0)
    mask: list[Region] = Field(default_factory=list)  # painted over in both screenshots
    mask_selectors: list[str] = Field(default_factory=list)  # CSS selectors, boxes found in the live page
    ignore_console: list[str] = Field(default_factory=list)  # regular expressions (re.search) of lines

    def merged(self, other: ReplaySettings | None) -> ReplaySettings:
        """These settings with ``other``'s on top: its values win, its lists are added.

        The two limits go together: when ``other`` sets either, it sets both (an
        unset one to none), so that ``max_diff_pixels=500`` on top of a ratio is
        500 pixels, not the smaller of the two.
        """
        if other is None:
            return self
        values = self.model_dump()
        if other.max_diff_pixels is not None or other.max_diff_pixel_ratio is not None:
            values["max_diff_pixels"] = values["max_diff_pixel_ratio"] = None
        for name in type(self).model_fields:
            theirs = getattr(other, name)
            if isinstance(theirs, list):
                values[name] = [*getattr(self, name), *theirs]
            elif theirs is not None:
                values[name] = theirs
        return ReplaySettings.model_validate(values)


class Header(_Record):
    xmltools_transcript: int = FORMAT_VERSION
    created: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    config: dict[str, Any] = Field(default_factory=dict)
    templates: dict[str, str] = Field(default_factory=dict)  # template name -> hash
    variant: str | None = None
    tools: list[str] = Field(default_factory=list)  # standard host tools the run offered (attempt_completion)
    title: str | None = None
    description: str | None = None
    base_url: str | None = None  # what {base_url} stood for when this was recorded
    replay: ReplaySettings | None = None  # how this transcript is compared when replayed
    # the secret names the host gave when recording: a replay needs these, and only these
    # (None: not said, as in a hand-written scenario, where every {secret:NAME} is needed)
    secrets: list[str] | None = None


class MessageRecord(_Record):
    role: Literal["system", "user"]
    content: str


class AssistantRecord(_Record):
    role: Literal["assistant"] = "assistant"
    content: str
    cut: bool = False  # the host stopped the model's stream after its first complete call
    duration: float | None = None  # seconds the interpreter took on this message (browser included)


class EndRecord(_Record):
    """The last record of a run: how it ended."""

    role: Literal["end"] = "end"
    outcome: str  # a run: completed, stopped or failed; a replay: passed, drifted or failed
    reason: str | None = None  # the stop reason (completed, no_tool, max_turns, mistake_limit, ...)
    detail: str | None = None  # one line more, such as the error that ended the run


class CallRef(_Record):
    name: str
    params: dict[str, str]
    index: int  # the call's position among the calls of its message


class ObservationRecord(_Record):
    url: str
    title: str
    console: list[ConsoleEntry] = Field(default_factory=list)
    screenshot: str | None = None  # a path relative to the transcript
    screenshot_size: tuple[int, int] | None = None
    viewport: Viewport
    mouse: Point | None = None
    notes: list[str] = Field(default_factory=list)
    target: str | None = None  # what the action acted on (role and name)
    snapshot: str | None = None  # the ARIA snapshot the model was shown, when it was shown one


class ErrorRecord(_Record):
    kind: str  # a browser failure kind, a call error code, a protocol violation, or not_run
    message: str
    browser_closed: bool = False


class ToolResultRecord(_Record):
    role: Literal["tool_result"] = "tool_result"
    call: CallRef
    status: Literal["ok", "failed", "invalid", "refused", "denied", "pending", "not_run"]
    action: str | None = None
    text: str = ""
    observation: ObservationRecord | None = None
    error: ErrorRecord | None = None
    state: State = State.IDLE
    mistakes: int = 0


Record = MessageRecord | AssistantRecord | ToolResultRecord | EndRecord


@dataclass
class Transcript:
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


_RECORD_MODELS: dict[
    str, type[MessageRecord] | type[AssistantRecord] | type[ToolResultRecord] | type[EndRecord]
] = {
    "system": MessageRecord,
    "user": MessageRecord,
    "assistant": AssistantRecord,
    "tool_result": ToolResultRecord,
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
                " tool_result or end",
                "role",
            )
        try:
            records.append(_RECORD_MODELS[kind].model_validate(data))
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
    return ToolRegistry([STANDARD_TOOLS[n] for n in transcript.header.tools], profile=PROFILES[profile])


def _fill(text: str, base_url: str | None) -> str:
    return text.replace("{base_url}", base_url) if base_url else text


def _unfill(text: str, base_url: str | None) -> str:
    return text.replace(base_url, "{base_url}") if base_url else text


class TranscriptWriter:
    """Writes a transcript, flushing each record; screenshots go in a folder beside it.

    ``TranscriptWriter(path, config=cfg)`` starts the file afresh (and the
    screenshots folder with it), its header holding ``cfg`` (by default the
    layered configuration, ``Config.load()``, which is what an interpreter made
    without one uses).  ``append=True`` adds records to an existing file instead.

    ``secrets`` keeps secrets out of the file: a mapping ``{"PASSWORD": "hunter2"}``
    writes each value as ``{secret:PASSWORD}``, which a replay fills in again;
    plain values (an API key) are written as ``[redacted]``.

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
        secrets: Mapping[str, str] | Iterable[str] = (),
        base_url: str | None = None,
    ) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise UsageError(f"{self.path}: is a folder, not a transcript file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.shots = self.path.parent / (self.path.stem + ".shots")
        named = dict(secrets) if isinstance(secrets, Mapping) else {}
        plain = [] if isinstance(secrets, Mapping) else [s for s in secrets if s]
        secrets_mod.check_secret_names(named)
        self._hide = secrets_mod.Hider(named, plain)
        self.base_url = base_url
        self._n = 0
        if not append:
            self.path.unlink(missing_ok=True)
            if self.shots.is_dir():
                shutil.rmtree(self.shots)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        self.fresh = fresh  # the file was started here (with its header)
        self._f = self.path.open("a", encoding="utf-8")
        if fresh:
            if header is None:
                header = Header(config=(config or Config.load()).model_dump(mode="json"))
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
        if not self._f.closed:
            self._f.close()

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            return _unfill(self._hide(value), self.base_url)
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
        self._write_line(self._clean(record.model_dump(mode="json", exclude_defaults=False)), sync=sync)

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

    def end(self, outcome: str, reason: str | None = None, detail: str | None = None) -> None:
        """Record how the run ended (the last record)."""
        self._write(EndRecord(outcome=outcome, reason=reason, detail=detail))

    def answer(self, turn: Turn, call: ToolUse) -> None:
        """Record the host's answer to a call held for approval: its result, after the held one's."""
        index = {id(c): i for i, c in enumerate(turn.calls)}
        for o in turn.outcomes:
            if o.call is call:
                self._write(self._result(o, turn, [], index.get(id(call), 0)))

    def turn(self, turn: Turn) -> None:
        """Record an assistant message and what became of each of its calls."""
        # each record is flushed as it is written; the disk is synced once per turn, since a message
        # may hold thousands of calls
        assistant = AssistantRecord(
            content=turn.assistant["content"], cut=turn.cut, duration=round(turn.duration, 4)
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
        )


# -- replay ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Drift:
    step: int  # 1-based index of the assistant message
    field: str  # url, title, console, status, screenshot, action, ...
    expected: Any
    actual: Any
    detail: str | None = None  # one line that says it better than the two values (a screenshot's drift)

    def __str__(self) -> str:
        if self.detail is not None:
            return f"step {self.step}: {self.field}: {self.detail}"
        return f"step {self.step}: {self.field} expected {self.expected!r}, got {self.actual!r}"


@dataclass(frozen=True)
class ShotCheck:
    """One screenshot of a step compared with its recording."""

    position: int  # the outcome's index among the step's outcomes
    recorded: Screenshot
    live: Screenshot
    comparison: Comparison


@dataclass
class ReplayStep:
    index: int  # 1-based index of the assistant message
    assistant: str
    turn: Turn
    recorded: list[ToolResultRecord]
    drifts: list[Drift] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # failed or refused calls the recording did not have
    shots: list[ShotCheck] = field(default_factory=list)

    @property
    def duration(self) -> float:
        return self.turn.duration


ReplayOutcome = Literal["passed", "drifted", "failed"]


@dataclass
class ReplayResult:
    steps: list[ReplayStep]
    mode: Literal["live", "offline"]
    transcript: Transcript | None = None  # what was replayed
    base_url: str | None = None  # what {base_url} stood for
    allow_failures: bool = False  # failed steps were not counted
    differences: list[str] = field(default_factory=list)  # the recording's settings that differ from here

    @property
    def drifts(self) -> list[Drift]:
        return [d for s in self.steps for d in s.drifts]

    @property
    def failures(self) -> list[str]:
        """Each failed or refused call the recording did not have, as ``step N: ...``."""
        return [f"step {s.index}: {f}" for s in self.steps for f in s.failures]

    @property
    def outcome(self) -> ReplayOutcome:
        if self.failures and not self.allow_failures:
            return "failed"
        return "drifted" if self.drifts else "passed"

    @property
    def ok(self) -> bool:
        return self.outcome == "passed"

    def summary(self) -> str:
        n = len(self.steps)
        failures = [] if self.allow_failures else self.failures
        if not self.drifts and not failures:
            return f"{n} steps replayed ({self.mode}): no drift"
        parts = []
        if failures:
            parts.append(f"{len(failures)} failed step{'s' if len(failures) != 1 else ''}")
        if self.drifts:
            parts.append(f"{len(self.drifts)} drift{'s' if len(self.drifts) != 1 else ''}")
        lines = [f"{' and '.join(parts)} in {n} steps ({self.mode}):"]
        lines += [f"  {f}" for f in failures]
        lines += [f"  {d}" for d in self.drifts]
        if self.differences:  # they may explain what went wrong
            lines.append("the recording's settings that differ from this machine's:")
            lines += [f"  {d}" for d in self.differences]
        return "\n".join(lines)


class RecordedBrowser:
    """A stand-in browser that answers each action with what was recorded for it (offline replay).

    Before each assistant message, :meth:`begin_step` hands it that step's
    recorded results.  An action with no recording (say, a click that a new
    viewport now allows) is answered with the page as last recorded, and a note.
    """

    def __init__(
        self, transcript: Transcript, base_url: str | None = None, viewport: Viewport | None = None
    ) -> None:
        self.transcript = transcript
        self.base_url = base_url
        self.viewport = viewport or Viewport(width=900, height=600)
        self._step: list[ToolResultRecord] = []
        self._last: Observation | None = None
        self._open = False
        self.unrecorded = 0  # actions answered without a recording

    @property
    def is_open(self) -> bool:
        return self._open

    def begin_step(self, recorded: Sequence[ToolResultRecord]) -> None:
        tools = registry_for(self.transcript).profile.tool_names
        self._step = [r for r in recorded if r.call.name in tools and r.status in ("ok", "failed")]

    async def run(self, action: object) -> Observation | Failure | None:
        name = getattr(action, "action", "")
        # one call runs per message, so the step's one recorded browser result is this action's
        # (recorded under the dialect's name for it, which may differ from the canonical one)
        rec = self._step.pop(0) if self._step else None
        if name == "close" or (rec is not None and rec.status == "ok" and rec.observation is None):
            self._open = False  # a close, or a dialect's close of the last tab
            return None
        if isinstance(action, Resize):
            self.viewport = action.size
        if rec is None:
            self.unrecorded += 1
            self._open = True
            if self._last is None:
                return Failure(kind="internal", message=f"the recording has no page for this {name} action.")
            note = (
                "replayed offline: nothing was recorded for this action, so this is the page as last recorded"
            )
            return self._last.model_copy(update={"notes": (note,)})
        obs = self._observation(rec.observation) if rec.observation is not None else None
        if obs is not None:
            obs = obs.model_copy(update={"url": _fill(obs.url, self.base_url)})
            self._last = obs
        if rec.status == "failed":
            err = rec.error or ErrorRecord(kind="internal", message="failed")
            self._open = not err.browser_closed
            kind = err.kind if err.kind in FAILURE_KINDS else "internal"
            return Failure(kind=kind, message=err.message, observation=obs, browser_closed=err.browser_closed)
        self._open = True
        return obs

    def _observation(self, rec: ObservationRecord) -> Observation:
        """The recorded observation; without its screenshot, and a note, when that file is gone.

        An offline replay compares outcomes, not pictures: a transcript moved
        away from its screenshots still replays.
        """
        try:
            return self.transcript.observation(rec)
        except TranscriptError as e:
            obs = self.transcript.observation(rec.model_copy(update={"screenshot": None}))
            note = f"replayed offline: {str(e).split(': ', 1)[-1]}"
            return obs.model_copy(update={"notes": (*obs.notes, note)})

    async def close(self) -> Failure | None:
        self._open = False
        return None

    async def shutdown(self) -> None:
        self._open = False

    def session(self, name: str) -> RecordedSession:
        """A named session's view of the recording: its own open state, the shared recorded steps."""
        return RecordedSession(self)


class RecordedSession:
    """One named session in an offline replay: answers from the shared recording, opens and closes alone."""

    def __init__(self, recording: RecordedBrowser) -> None:
        self._recording = recording
        self._open = False
        self.viewport = recording.viewport

    @property
    def is_open(self) -> bool:
        return self._open

    async def run(self, action: object) -> Observation | Failure | None:
        result = await self._recording.run(action)
        self._open = self._recording.is_open
        self.viewport = self._recording.viewport
        return result

    async def close(self) -> Failure | None:
        self._open = False
        return None

    async def shutdown(self) -> None:
        self._open = False


# statuses that say a call did not do what it was meant to: a replay fails on each one it did not record
FAILING = frozenset({"failed", "invalid", "refused", "denied", "pending", "not_run"})
# settings of this machine, never of the recording: where the browser is and how it is shown
MACHINE_SETTINGS = ("executable", "headless", "remote", "downloads_dir", "profile_dir", "launch_timeout")
# behaviour settings that name folders: taken from the header only when the folder is here too
PATH_SETTINGS = ("templates", "workspace", "allowed_file_roots")
# how screenshots are compared: the local configuration's, then the transcript's replay settings
DEFAULT_DIFF_PIXEL_RATIO = 0.0001  # when no limit is set anywhere: 54 pixels at 900x600, a caret's blink
COMPARISON_SETTINGS = ("screenshot_threshold", "max_diff_pixel_ratio", "max_diff_pixels")


def replay_config(
    transcript: Transcript, local: Config | None = None, overrides: Mapping[str, Any] | None = None
) -> tuple[Config, list[str]]:
    """The configuration a transcript replays under, and how the recording's settings differ from here.

    The behaviour settings (viewport, policy, profile, observe, templates, ...)
    come from the transcript's header, so that the replay reproduces the run.
    The machine settings (:data:`MACHINE_SETTINGS`) and the comparison settings
    come from ``local`` (by default ``Config.load()``: the environment, the
    TOML files), and ``overrides`` (the command line) win over both.  A setting
    of the header that this version rejects is left out, and said.
    """
    local = local if local is not None else Config.load()
    overrides = dict(overrides or {})
    skip = {*MACHINE_SETTINGS, *COMPARISON_SETTINGS, *overrides}
    recorded = {
        k: v for k, v in transcript.header.config.items() if k in Config.model_fields and k not in skip
    }
    base = local.model_dump()
    differences: list[str] = []
    for k in PATH_SETTINGS:  # a folder of the recording's machine that this one does not have
        paths = recorded.get(k) or ()
        absent = [p for p in ([paths] if isinstance(paths, str) else paths) if not Path(p).exists()]
        if absent:
            del recorded[k]
            differences.append(
                f"{k}: the recording's {absent[0]} is not on this machine; this machine's is used"
            )
    try:
        config = Config.model_validate({**base, **recorded, **overrides})
    except ValidationError:
        kept: dict[str, Any] = {}
        for k, v in recorded.items():
            try:
                Config.model_validate({**base, **kept, k: v})
            except ValidationError:
                differences.append(f"{k}: the recording's {v!r} is not valid here; this machine's is used")
                continue
            kept[k] = v
        try:
            config = Config.model_validate({**base, **kept, **overrides})
        except ValidationError as e:
            raise ConfigError(f"the replay's settings are not valid: {e.errors()[0].get('msg')}") from e
    for k in recorded:
        mine, theirs = getattr(local, k), getattr(config, k)
        if mine != theirs:
            differences.append(f"{k}: {_shown(theirs)} from the recording (this machine: {_shown(mine)})")
    return config, differences


def _shown(value: Any) -> str:
    if isinstance(value, Viewport):
        return f"{value.width}x{value.height}"
    if isinstance(value, BaseModel):
        return json.dumps(value.model_dump(mode="json"))
    if hasattr(value, "value"):  # an enum
        return str(value.value)
    return str(value)


def _console(
    entries: Iterable[ConsoleEntry], ignore: Sequence[re.Pattern[str]], base_url: str | None
) -> list[tuple[str, str]]:
    out = []
    for c in entries:
        text = _fill(c.text, base_url)
        if not any(p.search(text) for p in ignore):
            out.append((c.type, text))
    return out


def _compare(
    index: int,
    turn: Turn,
    recorded: Sequence[ToolResultRecord],
    base_url: str | None,
    *,
    live: bool,
    ignore_console: Sequence[re.Pattern[str]] = (),
) -> list[Drift]:
    drifts: list[Drift] = []
    if not recorded:
        return drifts  # a hand-written step: nothing to compare with
    got = [(o.call.name, o.action, o.status) for o in turn.outcomes]
    want = [(r.call.name, r.action, r.status) for r in recorded]
    if got != want:
        drifts.append(Drift(index, "outcomes", want, got))
        return drifts
    for o, r in zip(turn.outcomes, recorded, strict=True):
        obs = o.observation or (o.failure.observation if o.failure else None)
        if r.observation is None or obs is None:
            if (r.observation is None) != (obs is None) and live:
                drifts.append(Drift(index, "observation", r.observation is not None, obs is not None))
            continue
        ro = r.observation
        if _fill(ro.url, base_url) != obs.url:
            drifts.append(Drift(index, "url", _fill(ro.url, base_url), obs.url))
        if ro.title != obs.title:
            drifts.append(Drift(index, "title", ro.title, obs.title))
        want_console = _console(ro.console, ignore_console, base_url)
        got_console = _console(obs.console, ignore_console, None)
        if want_console != got_console:
            drifts.append(Drift(index, "console", want_console, got_console))
        if (r.error is None) != (o.failure is None and o.error is None):
            drifts.append(Drift(index, "error", r.error is not None, o.failure is not None))
    return drifts


def _failures(turn: Turn, recorded: Sequence[ToolResultRecord]) -> list[str]:
    """The calls that failed or were refused where the recording has no such outcome."""
    out = []
    for k, o in enumerate(turn.outcomes):
        if o.status not in FAILING or (k < len(recorded) and recorded[k].status == o.status):
            continue
        label = f"{o.tool} {o.action}" if o.action else o.tool
        why = o.failure.message if o.failure else o.error.message if o.error else o.violation or o.text
        first = (why or "").strip().splitlines()[0] if (why or "").strip() else ""
        out.append(f"{label}: {o.status.replace('_', ' ')}" + (f" ({first[:200]})" if first else ""))
    return out


def _answers(recorded: list[ToolResultRecord]) -> tuple[list[ToolResultRecord], ToolResultRecord | None]:
    """A step's records without a held call that the recording answered, and that answer."""
    for k, r in enumerate(recorded):
        if r.status == "pending":
            later = [x for x in recorded[k + 1 :] if x.call.index == r.call.index]
            if later:
                answer = later[0]
                rest = [x for x in recorded if x is not answer]
                rest[k] = answer
                return rest, answer
    return recorded, None


async def replay(
    transcript: Transcript | str | Path,
    *,
    offline: bool = False,
    base_url: str | None = None,
    config: Config | None = None,
    local: Config | None = None,
    overrides: Mapping[str, Any] | None = None,
    settings: ReplaySettings | None = None,
    secrets: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    allow_failures: bool = False,
    record: str | Path | None = None,
    diff_dir: str | Path | None = None,
    interpreter: AsyncInterpreter | None = None,
    on_step: Callable[[ReplayStep], object] | None = None,
) -> ReplayResult:
    """Replay a transcript's assistant messages and report every step that drifted or failed.

    Live: a fresh interpreter with a real browser; the URL, title, console
    (less the lines ``ignore_console`` matches), error or not, and the
    screenshot (pixelmatch: see :mod:`xmltools.compare`) are compared with the
    recording.  Offline: the recorded observations are fed back with no
    browser, and the protocol's outcomes are compared.  A call that fails or is
    refused where the recording has no such outcome is a failure, unless
    ``allow_failures``; a hand-written scenario (no recorded results) fails on
    its failures alone.

    Settings: ``config`` is used as given when passed; otherwise
    :func:`replay_config` takes the behaviour settings from the header, the
    machine settings from ``local`` (``Config.load()``) and ``overrides``.
    ``settings`` adds to the header's replay settings (masks, ignored console
    lines, limits).  ``{secret:NAME}`` placeholders are filled from ``secrets``
    or the environment; ``{base_url}`` from ``base_url``.  A missing one is a
    :class:`~xmltools.errors.UsageError` raised before any browser starts.
    A step's drifted screenshots are written to ``diff_dir`` when given.
    """
    t = transcript if isinstance(transcript, Transcript) else load_transcript(transcript)
    used = t.placeholders()
    if not offline:  # a live replay compares screenshots: say which is missing before starting a browser
        comparison_library()  # Pillow and pixelmatch: said now, not after the first step
        missing = t.missing_screenshots()
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise TranscriptError(
                t._missing_shot(missing[0]) + more + "; an offline replay needs none", path=str(t.path)
            )
        if "base_url" in used and not base_url:
            raise UsageError(
                f"{t.path or 'the transcript'} uses {{base_url}}: give the address it stands for"
                " (--base-url URL, or --serve DIR to serve a folder; base_url= in Python)"
            )
    if record is not None and t.path is not None and Path(record).resolve() == Path(t.path).resolve():
        raise UsageError(f"{record}: a replay cannot record over the transcript it replays")
    names = [u.split(":", 1)[1] for u in sorted(used) if u.startswith("secret:")]
    if t.header.secrets is not None:
        # only the names the host gave when recording: a name the model made up was an error
        # then, and is left as written so that it is the same error now
        names = [n for n in names if n in t.header.secrets]
    given = dict(secrets or {})
    if offline:  # nothing is typed anywhere: a stand-in will do for a secret not given
        env = os.environ if environ is None else environ
        prefix = secrets_mod.ENV_PREFIX
        given = {n: given.get(n, env.get(prefix + n, f"<{n}>")) for n in names} | given
    filled_secrets = secrets_mod.resolve(names, given, environ) | given
    differences: list[str] = []
    if config is None:
        config, differences = replay_config(t, local, overrides)
    if offline and base_url is None:
        base_url = OFFLINE_BASE_URL  # any address will do: nothing is fetched offline
    how = ReplaySettings(
        screenshot_threshold=config.screenshot_threshold,
        max_diff_pixel_ratio=config.max_diff_pixel_ratio,
        max_diff_pixels=config.max_diff_pixels,
    )
    how = how.merged(t.header.replay).merged(settings)
    if how.max_diff_pixels is None and how.max_diff_pixel_ratio is None:
        how = how.model_copy(update={"max_diff_pixel_ratio": DEFAULT_DIFF_PIXEL_RATIO})
    try:
        ignore = [re.compile(p) for p in how.ignore_console]
    except re.error as e:
        raise UsageError(f"ignore_console: {e.pattern!r} is not a regular expression ({e})") from e
    recorded_browser = RecordedBrowser(t, base_url, config.viewport) if offline else None
    interp = interpreter or AsyncInterpreter(
        config,
        browser=recorded_browser,
        registry=registry_for(t),
        browser_factory=recorded_browser.session if recorded_browser is not None else None,
        secrets=filled_secrets,
    )
    writer: TranscriptWriter | None = None
    if record is not None:
        header = Header(
            config=config.model_dump(mode="json"),
            templates=interp.renderer.template_hashes(),
            tools=t.header.tools,
            title=t.header.title,
            description=t.header.description,
            replay=t.header.replay,
            secrets=t.header.secrets,
        )
        writer = TranscriptWriter(record, header, base_url=base_url, secrets=filled_secrets)
        for r in t.records:
            if isinstance(r, AssistantRecord):
                break
            if isinstance(r, MessageRecord):
                writer.message(r.role, r.content)
    diffs = Path(diff_dir) if diff_dir is not None else None
    steps: list[ReplayStep] = []
    result = ReplayResult(
        steps,
        "offline" if offline else "live",
        transcript=t,
        base_url=None if offline else base_url,
        allow_failures=allow_failures,
        differences=differences,
    )
    try:
        for index, (assistant, as_recorded) in enumerate(t.steps(), 1):
            recorded, answer = _answers(as_recorded)
            if recorded_browser is not None:
                recorded_browser.begin_step(recorded)
            turn = await interp.handle(_fill(assistant.content, base_url))
            answered: ToolUse | None = None
            if turn.approval_required is not None and answer is not None:
                held = turn.approval_required
                answered = held.call
                if writer is not None:  # the held call first, then the answer, as a live run records them
                    writer.turn(turn)
                if answer.status == "denied":
                    reason = (answer.text or "").split(":", 1)[-1].strip() or "the user did not approve it"
                    turn = await interp.deny(held, reason)
                else:
                    turn = await interp.approve(held)
            step = ReplayStep(index, assistant.content, turn, recorded)
            step.drifts = _compare(index, turn, recorded, base_url, live=not offline, ignore_console=ignore)
            step.failures = _failures(turn, recorded)
            if not offline and recorded and not any(d.field == "outcomes" for d in step.drifts):
                await _compare_shots(step, t, interp, how, diffs)
            steps.append(step)
            if writer is not None:
                if answered is not None:
                    writer.answer(turn, answered)
                else:
                    writer.turn(turn)
            if on_step is not None:
                on_step(step)
        if writer is not None:
            writer.end(result.outcome, detail=result.summary().splitlines()[0])
    finally:
        if writer is not None:
            writer.close()
        if interpreter is None:
            await interp.aclose()
    return result


async def _compare_shots(
    step: ReplayStep, t: Transcript, interp: AsyncInterpreter, how: ReplaySettings, diffs: Path | None
) -> None:
    from .browser.session import BrowserSession

    for k, (o, r) in enumerate(zip(step.turn.outcomes, step.recorded, strict=True)):
        obs = o.observation or (o.failure.observation if o.failure else None)
        if obs is None or obs.screenshot is None or r.observation is None:
            continue
        want = t.screenshot(r.observation)
        if want is None:
            continue
        mask = list(how.mask)
        browser = interp._browsers.get(o.session or DEFAULT_SESSION)
        if how.mask_selectors and isinstance(browser, BrowserSession) and browser.is_open:
            boxes = await browser.boxes(how.mask_selectors)
            for x, y, w, h in boxes:  # the part of each box inside the page: one above it is cut
                left, top = max(x, 0), max(y, 0)
                if x + w > left and y + h > top:
                    mask.append(Region(x=left, y=top, width=x + w - left, height=y + h - top))
        scale = obs.screenshot.width / obs.viewport.width if obs.viewport.width else 1.0
        assert how.screenshot_threshold is not None  # the configuration always gives one
        comparison = await asyncio.to_thread(
            compare_images,
            want.data,
            obs.screenshot.data,
            threshold=how.screenshot_threshold,
            max_diff_pixels=how.max_diff_pixels,
            max_diff_pixel_ratio=how.max_diff_pixel_ratio,
            mask=mask,
            scale=scale,
        )
        step.shots.append(ShotCheck(k, want, obs.screenshot, comparison))
        if comparison.ok:
            continue
        field = "screenshot size" if comparison.size_differs else "screenshot"
        step.drifts.append(
            Drift(step.index, field, comparison.expected_size, comparison.actual_size, comparison.describe())
        )
        if diffs is not None and comparison.diff_png is not None:
            diffs.mkdir(parents=True, exist_ok=True)
            name = f"step-{step.index:03d}-{k + 1}"
            (diffs / f"{name}-diff.png").write_bytes(comparison.diff_png)
            (diffs / f"{name}-recorded.{want.format}").write_bytes(want.data)
            (diffs / f"{name}-live.{obs.screenshot.format}").write_bytes(obs.screenshot.data)
