"""An experiment's report: one self-contained HTML page, with the chart drawn as inline SVG.

The matrix (each cell's rate with its interval, pass@k, false claims, tokens,
cost and time), a chart of the rates with their 95% whiskers, the comparison
in words, the false claims with the check that caught each, the failures
grouped by stop reason and first error, and a link to each trial's own report
(written beside its transcript).  Nothing is fetched from the network.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..record.report import write_report
from ..render.html import render_html
from .matrix import cells, comparisons
from .store import TrialRow

__all__ = ["write_experiment_report"]

CHART_WIDTH = 720
LABEL_WIDTH = 260
ROW_HEIGHT = 26


def write_experiment_report(
    out: str | Path, rows: Sequence[TrialRow], *, title: str = "Prompt experiment", trial_reports: bool = True
) -> Path:
    """Write ``out``/report.html (and, with ``trial_reports``, each trial's report beside its transcript)."""
    out = Path(out)
    hrefs: dict[tuple[str, str, str, int], str] = {}
    for r in rows:
        if r.transcript is None:
            continue
        transcript = out / r.transcript
        page = transcript.with_suffix(".html")
        if trial_reports and transcript.is_file() and not page.is_file():
            write_report(page, transcript)
        hrefs[r.key] = page.relative_to(out).as_posix() if page.is_file() else r.transcript
    path = out / "report.html"
    path.write_text(render_html("experiment.html.j2", **_context(rows, hrefs, title)), encoding="utf-8")
    return path


def _context(
    rows: Sequence[TrialRow], hrefs: dict[tuple[str, str, str, int], str], title: str
) -> dict[str, Any]:
    table = cells(rows)
    head = ["variant", "model", "task", "passed (95% CI)", "pass@1 @3", "pass^1 ^3", "false claims"]
    head += ["tokens", "cost", "time/trial"]

    def name(r: TrialRow) -> str:
        return f"{r.variant} × {r.model} × {r.task} #{r.idx}"

    by_cell: dict[tuple[str, str, str], list[TrialRow]] = {}
    for r in rows:
        by_cell.setdefault((r.variant, r.model, r.task), []).append(r)
    matrix = [
        {
            "cells": c.row(),
            "trials": [
                {
                    "idx": r.idx,
                    "passed": r.passed,
                    "false_claim": r.false_claim,
                    "href": hrefs.get(r.key, ""),
                    "title": f"{'passed' if r.passed else 'failed'}, {r.stop_reason}, {r.turns} turns",
                }
                for r in sorted(by_cell[(c.variant, c.model, c.task)], key=lambda r: r.idx)
            ],
        }
        for c in table
    ]
    scale = (CHART_WIDTH - LABEL_WIDTH - 20) / 1.0
    bars = [
        {
            "label": f"{c.variant} · {c.model} · {c.task}"[:40],
            "y": 14 + i * ROW_HEIGHT,
            "x": round(LABEL_WIDTH + c.rate.value * scale, 1),
            "low": round(LABEL_WIDTH + c.rate.low * scale, 1),
            "high": round(LABEL_WIDTH + c.rate.high * scale, 1),
            "title": str(c.rate),
        }
        for i, c in enumerate(table)
    ]
    height = 14 + len(table) * ROW_HEIGHT + 10
    ticks = [
        {"x": round(LABEL_WIDTH + f * scale, 1), "label": f"{int(f * 100)}%"} for f in (0, 0.25, 0.5, 0.75, 1)
    ]
    false_claims = [
        {
            "name": name(r),
            "href": hrefs.get(r.key, ""),
            "answer": r.answer or "",
            "problem": "; ".join(f"{c['check']}: {c['problem']}" for c in r.checks if c["problem"]),
        }
        for r in rows
        if r.false_claim
    ]
    groups: dict[tuple[str, str], list[TrialRow]] = {}
    for r in rows:
        if not r.passed:
            groups.setdefault((r.stop_reason, r.first_error or "(no error: a check failed)"), []).append(r)
    failures = [
        {
            "stop": stop,
            "error": error,
            "trials": [{"name": name(r), "href": hrefs.get(r.key, "")} for r in rs],
        }
        for (stop, error), rs in sorted(groups.items(), key=lambda kv: -len(kv[1]))
    ]
    return {
        "title": title,
        "trials": len(rows),
        "cost": sum(r.cost for r in rows),
        "tokens": sum(r.prompt_tokens + r.completion_tokens for r in rows),
        "estimated": any(r.estimated for r in rows),
        "sentences": [c.sentence() for c in comparisons(rows)],
        "chart": {"width": CHART_WIDTH, "height": height + 18, "bars": bars, "ticks": ticks},
        "head": head,
        "rows": matrix,
        "false_claims": false_claims,
        "failures": failures,
    }
