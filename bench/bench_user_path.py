"""The user's whole path: the model's XML text into ``Interpreter.handle``, the rendered result out,
paired with raw Playwright doing the same observation, with a 95% interval on each ratio.

A user hands the model's text to ``Interpreter.handle`` (or ``await AsyncInterpreter.handle``) and
sends back the rendered result message, its image included.  Raw is Playwright in the same
process and the same style (sync against sync, async against async) doing what the observation
holds:

- a click by point (a DOM-changing one, and a link that loads a page): the click, a WebP
  screenshot through the DevTools protocol (quality 75, as the observation takes it) and the title;
- a click by ref: the click on the same element by locator, Playwright's AI snapshot and the title;
- a loop of three DOM-changing clicks through ``run_loop`` (the model a function that answers at
  once), against a raw loop that clicks, captures, reads the title and puts the image into the
  history as a chat message: the loop's own cost (history, guards, the message shapes) on top of
  the interpreter's.

Each round times one of each, back to back, in turns (ours first in even rounds, raw first in
odd ones), so that the machine's noise hits both.  A round's ratio is ours over raw; the figure
is the median of the rounds' ratios, with a 95% bootstrap interval of that median (2,000
resamples of the rounds).  A goal is met when the interval's upper end is within it.

With ``--before REV``, the commit REV is measured in the same run: a worker process imports it
from a temporary checkout, another imports this tree, and they take their rounds in turns, each
against its own raw Playwright.  Then ``after over before`` (ours after over ours before, round
by round) says what the change did, with its interval.  Last, each click's median step is broken
into its phases (see ``breakdown.py``).

Run it with ``make bench``, or ``python bench/bench_user_path.py --rounds 30 --before HEAD~3``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from intervals import crossover_ratio
from trees import checkout

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
SITE = TREE / "fixtures" / "site"
CHANGE = (150, 385)  # buttons.html: "change the page", which rewrites a line of text
GO = (190, 70)  # nav/plain-link.html: a link to done.html
GOAL = 1.3  # through Interpreter.handle, at most this many times raw Playwright, at the interval's top
FLAGS = ["--no-first-run", "--no-default-browser-check", "--disable-gpu"]
SYNC_KINDS = ("dom_click", "link_click", "ref_click", "loop_dom_click")
ASYNC_KINDS = ("async_dom_click",)
START = {"dom_click": "/buttons.html", "link_click": "/nav/plain-link.html", "ref_click": "/buttons.html"}
START["async_dom_click"] = START["loop_dom_click"] = START["dom_click"]
LOOP_CLICKS = 3  # a loop round: this many clicks, then the model's last word


def call(action: str, **params: str) -> str:
    """The model's text for one browser call, in the full dialect."""
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in {"action": action, **params}.items())
    return f"I'll do that.\n<browser_action>\n{inner}</browser_action>"


def find_executable() -> str:
    from xmltools.browser.locate import find_chromium

    return find_chromium().path


def ref_of(snapshot: str | None, name: str) -> str:
    found = re.search(rf'button "{re.escape(name)}" \[ref=(\w+)\]', snapshot or "")
    assert found, snapshot
    return found.group(1)


def checked(turn: Any, title: str | None) -> None:
    """The turn ran its call, saw the page it should, and its message goes to a provider as JSON."""
    assert turn.result is not None and turn.ran is not None and turn.ran.status == "ok", turn.outcomes
    seen = turn.ran.observation
    assert title is None or (seen is not None and seen.title == title), seen
    json.dumps(turn.result)


# -- the sync worker: Interpreter.handle against sync Playwright ------------------------------------


class SyncWorker:
    """One tree's xmltools and one raw Playwright, each with its own browser, taking rounds on request."""

    def __init__(self, base: str) -> None:
        from playwright.sync_api import sync_playwright

        from xmltools import Config, Interpreter

        self.base = base
        self.shots = Interpreter(Config(profile="full", observe="screenshot"))
        self.snaps = Interpreter(Config(profile="full", observe="snapshot"))
        self.shots.handle(call("launch", url=base + START["dom_click"]))
        self.snaps.handle(call("launch", url=base + START["ref_click"]))
        self.pw = sync_playwright().start()
        self.browser = self.pw.chromium.launch(executable_path=find_executable(), args=FLAGS)
        ctx = self.browser.new_context(viewport={"width": 900, "height": 600})
        self.page = ctx.new_page()
        self.cdp = ctx.new_cdp_session(self.page)
        self.page.goto(base + START["dom_click"])
        for _ in range(50):  # a new page may not have a frame to capture yet
            try:
                self.cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
                break
            except Exception:
                time.sleep(0.1)

    def prepare(self, kind: str) -> tuple[Callable[[], None], Callable[[], None]]:
        """Both sides at the kind's start page; the two timed steps."""
        if kind == "loop_dom_click":
            return self.prepare_loop()
        url = self.base + START[kind]
        interp = self.snaps if kind == "ref_click" else self.shots
        turn = interp.handle(call("navigate", url=url))
        self.page.goto(url)
        title = "Arrived" if kind == "link_click" else None
        if kind == "ref_click":
            text = call("click", ref=ref_of(turn.ran.observation.snapshot, "change the page"))
        else:
            x, y = CHANGE if kind == "dom_click" else GO
            text = call("click", coordinate=f"{x},{y}")

        def ours() -> None:
            checked(interp.handle(text), title)

        def raw() -> None:
            page = self.page
            if kind == "ref_click":
                page.get_by_role("button", name="change the page").click()
                page.aria_snapshot(mode="ai")
            else:
                page.mouse.click(*(CHANGE if kind == "dom_click" else GO))
                if kind == "link_click":
                    page.wait_for_url("**/done.html")
                    page.wait_for_load_state("load")
                shot = self.cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
                base64.b64decode(shot["data"])
            page.title()

        return ours, raw

    def prepare_loop(self) -> tuple[Callable[[], None], Callable[[], None]]:
        """A loop of LOOP_CLICKS clicks: ``run_loop`` over the interpreter against a raw loop that
        does what a host without xmltools would (click, capture, title, the image into the history),
        both asking the same model: a function that answers at once."""
        from xmltools.loop import run_loop

        url = self.base + START["loop_dom_click"]
        self.shots.handle(call("navigate", url=url))
        self.page.goto(url)
        click = call("click", coordinate=f"{CHANGE[0]},{CHANGE[1]}")
        start = [{"role": "system", "content": "You click."}, {"role": "user", "content": "Click it."}]

        def model(messages: list[dict[str, Any]]) -> str:
            done = sum(1 for m in messages if m["role"] == "assistant")
            return click if done < LOOP_CLICKS else "All done."

        def ours() -> None:
            res = run_loop(model, start, interpreter=self.shots, max_turns=LOOP_CLICKS + 2)
            clicked = [t for t in res.turns if t.ran is not None and t.ran.status == "ok"]
            assert res.stop_reason == "no_tool" and len(clicked) == LOOP_CLICKS, (res.stop_reason, res.turns)

        def raw() -> None:
            messages = list(start)
            while True:
                text = model(messages)
                messages.append({"role": "assistant", "content": text})
                if text == "All done.":
                    break
                self.page.mouse.click(*CHANGE)
                shot = self.cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
                said = [{"type": "text", "text": f"clicked; the page: {self.page.title()}"}]
                said.append(
                    {"type": "image_url", "image_url": {"url": "data:image/webp;base64," + shot["data"]}}
                )
                messages.append({"role": "user", "content": said})
            json.dumps(messages)

        return ours, raw

    def pair(self, kind: str, i: int) -> tuple[float, float]:
        """One of each, in turns; a round whose raw capture found no frame is taken again."""
        from playwright.sync_api import Error

        for attempt in range(3):
            ours, raw = self.prepare(kind)
            try:
                if i % 2:
                    t_raw = timed(raw)
                    return timed(ours), t_raw
                t_ours = timed(ours)
                return t_ours, timed(raw)
            except Error as e:
                if "Unable to capture" not in str(e) or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def breakdown(self, kind: str, steps: int) -> dict[str, float]:
        """The median of each phase's own time over ``steps`` of ours, in ms (see breakdown.py)."""
        from breakdown import Clock, wrapped

        clock = Clock()
        rows: list[dict[str, float]] = []
        with wrapped(clock) as missing:
            if missing:
                return {}
            for _ in range(steps):
                ours, _raw = self.prepare(kind)
                clock.take()
                total = timed(ours)
                rows.append({**clock.take(), "step": total})
        phases = sorted(
            {k for r in rows for k in r}, key=lambda k: -statistics.median(r.get(k, 0) for r in rows)
        )
        return {k: round(statistics.median(r.get(k, 0.0) for r in rows) * 1000, 1) for k in phases}

    def close(self) -> None:
        self.shots.close()
        self.snaps.close()
        self.browser.close()
        self.pw.stop()


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# -- the async worker: AsyncInterpreter.handle against async Playwright -----------------------------


class AsyncWorker:
    """The async path: AsyncInterpreter.handle against async Playwright, in one event loop."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self._open())

    async def _open(self) -> None:
        from playwright.async_api import async_playwright

        from xmltools import AsyncInterpreter, Config

        self.interp = AsyncInterpreter(Config(profile="full", observe="screenshot"))
        await self.interp.handle(call("launch", url=self.base + START["dom_click"]))
        self.pw = await async_playwright().start()
        self.browser = await self.pw.chromium.launch(executable_path=find_executable(), args=FLAGS)
        ctx = await self.browser.new_context(viewport={"width": 900, "height": 600})
        self.page = await ctx.new_page()
        self.cdp = await ctx.new_cdp_session(self.page)

    async def _pair(self, kind: str, i: int) -> tuple[float, float]:
        url = self.base + START[kind]
        await self.interp.handle(call("navigate", url=url))
        await self.page.goto(url)
        text = call("click", coordinate="{},{}".format(*CHANGE))

        async def ours() -> None:
            checked(await self.interp.handle(text), None)

        async def raw() -> None:
            await self.page.mouse.click(*CHANGE)
            shot = await self.cdp.send("Page.captureScreenshot", {"format": "webp", "quality": 75})
            base64.b64decode(shot["data"])
            await self.page.title()

        async def atimed(fn: Callable[[], Awaitable[None]]) -> float:
            t0 = time.perf_counter()
            await fn()
            return time.perf_counter() - t0

        if i % 2:
            t_raw = await atimed(raw)
            return await atimed(ours), t_raw
        t_ours = await atimed(ours)
        return t_ours, await atimed(raw)

    def pair(self, kind: str, i: int) -> tuple[float, float]:
        return self.loop.run_until_complete(self._pair(kind, i))

    def breakdown(self, kind: str, steps: int) -> dict[str, float]:
        return {}

    def close(self) -> None:
        async def shut() -> None:
            await self.interp.aclose()
            await self.browser.close()
            await self.pw.stop()

        self.loop.run_until_complete(shut())
        self.loop.close()


def serve_worker(style: str, base: str) -> int:
    """A worker process: one request per line on stdin, one JSON answer per line on stdout."""
    worker: SyncWorker | AsyncWorker = SyncWorker(base) if style == "sync" else AsyncWorker(base)
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but answers on the pipe
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        if req["do"] == "pair":
            answer: Any = worker.pair(req["kind"], req["i"])
        elif req["do"] == "breakdown":
            answer = worker.breakdown(req["kind"], req["steps"])
        else:
            break
        out.write(json.dumps(answer) + "\n")
        out.flush()
    worker.close()
    return 0


# -- the coordinator ----------------------------------------------------------------------------------


class Worker:
    """A worker process of one tree and one style, asked for one round at a time."""

    def __init__(self, tree: Path, style: str, base: str) -> None:
        env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{HERE}"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", style, "--base", base],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),  # the tree comes from PYTHONPATH alone, never from the cwd
        )
        self.ask({})

    def ask(self, req: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if req:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"a worker stopped (exit code {self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        """Stop the worker: asked to, else killed (it failed, or will not answer)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"do": "stop"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def measure(base: str, rounds: int, before: Path | None, warm: int = 3) -> dict[str, Any]:
    figures: dict[str, Any] = {"rounds": rounds}
    for style, kinds in (("sync", SYNC_KINDS), ("async", ASYNC_KINDS)):
        trees = {"after": Worker(TREE, style, base)}
        try:
            if before is not None:
                trees["before"] = Worker(before, style, base)
            for kind in kinds:
                figures.update(in_turns(trees, kind, rounds, warm))
                if style == "sync" and kind != "loop_dom_click":
                    ask = {"do": "breakdown", "kind": kind, "steps": 15}
                    figures[f"{kind}_breakdown_ms"] = trees["after"].ask(ask)
        finally:
            for worker in trees.values():
                worker.close()
    return figures


def in_turns(trees: dict[str, Worker], kind: str, rounds: int, warm: int) -> dict[str, Any]:
    """Rounds of one click kind, each tree's pair in turns; the figures of each, and of the change."""
    figures: dict[str, Any] = {}
    pairs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for i in range(rounds + warm):
        order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
        for name, worker in order:
            ours, raw = worker.ask({"do": "pair", "kind": kind, "i": i})
            if i >= warm:
                pairs[name].append((ours, raw))
    for name, got in pairs.items():
        label = kind if name == "after" else f"{kind}_before"
        figures[f"{label}_ms"] = round(statistics.median(p[0] for p in got) * 1000, 1)
        figures[f"raw_{label}_ms"] = round(statistics.median(p[1] for p in got) * 1000, 1)
        figures[f"{label}_over_raw"] = [round(v, 3) for v in crossover_ratio([o / r for o, r in got])]
    if "before" in pairs:
        change = [a[0] / b[0] for a, b in zip(pairs["after"], pairs["before"], strict=True)]
        figures[f"{kind}_after_over_before"] = [round(v, 3) for v in crossover_ratio(change)]
    return figures


def report(figures: dict[str, Any]) -> None:
    print("the user's path (Interpreter.handle, the model's text in, the rendered result out) against raw")
    for k, v in figures.items():
        if isinstance(v, list):
            print(f"  {k:32s} {v[0]:.2f}x  (95% interval {v[1]:.2f}-{v[2]:.2f})")
        elif isinstance(v, dict):
            print(f"  {k:32s} " + "  ".join(f"{phase} {ms:g}" for phase, ms in v.items()))
        else:
            print(f"  {k:32s} {v}")
    for k, v in figures.items():
        if k.endswith("_over_raw") and "_before" not in k:
            verdict = "met" if v[2] <= GOAL else "MISSED"
            print(f"  goal {k} <= {GOAL} at the interval's top: {verdict} ({v[2]:.2f})")
        if k.endswith("_after_over_before"):
            verdict = "no slower" if v[2] <= 1.0 or v[1] <= 1.0 else "SLOWER"
            print(f"  {k}: {verdict} than before ({v[0]:.2f}x, {v[1]:.2f}-{v[2]:.2f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rounds", type=int, default=30, help="paired rounds per click kind (at least 20)")
    ap.add_argument("--before", metavar="REV", help="also measure this commit, in turns with this tree")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--worker", choices=["sync", "async"], help=argparse.SUPPRESS)
    ap.add_argument("--base", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return serve_worker(args.worker, args.base)
    sys.path.insert(0, str(TREE))
    from xmltools.base.serve import serve_directory

    with serve_directory(SITE) as base, checkout(args.before) as before:
        figures = measure(base, max(args.rounds, 20), before)
    figures["before"] = args.before
    report(figures)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
