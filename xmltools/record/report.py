"""The HTML report of a run or a replay: one page that opens from disk, with no outside resources.

The page starts with what the run was (title, description, the system prompt
and the task, folded), how it ended (the run's outcome and stop reason, or the
replay's outcome and summary) and counts, with a link to the first step that
went wrong.  Then one section per assistant message, anchored ``#step-N`` and
linked to its neighbours: the message (marked when the host cut its stream),
the time the step took, the checklist of its task the model gave (in a dialect
that has one), and what became of each call: status, error, page, console,
notes and the screenshot.

A click or a hover is marked where it landed (its ``coordinate``, else where
the mouse was after it) on the screenshot the model was looking at when it
chose it: that of the latest earlier result with a screenshot.  Each marker
names the step that clicked; a click that failed has a marker of its own look.
Markers are placed in percent of the image, so they stay put when it is scaled.

A replay's report adds, under each drifted step, the recorded and the live
screenshots and the diff image side by side, with what the comparison found.

``{base_url}`` is written out as the address it stood for.  Images are links
that open them at full size.  They are embedded as ``data:`` URLs, or (the
default of :func:`write_report`) written to a folder beside the report,
``<report stem>.files/``, which keeps the page of a long run small.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ..actions import ACTIONS, parse_coordinate
from ..base.progress import TaskProgress
from ..base.results import Point, Screenshot, Viewport
from ..browser.images import image_size
from ..errors import TranscriptError, UsageError
from ..profiles import PROFILES
from ..render.html import render_html
from .format import Usage
from .replayed import Drift, ReplayResult, ReplayStep
from .transcript import (
    AssistantRecord,
    EndRecord,
    NoteRecord,
    ObservationRecord,
    ToolResultRecord,
    Transcript,
    fill_base_url,
    load_transcript,
)

__all__ = ["assets_folder", "build_report", "write_report"]

# outcomes that count as errors of the run (a denial is the user's choice; a call not run follows another)
ERROR_STATUSES = frozenset({"failed", "invalid", "refused"})
_DEFAULT_VIEWPORT = Viewport(width=900, height=600)


# -- what the template is given -------------------------------------------------------------------


@dataclass
class Marker:
    step: int  # the step that clicked
    kind: str  # click or hover
    failed: bool
    point: Point  # CSS pixels of the viewport
    left: float  # percent of the image's width
    top: float  # percent of the image's height


@dataclass
class Image:
    src: str
    width: int
    height: int
    alt: str


@dataclass
class Shot:
    """A result's screenshot, and the markers of the clicks chosen on it."""

    image: Image
    anchor: str  # the id of its figure: shot-STEP-K
    step: int
    viewport: Viewport
    markers: list[Marker] = field(default_factory=list)


@dataclass
class Pointer:
    """Where a click or a hover of a result landed, and on which screenshot it is marked."""

    kind: str
    point: Point
    failed: bool
    on: Shot | None  # None: there was no screenshot to draw it on


@dataclass
class McpPart:
    """One part of an MCP server's answer: its kind, its text, and the image when it is one."""

    kind: str
    text: str
    uri: str | None
    image: Image | None


@dataclass
class McpRow:
    """What an MCP call asked and what its server answered (or why it could not)."""

    call: str  # SERVER TOOL, or SERVER URI
    arguments: str | None
    parts: list[McpPart]
    structured: str | None
    unavailable: str | None
    from_recording: bool  # a replay answered it from its recording, without calling the server


@dataclass
class Row:
    """One call's outcome."""

    status: str
    label: str
    state: str
    mistakes: int
    error: str | None
    url: str | None
    title: str | None
    target: str | None
    console: list[tuple[str, str]]
    notes: list[str]
    text: str
    snapshot: str | None
    shot: Shot | None
    missing: str | None  # why a recorded screenshot cannot be shown
    pointer: Pointer | None
    mcp: McpRow | None = None


@dataclass
class DriftRow:
    field: str
    recorded: str
    live: str
    detail: str | None


@dataclass
class Triple:
    """A drifted outcome's screenshots: recorded | live | diff."""

    position: int  # 1-based, among the step's outcomes
    recorded: Image | None
    live: Image | None
    diff: Image | None
    describe: str  # what the comparison found, or why nothing was compared


@dataclass
class Step:
    index: int
    assistant: str
    cut: bool
    duration: str | None
    rows: list[Row]
    problem: bool = False  # a call failed or was refused, or the replay drifted or failed here
    drifted: bool = False
    drifts: list[DriftRow] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    verdicts: list[tuple[bool, str]] = field(default_factory=list)  # the assertions after the step
    network: list[str] = field(default_factory=list)  # its requests, when the replay was traced
    rematched: list[str] = field(default_factory=list)  # elements found again by their identity
    usage: str | None = None  # what the model call that wrote it took, when recorded
    notes: list[tuple[str, str]] = field(default_factory=list)  # (nudge | budget, text) told after it
    progress: TaskProgress | None = None  # the model's checklist of its task, as this message gave it


# -- images -----------------------------------------------------------------------------------------


class _Images:
    """Where the images go: ``data:`` URLs in the page, or files in ``folder`` linked by relative URLs."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def add(self, data: bytes, fmt: str, name: str, width: int, height: int, alt: str) -> Image:
        if self.folder is None:
            src = f"data:image/{fmt};base64,{base64.b64encode(data).decode('ascii')}"
        else:
            self.folder.mkdir(parents=True, exist_ok=True)
            filename = f"{name}.{fmt}"
            (self.folder / filename).write_bytes(data)
            src = f"{quote(self.folder.name)}/{quote(filename)}"
        return Image(src, width, height, alt)

    def shot(self, shot: Screenshot, name: str, alt: str) -> Image:
        return self.add(shot.data, shot.format, name, shot.width, shot.height, alt)


# -- text -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fill:
    base_url: str | None

    def __call__(self, text: str) -> str:
        return fill_base_url(text, self.base_url)


def _seconds(value: float | None) -> str | None:
    return None if value is None else f"{value:.2f} s"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _shown(field_name: str, value: object) -> str:
    """A drift's recorded or live value, in words rather than as a Python value."""
    if field_name == "console" and isinstance(value, list):
        lines = [text if kind == "log" else f"[{kind}] {text}" for kind, text in value]
        return "\n".join(lines) or "(no console lines)"
    if field_name == "observation" and isinstance(value, bool):
        return "a page" if value else "no page"
    if field_name == "error" and isinstance(value, bool):
        return "an error" if value else "no error"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, list):
        return "\n".join(_shown(field_name, v) for v in value) or "(none)"
    if isinstance(value, tuple):
        if len(value) == 2 and all(isinstance(v, int) for v in value):
            return f"{value[0]}x{value[1]}"
        return " ".join(str(v) for v in value if v is not None)
    return str(value)


def _drift_row(d: Drift, fill: _Fill) -> DriftRow:
    return DriftRow(d.field, fill(_shown(d.field, d.expected)), fill(_shown(d.field, d.actual)), d.detail)


# -- clicks -----------------------------------------------------------------------------------------------


def _pointer_of(r: ToolResultRecord, profile: str, viewport: Viewport) -> tuple[str, Point] | None:
    """A click's or hover's kind and where it landed: its coordinate, else the mouse after it."""
    if r.status not in ("ok", "failed") or not r.action:
        return None
    form = PROFILES[profile].actions.get(r.action) if profile in PROFILES else None
    if form is not None:
        kind = form.model.facts.points
        params = form.canonical_params(r.call.params)
    else:
        kind = ACTIONS[r.action].facts.points if r.action in ACTIONS else None
        params = dict(r.call.params)
    if kind is None:
        return None
    value = params.get("coordinate")
    if value:
        with contextlib.suppress(ValueError):
            return kind, parse_coordinate(value, viewport)
    if r.observation is not None and r.observation.mouse is not None:
        return kind, r.observation.mouse
    return None


def _marker(step: int, kind: str, failed: bool, point: Point, shot: Shot) -> Marker:
    vp, image = shot.viewport, shot.image
    # the image's height in CSS pixels: the viewport's, unless the screenshot is of more than the viewport
    css_height = image.height * vp.width / image.width if image.width else vp.height
    left = min(max(100 * point.x / vp.width, 0.0), 100.0)
    top = min(max(100 * point.y / css_height, 0.0), 100.0) if css_height else 0.0
    return Marker(step, kind, failed, point, round(left, 3), round(top, 3))


# -- building ---------------------------------------------------------------------------------------------


def _row(r: ToolResultRecord, fill: _Fill) -> Row:
    obs = r.observation
    label = f"{r.call.name} {r.action}" if r.action and r.action != r.call.name else r.call.name
    error = None
    if r.error is not None and r.status != "not_run":
        error = fill(f"{r.error.kind}: {r.error.message}")
    return Row(
        status=r.status,
        label=f"{label}: {r.status.replace('_', ' ')}",
        state=r.state.value,
        mistakes=r.mistakes,
        error=error,
        url=fill(obs.url) if obs else None,
        title=obs.title if obs else None,
        target=fill(obs.target) if obs and obs.target else None,
        console=[(c.type, fill(c.line())) for c in obs.console] if obs else [],
        notes=[fill(n) for n in obs.notes] if obs else [],
        text=fill(r.text),
        snapshot=fill(obs.snapshot) if obs and obs.snapshot else None,
        shot=None,
        missing=None,
        pointer=None,
    )


def _load(t: Transcript | None, obs: ObservationRecord | None) -> tuple[Screenshot | None, str | None]:
    """A recorded screenshot, or why it cannot be shown."""
    if t is None or obs is None or obs.screenshot is None:
        return None, None
    try:
        return t.screenshot(obs), None
    except TranscriptError as e:
        return None, str(e)


def _triples(step: ReplayStep, replay: ReplayResult, images: _Images) -> list[Triple]:
    """The drifted step's screenshots: the compared ones that drifted, else the recorded and live ones."""
    out: list[Triple] = []
    name = f"step-{step.index:03d}"
    for check in step.shots:
        if check.comparison.ok:
            continue
        k = check.position + 1
        c = check.comparison
        diff = None
        if c.diff_png is not None:
            w, h = image_size(c.diff_png)
            diff = images.add(c.diff_png, "png", f"{name}-{k}-diff", w, h, f"step {step.index}: what changed")
        out.append(
            Triple(
                k,
                images.shot(check.recorded, f"{name}-{k}-recorded", f"step {step.index} as recorded"),
                images.shot(check.live, f"{name}-{k}-live", f"step {step.index} in this replay"),
                diff,
                c.describe(),
            )
        )
    if out or not step.drifts:
        return out
    # drifted before its screenshots were compared (page, title, console, outcome): show both anyway
    fields = ", ".join(dict.fromkeys(d.field for d in step.drifts))
    for k, o in enumerate(step.turn.outcomes, 1):
        obs = o.observation or (o.failure.observation if o.failure is not None else None)
        live = obs.screenshot if obs is not None else None
        rec = step.recorded[k - 1].observation if k - 1 < len(step.recorded) else None
        recorded, missing = _load(replay.transcript, rec)
        if live is None and recorded is None:
            continue
        why = f"not compared: the step drifted in its {fields} first"
        out.append(
            Triple(
                k,
                images.shot(recorded, f"{name}-{k}-recorded", f"step {step.index} as recorded")
                if recorded is not None
                else None,
                images.shot(live, f"{name}-{k}-live", f"step {step.index} in this replay")
                if live is not None
                else None,
                None,
                f"{why}; {missing}" if missing else why,
            )
        )
    return out


@dataclass
class _Build:
    """What building the report's steps keeps from one step to the next."""

    t: Transcript
    replay: ReplayResult | None
    images: _Images
    fill: _Fill
    profile: str
    last: Shot | None = None  # the latest screenshot: the page the model was looking at
    errors: int = 0
    missing: int = 0
    nudges: int = 0
    total: float = 0.0
    tokens: list[float] = field(default_factory=lambda: [0, 0, 0.0])  # in, out, cost: of the usage recorded
    estimated: bool = False  # a step's tokens were estimated: the totals are marked ~, as each step's
    told: dict[int, list[NoteRecord]] = field(default_factory=dict)  # what the loop told the model, by step

    def __post_init__(self) -> None:
        self.told = self.t.notes()

    def step(
        self, index: int, assistant: AssistantRecord, results: list[ToolResultRecord], rs: ReplayStep | None
    ) -> Step:
        told = self.told.get(index, [])
        duration = assistant.duration if assistant.duration is not None else rs.duration if rs else None
        self.total += duration or 0.0
        step = Step(index, self.fill(assistant.content), assistant.cut, _seconds(duration), [])
        step.usage = _usage(assistant.usage)
        step.progress = TaskProgress(self.fill(assistant.progress)) if assistant.progress else None
        step.notes = [(n.kind, self.fill(n.text)) for n in told]
        self.nudges += sum(n.kind == "nudge" for n in told)
        if assistant.usage is not None:
            self.tokens[0] += assistant.usage.prompt_tokens
            self.tokens[1] += assistant.usage.completion_tokens
            self.tokens[2] += assistant.usage.cost
            self.estimated = self.estimated or assistant.usage.estimated
        step.rows = [self.row(index, k, r) for k, r in enumerate(results, 1)]
        if rs is not None:
            self.replayed(step, rs)
        step.drifted = rs is not None and bool(rs.drifts)
        replay_failed = rs is not None and (bool(rs.failures) or not all(v.ok for v in rs.verdicts))
        step.problem = step.drifted or replay_failed or any(r.status in ERROR_STATUSES for r in results)
        return step

    def row(self, index: int, k: int, r: ToolResultRecord) -> Row:
        row = _row(r, self.fill)
        if r.mcp is not None:
            row.mcp = self._mcp(index, k, r)
            row.label = f"{r.call.name} {row.mcp.call}: {r.status.replace('_', ' ')}"
        self.errors += r.status in ERROR_STATUSES
        obs = r.observation
        last = self.last
        viewport = last.viewport if last else obs.viewport if obs else _DEFAULT_VIEWPORT
        pointer = _pointer_of(r, self.profile, viewport)
        shot, row.missing = _load(self.t, obs)
        self.missing += row.missing is not None
        if shot is not None and obs is not None:
            image = self.images.shot(shot, f"step-{index:03d}-{k}", f"the page after step {index}")
            row.shot = Shot(image, f"shot-{index}-{k}", index, obs.viewport)
        if pointer is not None:
            kind, point = pointer
            on = last or row.shot  # no earlier screenshot: the one taken after it is the best there is
            row.pointer = Pointer(kind, point, r.status == "failed", on)
            if on is not None:
                on.markers.append(_marker(index, kind, r.status == "failed", point, on))
        if row.shot is not None:
            self.last = row.shot
        return row

    def _mcp(self, index: int, k: int, r: ToolResultRecord) -> McpRow:
        """An MCP call's row: its server's answer, with its images (one gone is said instead)."""
        assert r.mcp is not None
        rec = r.mcp
        parts = []
        for n, p in enumerate(rec.parts):
            image = None
            if p.image is not None and self.t is not None and self.t.path is not None:
                try:
                    data = self.t.file(p.image).read_bytes()
                except OSError:
                    parts.append(McpPart(p.kind, f"(the image {p.image} is missing)", p.uri, None))
                    continue
                w, h = p.image_size or (0, 0)
                fmt = Path(p.image).suffix.lstrip(".") or "png"
                image = self.images.add(data, fmt, f"step-{index:03d}-{k}-mcp-{n}", w, h, p.text)
            parts.append(McpPart(p.kind, self.fill(p.text), p.uri, image))
        arguments = r.call.params.get("arguments")
        return McpRow(
            call=f"{rec.server} {rec.tool or rec.uri}",
            arguments=self.fill(arguments.strip()) if arguments else None,
            parts=parts,
            structured=rec.structured,
            unavailable=rec.unavailable,
            from_recording=rec.source == "recording",
        )

    def replayed(self, step: Step, rs: ReplayStep) -> None:
        """What the replay found at the step: drifts, failures, assertions, requests, re-matches."""
        fill = self.fill
        step.drifts = [_drift_row(d, fill) for d in rs.drifts]
        step.failures = [fill(f) for f in rs.failures]
        step.verdicts = [(v.ok, fill(str(v))) for v in rs.verdicts]
        step.network = [fill(n) for n in rs.network]
        step.rematched = [
            fill(f"re-matched {r.expected} with {r.found_by}")
            + fill(f" (the target now reaches {r.reached or 'nothing'})")
            for r in rs.rematched
        ]
        if self.replay is not None:
            step.triples = _triples(rs, self.replay, self.images)
        # a screenshot's drift is said under its images
        shown = {tr.describe for tr in step.triples}
        step.drifts = [d for d in step.drifts if d.detail is None or d.detail not in shown]

    def counts(self, steps: list[Step]) -> tuple[list[str], list[str]]:
        """The report's counts, and those of what went wrong."""
        replay = self.replay
        shots = sum(1 for s in steps for r in s.rows if r.shot is not None)
        counts = [_plural(len(steps), "step"), _plural(shots, "screenshot")]
        bad = [_plural(self.errors, "error")]
        if replay is not None:
            bad += [_plural(len(replay.drifts), "drift"), _plural(len(replay.failures), "failed call")]
            bad.append(_plural(len(replay.broken), "failed assertion"))
        if self.missing:
            bad.append(_plural(self.missing, "missing screenshot"))
        if self.nudges:
            bad.append(_plural(self.nudges, "nudge"))
        if any(s.usage for s in steps):
            cost = f", ${self.tokens[2]:.4f}" if self.tokens[2] else ""
            about = "~" if self.estimated else ""
            tokens_in, tokens_out = int(self.tokens[0]), int(self.tokens[1])
            counts.append(f"{about}{tokens_in:,} tokens in, {about}{tokens_out:,} out{cost}")
        return counts, bad


def build_report(
    transcript: Transcript | str | Path,
    replay: ReplayResult | None = None,
    *,
    embed: bool = True,
    assets: str | Path | None = None,
    base_url: str | None = None,
    links_from: str | Path | None = None,
) -> str:
    """The report's HTML.

    ``transcript`` is the run's recording (for a replay: the replay's own
    recording, with ``replay`` its result).  With ``embed`` every image is a
    ``data:`` URL in the page; without, images are written to the folder
    ``assets`` (created when needed) and linked as ``<folder name>/<file>``,
    so the page must sit beside that folder.  ``{base_url}`` is shown as
    ``base_url``, else the replay's, else the one the recording names.  The
    replay's traces are linked relative to the folder ``links_from`` (the
    page's), else by their absolute address.
    """
    t = transcript if isinstance(transcript, Transcript) else load_transcript(transcript)
    if not embed and assets is None:
        raise UsageError("a report that does not embed its images needs a folder to put them in (assets=)")
    images = _Images(None if embed else Path(assets) if assets is not None else None)
    resolved = base_url or (replay.base_url if replay is not None else None) or t.header.base_url
    fill = _Fill(resolved)
    build = _Build(t, replay, images, fill, str(t.header.config.get("profile", "roo")))
    replayed: Mapping[int, ReplayStep] = {s.index: s for s in replay.steps} if replay is not None else {}
    steps = [build.step(i, a, rs, replayed.get(i)) for i, (a, rs) in enumerate(t.steps(), 1)]
    counts, bad = build.counts(steps)
    end: EndRecord | None = t.end
    return render_html(
        "report.html.j2",
        title=t.header.title or (t.path.name if t.path else "xmltools run"),
        description=t.header.description,
        created=t.header.created,
        base_url=resolved,
        system=t.message("system"),
        task=t.message("user"),
        end=end,
        end_detail=fill(end.detail) if end is not None and end.detail else None,
        replay=replay,
        replay_summary=fill(replay.summary()) if replay is not None else None,
        steps=steps,
        counts=counts,
        bad=bad,
        total=_seconds(build.total) if any(s.duration for s in steps) else None,
        first_problem=next((s.index for s in steps if s.problem), None),
        traces=[(p.name, _link(p, links_from)) for p in (replay.traces if replay is not None else [])],
    )


def _usage(u: Usage | None) -> str | None:
    if u is None:
        return None
    about = "~" if u.estimated else ""
    cost = f", ${u.cost:.4f}" if u.cost else ""
    tokens = f"{about}{u.prompt_tokens:,} tokens in, {about}{u.completion_tokens:,} out{cost}"
    return f"{tokens}; {u.sent_chars:,} characters sent"


def _link(path: Path, links_from: str | Path | None) -> str:
    if links_from is None:
        return path.resolve().as_uri()
    return Path(os.path.relpath(path.resolve(), Path(links_from).resolve())).as_posix()


# -- writing ------------------------------------------------------------------------------------------------


def assets_folder(path: str | Path) -> Path:
    """The folder a report's images go in when they are not embedded: ``<stem>.files`` beside it."""
    p = Path(path)
    return p.with_name(p.stem + ".files")


def write_report(
    path: str | Path,
    transcript: Transcript | str | Path,
    replay: ReplayResult | None = None,
    *,
    embed: bool = False,
    base_url: str | None = None,
) -> Path:
    """Write the report to ``path``; its images to :func:`assets_folder` unless ``embed``.

    The folder belongs to the report: what an earlier report left in it is
    removed.  The page and its folder are built aside and then moved in place,
    so a report that fails to build leaves the previous one whole.
    """
    out = Path(path)
    if out.is_dir():
        raise UsageError(f"{out}: is a folder, not a report file")
    t = transcript if isinstance(transcript, Transcript) else load_transcript(transcript)
    out.parent.mkdir(parents=True, exist_ok=True)
    folder = assets_folder(out)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder}: is in the way of the report's images (a file, not a folder)")
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.stem}.") as scratch:
        new = Path(scratch) / folder.name
        html = build_report(
            t, replay, embed=embed, assets=None if embed else new, base_url=base_url, links_from=out.parent
        )
        page = Path(scratch) / "page.html"
        page.write_text(html, encoding="utf-8")
        if folder.is_dir():
            shutil.rmtree(folder)
        if new.is_dir():
            new.rename(folder)
        os.replace(page, out)
    return out
