"""The interval every ratio in the benches is given with: a bootstrap of the median of paired ratios."""

from __future__ import annotations

import random
import statistics


def median_ratio(ratios: list[float], resamples: int = 2000) -> tuple[float, float, float]:
    """The median of the ratios, and the 2.5th and 97.5th percentiles of its bootstrap (seeded)."""
    rnd = random.Random(0)
    medians = sorted(statistics.median(rnd.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return statistics.median(ratios), medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def shown(v: list[float] | tuple[float, float, float]) -> str:
    return f"{v[0]:.2f}x (95% interval {v[1]:.2f}-{v[2]:.2f})"
