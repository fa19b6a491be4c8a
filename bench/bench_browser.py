"""Controller benchmark: launch time, click-to-observation against raw Playwright, screenshot sizes.

The raw baseline is a hand-written Playwright script doing the same steps on
the same browser: a mouse click, then the same WebP screenshot through the
DevTools protocol, then the page title (which the observation also reports).
Both run in this process, alternating, so that machine noise hits both alike.  Run with ``make bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import statistics
import sys
import time
from pathlib import Path

from playwright.async_api import async_playwright

from xmltools.browser.controller import CHROMIUM_FLAGS, BrowserConfig, BrowserSession
from xmltools.browser.locate import find_chromium
from xmltools.results import Failure, Observation, Point
from xmltools.serve import serve_directory

SITE = Path(__file__).parent.parent / "fixtures" / "site"
BUTTON = Point(x=100, y=65)  # buttons.html: "console.log", which changes nothing on the page


def ms(xs: list[float]) -> float:
    return round(statistics.median(xs) * 1000, 1)


async def bench_launch(base: str, n: int) -> dict[str, float]:
    first: list[float] = []
    again: list[float] = []
    for _ in range(n):
        async with BrowserSession() as b:
            t0 = time.perf_counter()
            r = await b.launch(base + "/buttons.html")
            first.append(time.perf_counter() - t0)
            assert isinstance(r, Observation), r
            t0 = time.perf_counter()
            r = await b.launch(base + "/buttons.html")
            again.append(time.perf_counter() - t0)
            assert isinstance(r, Observation), r
    return {
        "launch_first_observation_ms_median": ms(first),
        "relaunch_first_observation_ms_median": ms(again),
    }


async def bench_click(base: str, n: int) -> dict[str, float]:
    ours: list[float] = []
    raw: list[float] = []
    exe = find_chromium().path
    async with BrowserSession() as b, async_playwright() as pw:
        r = await b.launch(base + "/buttons.html")
        assert isinstance(r, Observation), r
        browser = await pw.chromium.launch(executable_path=exe, headless=True, args=list(CHROMIUM_FLAGS))
        ctx = await browser.new_context(viewport={"width": 900, "height": 600})
        page = await ctx.new_page()
        await page.goto(base + "/buttons.html")
        cdp = await ctx.new_cdp_session(page)
        for _ in range(3):  # warm both
            await b.click(BUTTON)
            await page.mouse.click(BUTTON.x, BUTTON.y)
        for _ in range(n):
            t0 = time.perf_counter()
            r2 = await b.click(BUTTON)
            ours.append(time.perf_counter() - t0)
            assert not isinstance(r2, Failure), r2
            t0 = time.perf_counter()
            await page.mouse.click(BUTTON.x, BUTTON.y)
            shot = await cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
            base64.b64decode(shot["data"])
            await page.title()  # the observation reports the title too
            raw.append(time.perf_counter() - t0)
        await browser.close()
    return {
        "click_observation_ms_median": ms(ours),
        "raw_playwright_click_screenshot_ms_median": ms(raw),
        "click_over_raw": round(statistics.median(ours) / statistics.median(raw), 2),
    }


async def bench_formats(base: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for fmt in ("webp", "png", "jpeg"):
        async with BrowserSession(BrowserConfig(screenshot_format=fmt)) as b:  # type: ignore[arg-type]
            r = await b.launch(base + "/app/index.html")
            assert isinstance(r, Observation) and r.screenshot is not None, r
            out[f"screenshot_bytes_{fmt}"] = len(r.screenshot.data)
    return out


async def main_async(args: argparse.Namespace) -> dict[str, object]:
    with serve_directory(SITE) as base:
        figures: dict[str, object] = {}
        figures.update(await bench_launch(base, args.launches))
        figures.update(await bench_click(base, args.clicks))
        figures.update(await bench_formats(base))
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--clicks", type=int, default=30)
    args = ap.parse_args(argv)
    figures = asyncio.run(main_async(args))
    ratio = float(figures["click_over_raw"])  # type: ignore[arg-type]
    absolute = float(figures["click_observation_ms_median"])  # type: ignore[arg-type]
    print("browser benchmark (medians, same run)")
    for k, v in figures.items():
        print(f"  {k:42} {v}")
    print(f"  goal click/raw <= 1.2x{'':20} {'met' if ratio <= 1.2 else 'MISSED'}")
    print(f"  goal click < 150 ms{'':23} {'met' if absolute < 150 else 'MISSED'}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
