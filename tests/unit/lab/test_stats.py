"""The statistics an experiment reports: checked against their definitions, by brute force where that
is possible, and by simulation for the interval's coverage."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmltools.lab.stats import compare, mcnemar, pass_at_k, pass_hat_k, rate, wilson


@given(st.integers(0, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_wilson_interval_holds_the_observed_rate_inside_zero_to_one(pn: tuple[int, int]) -> None:
    passes, n = pn
    low, high = wilson(passes, n)
    assert 0.0 <= low <= high <= 1.0
    if n:
        assert low <= passes / n <= high


def test_known_wilson_values() -> None:
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)  # the textbook score interval
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(3, 2)


@pytest.mark.parametrize(("p", "n"), [(0.3, 16), (0.8, 16), (0.5, 8), (0.9, 30)])
def test_the_interval_covers_the_true_rate_about_95_times_in_100(p: float, n: int) -> None:
    rng = random.Random(f"{p}-{n}")
    runs = 4000
    covered = 0
    for _ in range(runs):
        passes = sum(rng.random() < p for _ in range(n))
        low, high = wilson(passes, n)
        covered += low <= p <= high
    assert covered / runs >= 0.92, covered / runs  # Wilson keeps close to 95% at small n


@pytest.mark.parametrize(("n", "c"), [(5, 0), (5, 2), (6, 3), (7, 7), (8, 5)])
def test_pass_at_k_and_pass_hat_k_equal_their_brute_force_definitions(n: int, c: int) -> None:
    trials = [True] * c + [False] * (n - c)
    for k in range(1, n + 1):
        draws = list(itertools.combinations(trials, k))
        assert math.isclose(pass_at_k(n, c, k), sum(any(d) for d in draws) / len(draws))
        assert math.isclose(pass_hat_k(n, c, k), sum(all(d) for d in draws) / len(draws))


def test_mcnemar_exact_values() -> None:
    assert mcnemar(0, 0) == 1.0
    assert math.isclose(mcnemar(0, 6), 2 / 64)  # six discordant pairs, all one way
    assert math.isclose(mcnemar(1, 9), 2 * 11 / 1024)
    assert mcnemar(5, 5) == 1.0


def test_a_clear_winner_is_said_so_and_noise_is_not() -> None:
    a = [i % 10 < 3 for i in range(40)]  # 30%
    b = [i % 10 < 8 for i in range(40)]  # 80%, passing wherever a passes
    c = compare("A", a, "B", b)
    assert c.detected and math.isclose(c.difference, 0.5) and c.low > 0.3 and c.high <= 0.7
    assert c.sentence().startswith("B beats A by 50 points (95% CI ")
    same = compare("A", a, "A2", a[1:] + a[:1])
    assert not same.detected and same.sentence().startswith("no difference detected between A2 and A at n=40")
    assert str(rate(a)) == "12/40 = 30% (95% CI 18%–45%)"
    with pytest.raises(ValueError):
        compare("A", a, "B", b[:3])
