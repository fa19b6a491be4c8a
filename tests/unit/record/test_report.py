"""The HTML report: markers on the page the model saw, outcome and times, links, images beside or embedded.

Most tests record a run with a stand-in browser whose screenshots are real
PNGs (twice the viewport's size, as on a high-density screen), so that the
report can be read in Chromium without driving a page.  One test replays a
page that changed, in Chromium, and reads the drift in the report.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest
from support.helpers import ba
from support.sample_run import BASE, PageBrowser, png, record_run

from xmltools.base.results import Failure, Screenshot
from xmltools.config.settings import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.record.report import assets_folder, build_report, write_report
from xmltools.record.transcript import TranscriptWriter, load_transcript
from xmltools.replaying.compare import compare_images
from xmltools.replaying.run import Drift, ReplayResult, ReplayStep, ShotCheck


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return asyncio.run(record_run(tmp_path / "rec" / "run.jsonl"))


def section(html: str, n: int) -> str:
    """The HTML of step n's section."""
    start = html.index(f'id="step-{n}"')
    end = html.find("</section>", start)
    return html[start:end]


# -- without a browser -----------------------------------------------------------------------


def test_a_click_is_marked_on_the_screenshot_before_it_and_a_failed_one_too(run: Path) -> None:
    html = build_report(run)
    # the click of step 2 is drawn on step 1's screenshot, at 450,300 of a 900x600 viewport
    one = section(html, 1)
    assert re.search(r'class="marker click" href="#step-2" data-step="2" data-x="450" data-y="300"', one)
    assert "left: 50.0%; top: 50.0%" in one
    # the failed click of step 3 is drawn on step 2's screenshot, in the look of a failure
    two = section(html, 2)
    assert re.search(r'class="marker click failed" href="#step-3" data-step="3" data-x="700"', two)
    assert "left: 77.778%; top: 83.333%" in two
    three = section(html, 3)
    assert 'class="pointer failed"' in three and "click: failed" in three and 'href="#shot-2-1"' in three
    assert html.count('class="marker') == 2


async def test_without_a_coordinate_the_mouse_after_the_call_is_marked(tmp_path: Path) -> None:
    it = AsyncInterpreter(Config(profile="full"), browser=PageBrowser())
    with TranscriptWriter(tmp_path / "run.jsonl", base_url=BASE, config=Config(profile="full")) as w:
        w.turn(await it.handle(ba("launch", url=f"{BASE}/app")))
        w.turn(await it.handle(ba("hover", selector="nav .menu")))
    html = build_report(tmp_path / "run.jsonl")
    one = section(html, 1)
    assert re.search(r'class="marker hover" href="#step-2" data-step="2" data-x="300" data-y="200"', one)
    assert "left: 33.333%; top: 33.333%" in one


def test_times_outcome_stop_reason_prompt_task_and_the_cut_message(run: Path) -> None:
    html = build_report(run)
    assert html.count('<span class="duration"') == 5 and html.count(">1.23 s</span>") == 5
    assert "6.17 s in all" in html
    outcome = html[html.index('class="outcome"') : html.index('class="counts"')]
    assert "completed" in outcome and "stop reason" in outcome and "5 turns" in outcome
    # the system prompt and the task, folded, and escaped
    assert re.search(r'<details class="message system"><summary>System prompt', html)
    assert re.search(r'<details class="message task"><summary>Task', html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    # only the message whose stream was cut is marked; it holds the text up to its first call
    cuts = [n for n in range(1, 6) if 'class="cut"' in section(html, n)]
    assert cuts == [4]
    assert "and then" not in section(html, 4)


async def test_a_replay_that_failed_says_so_and_points_at_the_step(tmp_path: Path) -> None:
    from xmltools.replaying.run import replay

    scenario = tmp_path / "scenario.jsonl"
    lines = [json.dumps({"xmltools_transcript": 1, "title": "checkout"})]
    lines += [
        json.dumps({"role": "assistant", "content": m})
        for m in (ba("launch", url="{base_url}/app"), ba("click", coordinate="450,300"), ba("scroll_down"))
    ]
    scenario.write_text("\n".join(lines) + "\n")
    died = Failure(kind="crashed", message="the page crashed", browser_closed=True)
    browser = PageBrowser()
    browser.fail = {"click": died}
    it = AsyncInterpreter(Config(), browser=browser)
    live = tmp_path / "live.jsonl"
    result = await replay(scenario, base_url=BASE, interpreter=it, record=live)
    assert result.outcome == "failed"
    html = build_report(live, result)
    outcome = html[html.index('class="outcome"') : html.index('class="counts"')]
    assert "Replay (live): <b" in outcome and ">failed</b>" in outcome
    summary = html[html.index('class="message replay"') :]
    assert "2 failed steps in 3 steps (live)" in summary[: summary.index("</details>")]
    assert 'class="first-problem" href="#step-2"' in html
    assert "the page crashed" in section(html, 2)
    assert load_transcript(live).end.outcome == "failed"  # type: ignore[union-attr]


def test_base_url_is_written_out(run: Path) -> None:
    assert "{base_url}/app" in run.read_text()  # the recording keeps the placeholder
    html = build_report(run)
    assert f'<small class="url">{BASE}/app</small>' in html and f"{BASE}/app&lt;/url&gt;" in html
    assert "{base_url}/app" not in html
    other = build_report(run, base_url="http://shop.test")
    assert '<small class="url">http://shop.test/app</small>' in other


def test_anchors_neighbours_and_the_first_problem(run: Path) -> None:
    html = build_report(run)
    ids = re.findall(r'<section class="step[^"]*" id="step-(\d+)"', html)
    assert ids == ["1", "2", "3", "4", "5"]
    first, third = section(html, 1), section(html, 3)
    assert 'class="next" href="#step-2"' in first and 'class="prev"' not in first
    assert 'class="prev" href="#step-2"' in third and 'class="next" href="#step-4"' in third
    assert 'class="first-problem" href="#step-3"' in html  # the failed click
    assert '<section class="step problem" id="step-3"' in html


def test_images_open_at_full_size(run: Path) -> None:
    html = build_report(run)
    links = re.findall(r'<a class="full" href="([^"]+)" target="_blank"[^>]*><img src="([^"]+)"', html)
    assert len(links) == 4 and all(href == src and src.startswith("data:image/png") for href, src in links)


def test_images_beside_the_report_keep_it_small_and_stale_ones_go(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "report.html"
    embedded = write_report(out, run, embed=True).read_text()
    assert "data:image/png;base64," in embedded and not assets_folder(out).exists()
    stale = assets_folder(out) / "step-099-1.png"
    stale.parent.mkdir()
    stale.write_bytes(b"old")
    html = write_report(out, str(run)).read_text()  # the default: files beside the report
    assert "data:image" not in html and len(html) < len(embedded) / 4
    files = sorted(p.name for p in assets_folder(out).iterdir())
    assert files == [f"step-00{n}-1.png" for n in range(1, 5)]  # the stale file is gone
    srcs = re.findall(r'<img src="([^"]+)"', html)
    assert srcs == [f"report.files/step-00{n}-1.png" for n in range(1, 5)]
    # embedded again: the folder it no longer needs goes
    write_report(out, run, embed=True)
    assert not assets_folder(out).exists()
    # the screenshots beside it are copies: the report outlives the recording
    write_report(out, run)
    shutil.rmtree(run.parent)
    assert (assets_folder(out) / "step-001-1.png").read_bytes().startswith(b"\x89PNG")


def test_a_report_without_a_folder_for_its_images_is_refused(run: Path) -> None:
    from xmltools.errors import UsageError

    with pytest.raises(UsageError, match="assets="):
        build_report(run, embed=False)


def test_a_missing_screenshot_is_said_not_raised(run: Path) -> None:
    (run.parent / "run.shots" / "0002.png").unlink()
    html = build_report(run)
    assert 'class="missing"' in section(html, 2) and "0002.png is missing" in html
    assert "1 missing screenshot" in html


async def test_a_drifted_step_shows_recorded_live_and_diff_with_what_was_found(run: Path) -> None:
    t = load_transcript(run)
    it = AsyncInterpreter(Config(), browser=PageBrowser())
    recorded, live = png(900, 600), png(900, 600, box=(100, 100, 300, 200))
    comparison = compare_images(recorded, live)
    assert not comparison.ok
    shot = ShotCheck(
        0,
        Screenshot(data=recorded, format="png", width=900, height=600),
        Screenshot(data=live, format="png", width=900, height=600),
        comparison,
    )
    turn = await it.handle(ba("launch", url=f"{BASE}/app"))
    steps = [
        ReplayStep(
            1,
            "",
            turn,
            [],
            drifts=[Drift(1, "screenshot", (900, 600), (900, 600), comparison.describe())],
            shots=[shot],
        ),
        ReplayStep(
            2,
            "",
            turn,
            [],
            drifts=[Drift(2, "console", [("error", "boom at {base_url}/x")], [("log", "fine")])],
        ),
    ]
    result = ReplayResult(steps, "live", base_url=BASE)
    html = build_report(t, result)
    one = section(html, 1)
    triple = one[one.index('class="triple"') :]
    assert re.findall(r'<figure class="(\w+)">', triple) == ["recorded", "live", "diff"]
    assert len(re.findall(r"<img src=", triple)) == 3
    assert comparison.describe() in one and "pixels differ" in one
    assert "(900, 600)" not in html  # no Python tuple for a reader
    two = section(html, 2)
    assert f"[error] boom at {BASE}/x" in two and "('error'" not in two
    assert "Replay (live)" in html and "drifted" in html
    assert 'class="first-problem" href="#step-1"' in html  # the drift comes before the failed click
    assert one.count("Drift in this replay") == 1 and "<table>" not in one  # said once, under the images


# -- in Chromium ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("estimated", "totals"), [(True, "~2,001 tokens in, ~40 out"), (False, "2,001 tokens in, 40 out")]
)
async def test_the_totals_keep_the_mark_of_estimated_tokens(
    tmp_path: Path, estimated: bool, totals: str
) -> None:
    from xmltools.loop import TurnUsage
    from xmltools.tools import ToolRegistry

    path = tmp_path / "run.jsonl"
    it = AsyncInterpreter(Config(), registry=ToolRegistry([]), browser=PageBrowser())
    with TranscriptWriter(path) as w:
        for n, text in enumerate([ba("launch", url=f"{BASE}/"), ba("close")]):
            used = TurnUsage(1000 + n, 20, 0.0, 400, estimated=estimated and n == 0)  # one step estimated
            w.turn(await it.handle(text), used)
    await it.aclose()
    html = build_report(path)
    assert totals in html
    assert estimated or "~2,001" not in html
