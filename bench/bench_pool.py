"""Pool benchmark: many sessions at once on 2 cores, and one long session.

- 16 interpreters in threads share the default pool; each launches, clicks 10
  times and closes.  Raw Playwright does the same (one browser, a context
  each, in one event loop).  The two take rounds in turns (5 counted, after
  one of each to warm up); each round's p95 of launch and of click is set
  against raw's of the same round, and the figure is the median of those
  ratios with the smallest and the largest.  Also reported: failures, and the
  PSS of every process of the browser (read from /proc while all 16 are open),
  and the machine's processor time until the last launch is over, set against
  raw's the same way.  On 2 cores the 16 launches keep the machine busy, so
  the last one ends when the work does: that ratio tracks the launch p95's.
- Raw Playwright alone, with and without a Fetch listener on each tab that
  lets every request go on, in turns: what the browser's request interception
  (which the URL policy needs) costs before any of ours.
- One session takes 300 steps; the last 50 are compared with the first 50, in
  time and in the browser's memory.

Run with ``make bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
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
    """The 95th percentile, in ms."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * 0.95))] * 1000


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


def busy_ms() -> float:
    """The processor time this machine has spent busy since it started, in ms (from /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) * 1000 / os.sysconf("SC_CLK_TCK")


def busy_share(window: float = 0.25) -> float:
    """The share of this machine's CPU time spent busy over ``window`` seconds (from /proc/stat)."""

    def read() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle and waiting for I/O
        return sum(fields) - idle, sum(fields)

    busy0, all0 = read()
    time.sleep(window)
    busy1, all1 = read()
    return (busy1 - busy0) / max(1, all1 - all0)


def wait_quiet(limit: float = 15.0) -> None:
    """Wait (up to ``limit`` seconds) until the machine is nearly idle: a round starts only once the
    last one's browser has torn its contexts down, so neither side pays for the other's leftovers."""
    end = time.monotonic() + limit
    while time.monotonic() < end and busy_share() > 0.1:
        pass


CONFIG: dict[str, Any] = {}  # the settings each of ours runs with (--set NAME=VALUE), to find what costs


def concurrent(base: str, sessions: int, clicks: int) -> dict[str, Any]:
    """One round of ours: each interpreter in a thread launches, clicks ``clicks`` times and closes."""
    launches: list[float] = []
    click_times: list[float] = []
    failures: list[str] = []
    all_open = threading.Barrier(sessions + 1)
    done = threading.Barrier(sessions + 1)
    lock = threading.Lock()

    def one(i: int) -> None:
        with Interpreter(Config(**CONFIG)) as it:
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
    cpu0 = busy_ms()
    for t in threads:
        t.start()
    all_open.wait(180)
    cpu = busy_ms() - cpu0  # every launch is over: the machine's time for all of them
    pss = browser_pss_mb()
    done.wait(600)
    for t in threads:
        t.join(60)
    for f in failures[:5]:
        print("  " + f, file=sys.stderr)
    return {"failures": len(failures), "launch": launches, "click": click_times, "pss": pss, "cpu": cpu}


class RawSide:
    """Raw Playwright under the same load: a context per session in one browser, in one event loop
    kept across the rounds.  Its browser is started before each round and closed after it, outside
    the times, so that ours runs (and its memory is read) without it."""

    def __init__(self) -> None:
        from playwright.async_api import async_playwright

        self.loop = asyncio.new_event_loop()
        self.pw = self.loop.run_until_complete(async_playwright().start())

    def round(
        self, base: str, sessions: int, clicks: int, *, intercept: bool = False
    ) -> tuple[list[float], list[float], float]:
        """Each session: new context, page, goto and a WebP shot (its launch); then ``clicks`` clicks,
        each with a WebP shot and the title, as the observation holds them.  Also the machine's
        processor time until every launch is over.  ``intercept``: each tab's requests pass through
        a Fetch listener that lets every one go on, the browser's machinery a URL policy needs."""
        from xmltools.browser.locate import find_chromium
        from xmltools.browser.pool import CHROMIUM_FLAGS

        launches: list[float] = []
        click_times: list[float] = []
        cpu = [0.0, 0.0]  # the start, then the time taken once the last launch is over
        answers: set[asyncio.Future[Any]] = set()  # the interception's answers being sent

        async def one(browser: Any) -> None:
            t0 = time.perf_counter()
            ctx = await browser.new_context(viewport={"width": 900, "height": 600})
            page = await ctx.new_page()
            if intercept:
                listener = await ctx.new_cdp_session(page)

                def go_on(event: dict[str, Any]) -> None:
                    answer = listener.send("Fetch.continueRequest", {"requestId": event["requestId"]})
                    answers.add(task := asyncio.ensure_future(answer))
                    task.add_done_callback(answers.discard)

                listener.on("Fetch.requestPaused", go_on)
                await listener.send("Fetch.enable", {"patterns": [{"urlPattern": "*"}]})
            await page.goto(base + "/buttons.html")
            cdp = await ctx.new_cdp_session(page)
            shot = await cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
            base64.b64decode(shot["data"])
            launches.append(time.perf_counter() - t0)
            if len(launches) == sessions:
                cpu[1] = busy_ms() - cpu[0]
            for _ in range(clicks):
                t0 = time.perf_counter()
                await page.mouse.click(100, 65)
                shot = await cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
                base64.b64decode(shot["data"])
                await page.title()
                click_times.append(time.perf_counter() - t0)
            await ctx.close()

        async def all_of_them() -> None:
            exe = find_chromium().path
            browser = await self.pw.chromium.launch(executable_path=exe, args=list(CHROMIUM_FLAGS))
            wait_quiet()  # the browser's own start is over before the sessions are timed
            cpu[0] = busy_ms()
            try:
                await asyncio.gather(*(one(browser) for _ in range(sessions)))
            finally:
                await browser.close()

        self.loop.run_until_complete(all_of_them())
        return launches, click_times, cpu[1]

    def close(self) -> None:
        self.loop.run_until_complete(self.pw.stop())
        self.loop.close()


def in_rounds(base: str, sessions: int, clicks: int, rounds: int) -> dict[str, Any]:
    """Rounds of the same load, ours and raw in turns (ours first in even rounds); per round, the p95
    of launch and of click on each side and their ratio.  The figure is the median of the rounds'
    ratios, with the smallest and the largest.  A first round of each warms up and is not counted."""
    raw = RawSide()
    ratios: dict[str, list[float]] = {"launch": [], "click": [], "launch_cpu": []}
    failures = 0
    pss = 0.0
    kept: dict[str, list[float]] = {"launch": [], "click": [], "raw_launch": [], "raw_click": []}
    try:
        for r in range(rounds + 1):
            ours_first = r % 2 == 0
            if not ours_first:
                wait_quiet()
                raw_launch, raw_click, raw_cpu = raw.round(base, sessions, clicks)
            wait_quiet()
            ours = concurrent(base, sessions, clicks)
            if ours_first:
                wait_quiet()
                raw_launch, raw_click, raw_cpu = raw.round(base, sessions, clicks)
            if r == 0:
                continue
            failures += ours["failures"]
            pss = max(pss, ours["pss"])
            ratios["launch_cpu"].append(ours["cpu"] / raw_cpu)
            for what, raw_times in (("launch", raw_launch), ("click", raw_click)):
                ratios[what].append(p95(ours[what]) / p95(raw_times))
                kept[what].append(p95(ours[what]))
                kept[f"raw_{what}"].append(p95(raw_times))
    finally:
        raw.close()
    figures: dict[str, Any] = {
        "concurrent_sessions": sessions,
        "concurrent_rounds": rounds,
        "concurrent_failures": failures,
        "concurrent_browser_pss_mb": pss,
    }
    for what in ("launch", "click"):
        figures[f"concurrent_{what}_p95_ms"] = round(statistics.median(kept[what]), 1)
        figures[f"raw_concurrent_{what}_p95_ms"] = round(statistics.median(kept[f"raw_{what}"]), 1)
        figures[f"concurrent_{what}_p95_over_raw"] = spread(ratios[what])
    # on 2 cores all 16 launches at once keep the machine busy: the last is over when the work is
    figures["concurrent_launch_cpu_over_raw"] = spread(ratios["launch_cpu"])
    return figures


def spread(rs: list[float]) -> list[float]:
    """The median of per-round ratios, with the smallest and the largest."""
    return [round(statistics.median(rs), 3), round(min(rs), 3), round(max(rs), 3)]


def interception_cost(base: str, sessions: int, rounds: int) -> dict[str, Any]:
    """What Chromium's request interception costs raw Playwright itself: the same 16 launches with
    and without a Fetch listener on each tab that lets every request go on, in turns.  The URL
    policy needs that machinery (see docs/concepts/safety.md); this is its floor, ours aside."""
    raw = RawSide()
    ratios: dict[str, list[float]] = {"launch": [], "launch_cpu": []}
    try:
        for r in range(rounds + 1):
            got = {}
            for intercept in (False, True) if r % 2 == 0 else (True, False):
                wait_quiet()
                launches, _, cpu = raw.round(base, sessions, 0, intercept=intercept)
                got[intercept] = (p95(launches), cpu)
            if r:
                ratios["launch"].append(got[True][0] / got[False][0])
                ratios["launch_cpu"].append(got[True][1] / got[False][1])
    finally:
        raw.close()
    return {
        "raw_intercepted_launch_p95_over_raw": spread(ratios["launch"]),
        "raw_intercepted_launch_cpu_over_raw": spread(ratios["launch_cpu"]),
    }


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
    ap.add_argument(
        "--rounds", type=int, default=5, help="counted rounds of the 16 sessions, ours and raw in turns"
    )
    ap.add_argument(
        "--interception-rounds",
        type=int,
        default=4,
        help="counted rounds of raw Playwright with and without a request listener per tab (0: none)",
    )
    ap.add_argument("--set", action="append", default=[], metavar="NAME=JSON", help="a setting of ours")
    args = ap.parse_args(argv)
    for item in args.set:
        name, _, value = item.partition("=")
        CONFIG[name] = json.loads(value)
    figures: dict[str, Any] = {"settings": dict(CONFIG)}
    with serve_directory(SITE) as base:
        figures.update(in_rounds(base, args.sessions, args.clicks, args.rounds))
        if args.interception_rounds:
            figures.update(interception_cost(base, args.sessions, args.interception_rounds))
        figures.update(long_session(base, args.steps))
    print("pool benchmark")
    for k, v in figures.items():
        print(f"  {k:36} {v}")
    for key, limit in GOALS:
        value = figures[key]
        mid = value[0] if isinstance(value, list) else value  # a ratio's goal holds at the rounds' median
        print(f"  goal {key} <= {limit}: {'met' if mid <= limit else 'MISSED'} ({value})")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
