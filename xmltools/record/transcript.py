"""Transcripts: the file format and its writer (the loader is :mod:`.reader`, re-exported here).

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
Screenshots go in ``<stem>.shots/`` beside the file, and a record names one by
its path from the transcript's folder (``run.shots/0001.webp``); a reader
finds it beside a renamed transcript too (see :mod:`.reader`).

The records themselves are in :mod:`xmltools.record.format` (re-exported
here).  Replaying lives above this module, in :mod:`xmltools.replaying.run`; this
one imports :mod:`xmltools.record.turn` (what a turn produced) and never the interpreter.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel

from ..base.expectations import Expectation, ExpectationFailed
from ..base.results import Failure, Observation, Screenshot
from ..base.secrets import Hider, Secret, check_secret_names, fixed_values, recording_ended, recording_secrets
from ..config.settings import Config
from ..errors import ConfigError, UsageError
from ..errors import TranscriptError as TranscriptError  # where it was imported from before
from ..parser import ToolUse
from ..profiles import PROFILES
from ..tools import STANDARD_TOOLS, ToolRegistry
from .format import (
    AssistantRecord,
    CallRef,
    EndRecord,
    ErrorRecord,
    ExpectRecord,
    Header,
    MessageRecord,
    NoteRecord,
    ObservationRecord,
    ReplaySettings,
    ToolResultRecord,
    Usage,
)
from .mcp import to_record
from .reader import (
    SHOTS_SUFFIX,
    IncompleteRecord,
    Transcript,
    TranscriptWarning,
    load_transcript,
    not_json,
    read_lines,
)
from .turn import CallOutcome, Turn

__all__ = [
    "MACHINE_SETTINGS",
    "AssistantRecord",
    "EndRecord",
    "ErrorRecord",
    "ExpectRecord",
    "Header",
    "IncompleteRecord",
    "MessageRecord",
    "NoteRecord",
    "ObservationRecord",
    "ReplaySettings",
    "ToolResultRecord",
    "Transcript",
    "TranscriptWarning",
    "TranscriptWriter",
    "load_transcript",
    "new_header",
    "not_json",
    "read_lines",
    "registry_for",
]

OFFLINE_BASE_URL = "http://localhost"
FAILURE_KINDS = frozenset(get_args(Failure.model_fields["kind"].annotation))
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # what UTF-8 cannot encode
_SHOTS_NAMED = re.compile(r'"(?:screenshot|image)": "([^"/\\]+\.shots)/')  # a record's screenshot or image
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


def _shots_in_use(path: Path, own: Path) -> Path:
    """The screenshots folder a transcript being added to goes on with: its own name's, or, for a
    file renamed without its folder, the folder its records name when that one is there (so that
    the new screenshots' names do not take the old ones' place in the folder a reader looks in first)."""
    if own.is_dir():
        return own
    named: list[str] = _SHOTS_NAMED.findall(path.read_text(encoding="utf-8", errors="replace"))
    if named and (path.parent / named[-1]).is_dir():
        return path.parent / named[-1]
    return own


def new_header(config: Config, templates: Mapping[str, str] | None = None, **fields: Any) -> Header:
    """The header of a new recording: the configuration it runs under, the hashes of the templates
    that rendered its prompts, and ``fields`` (title, description, tools, variant, ...)."""
    return Header(config=config.model_dump(mode="json"), templates=dict(templates or {}), **fields)


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


def _cut_an_incomplete_last_line(path: Path) -> None:
    """Before appending: a last line without its newline (a crash, a full disk) is cut off, with a
    :class:`TranscriptWarning`, so that the next record starts a line of its own and the file reads."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        f.seek(0)
        data = f.read()
        keep = data.rfind(b"\n") + 1  # 0: the header itself was cut, and the file starts again
        f.truncate(keep)
    warnings.warn(
        f"{path}: the last record was incomplete ({len(data) - keep} bytes, cut off); appending after"
        " the complete records before it",
        TranscriptWarning,
        stacklevel=3,
    )


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
        self.shots = self.path.parent / (self.path.stem + SHOTS_SUFFIX)
        named = fixed_values(secrets) if isinstance(secrets, Mapping) else {}
        plain = [] if isinstance(secrets, Mapping) else [s for s in secrets if s]
        check_secret_names(named)
        self._hide = Hider(named, plain)
        # while it is open, a field one of these values is typed into is masked in screenshots, so
        # that the recorded screenshots show it as a replay (which types {secret:NAME}) will
        recording_secrets(self, [*named.values(), *plain])
        self.base_url = base_url
        self._system: Callable[[], str] | None = None  # the system prompt, written before the next record
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
        else:
            _cut_an_incomplete_last_line(self.path)
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
        else:
            self.shots = _shots_in_use(self.path, self.shots)
            if self.shots.exists():
                self._n = len(list(self.shots.iterdir()))

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        recording_ended(self)
        if not self._f.closed:
            if self._system is not None:
                self._write_system()
            self._f.close()

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            return unfill_base_url(self._hide(value), self.base_url)
        if isinstance(value, dict):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        return value

    def system_later(self, prompt: Callable[[], str]) -> None:
        """Write the system prompt as the first record after the header, taking it from ``prompt``
        when the next record is written (or the writer closes): an async host may start its MCP
        servers after it starts recording, and the prompt its model gets then lists their tools."""
        self._system = prompt

    def _write_system(self) -> None:
        prompt, self._system = self._system, None
        if prompt is not None:
            self._write(MessageRecord(role="system", content=prompt()))

    def _write(self, record: BaseModel, *, sync: bool = True) -> None:
        if self._system is not None and not isinstance(record, Header):
            self._write_system()
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
