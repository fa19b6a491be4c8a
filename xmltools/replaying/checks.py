"""What a replayed step is checked against: its recording, and the assertions recorded after it.

Owns the comparisons of one step (the outcomes, URL, title, console and
error; the screenshots with pixelmatch; the ARIA snapshots as text) and the
assertions' verdicts.  Sits above the interpreter and the transcript format;
:mod:`xmltools.replaying.run` drives it.
"""

from __future__ import annotations

import asyncio
import difflib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..base.results import ConsoleEntry
from ..errors import UsageError
from ..interpreter import AsyncInterpreter
from ..profiles import DEFAULT_SESSION
from ..record.replayed import Drift, ReplayStep, ShotCheck, Verdict
from ..record.transcript import ReplaySettings, ToolResultRecord, Transcript, fill_base_url
from ..record.turn import Turn
from .compare import Region, compare_images

__all__ = ["Drift", "ReplayStep", "ShotCheck", "Verdict"]  # the data is record.replayed's


def _console(
    entries: Iterable[ConsoleEntry], ignore: Sequence[re.Pattern[str]], base_url: str | None
) -> list[tuple[str, str]]:
    out = []
    for c in entries:
        text = fill_base_url(c.text, base_url)
        if not any(p.search(text) for p in ignore):
            out.append((c.type, text))
    return out


def compare_outcomes(
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
        if fill_base_url(ro.url, base_url) != obs.url:
            drifts.append(Drift(index, "url", fill_base_url(ro.url, base_url), obs.url))
        if ro.title != obs.title:
            drifts.append(Drift(index, "title", ro.title, obs.title))
        want_console = _console(ro.console, ignore_console, base_url)
        got_console = _console(obs.console, ignore_console, None)
        if want_console != got_console:
            drifts.append(Drift(index, "console", want_console, got_console))
        if (r.error is None) != (o.failure is None and o.error is None):
            drifts.append(Drift(index, "error", r.error is not None, o.failure is not None))
    return drifts


# refs and boxes are renumbered and moved by any change; where the focus is ([active]) is not settled
# when an element that has it is disabled: Chromium moves it away at a later frame, or not
_SNAPSHOT_NOISE = re.compile(r" \[(?:(?:ref|box)=[^\]]*|active)\]")
MAX_SNAPSHOT_CHANGES = 6  # changed lines named in a snapshot drift


def compare_snapshots(step: ReplayStep, how: ReplaySettings) -> None:
    """Where an ARIA snapshot was recorded, the live one must have the same lines, refs, boxes and
    the focus mark aside; lines matching ``ignore_snapshot`` are left out of both.  (``mask_selectors`` cannot
    reach a snapshot: a masked element's text may differ on both sides.)"""
    try:
        ignore = [re.compile(p) for p in how.ignore_snapshot]
    except re.error as e:
        raise UsageError(f"ignore_snapshot: {e.pattern!r} is not a regular expression ({e})") from e
    for o, r in zip(step.turn.outcomes, step.recorded, strict=True):
        obs = o.observation or (o.failure.observation if o.failure else None)
        if obs is None or obs.snapshot is None or r.observation is None or r.observation.snapshot is None:
            continue
        want = _snapshot_lines(r.observation.snapshot, ignore)
        got = _snapshot_lines(obs.snapshot, ignore)
        if want == got:
            continue
        changes = [
            line
            for line in difflib.unified_diff(want, got, lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        shown = "; ".join(c[0] + " " + c[1:].strip() for c in changes[:MAX_SNAPSHOT_CHANGES])
        more = (
            f" and {len(changes) - MAX_SNAPSHOT_CHANGES} more" if len(changes) > MAX_SNAPSHOT_CHANGES else ""
        )
        added = sum(c.startswith("+") for c in changes)
        detail = (
            f"the ARIA snapshot differs ({added} lines added, {len(changes) - added} gone): {shown}{more}"
        )
        step.drifts.append(Drift(step.index, "snapshot", "\n".join(want), "\n".join(got), detail))


def _snapshot_lines(snapshot: str, ignore: Sequence[re.Pattern[str]]) -> list[str]:
    out = []
    for line in snapshot.splitlines():
        bare = _SNAPSHOT_NOISE.sub("", line).rstrip()
        if not bare.strip() or any(p.search(bare) for p in ignore):
            continue
        out.append(bare)
    return out


async def compare_shots(
    step: ReplayStep, t: Transcript, interp: AsyncInterpreter, how: ReplaySettings, diffs: Path | None
) -> None:
    from ..browser.session import BrowserSession

    for k, (o, r) in enumerate(zip(step.turn.outcomes, step.recorded, strict=True)):
        obs = o.observation or (o.failure.observation if o.failure else None)
        if obs is None or obs.screenshot is None or r.observation is None:
            continue
        want = t.screenshot(r.observation)
        if want is None:
            continue
        mask = list(how.mask)
        browser = interp.browser_of(o.session or DEFAULT_SESSION)
        if isinstance(browser, BrowserSession) and browser.is_open:
            # a field that received a secret is painted over live, and may not be in a recording made
            # before recordings masked it too: it is left out on both sides, as a mask is
            boxes = await browser.secret_boxes()
            if how.mask_selectors:
                boxes += await browser.boxes(how.mask_selectors)
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
