"""The HTML report of a run: one self-contained page that opens from disk.

Each assistant message is shown with what became of its calls: the screenshot
(embedded) with a marker at every click, the console, errors in red, and the
protocol state.  Drifts found by a replay are listed under their step.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .render import render_html
from .transcript import ReplayResult, Transcript, load_transcript

__all__ = ["build_report", "write_report"]

_MARKED = ("click", "hover")


def build_report(transcript: Transcript | str | Path, replay: ReplayResult | None = None) -> str:
    t = transcript if isinstance(transcript, Transcript) else load_transcript(transcript)
    drifts = {s.index: [str(d) for d in s.drifts] for s in replay.steps} if replay is not None else {}
    steps: list[dict[str, Any]] = []
    screenshots = errors = 0
    for index, (assistant, results) in enumerate(t.steps(), 1):
        rows = []
        for r in results:
            obs = r.observation
            image = None
            if obs is not None and obs.screenshot is not None:
                shot = t.screenshot(obs)
                image = shot.data_url() if shot is not None else None
                screenshots += image is not None
            marker = None
            if obs is not None and obs.mouse is not None and r.action in _MARKED and r.status == "ok":
                marker = (obs.mouse.x, obs.mouse.y)
            if r.status in ("failed", "invalid", "refused"):
                errors += 1
            label = f"{r.call.name} {r.action}" if r.action else r.call.name
            rows.append(
                {
                    "status": r.status,
                    "label": f"{label}: {r.status.replace('_', ' ')}",
                    "state": r.state.value,
                    "mistakes": r.mistakes,
                    "error": f"{r.error.kind}: {r.error.message}"
                    if r.error and r.status != "not_run"
                    else None,
                    "url": obs.url if obs else None,
                    "title": obs.title if obs else None,
                    "console": [{"type": c.type, "line": c.line()} for c in obs.console] if obs else [],
                    "notes": obs.notes if obs else [],
                    "text": r.text,
                    "image": image,
                    "viewport": (obs.viewport.width, obs.viewport.height) if obs else (0, 0),
                    "marker": marker,
                    "marker_left": round(100 * marker[0] / obs.viewport.width, 3) if marker and obs else 0,
                    "marker_top": round(100 * marker[1] / obs.viewport.height, 3) if marker and obs else 0,
                }
            )
        steps.append(
            {"index": index, "assistant": assistant.content, "results": rows, "drifts": drifts.get(index, [])}
        )
    return render_html(
        "report.html.j2",
        title=t.header.title or (t.path.name if t.path else "xmltools run"),
        description=t.header.description,
        created=t.header.created or datetime.now(UTC).isoformat(timespec="seconds"),
        steps=steps,
        screenshots=screenshots,
        errors=errors,
        drifts=len(replay.drifts) if replay is not None else None,
    )


def write_report(
    path: str | Path, transcript: Transcript | str | Path, replay: ReplayResult | None = None
) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(transcript, replay), encoding="utf-8")
    return out
