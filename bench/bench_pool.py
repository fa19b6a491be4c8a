"""Pool benchmark: many sessions at once on 2 cores, and one long session.

- 16 interpreters in threads share the default pool; each launches, clicks 10
  times and closes.  Reported: failures, launch and click p95, and the PSS of
  every process of the browser (read from /proc while all 16 are open).  Raw
  Playwright then does the same (one browser, a context each, in one event
  loop), and the p95s are given as ratios to its own.
- One session takes 300 steps; the last 50 are compared with the first 50, in
  time and in the browser's memory.

Run with ``make bench``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from xmltools import Config, Interpreter
from xmltools.base.serve import serve_directory

SITE = Path(__file__).parent.parent / "fixtures" / "site"


def call(action: str, **params: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in params.items())
    return f"<browser_action><action>{action}</action>{inner}</browser_action>"


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(len(xs) * 0.95))] * 1000, 1)


def browser_pss_mb() -> float:
    """The PSS of every Chromium process on this machine, in MB (the benchmark runs alone)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"chrom" not in (entry / "cmdline").read_bytes().split(b"\0")[0]:
                continue
            for line in (entry / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024, 1)


def concurrent(base: str, sessions: int, clicks: int) -> dict[str, Any]:
    launches: list[float] = []
    click_times: list[float] = []
    failures: list[str] = []
    all_open = threading.Barrier(sessions + 1)
    done = threading.Barrier(sessions + 1)
    lock = threading.Lock()

    def one(i: int) -> None:
        with Interpreter(Config()) as it:
            t0 = time.perf_counter()
            turn = it.handle(call("launch", url=base + "/buttons.html"))
            took = time.perf_counter() - t0
            with lock:
                launches.append(took)
                if turn.ran is None or turn.ran.status != "ok":
                    failures.append(f"session {i} launch: {turn.parts[0].text[:200]}")
            with contextlib.suppress(threading.BrokenBarrierError):
                all_open.wait(120)
            for _ in range(clicks):
                t0 = time.perf_counter()
                turn = it.handle(call("click", coordinate="100,65"))
                took = time.perf_counter() - t0
                with lock:
                    click_times.append(took)
                    if turn.ran is None or turn.ran.status != "ok":
                        failures.append(f"session {i} click: {turn.parts[0].text[:200]}")
            it.handle(call("close"))
            with contextlib.suppress(threading.BrokenBarrierError):
                done.wait(120)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(sessions)]
    for t in threads:
        t.start()
    all_open.wait(180)
    pss = browser_pss_mb()
    done.wait(600)
    for t in threads:
        t.join(60)
    for f in failures[:5]:
        print("  " + f, file=sys.stderr)
    return {
        "concurrent_sessions": sessions,
        "concurrent_failures": len(failures),
        "concurrent_launch_p95_ms": p95(launches),
        "concurrent_launch_median_ms": round(statistics.median(launches) * 1000, 1),
        "concurrent_click_p95_ms": p95(click_times),
        "concurrent_browser_pss_mb": pss,
    }


def raw_concurrent(base: str, sessions: int, clicks: int) -> dict[str, Any]:
    """The same load done by raw Playwright (one browser, a context each), for comparison."""
    import asyncio
    import base64

    from playwright.async_api import async_playwright

    from xmltools.browser.locate import find_chromium
    from xmltools.browser.pool import CHROMIUM_FLAGS

    async def run() -> tuple[list[float], list[float]]:
        launches: list[float] = []
        click_times: list[float] = []
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=find_chromium().path, args=list(CHROMIUM_FLAGS)
            )

            async def one() -> None:
                t0 = time.perf_counter()
                ctx = await browser.new_context(viewport={"width": 900, "height": 600})
                page = await ctx.new_page()
                await page.goto(base + "/buttons.html")
                cdp = await ctx.new_cdp_session(page)
                shot = await cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
                base64.b64decode(shot["data"])
                launches.append(time.perf_counter() - t0)
                for _ in range(clicks):
                    t0 = time.perf_counter()
                    await page.mouse.click(100, 65)
                    shot = await cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
                    base64.b64decode(shot["data"])
                    await page.title()
                    click_times.append(time.perf_counter() - t0)
                await ctx.close()

            await asyncio.gather(*(one() for _ in range(sessions)))
            await browser.close()
        return launches, click_times

    launches, click_times = asyncio.run(run())
    return {"raw_concurrent_launch_p95_ms": p95(launches), "raw_concurrent_click_p95_ms": p95(click_times)}


def long_session(base: str, steps: int) -> dict[str, Any]:
    times: list[float] = []
    with Interpreter(Config()) as it:
        it.handle(call("launch", url=base + "/buttons.html"))
        pss_first = browser_pss_mb()
        for i in range(steps):
            t0 = time.perf_counter()
            turn = it.handle(call("click", coordinate=f"{100 + i % 50},65"))
            times.append(time.perf_counter() - t0)
            assert turn.ran is not None and turn.ran.status == "ok", turn.parts[0].text
            if i == 49:
                pss_first = browser_pss_mb()
        pss_last = browser_pss_mb()
    first, last = statistics.median(times[:50]), statistics.median(times[-50:])
    return {
        "long_session_steps": steps,
        "long_first50_ms": round(first * 1000, 1),
        "long_last50_ms": round(last * 1000, 1),
        "long_last_over_first_time": round(last / first, 2),
        "long_browser_pss_mb_after_50": pss_first,
        "long_browser_pss_mb_at_end": pss_last,
        "long_last_over_first_memory": round(pss_last / pss_first, 2),
    }


GOALS = (
    ("concurrent_failures", 0),
    ("concurrent_launch_p95_over_raw", 1.1),
    ("concurrent_click_p95_over_raw", 1.1),
    ("concurrent_browser_pss_mb", 1200),
    ("long_last_over_first_time", 1.2),
    ("long_last_over_first_memory", 1.2),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--sessions", type=int, default=16)
    ap.add_argument("--clicks", type=int, default=10)
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args(argv)
    figures: dict[str, Any] = {}
    with serve_directory(SITE) as base:
        figures.update(concurrent(base, args.sessions, args.clicks))
        figures.update(raw_concurrent(base, args.sessions, args.clicks))
        for what in ("launch", "click"):
            ours, raw = figures[f"concurrent_{what}_p95_ms"], figures[f"raw_concurrent_{what}_p95_ms"]
            figures[f"concurrent_{what}_p95_over_raw"] = round(ours / raw, 2)
        figures.update(long_session(base, args.steps))
    print("pool benchmark")
    for k, v in figures.items():
        print(f"  {k:36} {v}")
    for key, limit in GOALS:
        print(f"  goal {key} <= {limit}: {'met' if figures[key] <= limit else 'MISSED'} ({figures[key]})")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
