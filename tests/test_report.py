"""The HTML report: markers on the page the model saw, outcome and times, links, images beside or embedded.

Most tests record a run with a stand-in browser whose screenshots are real
PNGs (twice the viewport's size, as on a high-density screen), so that the
report can be read in Chromium without driving a page.  One test replays a
page that changed, in Chromium, and reads the drift in the report.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import SITE
from fakes import FakeBrowser

from xmltools.actions import Click, Hover
from xmltools.compare import compare_images
from xmltools.config import Config
from xmltools.interpreter import AsyncInterpreter
from xmltools.replaying import Drift, ReplayResult, ReplayStep, ShotCheck, replay
from xmltools.report import assets_folder, build_report, write_report
from xmltools.results import Failure, Observation, Point, Screenshot
from xmltools.serve import serve_directory
from xmltools.transcript import ReplaySettings, TranscriptWriter, load_transcript

BASE = "http://127.0.0.1:8123"
SYSTEM = "You drive a browser. Never write <script>alert(1)</script> anywhere."
TASK = "Press the blue button, then the one in the corner."
COLOURS = ["#fde68a", "#bfdbfe", "#bbf7d0", "#fecaca", "#e9d5ff", "#fed7aa"]


def ba(action: str, **params: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in {"action": action, **params}.items())
    return f"<browser_action>\n{inner}</browser_action>"


def png(
    width: int, height: int, colour: str = "white", box: tuple[int, int, int, int] | None = None
) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (width, height), colour)
    if box is not None:
        ImageDraw.Draw(im).rectangle(box, fill="red")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


class PageBrowser(FakeBrowser):
    """The stand-in browser with real screenshots, one colour per action, at twice the viewport's size.

    A click at 700,500 fails (the spot is covered), with the page still to be
    seen; a hover by selector leaves the mouse at 300,200.
    """

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    async def run(self, action: Any) -> Observation | Failure | None:
        if isinstance(action, Click) and action.coordinate == Point(x=700, y=500):
            self.actions.append(action)
            return Failure(
                kind="target",
                message="the spot 700,500 is covered by a banner",
                observation=self.observation(action, None),
            )
        if isinstance(action, Hover) and action.coordinate is None:
            self.actions.append(action)
            return self.observation(action, Point(x=300, y=200))
        return await super().run(action)

    def observation(self, action: Any, mouse: Point | None) -> Observation:
        obs = super().observation(action, mouse)
        self.n += 1
        w, h = self.viewport.width * 2, self.viewport.height * 2
        shot = Screenshot(data=png(w, h, COLOURS[self.n % len(COLOURS)]), format="png", width=w, height=h)
        return obs.model_copy(update={"screenshot": shot, "title": f"Page {self.n}"})


async def record_run(path: Path) -> Path:
    """Launch, a click, a click that fails, a message whose stream was cut, close; each step 1.234 s."""
    it = AsyncInterpreter(Config(), browser=PageBrowser())
    with TranscriptWriter(path, base_url=BASE, config=Config()) as w:
        w.message("system", SYSTEM)
        w.message("user", TASK)
        for text in (
            "Opening the app.\n" + ba("launch", url=f"{BASE}/app"),
            "The blue button.\n" + ba("click", coordinate="450,300"),
            "The corner one.\n" + ba("click", coordinate="700,500"),
        ):
            turn = await it.handle(text)
            turn.duration = 1.234
            w.turn(turn)
        stream = it.stream()
        stream.feed("Scrolling.\n" + ba("scroll_down") + "\nand then " + ba("close"))
        turn = await stream.finish(stopped=True)
        turn.duration = 1.234
        w.turn(turn)
        turn = await it.handle(ba("close"))
        turn.duration = 1.234
        w.turn(turn)
        w.end("completed", "completed", "5 turns")
    return path


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
    from xmltools.replaying import replay

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

PAGE_FACTS = """() => {
  const markers = [...document.querySelectorAll('.marker')].map(m => {
    const frame = m.closest('.frame'), img = frame.querySelector('img');
    const r = m.getBoundingClientRect(), i = img.getBoundingClientRect();
    const perPixel = Number(frame.dataset.viewportWidth) / i.width;  // CSS pixels of the page shot
    return {step: Number(m.dataset.step), on: m.closest('.step').id, failed: m.classList.contains('failed'),
            x: (r.left + r.width / 2 - i.left) * perPixel, y: (r.top + r.height / 2 - i.top) * perPixel,
            inside: r.width > 0 && r.left >= i.left && r.right <= i.right + 20,
            border: getComputedStyle(m).borderTopStyle};
  });
  const imgs = [...document.images].map(i => ({src: i.getAttribute('src'), width: i.naturalWidth}));
  const dangling = [...document.querySelectorAll('a[href^="#"]')]
    .map(a => a.getAttribute('href').slice(1)).filter(id => id && !document.getElementById(id));
  const neighbours = [...document.querySelectorAll('.step')].map(s => ({
    id: s.id, prev: s.querySelector('a.prev')?.getAttribute('href') ?? null,
    next: s.querySelector('a.next')?.getAttribute('href') ?? null}));
  const folded = [...document.querySelectorAll('details.message')].map(d => ({
    cls: d.className, open: d.open, text: d.querySelector('pre').textContent}));
  return {markers, imgs, dangling, neighbours, folded,
          cut: [...document.querySelectorAll('.cut')].map(c => c.closest('.step').id),
          urls: [...document.querySelectorAll('.url')].map(u => u.textContent)};
}"""


async def _open(path: Path) -> tuple[Any, Any, Any]:
    from playwright.async_api import async_playwright

    pw = await async_playwright().start()
    browser = await pw.chromium.launch(executable_path="/usr/bin/chromium")
    page = await browser.new_page(viewport={"width": 1300, "height": 900})
    await page.goto(path.as_uri())
    await page.wait_for_load_state("load")
    return pw, browser, page


@pytest.mark.browser
@pytest.mark.parametrize("embed", [False, True], ids=["files", "embedded"])
async def test_the_report_reads_right_in_chromium(run: Path, tmp_path: Path, embed: bool) -> None:
    out = write_report(tmp_path / "report.html", run, embed=embed)
    pw, browser, page = await _open(out)
    try:
        facts = await page.evaluate(PAGE_FACTS)
        # every image loads, from the folder beside the report or from the page itself
        assert len(facts["imgs"]) == 4 and all(i["width"] == 1800 for i in facts["imgs"]), facts["imgs"]
        prefix = "data:image/png;base64," if embed else "report.files/"
        assert all(i["src"].startswith(prefix) for i in facts["imgs"])
        # each marker is over its point of the screenshot the model saw before it clicked
        marks = {m["step"]: m for m in facts["markers"]}
        assert sorted(marks) == [2, 3]
        assert marks[2]["on"] == "step-1" and not marks[2]["failed"] and marks[2]["border"] == "solid"
        assert marks[3]["on"] == "step-2" and marks[3]["failed"] and marks[3]["border"] == "dashed"
        for m, (x, y) in ((marks[2], (450, 300)), (marks[3], (700, 500))):
            assert abs(m["x"] - x) <= 2 and abs(m["y"] - y) <= 2 and m["inside"], m
        # every in-page link leads somewhere; each step links its neighbours
        assert facts["dangling"] == []
        assert facts["neighbours"][0] == {"id": "step-1", "prev": None, "next": "#step-2"}
        assert facts["neighbours"][2] == {"id": "step-3", "prev": "#step-2", "next": "#step-4"}
        assert facts["neighbours"][4] == {"id": "step-5", "prev": "#step-4", "next": None}
        # the system prompt and the task are there, folded
        assert [(f["cls"], f["open"]) for f in facts["folded"]] == [
            ("message system", False),
            ("message task", False),
        ]
        assert facts["folded"][0]["text"] == SYSTEM and facts["folded"][1]["text"] == TASK
        assert facts["cut"] == ["step-4"]
        assert facts["urls"] and all(u == f"{BASE}/app" for u in facts["urls"])
        # the summary's link goes to the failed click
        await page.click("a.first-problem")
        assert await page.evaluate("location.hash") == "#step-3"
        top = await page.evaluate("document.getElementById('step-3').getBoundingClientRect().top")
        assert 0 <= top < 50
        await page.click("#step-3 a.prev")
        assert await page.evaluate("location.hash") == "#step-2"
        # a screenshot opens at full size in a tab of its own
        async with page.context.expect_page() as opened:
            await page.click("#shot-1-1 a.full", position={"x": 10, "y": 10})
        tab = await opened.value
        await tab.wait_for_function("document.images.length > 0 && document.images[0].naturalWidth > 0")
        assert await tab.evaluate("document.images[0].naturalWidth") == 1800
        if not embed:
            assert tab.url.endswith("/report.files/step-001-1.png")
        # a look at the page, for a person
        await page.goto(out.as_uri() + "#step-2")
        await page.screenshot(path=str(tmp_path / "report.png"))
    finally:
        await browser.close()
        await pw.stop()


@pytest.mark.browser
def test_a_replay_that_drifted_shows_three_images_in_chromium(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITE / "drift", site)
    scenario = tmp_path / "scenario.jsonl"
    lines = [{"xmltools_transcript": 1, "title": "Order summary"}]
    lines += [
        {"role": "assistant", "content": m}
        for m in (ba("launch", url="{base_url}/index.html"), ba("click", coordinate="80,112"), ba("close"))
    ]
    scenario.write_text("".join(json.dumps(line) + "\n" for line in lines))
    clock = ReplaySettings(mask_selectors=["#clock"])
    first, again = tmp_path / "rec" / "flow.jsonl", tmp_path / "live" / "flow.jsonl"
    with serve_directory(site) as base:
        assert asyncio.run(replay(scenario, base_url=base, record=first, settings=clock)).ok
    page = site / "index.html"
    page.write_text(page.read_text().replace("<h1>Order summary</h1>", '<h1 style="color: red">Basket</h1>'))
    with serve_directory(site) as base:
        result = asyncio.run(replay(first, base_url=base, record=again, settings=clock))
    assert result.outcome == "drifted" and {d.step for d in result.drifts} == {1, 2}
    out = write_report(tmp_path / "report" / "replay.html", again, result)

    async def look() -> dict[str, Any]:
        pw, browser, p = await _open(out)
        try:
            facts: dict[str, Any] = await p.evaluate(
                """() => [...document.querySelectorAll('.triple')].map(t => ({
                  step: t.closest('.step').id,
                  figures: [...t.querySelectorAll('figure')].map(f => f.className),
                  widths: [...t.querySelectorAll('img')].map(i => i.naturalWidth),
                  src: [...t.querySelectorAll('img')].map(i => i.getAttribute('src')),
                  boxes: [...t.querySelectorAll('img')].map(i => i.getBoundingClientRect().left),
                  text: t.nextElementSibling.textContent}))"""
            )
            await p.goto(out.as_uri() + "#step-1")
            await p.screenshot(path=str(tmp_path / "drift.png"))
            return {"triples": facts}
        finally:
            await browser.close()
            await pw.stop()

    triples = asyncio.run(look())["triples"]
    assert [t["step"] for t in triples] == ["step-1", "step-2"]
    for t in triples:
        assert t["figures"] == ["recorded", "live", "diff"]
        assert len(t["widths"]) == 3 and all(w > 0 for w in t["widths"]), t
        assert all(s.startswith("replay.files/") for s in t["src"])
        assert t["boxes"][0] < t["boxes"][1] < t["boxes"][2]  # side by side, in that order
        assert "pixels differ" in t["text"] and "allowed" in t["text"]
