"""Reading a transcript: the loader, the :class:`Transcript` it returns, and the files beside it.

Every problem with a file is one :class:`~xmltools.errors.TranscriptError`
line naming the file, the line and the field.  One is forgiven: a last line
cut mid-record, as a crash or a full disk leaves it (the writer ends every
record with a newline, so a last line without one that is JSON cut short was
never finished).  It is left out, said once with a :class:`TranscriptWarning`,
and kept as :attr:`Transcript.incomplete`; the complete records before it load.

A record names its screenshots (and an MCP answer its images) by a path
relative to the transcript's folder, as written: ``run.shots/0001.webp``.
They are looked for in the shots folder of the transcript's own name first
(``b.shots/0001.webp`` for ``b.jsonl``), then where the record says, so a
transcript renamed with its folder, or without it, still finds them.

Pure: imports the records (:mod:`.format`), never the writer, the interpreter or a browser.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import ValidationError

from ..base.expectations import Expectation
from ..base.results import Observation, Screenshot
from ..errors import TranscriptError
from ..mcp.results import McpResult
from .format import (
    FORMAT_VERSION,
    AssistantRecord,
    EndRecord,
    ExpectRecord,
    Header,
    McpRecord,
    MessageRecord,
    NoteRecord,
    ObservationRecord,
    Record,
    ToolResultRecord,
    _Record,
)
from .mcp import from_record

__all__ = [
    "IncompleteRecord",
    "Transcript",
    "TranscriptWarning",
    "load_transcript",
    "not_json",
    "read_lines",
]

_PLACEHOLDER = re.compile(r"\{(base_url|secret:[A-Za-z_][A-Za-z0-9_]*)\}")
SHOTS_SUFFIX = ".shots"  # a transcript's screenshots folder: <stem>.shots beside it

R = TypeVar("R", NoteRecord, ExpectRecord)


class TranscriptWarning(UserWarning):
    """A transcript loaded, with something left out that its reader should hear about: a last
    record cut short (see :attr:`Transcript.incomplete`)."""


@dataclass(frozen=True)
class IncompleteRecord:
    """The last line of a transcript, cut mid-record (a crash, a full disk), left out when loaded."""

    path: Path
    line: int  # its line number
    chars: int  # how many characters of it were written
    kept: int  # the complete records before it (the header included)

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: the last record is incomplete (cut at {self.chars} characters);"
            f" the {self.kept} complete records before it are kept"
        )


@dataclass
class Transcript:
    """A transcript as read from its file: the header, then every record in order.

    ``incomplete`` says the file's last line was cut mid-record and left out (None: it was not).
    """

    path: Path | None
    header: Header
    records: list[Record]
    incomplete: IncompleteRecord | None = None

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

    def file(self, name: str) -> Path:
        """Where the file a record names (``run.shots/0001.webp``) is: in the shots folder of this
        transcript's own name when it is there (``b.shots/0001.webp`` for ``b.jsonl``), else where
        the record says, relative to the transcript's folder."""
        folder = self.path.parent if self.path is not None else Path()
        recorded = folder / name
        parts = name.split("/")
        if self.path is not None and len(parts) == 2 and parts[0].endswith(SHOTS_SUFFIX):
            own = folder / (self.path.stem + SHOTS_SUFFIX) / parts[1]
            if own != recorded and own.is_file():
                return own
        return recorded

    def screenshot(self, rec: ObservationRecord) -> Screenshot | None:
        """The recorded screenshot; TranscriptError (one line, naming the file) when it cannot be read."""
        if rec.screenshot is None or self.path is None:
            return None
        try:
            data = self.file(rec.screenshot).read_bytes()
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
        folders = [Path(name).parent.name]
        if self.path is not None and folders[0].endswith(SHOTS_SUFFIX):
            folders.insert(0, self.path.stem + SHOTS_SUFFIX)
        where = " or ".join(f"{f}/" for f in dict.fromkeys(folders))
        return f"{self.path}: the screenshot {name} {why} (looked for in {where} beside the transcript)"

    def missing_screenshots(self) -> list[str]:
        """The screenshots the records name that are not beside the transcript (as the records name them)."""
        if self.path is None:
            return []
        names = [
            r.observation.screenshot
            for r in self.records
            if isinstance(r, ToolResultRecord) and r.observation is not None and r.observation.screenshot
        ]
        return [n for n in names if not self.file(n).is_file()]

    def mcp_result(self, rec: McpRecord) -> McpResult:
        """The MCP server's answer a record holds (an image gone from beside the transcript is
        described instead)."""
        return from_record(rec, lambda name: self.file(name).read_bytes())

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

    Lines end at "\\n" (or "\\r\\n", or "\\r", as text files are read) only:
    ``str.splitlines()`` would also split at U+2028 or U+0085 inside a JSON string.
    """
    p = Path(path)
    return _universal(_decoded(_read_bytes(p, what), p, what)).split("\n")


def _read_bytes(p: Path, what: str) -> bytes:
    try:
        return p.read_bytes()
    except FileNotFoundError as e:
        raise TranscriptError(f"{p}: no such file", path=str(p)) from e
    except IsADirectoryError as e:
        raise TranscriptError(f"{p}: is a folder, not a {what} file", path=str(p)) from e
    except PermissionError as e:
        raise TranscriptError(f"{p}: permission denied", path=str(p)) from e
    except OSError as e:
        raise TranscriptError(f"{p}: cannot be read ({e.strerror or e})", path=str(p)) from e


def _decoded(data: bytes, p: Path, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        byte = e.object[e.start] if e.start < len(e.object) else 0
        raise TranscriptError(
            f"{p}: not UTF-8 text (byte 0x{byte:02x} at offset {e.start}): a {what} is JSON lines",
            path=str(p),
        ) from e


def _universal(text: str) -> str:
    """Text with its line ends as a file read in text mode has them: "\\r\\n" and "\\r" become "\\n"."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


_RECORD_MODELS: dict[str, type[_Record]] = {
    "system": MessageRecord,
    "user": MessageRecord,
    "assistant": AssistantRecord,
    "tool_result": ToolResultRecord,
    "expect": ExpectRecord,
    "note": NoteRecord,
    "end": EndRecord,
}
# what is left of a JSON text cut short where the decoder stopped: part of a literal, a number or an
# escape (an unterminated string is said by the decoder itself)
_PARTIAL_TOKEN = re.compile(r"t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?|-?[\d.eE+-]*|\\?(u[0-9a-fA-F]{0,4})?")


def not_json(e: ValueError) -> str:
    """What is wrong with a line that is not JSON, for a message that already names the line."""
    if isinstance(e, json.JSONDecodeError):
        return f"not JSON ({e.msg} at column {e.colno})"
    return f"not JSON ({e})"


def _cut_short(line: str, e: json.JSONDecodeError) -> bool:
    """Whether a line that is not JSON is JSON whose end is missing (its text ends mid-value),
    rather than JSON written wrong (``{"a": 1]``, ``{'a': 1}``)."""
    return (
        e.msg.startswith("Unterminated string")
        or _PARTIAL_TOKEN.fullmatch(line[e.pos :].rstrip()) is not None
    )


def _lines(p: Path) -> tuple[list[str], str | None]:
    """The file's complete lines, and its last line when that was cut mid-record: never ended by a
    newline, and cut short in a UTF-8 character or in its JSON (None when the file ends as a
    writer ends it, or with a last line that is whole without its newline)."""
    data = _read_bytes(p, "transcript")
    try:
        text, cut_in_a_character = data.decode("utf-8"), False
    except UnicodeDecodeError as e:
        if e.reason != "unexpected end of data":  # not a character cut in two: a file of another encoding
            _decoded(data, p, "transcript")
        text, cut_in_a_character = data[: e.start].decode("utf-8"), True
    body, newline, last = _universal(text).rpartition("\n")
    lines = body.split("\n") if newline else []
    if cut_in_a_character:
        return lines, last
    if not last.strip():
        return lines, None
    try:
        json.loads(last)
    except json.JSONDecodeError as e:
        if _cut_short(last, e):
            return lines, last
    return [*lines, last], None


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


def _record_kind(data: dict[str, Any]) -> str | None:
    """The kind of record a JSON object is meant to be, from its role (or its fields when it has none)."""
    role = data.get("role")
    if role is None:  # the roles that have a default: a tool result has a call or a status
        return "tool_result" if "call" in data or "status" in data else "assistant"
    return role if isinstance(role, str) and role in _RECORD_MODELS else None


class _Reading:
    """One file being read, line by line: the header first, then the records."""

    def __init__(self, p: Path) -> None:
        self.p = p
        self.header: Header | None = None
        self.records: list[Record] = []

    def problem(self, n: int, message: str, field: str | None = None) -> TranscriptError:
        return TranscriptError(f"{self.p}:{n}: {message}", path=str(self.p), line=n, field=field)

    def line(self, n: int, line: str) -> None:
        try:
            data = json.loads(line)
        except ValueError as e:
            raise self.problem(n, not_json(e)) from e
        if not isinstance(data, dict):
            raise self.problem(n, f"a record is a JSON object, not {type(data).__name__}")
        if self.header is not None and "xmltools_transcript" in data:
            raise self.problem(
                n,
                "a second header: this file holds two runs (record with append=False, the default,"
                " to start the file afresh)",
            )
        if self.header is None:
            self.header = self._header(n, data)
            return
        kind = _record_kind(data)
        if kind is None:
            raise self.problem(
                n,
                f"unknown role {data.get('role')!r}: a record's role is system, user, assistant,"
                " tool_result, expect, note or end",
                "role",
            )
        try:
            self.records.append(_RECORD_MODELS[kind].model_validate(data))  # type: ignore[arg-type]
        except ValidationError as e:
            raise self.problem(n, *_validation_problem(e, kind)) from e

    def _header(self, n: int, data: dict[str, Any]) -> Header:
        if "xmltools_transcript" not in data:
            raise self.problem(n, "the first line must be the header ({'xmltools_transcript': 1, ...})")
        try:
            header = Header.model_validate(data)
        except ValidationError as e:
            raise self.problem(n, *_validation_problem(e, "header")) from e
        if header.xmltools_transcript != FORMAT_VERSION:
            raise self.problem(n, f"format version {header.xmltools_transcript} is not supported")
        return header


def load_transcript(path: str | Path) -> Transcript:
    """Read a transcript.

    Every problem raises :class:`~xmltools.errors.TranscriptError` (a
    ConfigError) with one line naming the file, the line and the field: a
    missing file, a folder, a file that is not UTF-8, a line that is not JSON,
    an unknown role, an unknown or missing field.

    A last line cut mid-record (no newline after it, its JSON cut short: a
    crash or a full disk while recording) is left out: the records before it
    load, :attr:`Transcript.incomplete` says so, and a
    :class:`TranscriptWarning` is issued with the same one line.  A broken
    line anywhere else, or a cut header, is a TranscriptError.
    """
    p = Path(path)
    lines, cut = _lines(p)
    reading = _Reading(p)
    for n, line in enumerate(lines, 1):
        if line.strip():
            reading.line(n, line)
    n = len(lines) + 1  # the cut line's number
    if reading.header is None:
        if cut is not None:
            raise reading.problem(n, f"the header is incomplete (cut at {len(cut)} characters)")
        raise TranscriptError(f"{p}: empty: a transcript starts with a header line", path=str(p))
    incomplete = None
    if cut is not None:
        incomplete = IncompleteRecord(p, n, len(cut), 1 + len(reading.records))
        warnings.warn(str(incomplete), TranscriptWarning, stacklevel=2)
    return Transcript(p, reading.header, reading.records, incomplete)
