"""The HTML report as a person sees it, in Chromium: images, markers, links, folded messages, drift triples."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.helpers import SITE, ba
from support.sample_run import BASE, SYSTEM, TASK, record_run

from xmltools.base.serve import serve_directory
from xmltools.record.report import write_report
from xmltools.record.transcript import ReplaySettings
from xmltools.replaying.run import replay


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return asyncio.run(record_run(tmp_path / "rec" / "run.jsonl"))


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


@pytest.mark.long
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
