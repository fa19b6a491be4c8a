"""Parser benchmark: throughput, streaming overhead, scaling and peak memory.

Every ratio is measured in the same run, so machine noise cancels out.
Run it with ``make bench`` (or ``python bench/bench_parser.py --json out.json``).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
import tracemalloc
from collections.abc import Callable

from xmltools.parser import Limits, StreamParser, parse

LIMITS = Limits(max_message_chars=64_000_000, max_param_chars=16_000_000)


def mixed_message(size: int, seed: int = 0) -> str:
    """A model-like message: prose, click calls, type calls with awkward text, a fenced call."""
    rnd = random.Random(seed)
    parts: list[str] = []
    n = 0
    while n < size:
        r = rnd.random()
        if r < 0.45:
            s = "I looked at the screenshot and the form is visible. " * rnd.randint(1, 4) + "\n"
        elif r < 0.75:
            s = (
                "<browser_action>\n<action>click</action>\n"
                f"<coordinate>{rnd.randint(0, 899)},{rnd.randint(0, 599)}</coordinate>\n</browser_action>\n"
            )
        elif r < 0.95:
            s = (
                "<browser_action>\n<action>type</action>\n<text>a < b && </div> "
                + "x" * rnd.randint(5, 300)
                + "</text>\n</browser_action>\n"
            )
        else:
            s = "```xml\n<browser_action>\n<action>scroll_down</action>\n</browser_action>\n```\n"
        parts.append(s)
        n += len(s)
    return "".join(parts)[:size]


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def stream(text: str, chunk: int) -> None:
    p = StreamParser(limits=LIMITS)
    for i in range(0, len(text), chunk):
        p.feed(text[i : i + chunk])
    p.close()
    p.blocks()


def naive_reparse(text: str, chunk: int) -> None:
    """The baseline: re-parse the whole text after every chunk, as a quadratic parser does."""
    for i in range(chunk, len(text) + chunk, chunk):
        parse(text[:i], limits=LIMITS, final=False)


def peak_stream_memory(text: str, chunk: int) -> int:
    gc.collect()
    tracemalloc.start()
    stream(text, chunk)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    mb = 1 << 20
    text = mixed_message(mb)
    t_whole = best_of(lambda: parse(text, limits=LIMITS), args.repeat)
    t_stream = best_of(lambda: stream(text, 16), args.repeat)
    figures: dict[str, object] = {
        "message_bytes": len(text.encode()),
        "whole_MB_per_s": round(len(text) / t_whole / 1e6, 1),
        "whole_ms": round(t_whole * 1000, 1),
        "stream16_ms": round(t_stream * 1000, 1),
        "stream16_over_whole": round(t_stream / t_whole, 2),
    }

    # The naive baseline is quadratic: measure it on 64 KB only.
    small = text[: 64 * 1024]
    t_naive = best_of(lambda: naive_reparse(small, 16), 1)
    t_small = best_of(lambda: stream(small, 16), args.repeat)
    figures["naive_reparse_64KB_ms"] = round(t_naive * 1000, 1)
    figures["stream16_64KB_ms"] = round(t_small * 1000, 1)
    figures["naive_over_stream_64KB"] = round(t_naive / t_small, 1)

    scaling: dict[str, float] = {}
    for size in (64 * 1024, 256 * 1024, mb, 4 * mb):
        t = text if size == mb else mixed_message(size, seed=size)
        secs = best_of(lambda t=t: stream(t, 16), max(1, args.repeat - 2))  # type: ignore[misc]
        scaling[f"{size // 1024}KB"] = round(secs / (size / mb) * 1000, 1)
    figures["stream16_ms_per_MB"] = scaling
    figures["ms_per_MB_max_over_min"] = round(max(scaling.values()) / min(scaling.values()), 2)

    peak = peak_stream_memory(text, 16)
    figures["stream_peak_memory_over_message"] = round(peak / len(text.encode()), 2)

    goals = {
        "whole >= 20 MB/s": float(figures["whole_MB_per_s"]) >= 20,  # type: ignore[arg-type]
        "stream16 <= 3x whole": float(figures["stream16_over_whole"]) <= 3,  # type: ignore[arg-type]
        "ms/MB flat within 1.5x (64KB..4MB)": float(figures["ms_per_MB_max_over_min"]) <= 1.5,  # type: ignore[arg-type]
        "peak memory <= 3x message": float(figures["stream_peak_memory_over_message"]) <= 3,  # type: ignore[arg-type]
    }
    print(f"parser benchmark (best of {args.repeat} runs, same process)")
    for k, v in figures.items():
        print(f"  {k:36} {v}")
    for k, ok in goals.items():
        print(f"  goal {k:31} {'met' if ok else 'MISSED'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"figures": figures, "goals": goals}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
