"""Controller benchmark: launches, clicks and navigations against raw Playwright, and robustness counts.

Every raw baseline is a hand-written Playwright script doing the same steps on
the same kind of browser, with the same WebP screenshot through the DevTools
protocol and the page title that the observation also reports.  Ours and raw
alternate in one process, so that machine noise hits both alike; compare the
ratios, not the absolute times.  Run with ``make bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import glob
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page, async_playwright
from playwright.async_api import Error as PlaywrightError

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

from conftest import ROUTES
from intervals import crossover_ratio, shown

from xmltools.base.results import Failure, Observation, Point
from xmltools.base.serve import serve_directory
from xmltools.browser.locate import find_chromium
from xmltools.browser.pool import CHROMIUM_FLAGS, BrowserPool
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig, Timeouts
from xmltools.render.prompts import Renderer

SITE = Path(__file__).parent.parent / "fixtures" / "site"
BUTTON = Point(x=100, y=65)  # buttons.html: "console.log", which changes nothing on the page
GO = Point(x=190, y=70)  # the trigger of every page in fixtures/site/nav
VIEW = {"width": 900, "height": 600}


def ms(xs: list[float]) -> float:
    return round(statistics.median(xs) * 1000, 1)


def ratio(ours: list[float], raw: list[float]) -> list[float]:
    """The ratio of rounds paired in turns (see intervals.crossover_ratio), with its 95% interval."""
    return [round(v, 3) for v in crossover_ratio([o / r for o, r in zip(ours, raw, strict=True)])]


async def pair(
    i: int, ours: Callable[[], Awaitable[float]], raw: Callable[[], Awaitable[float]]
) -> tuple[float, float]:
    """One round: both sides timed, the one going first alternating with the round's number."""
    if i % 2:
        t_raw = await raw()
        return await ours(), t_raw
    t_ours = await ours()
    return t_ours, await raw()


async def raw_observe(ctx: BrowserContext, page: Page) -> None:
    cdp = await ctx.new_cdp_session(page)
    shot = await cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
    base64.b64decode(shot["data"])
    await page.title()


async def bench_cold_launch(base: str, n: int) -> dict[str, Any]:
    """A new browser each time: our pool's first launch against raw Playwright's, both from nothing."""
    ours: list[float] = []
    raw: list[float] = []
    exe = find_chromium().path

    async def launch_ours() -> float:
        t0 = time.perf_counter()
        pool = BrowserPool()
        r = await BrowserSession(pool=pool).launch(base + "/buttons.html")
        took = time.perf_counter() - t0
        assert isinstance(r, Observation), r
        await pool.aclose()
        return took

    async def launch_raw() -> float:
        t0 = time.perf_counter()
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=exe, args=list(CHROMIUM_FLAGS))
            ctx = await browser.new_context(viewport=VIEW)  # type: ignore[arg-type]
            page = await ctx.new_page()
            await page.goto(base + "/buttons.html")
            await raw_observe(ctx, page)
            took = time.perf_counter() - t0
            await browser.close()
        return took

    for i in range(n):
        t_ours, t_raw = await pair(i, launch_ours, launch_raw)
        ours.append(t_ours)
        raw.append(t_raw)
    return {
        "cold_launch_ms": ms(ours),
        "raw_cold_launch_ms": ms(raw),
        "cold_launch_over_raw": ratio(ours, raw),
    }


def tree_pss_mb(pid: int) -> float:
    """The proportional memory (PSS) of a process and all its descendants, in MB."""
    children: dict[int, list[int]] = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = Path(stat).read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.split("/")[2]))
    total_kb, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            rollup = Path(f"/proc/{p}/smaps_rollup").read_text()
        except OSError:
            continue
        total_kb += int(re.search(r"^Pss:\s+(\d+)", rollup, re.M).group(1))  # type: ignore[union-attr]
    return total_kb / 1024


async def until_spare(pool: BrowserPool) -> None:
    deadline = time.monotonic() + 10
    while pool.spare_context is None and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


async def spare_memory_mb(base: str) -> float:
    """What the spare costs: the browser's memory with a spare ready, less without (one session each)."""
    sizes = []
    for spare in (True, False):
        pool = BrowserPool(spare=spare)
        b = BrowserSession(pool=pool)
        assert isinstance(await b.launch(base + "/buttons.html"), Observation)
        pid = await b.browser_pid()
        await b.close()
        await (until_spare(pool) if spare else asyncio.sleep(0.5))
        await asyncio.sleep(1.0)  # let the renderers of the closed session go
        assert pid is not None
        sizes.append(tree_pss_mb(pid))
        await pool.aclose()
    return round(sizes[0] - sizes[1], 1)


async def raw_session(browser: Browser, url: str) -> float:
    """Raw Playwright's new session: new context + new page + goto + screenshot and title (seconds)."""
    t0 = time.perf_counter()
    ctx = await browser.new_context(viewport=VIEW)  # type: ignore[arg-type]
    page = await ctx.new_page()
    await page.goto(url)
    await raw_observe(ctx, page)
    took = time.perf_counter() - t0
    await ctx.close()
    return took


async def bench_warm_session(base: str, n: int) -> dict[str, Any]:
    """A new session on a warm pool (its spare made), against raw new_context + new_page + goto + shot."""
    ours: list[float] = []
    raw: list[float] = []
    exe = find_chromium().path
    pool = BrowserPool()
    b = BrowserSession(pool=pool)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=exe, args=list(CHROMIUM_FLAGS))
        assert isinstance(await b.launch(base + "/buttons.html"), Observation)
        await b.close()

        async def session_ours() -> float:
            await until_spare(pool)
            t0 = time.perf_counter()
            r = await b.launch(base + "/buttons.html")
            took = time.perf_counter() - t0
            assert isinstance(r, Observation), r
            await b.close()
            await until_spare(pool)  # the raw run does not share the machine with the spare's making
            return took

        for i in range(n):
            t_ours, t_raw = await pair(i, session_ours, lambda: raw_session(browser, base + "/buttons.html"))
            ours.append(t_ours)
            raw.append(t_raw)
        await browser.close()
    await pool.aclose()
    return {
        "warm_session_ms": ms(ours),
        "raw_warm_session_ms": ms(raw),
        "warm_session_over_raw": ratio(ours, raw),
        "spare_context_mb": await spare_memory_mb(base),
    }


async def bench_clicks(base: str, n: int) -> dict[str, Any]:
    """A click that changes nothing, and a link click that loads a page, against raw Playwright."""
    exe = find_chromium().path
    pool = BrowserPool()
    b = BrowserSession(pool=pool)
    out: dict[str, Any] = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=exe, args=list(CHROMIUM_FLAGS))
        ctx = await browser.new_context(viewport=VIEW)  # type: ignore[arg-type]
        page = await ctx.new_page()
        cdp = await ctx.new_cdp_session(page)

        async def raw_click(navigates: bool) -> None:
            await page.mouse.click(GO.x if navigates else BUTTON.x, GO.y if navigates else BUTTON.y)
            if navigates:
                await page.wait_for_url("**/done.html")
                await page.wait_for_load_state("load")
            for attempt in range(5):  # raw Playwright, too, may capture while the new page swaps in
                try:
                    shot = await cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
                    break
                except PlaywrightError:
                    if attempt == 4:
                        raise
                    await asyncio.sleep(0.02)
            base64.b64decode(shot["data"])
            await page.title()

        for name, start, navigates in (
            ("click", "/buttons.html", False),
            ("navigating_click", "/nav/plain-link.html", True),
        ):
            ours: list[float] = []
            raw: list[float] = []

            async def click_ours(navigates: bool = navigates) -> float:
                t0 = time.perf_counter()
                r = await b.click(GO if navigates else BUTTON)
                took = time.perf_counter() - t0
                assert isinstance(r, Observation), r
                if navigates:
                    assert r.title == "Arrived", r
                return took

            async def click_raw(navigates: bool = navigates) -> float:
                t0 = time.perf_counter()
                await raw_click(navigates)
                return time.perf_counter() - t0

            for i in range(n + 3):
                assert isinstance(await b.launch(base + start), Observation)
                await page.goto(base + start)
                t_ours, t_raw = await pair(i, click_ours, click_raw)
                if i >= 3:  # the first three warm both up
                    ours.append(t_ours)
                    raw.append(t_raw)
            out[f"{name}_ms"] = ms(ours)
            out[f"raw_{name}_ms"] = ms(raw)
            out[f"{name}_over_raw"] = ratio(ours, raw)
        await browser.close()
    await pool.aclose()
    return out


async def bench_navigation_failures(base: str, tries: int) -> dict[str, int]:
    """Navigating clicks (link, form submit, timer redirect) through a server that delays at random."""
    kinds = (
        ("/nav/link.html", "via=link"),
        ("/nav/form-get.html", "via=form-get"),
        ("/nav/timer.html", "via=timer"),
    )
    failures = 0
    done = 0
    pool = BrowserPool()
    b = BrowserSession(pool=pool)
    for i in range(tries):
        page, want = kinds[i % len(kinds)]
        assert isinstance(await b.launch(base + page), Observation)
        r = await b.click(GO)
        done += 1
        if not (isinstance(r, Observation) and r.title == "Arrived" and want in r.url):
            failures += 1
            print(f"  navigation failure at try {i}: {r}", file=sys.stderr)
    await pool.aclose()
    return {"navigating_clicks": done, "navigating_click_failures": failures}


async def bench_hostile(base: str) -> dict[str, Any]:
    """The largest rendered result over the hostile pages (goal: under max_result_chars, 20,000)."""
    renderer = Renderer()
    sizes: dict[str, int] = {}
    pool = BrowserPool()
    b = BrowserSession(pool=pool)
    for page in ("flood.html", "huge.html", "missing.html"):
        r = await b.launch(f"{base}/hostile/{page}")
        assert isinstance(r, Observation), r
        sizes[page] = len(renderer.browser_result("launch", r).text)
    assert isinstance(await b.launch(f"{base}/hostile/alerts.html"), Observation)
    r = await b.click(GO)
    assert isinstance(r, Observation), r
    sizes["alerts.html"] = len(renderer.browser_result("click", r).text)
    await pool.aclose()
    worst = max(sizes, key=lambda k: sizes[k])
    return {"largest_hostile_result_chars": sizes[worst], "largest_hostile_result_page": worst}


async def bench_identity(base: str, n: int) -> dict[str, float]:
    """The cost of recording who the clicked element is (while a transcript is written): the same
    click with and without it, interleaved."""
    pool = BrowserPool()
    b = BrowserSession(pool=pool)
    assert isinstance(await b.launch(base + "/buttons.html"), Observation)
    plain: list[float] = []
    recorded: list[float] = []
    for i in range(n + 3):
        order = ((False, plain), (True, recorded)) if i % 2 == 0 else ((True, recorded), (False, plain))
        for record, into in order:
            b.prepare(record_identity=record)
            t0 = time.perf_counter()
            r = await b.click(BUTTON)
            took = time.perf_counter() - t0
            assert isinstance(r, Observation) and (r.identity is not None) == record, r
            if i >= 3:
                into.append(took)
    await pool.aclose()
    return {
        "click_recording_identity_ms": ms(recorded),
        "click_without_identity_ms": ms(plain),
        "identity_share_of_click": round(1 - statistics.median(plain) / statistics.median(recorded), 2),
        "identity_click_over_plain": [
            round(v, 3) for v in crossover_ratio([r / p for r, p in zip(recorded, plain, strict=True)])
        ],
    }


async def bench_flood(base: str, n: int) -> dict[str, float]:
    """A page that writes 100,000 console lines as it loads: launched on a warm pool, against raw
    new_context + new_page + goto + shot (goal: adds at most 1 s)."""
    ours: list[float] = []
    raw: list[float] = []
    url = base + "/hostile/flood-100k.html"
    pool = BrowserPool()
    b = BrowserSession(BrowserConfig(timeouts=Timeouts(navigation=60.0)), pool=pool)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium().path, args=list(CHROMIUM_FLAGS))
        for _ in range(n):
            await until_spare(pool)
            t0 = time.perf_counter()
            r = await b.launch(url)
            ours.append(time.perf_counter() - t0)
            assert isinstance(r, Observation) and not any("not finished" in x for x in r.notes), r
            assert r.console[-1].text == "line 99999", r.console
            await b.close()
            await until_spare(pool)
            raw.append(await raw_session(browser, url))
        await browser.close()
    await pool.aclose()
    return {
        "flood_100k_s": round(statistics.median(ours), 2),
        "raw_flood_100k_s": round(statistics.median(raw), 2),
        "flood_100k_added_s": round(statistics.median(ours) - statistics.median(raw), 2),
    }


def _leftovers() -> set[str]:
    pats = ("org.chromium.Chromium.*", "playwright_chromiumdev_profile-*", "xmltools-*")
    return {p for pat in pats for p in glob.glob(os.path.join(tempfile.gettempdir(), pat))}


async def bench_cycles(base: str, n: int) -> dict[str, int]:
    before = _leftovers()
    pool = BrowserPool()
    b = BrowserSession(pool=pool)
    for _ in range(n):
        assert isinstance(await b.launch(base + "/download.html"), Observation)
        assert not isinstance(await b.close(), Failure)
    await pool.aclose()
    await asyncio.sleep(0.5)
    return {"launch_close_cycles": n, "temporary_folders_left": len(_leftovers() - before)}


def _ref_of(snapshot: str, name: str) -> str:
    m = re.search(re.escape(name) + r"[^\n]*?\[ref=([^\]]+)\]", snapshot)
    assert m, snapshot
    return m.group(1)


async def bench_snapshot(base: str, n: int, docs: str | None) -> dict[str, Any]:
    """A click by ref with a snapshot observation, against raw Playwright; and snapshot sizes."""
    from types import SimpleNamespace

    from xmltools.browser.settings import BrowserConfig

    out: dict[str, Any] = {}
    exe = find_chromium().path
    pool = BrowserPool()
    b = BrowserSession(BrowserConfig(observe="snapshot"), pool=pool)
    ours: list[float] = []
    raw: list[float] = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=exe, args=list(CHROMIUM_FLAGS))
        ctx = await browser.new_context(viewport=VIEW)  # type: ignore[arg-type]
        page = await ctx.new_page()
        first = await b.launch(base + "/buttons.html")
        assert isinstance(first, Observation) and first.snapshot, first
        await page.goto(base + "/buttons.html")
        for i in range(n + 3):
            snap = await b.act(SimpleNamespace(action="snapshot", target=None))
            assert isinstance(snap, Observation) and snap.snapshot
            ref = _ref_of(snap.snapshot, '"console.log"')
            target = SimpleNamespace(kind="ref", ref=ref, selector=None, frame=None, coordinate=None)
            raw_ref = _ref_of(await page.aria_snapshot(mode="ai"), '"console.log"')

            async def ref_ours(target: SimpleNamespace = target) -> float:
                t0 = time.perf_counter()
                r = await b.act(SimpleNamespace(action="click", target=target))
                took = time.perf_counter() - t0
                assert isinstance(r, Observation), r
                return took

            async def ref_raw(raw_ref: str = raw_ref) -> float:
                t0 = time.perf_counter()
                await page.locator(f"aria-ref={raw_ref}").click()
                await page.aria_snapshot(mode="ai")
                return time.perf_counter() - t0

            t_ours, t_raw = await pair(i, ref_ours, ref_raw)
            if i >= 3:
                ours.append(t_ours)
                raw.append(t_raw)
        await browser.close()
    out["ref_click_snapshot_ms"] = ms(ours)
    out["raw_ref_click_snapshot_ms"] = ms(raw)
    out["ref_click_over_raw"] = ratio(ours, raw)
    pages = {
        "form": base + "/form.html",
        "order": base + "/forms/order.html",
        "big_list": base + "/forms/big.html",
    }
    if docs:
        pages["python_docs_functions"] = docs + "/library/functions.html"
    shot_tokens = VIEW["width"] * VIEW["height"] // 750
    for name, url in pages.items():
        r = await b.launch(url)
        assert isinstance(r, Observation) and r.snapshot is not None, r

        async def full_len(p: Page) -> int:
            return len(await p.aria_snapshot(mode="ai"))

        whole = await b.on_page(full_len)
        out[f"snapshot_chars_{name}"] = len(r.snapshot)
        out[f"snapshot_tokens_{name}"] = len(r.snapshot) // 4
        out[f"unshaped_snapshot_chars_{name}"] = whole
    out["screenshot_tokens_900x600"] = shot_tokens
    await pool.aclose()
    return out


async def bench_extract(docs: str, n: int) -> dict[str, Any]:
    """get_text of a large docs page against raw inner_text("body"); the sizes before and after the cap.

    Ours is the whole action (the text read, then the observation with its
    screenshot); raw is ``inner_text("body")`` then the same screenshot and
    title, and ``inner_text("body")`` alone.
    """
    from xmltools.actions import GetHtml, GetText
    from xmltools.browser.settings import BrowserConfig

    url = docs + "/library/functions.html"
    exe = find_chromium().path
    out: dict[str, Any] = {}
    pool = BrowserPool()
    b = BrowserSession(BrowserConfig(), pool=pool)
    ours: list[float] = []
    raw: list[float] = []
    bare: list[float] = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=exe, args=list(CHROMIUM_FLAGS))
        ctx = await browser.new_context(viewport=VIEW)  # type: ignore[arg-type]
        page = await ctx.new_page()
        await page.goto(url)
        first = await b.launch(url)
        assert isinstance(first, Observation), first
        for i in range(n + 2):
            t0 = time.perf_counter()
            r = await b.act(GetText())
            t_ours = time.perf_counter() - t0
            assert isinstance(r, Observation) and r.extract, r
            t0 = time.perf_counter()
            await page.inner_text("body")
            t_bare = time.perf_counter() - t0
            await raw_observe(ctx, page)
            t_raw = time.perf_counter() - t0
            if i >= 2:
                ours.append(t_ours)
                raw.append(t_raw)
                bare.append(t_bare)
        await browser.close()
    out["get_text_docs_ms"] = ms(ours)
    out["raw_inner_text_and_observation_ms"] = ms(raw)
    out["raw_inner_text_only_ms"] = ms(bare)
    out["get_text_over_raw"] = ratio(ours, raw)
    capped = r.extract or ""
    html = await b.act(GetHtml())
    assert isinstance(html, Observation) and html.extract is not None, html
    out["get_text_chars_capped"] = len(capped)
    out["get_html_chars_capped"] = len(html.extract)
    await b.close()
    whole = BrowserSession(BrowserConfig(max_extract_chars=10**9), pool=pool)
    await whole.launch(url)
    for name, action in (("get_text", GetText()), ("get_html", GetHtml())):
        got = await whole.act(action)
        assert isinstance(got, Observation) and got.extract is not None, got
        out[f"{name}_chars_uncapped"] = len(got.extract)
    deep = await whole.act(GetHtml(depth=50))
    assert isinstance(deep, Observation) and deep.extract is not None
    out["get_html_chars_depth_50_uncapped"] = len(deep.extract)

    async def page_html(p: Page) -> int:
        return len(await p.content())

    out["raw_page_html_chars"] = await whole.on_page(page_html)
    await whole.close()
    await pool.aclose()
    return out


async def bench_formats(base: str) -> dict[str, int]:
    from xmltools.browser.settings import BrowserConfig

    out: dict[str, int] = {}
    pool = BrowserPool()
    for fmt in ("webp", "png", "jpeg"):
        b = BrowserSession(BrowserConfig(screenshot_format=fmt), pool=pool)  # type: ignore[arg-type]
        r = await b.launch(base + "/app/index.html")
        assert isinstance(r, Observation) and r.screenshot is not None, r
        out[f"screenshot_bytes_{fmt}"] = len(r.screenshot.data)
        await b.close()
    await pool.aclose()
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    docs = Path("/usr/share/doc/python3.11/html")
    with (
        serve_directory(SITE, routes=ROUTES) as base,
        serve_directory(docs if docs.is_dir() else SITE) as docs_base,
    ):
        figures.update(await bench_snapshot(base, args.clicks, docs_base if docs.is_dir() else None))
        if docs.is_dir():
            figures.update(await bench_extract(docs_base, args.extracts))
        figures.update(await bench_cold_launch(base, args.launches))
        figures.update(await bench_warm_session(base, args.sessions))
        figures.update(await bench_clicks(base, args.clicks))
        figures.update(await bench_identity(base, args.clicks))
        figures.update(await bench_navigation_failures(base, args.navigations))
        figures.update(await bench_hostile(base))
        figures.update(await bench_flood(base, args.floods))
        figures.update(await bench_cycles(base, args.cycles))
        figures.update(await bench_formats(base))
    return figures


GOALS = (
    ("identity_click_over_plain", 1.10),  # at the top of its 95% interval
    ("ref_click_over_raw", 1.3),
    ("snapshot_chars_python_docs_functions", 20_000),
    ("cold_launch_over_raw", 1.3),
    ("warm_session_over_raw", 0.6),
    ("click_over_raw", 1.3),
    ("navigating_click_over_raw", 1.3),
    ("navigating_click_failures", 0),
    ("largest_hostile_result_chars", 20_000),
    ("flood_100k_added_s", 1.0),
    ("temporary_folders_left", 0),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--clicks", type=int, default=30)
    ap.add_argument("--navigations", type=int, default=210)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--extracts", type=int, default=15)
    ap.add_argument("--floods", type=int, default=3)
    args = ap.parse_args(argv)
    figures = asyncio.run(main_async(args))
    print("browser benchmark (medians; each ratio the median of rounds paired in one run, with its interval)")
    for k, v in figures.items():
        print(f"  {k:36} {shown(v) if isinstance(v, list) and len(v) == 3 else v}")
    for key, limit in GOALS:
        if key not in figures:
            continue
        value = figures[key]
        top = value[2] if isinstance(value, list) else value  # a ratio's goal holds at its interval's top
        print(f"  goal {key} <= {limit}: {'met' if top <= limit else 'MISSED'} ({value})")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
