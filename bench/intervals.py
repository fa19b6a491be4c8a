"""The interval every ratio in the benches is given with: a bootstrap of the median of paired ratios."""

from __future__ import annotations

import math
import random
import statistics


def median_ratio(ratios: list[float], resamples: int = 2000) -> tuple[float, float, float]:
    """The median of the ratios, and the 2.5th and 97.5th percentiles of its bootstrap (seeded)."""
    rnd = random.Random(0)
    medians = sorted(statistics.median(rnd.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return statistics.median(ratios), medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def crossover_ratio(ratios: list[float], resamples: int = 2000) -> tuple[float, float, float]:
    """The ratios of rounds whose order alternates (one side first, then the other), in round order.

    Going first or second can cost either side a lot on this machine (a raw ref click took 24-29 ms
    right after ours and 38-43 ms right before it), so a median of single rounds falls between two
    modes.  Each two rounds in a row are one of each order: their geometric mean cancels the order,
    and the median of those means is given with its bootstrap interval.  A last odd round is left
    out."""
    crossed = [math.sqrt(a * b) for a, b in zip(ratios[0::2], ratios[1::2], strict=False)]
    return median_ratio(crossed, resamples)


def shown(v: list[float] | tuple[float, float, float]) -> str:
    return f"{v[0]:.2f}x (95% interval {v[1]:.2f}-{v[2]:.2f})"
