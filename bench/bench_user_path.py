"""The user's whole path: the model's XML text into ``Interpreter.handle``, the rendered result out,
paired with raw Playwright doing the same observation, with a 95% interval on each ratio.

A user hands the model's text to ``Interpreter.handle`` and sends back the rendered result
message, screenshot included.  Raw here is sync Playwright in the same process doing what that
observation holds: the click, a WebP screenshot through the DevTools protocol (quality 75, as the
observation takes it) and the title.  Each round times one of each, back to back, in turns (ours
first in even rounds, raw first in odd ones), so that the machine's noise hits both.  The ratio
of a round is ours over raw; the figure is the median of the rounds' ratios, with a 95% bootstrap
interval of that median (2,000 resamples of the rounds).  A goal is met when the interval's upper
end is within it.

Run it with ``make bench``, or ``python bench/bench_user_path.py --rounds 30``.  Run from another
checkout's tree (``PYTHONPATH=that/tree``), it measures that tree's xmltools the same way, which
is how a change is set against the commit before it.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

import xmltools
from xmltools import Config, Interpreter

try:
    from xmltools.base.serve import serve_directory
except ImportError:  # a tree from before the package's layout
    from xmltools.serve import serve_directory  # type: ignore[import-not-found,no-redef]

SITE = Path(__file__).parent.parent / "fixtures" / "site"
CHANGE = (150, 385)  # buttons.html: "change the page", which rewrites a line of text
GO = (190, 70)  # nav/plain-link.html: a link to done.html
GOAL = 1.3  # through Interpreter.handle, at most this many times raw Playwright, at the interval's top
FLAGS = ["--no-first-run", "--no-default-browser-check", "--disable-gpu"]


def call(action: str, **params: str) -> str:
    """The model's text for one browser call, in the full dialect."""
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in {"action": action, **params}.items())
    return f"I'll do that.\n<browser_action>\n{inner}</browser_action>"


def median_ratio(pairs: list[tuple[float, float]], resamples: int = 2000) -> tuple[float, float, float]:
    """The median of the pairs' ratios, and the 2.5th and 97.5th percentiles of its bootstrap."""
    ratios = [ours / raw for ours, raw in pairs]
    rnd = random.Random(0)
    medians = sorted(statistics.median(rnd.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return statistics.median(ratios), medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def raw_observe(page: Page, cdp: Any) -> None:
    """What the observation holds, done by hand: a WebP screenshot over CDP and the title."""
    shot = cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
    base64.b64decode(shot["data"])
    page.title()


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench(base: str, rounds: int, warm: int = 3) -> dict[str, Any]:
    """The DOM-changing click and the link click, ours and raw, paired and in turns."""
    interp = Interpreter(Config(profile="full", observe="screenshot"))
    figures: dict[str, Any] = {"rounds": rounds}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_executable(), args=FLAGS)
        ctx = browser.new_context(viewport={"width": 900, "height": 600})
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)

        def ours_click(x: int, y: int, title: str | None) -> Callable[[], None]:
            def run() -> None:
                turn = interp.handle(call("click", coordinate=f"{x},{y}"))
                message = turn.result
                assert message is not None and turn.ran is not None and turn.ran.status == "ok", turn.outcomes
                seen = turn.ran.observation
                assert title is None or (seen is not None and seen.title == title), seen
                json.dumps(message)  # the message as it goes to the provider, image and all

            return run

        def raw_click(x: int, y: int, navigates: bool) -> Callable[[], None]:
            def run() -> None:
                page.mouse.click(x, y)
                if navigates:
                    page.wait_for_url("**/done.html")
                    page.wait_for_load_state("load")
                raw_observe(page, cdp)

            return run

        interp.handle(call("launch", url=f"{base}/buttons.html"))
        for name, start, (x, y), title in (
            ("dom_click", "/buttons.html", CHANGE, None),
            ("link_click", "/nav/plain-link.html", GO, "Arrived"),
        ):
            pairs: list[tuple[float, float]] = []
            for i in range(rounds + warm):
                interp.handle(call("navigate", url=base + start))
                page.goto(base + start)
                ours, raw = ours_click(x, y, title), raw_click(x, y, title is not None)
                if i % 2:
                    t_raw = timed(raw)
                    t_ours = timed(ours)
                else:
                    t_ours = timed(ours)
                    t_raw = timed(raw)
                if i >= warm:
                    pairs.append((t_ours, t_raw))
            mid, lo, hi = median_ratio(pairs)
            figures[f"{name}_ms"] = round(statistics.median(p[0] for p in pairs) * 1000, 1)
            figures[f"raw_{name}_ms"] = round(statistics.median(p[1] for p in pairs) * 1000, 1)
            figures[f"{name}_over_raw"] = [round(mid, 3), round(lo, 3), round(hi, 3)]
        browser.close()
    interp.close()
    return figures


def find_executable() -> str:
    from xmltools.browser.locate import find_chromium

    return find_chromium().path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rounds", type=int, default=30, help="paired rounds per click kind (at least 20)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    with serve_directory(SITE) as base:
        figures = bench(base, max(args.rounds, 20))
    figures["xmltools"] = str(Path(xmltools.__file__).parent)
    print("the user's path (Interpreter.handle, the model's text in, the rendered result out) against raw")
    for k, v in figures.items():
        if isinstance(v, list):
            print(f"  {k:24s} {v[0]:.2f}x  (95% interval {v[1]:.2f}-{v[2]:.2f})")
        else:
            print(f"  {k:24s} {v}")
    for k, v in figures.items():
        if k.endswith("_over_raw"):
            verdict = "met" if v[2] <= GOAL else "MISSED"
            print(f"  goal {k} <= {GOAL} at the interval's top: {verdict} ({v[2]:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
