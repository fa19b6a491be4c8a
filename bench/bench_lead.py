"""The lead over Playwright MCP: the same pages, the same steps, through each one's public way in.

Playwright MCP (``@playwright/mcp``, run by node from ``bench/npm``, installed by ``make bench``)
is driven over stdio with the official ``mcp`` client; xmltools through
``await AsyncInterpreter.handle`` with the model's text, its rendered result out.  Three steps:

- launch, from nothing to the first observation of ``buttons.html``: Playwright MCP's server
  started and its first ``browser_navigate`` (which starts its browser); xmltools' ``launch`` with a
  pool of its own (which starts the Playwright driver and the browser);
- a DOM-changing click and a link click by point (Playwright MCP: ``browser_mouse_click_xy``,
  with its ``vision`` capability).

What each answers with differs: xmltools' rendered result holds the page's WebP screenshot and its
title (``observe = "screenshot"``, the default), or its AI snapshot and title (the ``_snapshot``
kinds, ``observe = "snapshot"``); Playwright MCP takes its ARIA snapshot of the page, writes it to a
file in its output folder and answers with the file's name (its default).

Each round times one of each, in turns; the figure is the median of the rounds' ratios (ours over
Playwright MCP's) with a 95% bootstrap interval.  Run it with ``make bench`` or
``python bench/bench_lead.py --rounds 20``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from intervals import crossover_ratio, shown

HERE = Path(__file__).resolve().parent
SITE = HERE.parent / "fixtures" / "site"
CLI = HERE / "npm" / "node_modules" / "@playwright" / "mcp" / "cli.js"
CHANGE = (150, 385)  # buttons.html: "change the page"
GO = (190, 70)  # nav/plain-link.html: a link to done.html


def call(action: str, **params: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>\n" for k, v in {"action": action, **params}.items())
    return f"I'll do that.\n<browser_action>\n{inner}</browser_action>"


class PlaywrightMcp:
    """A Playwright MCP server over stdio, with a browser of its own (headless, in memory)."""

    async def start(self) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        from xmltools.browser.locate import find_chromium

        args = [str(CLI), "--headless", "--isolated", "--no-sandbox", "--browser", "chromium"]
        args += ["--caps", "vision", "--executable-path", find_chromium().path, "--viewport-size", "900,600"]
        self.stack = AsyncExitStack()
        out = self.stack.enter_context(tempfile.TemporaryDirectory(prefix="xmltools-bench-mcp-"))
        args += ["--output-dir", out]
        params = StdioServerParameters(command=shutil.which("node") or "node", args=args)
        read, write = await self.stack.enter_async_context(stdio_client(params))
        self.session = await self.stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()

    async def tool(self, name: str, **arguments: Any) -> str:
        result = await self.session.call_tool(name, arguments)
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        assert not result.is_error, text
        return text

    async def close(self) -> None:
        await self.stack.aclose()


async def timed(fn: Callable[[], Awaitable[object]]) -> float:
    t0 = time.perf_counter()
    await fn()
    return time.perf_counter() - t0


async def launches(base: str, rounds: int) -> list[tuple[float, float]]:
    """Pairs (ours, Playwright MCP's) of a launch with a browser of its own, to the first observation."""
    from xmltools import AsyncInterpreter, Config
    from xmltools.browser.pool import BrowserPool

    pairs: list[tuple[float, float]] = []
    for i in range(rounds):

        async def ours() -> float:
            pool = BrowserPool()
            interp = AsyncInterpreter(Config(profile="full", observe="screenshot"), pool=pool)
            took = await timed(lambda: interp.handle(call("launch", url=base + "/buttons.html")))
            await interp.aclose()
            await pool.aclose()
            return took

        async def theirs() -> float:
            server = PlaywrightMcp()
            t0 = time.perf_counter()
            await server.start()
            await server.tool("browser_navigate", url=base + "/buttons.html")
            took = time.perf_counter() - t0
            await server.close()
            return took

        if i % 2:
            t_theirs = await theirs()
            pairs.append((await ours(), t_theirs))
        else:
            t_ours = await ours()
            pairs.append((t_ours, await theirs()))
    return pairs


async def clicks(base: str, rounds: int, observe: str, warm: int = 3) -> dict[str, list[tuple[float, float]]]:
    """Pairs of a DOM-changing click and of a link click, each side on its own page; ours observes
    with ``observe`` (its kinds are named with ``_snapshot`` when that is the AI snapshot)."""
    from xmltools import AsyncInterpreter, Config

    interp = AsyncInterpreter(Config(profile="full", observe=observe))  # type: ignore[arg-type]
    server = PlaywrightMcp()
    await server.start()
    tail = "_snapshot" if observe == "snapshot" else ""
    out: dict[str, list[tuple[float, float]]] = {"dom_click" + tail: [], "link_click" + tail: []}
    try:
        await interp.handle(call("launch", url=base + "/buttons.html"))
        for kind, start, (x, y) in (
            ("dom_click" + tail, "/buttons.html", CHANGE),
            ("link_click" + tail, "/nav/plain-link.html", GO),
        ):
            for i in range(rounds + warm):
                await interp.handle(call("navigate", url=base + start))
                await server.tool("browser_navigate", url=base + start)

                async def ours(x: int = x, y: int = y) -> None:
                    turn = await interp.handle(call("click", coordinate=f"{x},{y}"))
                    assert turn.ran is not None and turn.ran.status == "ok", turn.outcomes
                    json.dumps(turn.result)

                async def theirs(x: int = x, y: int = y) -> None:
                    await server.tool("browser_mouse_click_xy", x=x, y=y)

                first, second = (theirs, ours) if i % 2 else (ours, theirs)
                a, b = await timed(first), await timed(second)
                t_ours, t_theirs = (b, a) if i % 2 else (a, b)
                if i >= warm:
                    out[kind].append((t_ours, t_theirs))
    finally:
        await server.close()
        await interp.aclose()
    return out


async def measure(base: str, rounds: int, launch_rounds: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    steps = {
        "launch": await launches(base, launch_rounds),
        **await clicks(base, rounds, "screenshot"),
        **await clicks(base, rounds, "snapshot"),
    }
    for kind, pairs in steps.items():
        figures[f"{kind}_ms"] = round(statistics.median(p[0] for p in pairs) * 1000, 1)
        figures[f"playwright_mcp_{kind}_ms"] = round(statistics.median(p[1] for p in pairs) * 1000, 1)
        figures[f"{kind}_over_playwright_mcp"] = [
            round(v, 3) for v in crossover_ratio([o / t for o, t in pairs])
        ]
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rounds", type=int, default=20, help="paired rounds per click kind")
    ap.add_argument("--launches", type=int, default=8, help="paired launches")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if not CLI.is_file():
        print(f"Playwright MCP is not installed at {CLI.parent}: run make bench (npm ci in bench/npm)")
        return 2
    sys.path.insert(0, str(HERE.parent))
    from xmltools.base.serve import serve_directory

    with serve_directory(SITE) as base:
        figures = asyncio.run(measure(base, args.rounds, args.launches))
    print("the lead over Playwright MCP (ours over theirs; under 1 is faster)")
    for k, v in figures.items():
        print(f"  {k:36s} {shown(v) if isinstance(v, list) else v}")
    for k, v in figures.items():
        if k.endswith("_over_playwright_mcp"):
            print(f"  {k}: {'ahead' if v[2] < 1 else 'NOT AHEAD'} at the interval's top ({v[2]:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
