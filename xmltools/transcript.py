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

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .config import Config
from .errors import ConfigError, TranscriptError, UsageError
from .interpreter import AsyncInterpreter, CallOutcome, Turn
from .profiles import PROFILES
from .protocol import State
from .results import ConsoleEntry, Failure, Observation, Point, Screenshot, Viewport
from .tools import STANDARD_TOOLS, Resize, ToolRegistry

__all__ = [
    "AssistantRecord",
    "Drift",
    "Header",
    "MessageRecord",
    "RecordedBrowser",
    "ReplayResult",
    "ReplayStep",
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
REDACTED = "[redacted]"
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # what UTF-8 cannot encode


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Header(_Record):
    xmltools_transcript: int = FORMAT_VERSION
    created: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    config: dict[str, Any] = Field(default_factory=dict)
    templates: dict[str, str] = Field(default_factory=dict)  # template name -> hash
    variant: str | None = None
    tools: list[str] = Field(default_factory=list)  # standard host tools the run offered (attempt_completion)
    title: str | None = None
    description: str | None = None


class MessageRecord(_Record):
    role: Literal["system", "user"]
    content: str


class AssistantRecord(_Record):
    role: Literal["assistant"] = "assistant"
    content: str
    cut: bool = False


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


Record = MessageRecord | AssistantRecord | ToolResultRecord


@dataclass
class Transcript:
    path: Path | None
    header: Header
    records: list[Record]

    @property
    def assistant_messages(self) -> list[AssistantRecord]:
        return [r for r in self.records if isinstance(r, AssistantRecord)]

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


_RECORD_MODELS: dict[str, type[MessageRecord] | type[AssistantRecord] | type[ToolResultRecord]] = {
    "system": MessageRecord,
    "user": MessageRecord,
    "assistant": AssistantRecord,
    "tool_result": ToolResultRecord,
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
                f"unknown role {data.get('role')!r}: a record's role is system, user, assistant"
                " or tool_result",
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
    """Appends records to a transcript, flushing each one; screenshots go in a folder beside it.

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
        secrets: Iterable[str] = (),
        base_url: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.shots = self.path.parent / (self.path.stem + ".shots")
        self.secrets = sorted((s for s in secrets if s), key=len, reverse=True)
        self.base_url = base_url
        self._n = 0
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        self._f = self.path.open("a", encoding="utf-8")
        if fresh:
            self._write(header or Header())
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
            for s in self.secrets:
                value = value.replace(s, REDACTED)
            return _unfill(value, self.base_url)
        if isinstance(value, dict):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        return value

    def _write(self, record: BaseModel, *, sync: bool = True) -> None:
        if self._f.closed:
            raise UsageError("this transcript writer is closed")
        data = self._clean(record.model_dump(mode="json", exclude_defaults=False))
        line = json.dumps(data, ensure_ascii=False)
        # Outside its strings, JSON text is ASCII: every surrogate found is inside a string.
        line = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
        self._f.write(line + "\n")
        self._f.flush()
        if sync:
            os.fsync(self._f.fileno())

    def message(self, role: Literal["system", "user"], content: str) -> None:
        self._write(MessageRecord(role=role, content=content))

    def turn(self, turn: Turn) -> None:
        """Record an assistant message and what became of each of its calls."""
        # each record is flushed as it is written; the disk is synced once per turn, since a message
        # may hold thousands of calls
        self._write(AssistantRecord(content=turn.assistant["content"], cut=turn.cut), sync=False)
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

    def __str__(self) -> str:
        return f"step {self.step}: {self.field} expected {self.expected!r}, got {self.actual!r}"


@dataclass
class ReplayStep:
    index: int
    assistant: str
    turn: Turn
    recorded: list[ToolResultRecord]
    drifts: list[Drift] = field(default_factory=list)
    similarity: float | None = None


@dataclass
class ReplayResult:
    steps: list[ReplayStep]
    mode: Literal["live", "offline"]

    @property
    def drifts(self) -> list[Drift]:
        return [d for s in self.steps for d in s.drifts]

    @property
    def ok(self) -> bool:
        return not self.drifts

    def summary(self) -> str:
        if self.ok:
            return f"{len(self.steps)} steps replayed ({self.mode}): no drift"
        lines = [f"{len(self.drifts)} drift(s) in {len(self.steps)} steps ({self.mode}):"]
        lines += [f"  {d}" for d in self.drifts]
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


def _compare(
    index: int,
    turn: Turn,
    recorded: Sequence[ToolResultRecord],
    base_url: str | None,
    *,
    live: bool,
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
        want_console = [(c.type, _fill(c.text, base_url)) for c in ro.console]
        got_console = [(c.type, c.text) for c in obs.console]
        if want_console != got_console:
            drifts.append(Drift(index, "console", want_console, got_console))
        if (r.error is None) != (o.failure is None and o.error is None):
            drifts.append(Drift(index, "error", r.error is not None, o.failure is not None))
    return drifts


async def replay(
    transcript: Transcript | str | Path,
    *,
    offline: bool = False,
    base_url: str | None = None,
    config: Config | None = None,
    record: str | Path | None = None,
    threshold: float = 0.98,
    interpreter: AsyncInterpreter | None = None,
    on_step: Callable[[ReplayStep], object] | None = None,
) -> ReplayResult:
    """Replay a transcript's assistant messages and report every step that drifted.

    Live: a fresh interpreter with a real browser; URL, title, console, error
    or not, and screenshot similarity (>= ``threshold``) are compared with the
    recording.  Offline: the recorded observations are fed back with no
    browser, and the protocol's outcomes are compared.
    """
    t = transcript if isinstance(transcript, Transcript) else load_transcript(transcript)
    if not offline:  # a live replay compares screenshots: say which is missing before starting a browser
        missing = t.missing_screenshots()
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise TranscriptError(
                t._missing_shot(missing[0]) + more + "; an offline replay needs none", path=str(t.path)
            )
    if config is None:
        # The recorded run's settings, layered as every command reads them (Config.load), with the
        # header given as arguments: a replay must reproduce the recorded run, so the header wins
        # over the environment and the files for every field it holds; they fill in only the
        # fields it lacks (an older recording).  A header that is not valid is set aside.
        header_values = {k: v for k, v in t.header.config.items() if k in Config.model_fields}
        try:
            Config.build(**header_values)
        except ConfigError:
            header_values = {}
        config = Config.load(**header_values)
    if offline and base_url is None:
        base_url = OFFLINE_BASE_URL  # any address will do: nothing is fetched offline
    recorded_browser = RecordedBrowser(t, base_url, config.viewport) if offline else None
    interp = interpreter or AsyncInterpreter(
        config,
        browser=recorded_browser,
        registry=registry_for(t),
        browser_factory=recorded_browser.session if recorded_browser is not None else None,
    )
    writer: TranscriptWriter | None = None
    if record is not None:
        out = Path(record)
        if out.exists():
            out.unlink()
        header = Header(
            config=config.model_dump(mode="json"),
            templates=interp.renderer.template_hashes(),
            tools=t.header.tools,
            title=t.header.title,
            description=t.header.description,
        )
        writer = TranscriptWriter(out, header, base_url=base_url)
        for r in t.records:
            if isinstance(r, MessageRecord):
                writer.message(r.role, r.content)
                break
    steps: list[ReplayStep] = []
    try:
        for index, (assistant, recorded) in enumerate(t.steps(), 1):
            if recorded_browser is not None:
                recorded_browser.begin_step(recorded)
            turn = await interp.handle(_fill(assistant.content, base_url))
            step = ReplayStep(index, assistant.content, turn, recorded)
            step.drifts = _compare(index, turn, recorded, base_url, live=not offline)
            if not offline and recorded and not step.drifts:
                await _compare_shots(step, t, interp, threshold)
            steps.append(step)
            if writer is not None:
                writer.turn(turn)
            if on_step is not None:
                on_step(step)
    finally:
        if writer is not None:
            writer.close()
        if interpreter is None:
            await interp.aclose()
    return ReplayResult(steps, "offline" if offline else "live")


async def _compare_shots(step: ReplayStep, t: Transcript, interp: AsyncInterpreter, threshold: float) -> None:
    from .browser.controller import BrowserSession

    browser = interp._browser
    if not isinstance(browser, BrowserSession) or not browser.is_open:
        return
    for o, r in zip(step.turn.outcomes, step.recorded, strict=True):
        obs = o.observation or (o.failure.observation if o.failure else None)
        if obs is None or obs.screenshot is None or r.observation is None:
            continue
        want = t.screenshot(r.observation)
        if want is None:
            continue
        sim = await browser.similarity(want, obs.screenshot)
        step.similarity = sim if step.similarity is None else min(step.similarity, sim)
        if sim < threshold:
            step.drifts.append(Drift(step.index, "screenshot", f">= {threshold}", round(sim, 4)))
