"""Artefacts of a replay for debugging: a Playwright trace of the browser session (kept on failure,
removed on success under retain-on-failure), linked from the report, and the failed step's network
requests listed under it."""

from __future__ import annotations

import asyncio
import shutil
import zipfile
from pathlib import Path

from support.helpers import SITE, ba, scenario

from xmltools.base.serve import serve_directory
from xmltools.record.report import write_report
from xmltools.replaying.run import replay


def flow(tmp_path: Path) -> tuple[Path, Path]:
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    path = scenario(
        tmp_path / "flow.jsonl", ba("launch", url="{base_url}/order.html"), ba("click", coordinate="100,110")
    )
    recorded = tmp_path / "rec" / "flow.jsonl"
    with serve_directory(site) as base:
        assert asyncio.run(replay(path, base_url=base, record=recorded)).ok
    return site, recorded


def test_a_trace_is_kept_on_failure_only_and_the_report_links_it(tmp_path: Path) -> None:
    site, recorded = flow(tmp_path)
    traces = tmp_path / "traces"
    with serve_directory(site) as base:
        passed = asyncio.run(replay(recorded, base_url=base, tracing="retain-on-failure", trace_dir=traces))
    assert passed.ok and passed.traces == [] and not list(traces.glob("*.zip")), passed.summary()

    page = site / "order.html"
    page.write_text(page.read_text().replace("<title>Orders</title>", "<title>Orders (2)</title>"))
    live = tmp_path / "live.jsonl"
    with serve_directory(site) as base:
        failed = asyncio.run(
            replay(recorded, base_url=base, tracing="retain-on-failure", trace_dir=traces, record=live)
        )
    assert failed.outcome == "drifted" and failed.traces == [traces / "trace-1.zip"], failed.summary()
    with zipfile.ZipFile(failed.traces[0]) as z:
        names = z.namelist()
        assert "trace.trace" in names and "trace.network" in names, names
        assert b"order.html" in z.read("trace.network")
    network = failed.steps[0].network
    assert any(n.startswith("200 GET ") and n.endswith("/order.html") for n in network), network
    html = write_report(tmp_path / "out" / "report.html", live, failed).read_text()
    assert '<a href="../traces/trace-1.zip">trace-1.zip</a>' in html
    assert "Network requests of this step" in html and "/order.html" in html


def test_tracing_on_keeps_every_trace_and_off_records_none(tmp_path: Path) -> None:
    site, recorded = flow(tmp_path)
    with serve_directory(site) as base:
        on = asyncio.run(replay(recorded, base_url=base, tracing="on", trace_dir=tmp_path / "on"))
        off = asyncio.run(replay(recorded, base_url=base, trace_dir=tmp_path / "off"))
    assert on.ok and [p.name for p in on.traces] == ["trace-1.zip"], on.summary()
    assert zipfile.is_zipfile(on.traces[0])
    assert off.ok and off.traces == [] and not (tmp_path / "off").exists()
    assert all(s.network == [] for s in off.steps)
