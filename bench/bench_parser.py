"""Parser benchmark: throughput, streaming overhead, scaling and peak memory.

Every ratio is measured in the same run, so machine noise cancels out: the whole parse
and the 16-character stream of the mixed 1 MB message are timed in turns, several
times, and the figures are their medians.
Run it with ``make bench`` (or ``python bench/bench_parser.py --json out.json``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import shutil
import statistics
import subprocess
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


def timed(fn: Callable[[], object]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def chunked(text: str, chunk: int) -> list[str]:
    """The message as a model's stream delivers it: already in pieces (not part of the parser's cost)."""
    return [text[i : i + chunk] for i in range(0, len(text), chunk)]


def feed_all(chunks: list[str]) -> None:
    p = StreamParser(limits=LIMITS)
    for c in chunks:
        p.feed(c)
    p.close()
    p.blocks()


def naive_reparse(text: str, chunk: int) -> None:
    """The baseline: re-parse the whole text after every chunk, as a quadratic parser does."""
    for i in range(chunk, len(text) + chunk, chunk):
        parse(text[:i], limits=LIMITS, final=False)


def peak_stream_memory(text: str, chunk: int) -> tuple[int, int]:
    """(peak bytes while streaming, bytes held by the block objects it returns)."""
    chunks = chunked(text, chunk)
    gc.collect()
    tracemalloc.start()
    feed_all(chunks)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    gc.collect()
    tracemalloc.start()
    blocks = parse(text, limits=LIMITS)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del blocks
    return peak, held


def worker(mode: str, size: int) -> None:
    """One workload, for counting its instructions under callgrind (``base`` builds the message only)."""
    text = mixed_message(size, seed=size)
    chunks = chunked(text, 16)
    if mode == "whole":
        parse(text, limits=LIMITS)
    elif mode == "stream":
        feed_all(chunks)


def instructions(mode: str, size: int) -> int | None:
    """Instructions executed by a worker process (deterministic, unlike time on a shared machine)."""
    if shutil.which("valgrind") is None:
        return None
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--worker",
        mode,
        str(size),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    return int(m.group(1)) if m else None


def instruction_figures() -> dict[str, object]:
    mb = 1 << 20
    out: dict[str, object] = {}
    per_mb: dict[str, float] = {}
    for size in (64 * 1024, 256 * 1024, mb, 4 * mb):
        base = instructions("base", size)
        if base is None:
            return {"instructions": "valgrind not found"}
        s = instructions("stream", size)
        assert s is not None
        per_mb[f"{size // 1024}KB"] = round((s - base) / (size / mb) / 1e6, 1)
        if size == mb:
            w = instructions("whole", size)
            assert w is not None
            out["whole_Minstr_1MB"] = round((w - base) / 1e6, 1)
            out["stream16_Minstr_1MB"] = round((s - base) / 1e6, 1)
            out["stream16_over_whole_instr"] = round((s - base) / (w - base), 2)
    out["stream16_Minstr_per_MB"] = per_mb
    out["Minstr_per_MB_max_over_min"] = round(max(per_mb.values()) / min(per_mb.values()), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--repeat", type=int, default=9, help="rounds of the 1 MB timings (medians)")
    ap.add_argument("--no-instructions", action="store_true", help="skip the callgrind instruction counts")
    ap.add_argument("--worker", nargs=2, metavar=("MODE", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return 0

    mb = 1 << 20
    text = mixed_message(mb)
    # In turns, so that a busy neighbour slows both alike; medians of the rounds.
    pieces = chunked(text, 16)
    parse(text, limits=LIMITS)  # warm up
    feed_all(pieces)
    whole_times: list[float] = []
    stream_times: list[float] = []
    for _ in range(max(1, args.repeat)):
        whole_times.append(timed(lambda: parse(text, limits=LIMITS)))
        stream_times.append(timed(lambda: feed_all(pieces)))
    t_whole = statistics.median(whole_times)
    t_stream = statistics.median(stream_times)
    figures: dict[str, object] = {
        "message_bytes": len(text.encode()),
        "rounds": max(1, args.repeat),
        "whole_MB_per_s": round(len(text) / t_whole / 1e6, 1),
        "whole_ms": round(t_whole * 1000, 1),
        "stream16_ms": round(t_stream * 1000, 1),
        "stream16_over_whole": round(t_stream / t_whole, 2),
        "stream16_over_whole_per_round": sorted(
            round(s / w, 2) for w, s in zip(whole_times, stream_times, strict=True)
        ),
    }

    # The naive baseline is quadratic: measure it on 64 KB only.
    small = text[: 64 * 1024]
    t_naive = best_of(lambda: naive_reparse(small, 16), 1)
    small_pieces = chunked(small, 16)
    t_small = best_of(lambda: feed_all(small_pieces), args.repeat)
    figures["naive_reparse_64KB_ms"] = round(t_naive * 1000, 1)
    figures["stream16_64KB_ms"] = round(t_small * 1000, 1)
    figures["naive_over_stream_64KB"] = round(t_naive / t_small, 1)

    scaling: dict[str, float] = {}
    for size in (64 * 1024, 256 * 1024, mb, 4 * mb):
        t = text if size == mb else mixed_message(size, seed=size)
        cs = chunked(t, 16)
        secs = best_of(lambda cs=cs: feed_all(cs), max(1, args.repeat - 2))  # type: ignore[misc]
        scaling[f"{size // 1024}KB"] = round(secs / (size / mb) * 1000, 1)
    figures["stream16_ms_per_MB"] = scaling
    figures["ms_per_MB_max_over_min"] = round(max(scaling.values()) / min(scaling.values()), 2)

    peak, held = peak_stream_memory(text, 16)
    size = len(text.encode())
    figures["stream_peak_memory_over_message"] = round(peak / size, 2)
    figures["of_which_returned_blocks_over_message"] = round(held / size, 2)
    figures["stream_working_memory_over_message"] = round((peak - held) / size, 2)

    if not args.no_instructions:
        figures.update(instruction_figures())

    goals = {
        "whole >= 25 MB/s": float(figures["whole_MB_per_s"]) >= 25,  # type: ignore[arg-type]
        "stream16 <= 2.5x whole (time)": float(figures["stream16_over_whole"]) <= 2.5,  # type: ignore[arg-type]
        "ms/MB flat within 1.5x (64KB..4MB, time)": float(figures["ms_per_MB_max_over_min"]) <= 1.5,  # type: ignore[arg-type]
        # judged on the parser's own memory: the block objects it returns are the output, not overhead
        "working memory <= 3x message": float(figures["stream_working_memory_over_message"]) <= 3,  # type: ignore[arg-type]
    }
    if "stream16_over_whole_instr" in figures:
        goals["stream16 <= 2.5x whole (instructions)"] = float(figures["stream16_over_whole_instr"]) <= 2.5  # type: ignore[arg-type]
        goals["cost/MB flat within 1.5x (instructions)"] = float(figures["Minstr_per_MB_max_over_min"]) <= 1.5  # type: ignore[arg-type]
    print(
        f"parser benchmark (1 MB figures: medians of {figures['rounds']} rounds in turns, same process;"
        " instruction counts by callgrind)"
    )
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
