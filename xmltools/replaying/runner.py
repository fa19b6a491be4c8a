"""A replay as a front end runs it: ``xmltools replay`` and the pytest plugin share this.

Both take flat options (``--mask``, ``max_diff_pixels=``, ``--serve``, ...).  Here they become
the replay's settings and configuration (:class:`ReplayOptions`, the one place), the folder is
served, the transcript replayed or updated (:mod:`.update`), the traces said and the report
written (:class:`ReplayRunner`).  What each front end does with the outcome is its own: the
command prints it and exits; the plugin keeps the artefacts of a failed run and fails the test.

Sits above :mod:`.run` and :mod:`.update`; imports neither the loop, the experiments nor the
command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ..base.comparison import Region
from ..base.secrets import Secret
from ..base.serve import serve_directory
from ..base.tracing import TracingMode
from ..browser.locate import browser_options
from ..errors import UsageError, XmltoolsError
from ..models.adapters import AnyModel
from ..record.report import write_report
from ..record.transcript import ReplaySettings, TranscriptWarning, load_transcript
from .mcp import McpCalls
from .run import ReplayResult, ReplayStep, replay, replay_config
from .update import Update, update

__all__ = ["ReplayOptions", "ReplayRunner", "Replayed"]

_Secrets = Mapping[str, str | Secret]


@dataclass(frozen=True)
class ReplayOptions:
    """A replay's options, flat, as the command line and the pytest plugin take them.

    ``secrets`` and ``heal`` may be functions: they are called once the folder is served, so that
    what goes wrong in making them (a ``NAME=VALUE`` without ``=``, a model's missing key) is said
    after the address is.
    """

    # the site: a folder served on 127.0.0.1, whose address fills {base_url}; else base_url
    serve: str | Path | None = None
    base_url: str | None = None
    secrets: _Secrets | Callable[[], _Secrets] | None = None
    # how the steps are compared (ReplaySettings, on top of the header's)
    screenshot_threshold: float | None = None
    max_diff_pixel_ratio: float | None = None
    max_diff_pixels: int | None = None
    mask: Sequence[Sequence[float] | Region] = ()  # regions, or (x, y, width, height)
    mask_text: Sequence[str] = ()  # regions written X,Y,W,H, as on the command line
    mask_selectors: Sequence[str] = ()
    ignore_console: Sequence[str] = ()
    ignore_snapshot: Sequence[str] = ()
    ignore_mcp: Sequence[str] = ()
    allow_failures: bool = False
    rematch: Literal["on", "off", "strict"] | None = None
    drift: Literal["fail", "warn"] | None = None
    # this machine's browser: it wins over the recording's and the configuration files'
    executable: str | None = None
    headed: bool = False
    remote: str | None = None
    # what is done, and what is written
    offline: bool = False
    update: bool = False  # write what the live app does now back into the transcript
    record: str | Path | None = None  # the replay's own recording
    report: str | Path | None = None  # the HTML report (of a recording in a temporary folder if none)
    embed: bool = False  # the report's images in the page
    diff_dir: str | Path | None = None
    tracing: TracingMode = "off"
    trace_dir: str | Path | None = None
    heal: Callable[[], AnyModel] | None = None  # makes the model that mends a step whose element is gone
    mcp_calls: McpCalls = "read-only"  # which MCP calls a live replay makes again (see replaying.mcp)

    def settings(self, named: Callable[[str], str] | None = None) -> ReplaySettings:
        """The replay settings these options stand for.

        A value out of range raises pydantic's ValidationError; with ``named`` (how the front end
        writes an option, from its field's name), a UsageError naming the option.
        """
        mask = [Region.parse(m) for m in self.mask_text]
        mask += [
            m if isinstance(m, Region) else Region(x=m[0], y=m[1], width=m[2], height=m[3]) for m in self.mask
        ]
        try:
            return ReplaySettings(
                screenshot_threshold=self.screenshot_threshold,
                max_diff_pixel_ratio=self.max_diff_pixel_ratio,
                max_diff_pixels=self.max_diff_pixels,
                mask=mask,
                mask_selectors=list(self.mask_selectors),
                ignore_console=list(self.ignore_console),
                ignore_snapshot=list(self.ignore_snapshot),
                ignore_mcp=list(self.ignore_mcp),
            )
        except ValidationError as e:
            if named is None:
                raise
            first = e.errors()[0]
            where = named(str(first["loc"][0])) if first.get("loc") else "an option"
            raise UsageError(f"{where}: {first['msg']} (got {first.get('input')!r})") from e

    def overrides(self) -> dict[str, Any]:
        """The settings that win over the recording's and the configuration files': this machine's
        browser (``headed`` where no display is is a UsageError), ``rematch`` and ``drift``."""
        return {
            **browser_options(self.executable, self.headed, self.remote),
            **({"rematch": self.rematch} if self.rematch else {}),
            **({"drift": self.drift} if self.drift else {}),
        }


@dataclass
class Replayed:
    """What a run did: the replay's result, the update when it was one, and the replay's own
    recording and report when it has them."""

    result: ReplayResult
    update: Update | None = None
    recording: str | Path | None = None
    report: Path | None = None

    @property
    def ok(self) -> bool:
        """The replay passed; an update, that it wrote the run back or found nothing to change."""
        return self.update.why_not is None if self.update is not None else self.result.ok

    def summary(self) -> str:
        """The replay's summary, then the update's."""
        if self.update is None:
            return self.result.summary()
        return f"{self.result.summary()}\n{self.update.summary()}"

    def write_report(self, path: str | Path, *, embed: bool = False) -> Path:
        """Write the HTML report of the replay, from its recording."""
        if self.recording is None:
            raise UsageError("a report is written from the replay's recording: record= was not given")
        self.report = write_report(path, self.recording, self.result, embed=embed)
        return self.report


def _silent(line: str) -> None:
    pass


class ReplayRunner:
    """One replay of the transcript at ``path`` with flat ``options``, as a front end runs it.

    Made, it has read the transcript, built the settings and the configuration, and said (through
    ``say``) how the recording's settings differ from this machine's: they may explain what follows.
    A last record cut short is said through ``say`` too; without ``say``, it is left to the
    :class:`~xmltools.record.reader.TranscriptWarning` the loader issues (pytest shows it).
    :meth:`run` serves the folder, replays or updates, says each trace and writes the report.
    ``named``: how the front end writes an option, for a UsageError (see :meth:`ReplayOptions.settings`).
    """

    def __init__(
        self,
        path: str | Path,
        options: ReplayOptions,
        *,
        say: Callable[[str], object] = _silent,
        named: Callable[[str], str] | None = None,
    ) -> None:
        self.path = path
        self.options = options
        self.say = say
        self.kept: list[str] = []  # what an interrupted run kept (its recording, its report)
        with warnings.catch_warnings():
            if say is not _silent:  # a front end that speaks says it, in one line of its own (below)
                warnings.simplefilter("ignore", TranscriptWarning)
            self.transcript = load_transcript(path)
        if self.transcript.incomplete is not None:
            say(f"warning: {self.transcript.incomplete}")
        self.settings = options.settings(named)
        self.config, self.differences = replay_config(self.transcript, overrides=options.overrides())
        for d in self.differences:  # before the run: they may explain what follows
            say(f"setting {d}")

    async def run(self, on_step: Callable[[ReplayStep], object] | None = None) -> Replayed:
        """Replay (or update) the transcript; ``on_step`` is called with each step as it is done."""
        o = self.options
        with contextlib.ExitStack() as stack:
            base_url = self._served(stack)
            record = self._recording(stack)
            common = self._common(base_url, on_step)
            if o.update:
                done = await update(self.path, self.transcript, **common)
                done.result.differences = self.differences
                return Replayed(done.result, update=done)
            try:
                result = await replay(self.transcript, offline=o.offline, record=record, **common)
            except asyncio.CancelledError:
                self._keep_interrupted(record)
                raise
            result.differences = self.differences
            replayed = Replayed(result, recording=record)
            self._tell(replayed)
        return replayed

    def _keep_interrupted(self, record: str | Path | None) -> None:
        """An interrupted replay: the report of the steps replayed, from its recording, when asked."""
        o = self.options
        if record is None or not Path(record).is_file():
            return
        if o.record:
            self.kept.append(f"the recording {o.record} (ended as interrupted)")
        if o.report:
            with contextlib.suppress(XmltoolsError, OSError):
                self.kept.append(f"the report {write_report(o.report, record, embed=o.embed)}")

    def _served(self, stack: contextlib.ExitStack) -> str | None:
        """The address that fills ``{base_url}``: the served folder's, when one is served."""
        o = self.options
        if o.serve is None:
            return o.base_url
        base = stack.enter_context(serve_directory(o.serve))
        self.say(f"serving {o.serve} at {base}")
        return base

    def _recording(self, stack: contextlib.ExitStack) -> str | Path | None:
        """Where the replay records itself: as asked, or in a temporary folder for the report."""
        o = self.options
        if o.report and not o.record:
            return str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "replay.jsonl")
        return o.record

    def _common(self, base_url: str | None, on_step: Callable[[ReplayStep], object] | None) -> dict[str, Any]:
        """The options a replay and an update take alike."""
        o = self.options
        common: dict[str, Any] = {
            "base_url": base_url,
            "config": self.config,
            "settings": self.settings,
            "secrets": o.secrets() if callable(o.secrets) else o.secrets,
            "allow_failures": o.allow_failures,
            "diff_dir": o.diff_dir,
            "on_step": on_step,
            "tracing": o.tracing,
            "trace_dir": o.trace_dir,
            "mcp_calls": o.mcp_calls,
        }
        if o.heal is not None:
            common["heal"] = o.heal()
        return common

    def _tell(self, replayed: Replayed) -> None:
        """Say each trace kept; write the report when one is asked for."""
        for trace in replayed.result.traces:
            self.say(f"trace: {trace} (playwright show-trace {trace})")
        if self.options.report:
            path = replayed.write_report(self.options.report, embed=self.options.embed)
            self.say(f"report: {path}")
