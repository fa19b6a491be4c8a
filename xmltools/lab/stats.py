"""The statistics of an experiment: rates with intervals, pass@k, and paired comparisons.

Hand-written on purpose: each is a closed formula of a few lines (Wilson's
score interval, the unbiased pass@k estimator, McNemar's exact test as a
binomial tail, a percentile bootstrap), and the libraries that hold them
(scipy, statsmodels) would add a large compiled dependency for four
functions.  Pure: standard library only.

- :func:`wilson` gives the 95% score interval of a success rate, which,
  unlike the normal approximation, stays inside 0..1 and keeps its coverage
  at the small n of prompt experiments (8 to 30 trials).
- :func:`pass_at_k` is the chance that at least one of k trials drawn from
  the n run passes; :func:`pass_hat_k` (pass^k) that all k do.  Both are
  unbiased estimators from n trials with c passes.
- :func:`compare` compares two variants trial by trial on the same tasks and
  models: the difference of their rates with a paired bootstrap interval,
  McNemar's exact p-value, and one sentence that says it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Comparison", "Rate", "compare", "mcnemar", "pass_at_k", "pass_hat_k", "rate", "wilson"]

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile
BOOTSTRAP_SAMPLES = 4000


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval of ``passes`` in ``n`` (95% by default); (0, 1) when n is 0."""
    if n < 0 or not 0 <= passes <= n:
        raise ValueError(f"{passes} passes in {n} trials is not a count")
    if n == 0:
        return 0.0, 1.0
    p = passes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if passes == 0 else max(0.0, centre - half)  # exact at the ends: rounding aside
    high = 1.0 if passes == n else min(1.0, centre + half)
    return low, high


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` trials passes, from ``c`` passes in ``n`` trials."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` trials pass (pass^k), from ``c`` passes in ``n`` trials."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


@dataclass(frozen=True)
class Rate:
    """A success rate: passes of n, with its Wilson 95% interval."""

    passes: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.passes / self.n if self.n else 0.0

    def __str__(self) -> str:
        return f"{self.passes}/{self.n} = {self.value:.0%} (95% CI {self.low:.0%}–{self.high:.0%})"


def rate(outcomes: Sequence[bool]) -> Rate:
    passes = sum(1 for o in outcomes if o)
    low, high = wilson(passes, len(outcomes))
    return Rate(passes, len(outcomes), low, high)


def mcnemar(b: int, c: int) -> float:
    """McNemar's exact two-sided p-value: ``b`` pairs where only A passed, ``c`` where only B did."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / math.pow(2, n)
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class Comparison:
    """B against A on the same trials: the difference of their rates (B − A) and how sure it is."""

    a: str
    b: str
    pairs: int
    difference: float
    low: float
    high: float
    p_value: float  # McNemar's exact test on the discordant pairs

    @property
    def detected(self) -> bool:
        """A difference beyond chance: the interval leaves out zero and McNemar's test agrees (p <
        0.05).  Both are asked because a bootstrap interval is too narrow at the small n of prompt
        experiments, where the exact test is the honest one."""
        return (self.low > 0 or self.high < 0) and self.p_value < 0.05

    def sentence(self) -> str:
        pts = round(abs(self.difference) * 100)
        ci = f"95% CI {round(self.low * 100)}–{round(self.high * 100)}"
        if not self.detected:
            return (
                f"no difference detected between {self.b} and {self.a} at n={self.pairs}"
                f" ({self.difference * 100:+.0f} points, {ci}; McNemar p={self.p_value:.2f})"
            )
        winner, loser = (self.b, self.a) if self.difference > 0 else (self.a, self.b)
        return f"{winner} beats {loser} by {pts} points ({ci}; McNemar p={self.p_value:.3f}, n={self.pairs})"


def compare(
    a_name: str,
    a: Sequence[bool],
    b_name: str,
    b: Sequence[bool],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> Comparison:
    """Compare B with A, pair by pair (the same task, model and trial index): the difference of the
    rates with a percentile bootstrap 95% interval over the pairs, and McNemar's exact p-value."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes need as many of A as of B ({len(a)} and {len(b)})")
    n = len(a)
    if n == 0:
        return Comparison(a_name, b_name, 0, 0.0, -1.0, 1.0, 1.0)
    diffs = [int(y) - int(x) for x, y in zip(a, b, strict=True)]
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(samples))
    low = means[int(0.025 * (samples - 1))]
    high = means[math.ceil(0.975 * (samples - 1))]
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    return Comparison(a_name, b_name, n, sum(diffs) / n, low, high, mcnemar(only_a, only_b))
