"""Replaying a transcript, live in a real browser or offline from its own recording.

Each recorded assistant message is handed to a fresh interpreter; what comes
back is compared with what was recorded (status, URL, title, console, and the
screenshots with pixelmatch), step by step.  Offline, a
:class:`RecordedBrowser` answers each action with its recorded result.

Sits above the interpreter and the transcript format; nothing below imports it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..base.expectations import Expectation
from ..base.results import Viewport
from ..base.secrets import ENV_PREFIX, Secret, fixed_values
from ..base.secrets import resolve as resolve_secrets
from ..base.tracing import TRACING_MODES, TracingMode
from ..config.settings import Config
from ..errors import ConfigError, TranscriptError, UsageError
from ..interpreter import AsyncInterpreter
from ..models.adapters import AnyModel
from ..parser import ToolUse
from ..profiles import DEFAULT_SESSION
from ..record.replayed import Drift, ReplayResult, ReplayStep, ShotCheck, Verdict
from ..record.transcript import (
    MACHINE_SETTINGS,
    OFFLINE_BASE_URL,
    AssistantRecord,
    Header,
    MessageRecord,
    NoteRecord,
    ReplaySettings,
    ToolResultRecord,
    Transcript,
    TranscriptWriter,
    fill_base_url,
    load_transcript,
    new_header,
    registry_for,
    unfill_base_url,
)
from ..record.turn import NOT_DONE, Turn
from .checks import (
    compare_outcomes,
    compare_shots,
    compare_snapshots,
)
from .compare import comparison_library
from .heal import Healed, heal_step
from .mcp import McpCalls, ReplayHub, compare_mcp, ignore_patterns, mcp_preflight
from .offline import RecordedBrowser, RecordedSession

__all__ = [
    "Drift",
    "RecordedBrowser",
    "RecordedSession",
    "ReplayResult",
    "ReplaySettings",
    "ReplayStep",
    "ShotCheck",
    "Verdict",
    "replay",
    "replay_config",
]


# statuses that say a call did not do what it was meant to: a replay fails on each one it did not record
FAILING = NOT_DONE
# behaviour settings that name folders: taken from the header only when the folder is here too
PATH_SETTINGS = ("templates", "workspace", "allowed_file_roots")
# how screenshots are compared: the local configuration's, then the transcript's replay settings
DEFAULT_DIFF_PIXEL_RATIO = 0.0001  # when no limit is set anywhere: 54 pixels at 900x600, a caret's blink
COMPARISON_SETTINGS = (
    "screenshot_threshold",
    "max_diff_pixel_ratio",
    "max_diff_pixels",
    "rematch",
    "drift",
)


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


def _failures(turn: Turn, recorded: Sequence[ToolResultRecord]) -> list[str]:
    """The calls that failed or were refused where the recording has no such outcome."""
    out = []
    for k, o in enumerate(turn.outcomes):
        if o.status not in FAILING or (k < len(recorded) and recorded[k].status == o.status):
            continue
        label = f"{o.tool} {o.action}" if o.action else o.tool
        said = o.text if o.status == "denied" else ""  # a refusal's reason; a violation's code says it
        why = (
            o.failure.message if o.failure else o.error.message if o.error else said or o.violation or o.text
        )
        first = (why or "").strip().splitlines()[0] if (why or "").strip() else ""
        out.append(f"{label}: {o.status.replace('_', ' ')}" + (f" ({first[:200]})" if first else ""))
    return out


def _filled(exp: Expectation, base_url: str | None) -> Expectation:
    """An assertion with ``{base_url}`` filled in (a regular expression's address is escaped)."""
    if not base_url or "{base_url}" not in exp.value:
        return exp
    with_base = re.escape(base_url) if exp.regex else base_url
    return exp.model_copy(update={"value": exp.value.replace("{base_url}", with_base)})


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
    secrets: Mapping[str, str | Secret] | None = None,
    environ: Mapping[str, str] | None = None,
    allow_failures: bool = False,
    record: str | Path | None = None,
    diff_dir: str | Path | None = None,
    interpreter: AsyncInterpreter | None = None,
    on_step: Callable[[ReplayStep], object] | None = None,
    keep_header: bool = False,
    tracing: TracingMode = "off",
    trace_dir: str | Path | None = None,
    heal: AnyModel | None = None,
    mcp_calls: McpCalls = "read-only",
) -> ReplayResult:
    """Replay a transcript's assistant messages and report every step that drifted or failed.

    Live: a fresh interpreter with a real browser; the URL, title, console
    (less the lines ``ignore_console`` matches), error or not, and the
    screenshot (pixelmatch: see :mod:`xmltools.replaying.compare`) are compared with the
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
    ``record`` writes the replay as a transcript: with the configuration it
    ran under, or, with ``keep_header``, with the replayed transcript's own
    header (as an update does, see :mod:`xmltools.replaying.update`).

    ``tracing`` (pytest-playwright's names): ``on`` writes a Playwright trace
    of each browser session into ``trace_dir`` (``trace-N.zip``, for
    ``playwright show-trace``) and lists each step's network requests;
    ``retain-on-failure`` keeps the traces only when the replay does not pass.

    ``heal``: a model asked once about each step whose recorded element is
    gone (see :mod:`xmltools.replaying.heal`); its call, when valid and it runs, takes
    the step's place, and the step is reported as healed.

    MCP calls (see :mod:`xmltools.replaying.mcp`): offline, each is answered
    from the recording.  Live, ``mcp_calls`` says which go to the configured
    servers and are compared with the recording (``read-only``: the tools
    marked read-only and the resources; ``all``; ``none``); the others are
    answered from the recording.
    """
    t = transcript if isinstance(transcript, Transcript) else load_transcript(transcript)
    filled = _preflight(t, offline, base_url, record, secrets, environ)
    differences: list[str] = []
    if config is None:
        config, differences = replay_config(t, local, overrides)
    mcp_preflight(t, config.mcp_settings(), offline, mcp_calls)
    traces = _Traces.begin(tracing, trace_dir, offline)
    if offline and base_url is None:
        base_url = OFFLINE_BASE_URL  # any address will do: nothing is fetched offline
    run = _Run(t, offline, base_url, traces.configured(config), traced=traces.folder is not None)
    run.prepare(settings, filled, interpreter, heal=heal, on_step=on_step, mcp_calls=mcp_calls)
    run.open(record, filled, diff_dir, keep_header=keep_header)
    run.start(allow_failures, differences)
    await run.through(owned=interpreter is None)
    traces.keep(run.result)
    return run.result


def _preflight(
    t: Transcript,
    offline: bool,
    base_url: str | None,
    record: str | Path | None,
    secrets: Mapping[str, str | Secret] | None,
    environ: Mapping[str, str] | None,
) -> dict[str, str | Secret]:
    """What must be so before any browser starts, said now; then the secrets the replay fills in."""
    used = t.placeholders()
    if not offline:  # a live replay compares screenshots: say which is missing before starting a browser
        comparison_library()  # Pillow and numpy: said now, not after the first step
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
    return _secrets_for(t, used, offline, secrets, environ)


def _secrets_for(
    t: Transcript,
    used: set[str],
    offline: bool,
    secrets: Mapping[str, str | Secret] | None,
    environ: Mapping[str, str] | None,
) -> dict[str, str | Secret]:
    """The value of each ``{secret:NAME}`` the transcript uses (a missing one is a UsageError)."""
    names = [u.split(":", 1)[1] for u in sorted(used) if u.startswith("secret:")]
    if t.header.secrets is not None:
        # only the names the host gave when recording: a name the model made up was an error
        # then, and is left as written so that it is the same error now
        names = [n for n in names if n in t.header.secrets]
    given: dict[str, str | Secret] = dict(secrets or {})
    if offline:  # nothing is typed anywhere: a stand-in will do for a secret not given, and no site
        # binds one (the page's address is a stand-in too); a one-time code is its name
        env = os.environ if environ is None else environ
        prefix = ENV_PREFIX
        fixed = fixed_values(given)
        given = {n: fixed.get(n, env.get(prefix + n, f"<{n}>")) for n in {*names, *given}}
    return resolve_secrets(names, given, environ) | given


def _comparison(
    config: Config, recorded: ReplaySettings | None, settings: ReplaySettings | None
) -> tuple[ReplaySettings, list[re.Pattern[str]]]:
    """How screenshots are compared (the configuration's, the header's, then ``settings``), and the
    console lines to ignore."""
    how = ReplaySettings(
        screenshot_threshold=config.screenshot_threshold,
        max_diff_pixel_ratio=config.max_diff_pixel_ratio,
        max_diff_pixels=config.max_diff_pixels,
    )
    how = how.merged(recorded).merged(settings)
    if how.max_diff_pixels is None and how.max_diff_pixel_ratio is None:
        how = how.model_copy(update={"max_diff_pixel_ratio": DEFAULT_DIFF_PIXEL_RATIO})
    try:
        ignore = [re.compile(p) for p in how.ignore_console]
    except re.error as e:
        raise UsageError(f"ignore_console: {e.pattern!r} is not a regular expression ({e})") from e
    return how, ignore


@dataclass
class _Traces:
    """The Playwright traces of a replay: the folder they go in (None: not traced), which to keep,
    and the traces that were there before it."""

    folder: Path | None
    tracing: str
    before: set[Path]

    @classmethod
    def begin(cls, tracing: str, trace_dir: str | Path | None, offline: bool) -> _Traces:
        """The traces of a replay about to start (a mode other than off, on, retain-on-failure is a
        UsageError, and so is tracing with no folder)."""
        folder = _trace_folder(tracing, trace_dir, offline)
        return cls(folder, tracing, set(folder.glob("trace-*.zip")) if folder is not None else set())

    def configured(self, config: Config) -> Config:
        """The configuration, with the folder the browser writes its traces in."""
        return config.model_copy(update={"trace_dir": self.folder}) if self.folder is not None else config

    def keep(self, result: ReplayResult) -> None:
        """List the replay's traces in its result; with ``retain-on-failure``, remove them if it passed."""
        if self.folder is None:
            return
        result.traces = sorted(set(self.folder.glob("trace-*.zip")) - self.before)
        if self.tracing == "retain-on-failure" and result.ok:
            for path in result.traces:
                path.unlink(missing_ok=True)
            result.traces = []


class _Run:
    """One replay as it goes: what it replays and how, the interpreter and the recording, and what
    it found.  Its steps, in order: prepare, open, start, replay_steps, end, close."""

    how: ReplaySettings
    ignore: list[re.Pattern[str]]
    recorded_browser: RecordedBrowser | None
    mcp: ReplayHub | None
    ignore_mcp: list[re.Pattern[str]]
    interp: AsyncInterpreter
    heal: AnyModel | None
    on_step: Callable[[ReplayStep], object] | None
    writer: TranscriptWriter | None
    keep_header: bool
    diffs: Path | None
    result: ReplayResult
    assertions: dict[int, list[Expectation]]
    told: dict[int, list[NoteRecord]]

    def __init__(
        self, t: Transcript, offline: bool, base_url: str | None, config: Config, *, traced: bool
    ) -> None:
        self.t, self.offline, self.base_url, self.config, self.traced = t, offline, base_url, config, traced

    def prepare(
        self,
        settings: ReplaySettings | None,
        secrets: Mapping[str, str | Secret],
        interpreter: AsyncInterpreter | None,
        *,
        heal: AnyModel | None,
        on_step: Callable[[ReplayStep], object] | None,
        mcp_calls: McpCalls = "read-only",
    ) -> None:
        """How it compares, and the interpreter it replays with (offline: over the recorded browser
        and the recorded MCP answers)."""
        t, config = self.t, self.config
        self.how, self.ignore = _comparison(config, t.header.replay, settings)
        self.ignore_mcp = ignore_patterns(self.how.ignore_mcp)
        browser = RecordedBrowser(t, self.base_url, config.viewport) if self.offline else None
        self.recorded_browser = browser
        live_servers = None if self.offline or mcp_calls == "none" else config.mcp_settings()
        hub = ReplayHub(t, live_servers, calls=mcp_calls, result_chars=config.max_result_chars)
        self.interp = interpreter or AsyncInterpreter(
            config,
            browser=browser,
            registry=registry_for(t),
            browser_factory=browser.session if browser is not None else None,
            secrets=secrets,
            mcp=hub,
        )
        self.mcp = self.interp.mcp if isinstance(self.interp.mcp, ReplayHub) else None
        self.heal, self.on_step = heal, on_step

    def open(
        self,
        record: str | Path | None,
        secrets: Mapping[str, str | Secret],
        diff_dir: str | Path | None,
        *,
        keep_header: bool,
    ) -> None:
        """Start the replay's own recording, when asked for, with the messages before the first step."""
        self.keep_header = keep_header
        self.diffs = Path(diff_dir) if diff_dir is not None else None
        self.writer = None
        if record is None:
            return
        t = self.t
        header = t.header if keep_header else self._header()
        self.writer = TranscriptWriter(record, header, base_url=self.base_url, secrets=secrets)
        self.interp.record_identities()
        for r in t.records:
            if isinstance(r, AssistantRecord):
                break
            if isinstance(r, MessageRecord):
                self.writer.message(r.role, r.content)

    def _header(self) -> Header:
        """The header of a recording of the replay: the configuration it ran under."""
        h = self.t.header
        return new_header(
            self.config,
            self.interp.renderer.template_hashes(),
            tools=h.tools,
            title=h.title,
            description=h.description,
            replay=h.replay,
            secrets=h.secrets,
        )

    def start(self, allow_failures: bool, differences: list[str]) -> None:
        """The result the steps go in, and what is checked and told after each step."""
        self.result = ReplayResult(
            [],
            "offline" if self.offline else "live",
            transcript=self.t,
            base_url=None if self.offline else self.base_url,
            allow_failures=allow_failures,
            differences=differences,
            drift=self.config.drift,
        )
        self.assertions = self.t.expectations()
        # a rewrite keeps what the loop told the model, and when
        self.told = self.t.notes() if self.keep_header else {}

    async def replay_steps(self) -> None:
        """Each assistant message, handed to the interpreter and compared with its recording."""
        for index, (assistant, as_recorded) in enumerate(self.t.steps(), 1):
            recorded, answer = _answers(as_recorded)
            self._expect(recorded)
            turn, answered = await self._act(assistant.content, answer)
            step = await self._judged(index, assistant.content, turn, recorded)
            self.result.steps.append(step)
            self._write(step, assistant, answered)
            if self.on_step is not None:
                self.on_step(step)

    def _expect(self, recorded: list[ToolResultRecord]) -> None:
        """Offline, the recorded browser's answers for the step; live, the element each action acted
        on, to be checked before it acts again.  The step's recorded MCP answers, either way."""
        if self.mcp is not None:
            self.mcp.begin_step(recorded)
        if self.recorded_browser is not None:
            self.recorded_browser.begin_step(recorded)
            return
        for r in recorded:
            if r.observation is not None and r.observation.identity is not None:
                call = ToolUse(r.call.name, r.call.params)
                session = self.interp.registry.session_of(call) or DEFAULT_SESSION
                self.interp.expect(r.observation.identity, session)

    async def _act(self, content: str, answer: ToolResultRecord | None) -> tuple[Turn, ToolUse | None]:
        """The step's turn; a held call that the recording answered is answered so again (and returned)."""
        interp = self.interp
        turn = await interp.handle(fill_base_url(content, self.base_url))
        if turn.approval_required is None or answer is None:
            return turn, None
        held = turn.approval_required
        if self.writer is not None:  # the held call first, then the answer, as a live run records them
            self.writer.turn(turn)
        # a recorded refusal's text ends with its reason ("...: REASON")
        given = (answer.text or "").split(":", 1)[-1].strip() if answer.status == "denied" else True
        return await interp.answer(held, given), held.call

    async def _judged(
        self, index: int, content: str, turn: Turn, recorded: list[ToolResultRecord]
    ) -> ReplayStep:
        """The step, healed when asked for and needed, set against its recording."""
        mended: Healed | str | None = None
        if self.heal is not None and not self.offline:
            mended = await heal_step(self.interp, self.heal, turn, recorded, content, self.base_url)
            if isinstance(mended, Healed):
                turn = mended.turn
        step = ReplayStep(index, content, turn, recorded)
        if isinstance(mended, Healed):
            step.healed = unfill_base_url(mended.answer, self.base_url)
        step.rematched = [
            o.observation.rematch for o in turn.outcomes if o.observation and o.observation.rematch
        ]
        step.drifts = compare_outcomes(
            index, turn, recorded, self.base_url, live=not self.offline, ignore_console=self.ignore
        )
        if not any(d.field == "outcomes" for d in step.drifts):
            step.drifts += compare_mcp(index, turn, recorded, self.t, self.ignore_mcp)
        step.failures = _failures(turn, recorded)
        if isinstance(mended, str):
            step.failures.append(f"not healed: {mended}")
        await self._checked(step, recorded)
        return step

    async def _checked(self, step: ReplayStep, recorded: list[ToolResultRecord]) -> None:
        """Live: the screenshots and snapshots compared, the network listed, the assertions checked."""
        if not self.offline and recorded and not any(d.field == "outcomes" for d in step.drifts):
            await compare_shots(step, self.t, self.interp, self.how, self.diffs)
            compare_snapshots(step, self.how)
        if self.traced:
            tracer = getattr(self.interp.browser_of(), "tracer", None)
            step.network = tracer.take_network() if tracer is not None else []
        for exp in self.assertions.get(step.index, ()):
            if not self.offline:  # offline there is no page to check them on
                exp = _filled(exp, self.base_url)
                step.verdicts.append(Verdict(exp, await self.interp.verify(exp)))

    def _write(self, step: ReplayStep, assistant: AssistantRecord, answered: ToolUse | None) -> None:
        """The step in the replay's recording, with the assertions and notes recorded after it."""
        writer = self.writer
        if writer is None:
            return
        if answered is not None:
            writer.answer(step.turn, answered)
        else:
            writer.turn(step.turn, assistant.usage if self.keep_header else None)
        for exp in self.assertions.get(step.index, ()):
            writer.write_expectation(exp)
        for note in self.told.get(step.index, ()):
            writer.note(note.kind, note.text)

    def end(self) -> None:
        """The recording's ending: the run's own with ``keep_header``, else the replay's."""
        if self.writer is None:
            return
        if self.keep_header:  # the run's own ending, not the replay's
            end = self.t.end
            if end is not None:
                self.writer.end(end.outcome, end.reason, end.detail)
        else:
            self.writer.end(self.result.outcome, detail=self.result.summary().splitlines()[0])

    async def through(self, *, owned: bool) -> None:
        """Every step, then the recording's ending, whatever happens; the interpreter closed if
        ``owned``.  Cancelled part-way (Ctrl-C), the recording ends as interrupted, keeping the steps
        replayed."""
        try:
            await self.replay_steps()
            self.end()
        except asyncio.CancelledError:
            if self.writer is not None:
                done = len(self.result.steps)
                self.writer.end("interrupted", "interrupted", f"{done} steps replayed before the interrupt")
            raise
        finally:
            await self.close(owned=owned)

    async def close(self, *, owned: bool) -> None:
        """Close the recording, and the interpreter when the replay made it."""
        if self.writer is not None:
            self.writer.close()
        if owned:
            await self.interp.aclose()


def _trace_folder(tracing: str, trace_dir: str | Path | None, offline: bool) -> Path | None:
    if tracing not in TRACING_MODES:
        raise UsageError(f"tracing is off, on or retain-on-failure, not {tracing!r}")
    if tracing == "off" or offline:  # offline there is no browser to trace
        return None
    if trace_dir is None:
        raise UsageError(f"tracing={tracing!r} needs trace_dir: the folder the traces go in")
    return Path(trace_dir)
