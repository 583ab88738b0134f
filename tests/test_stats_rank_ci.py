"""Intervals of Spearman's rho and Kendall's tau over 3 to 10 models (stats.rank_ci): coherent with scipy's exact
permutation tests at 0, covering by seeded simulation under a Gaussian copula, and read by the summary line."""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pytest
from rmeval.benchmarks.fairness.stats import rank_ci
from scipy import stats


def _statistic(name: str, x: np.ndarray, y: np.ndarray) -> float:
    return float((stats.spearmanr if name == "spearman" else stats.kendalltau)(x, y).statistic)


def _exact_p(name: str, x: np.ndarray, y: np.ndarray) -> float:
    if name == "kendall":
        return float(stats.kendalltau(x, y, method="exact").pvalue)
    return float(stats.permutation_test((y,), lambda v: stats.spearmanr(x, v).statistic,
                                        permutation_type="pairings", n_resamples=math.inf).pvalue)


@pytest.mark.parametrize(("name", "n"), [("spearman", 4), ("spearman", 5), ("kendall", 5), ("kendall", 6)])
def test_the_interval_excludes_zero_exactly_when_scipys_exact_permutation_test_rejects(name: str, n: int) -> None:
    """At r = 0 the reference distribution is the permutation distribution for any copula: the interval holds 0
    unless the exact two-sided test (scipy) rejects at 0.05. Every distinct value of the statistic at this n."""
    x = np.arange(1.0, n + 1)
    seen: dict[float, np.ndarray] = {}
    for order in permutations(range(n)):
        y = np.array(order, dtype=np.float64)
        seen.setdefault(round(_statistic(name, x, y), 9), y)
    checked = 0
    for value, y in seen.items():
        p = _exact_p(name, x, y)
        if abs(p - 0.05) < 0.004:  # Monte Carlo error of the simulated tails (10,000 draws) decides those
            continue
        low, high = rank_ci.interval(name, value, n, seed=0)
        assert low <= value <= high or math.isclose(value, low) or math.isclose(value, high)
        assert (low > 0 or high < 0) == (p < 0.05), (value, p, low, high)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("name", rank_ci.STATISTICS)
@pytest.mark.parametrize(("n", "r"), [(3, 0.0), (5, 0.7), (6, -0.4), (8, 0.9)])
def test_coverage_under_a_gaussian_copula(name: str, n: int, r: float) -> None:
    """200 seeded data sets of n pairs (lognormal and cubed marginals: only the copula matters) cover the
    population rho or tau at least 93 % of the time (the construction guarantees 95 %, up to Monte Carlo error)."""
    rng = np.random.default_rng(17)
    truth = rank_ci.population_value(name, r)
    intervals: dict[float, tuple[float, float]] = {}
    covered = 0
    for _ in range(200):
        z = rng.standard_normal((n, 2))
        x, y = np.exp(z[:, 0]), (r * z[:, 0] + math.sqrt(1 - r * r) * z[:, 1]) ** 3
        value = round(_statistic(name, x, y), 9)
        if value not in intervals:  # the interval depends on the data only through the statistic
            intervals[value] = rank_ci.interval(name, value, n, seed=3)
        low, high = intervals[value]
        covered += low <= truth <= high
    assert covered / 200 >= 0.93


def test_undefined_and_extreme_inputs() -> None:
    assert all(math.isnan(v) for v in rank_ci.interval("kendall", 0.5, 2, seed=0))
    assert all(math.isnan(v) for v in rank_ci.interval("spearman", math.nan, 5, seed=0))
    low, high = rank_ci.interval("kendall", 1.0, 3, seed=0)  # three models in perfect order: p = 1/3
    assert low < 0 < high == 1.0
    with pytest.raises(ValueError, match="pearson"):
        rank_ci.interval("pearson", 0.1, 5, seed=0)
    # deterministic per seed and n
    assert rank_ci.interval("spearman", 0.6, 8, seed=4) == rank_ci.interval("spearman", 0.6, 8, seed=4)


def test_the_population_values_are_kruskals_for_a_gaussian_copula() -> None:
    """tau = 2/pi arcsin r and rho = 6/pi arcsin(r/2), checked on a large bivariate normal sample with scipy."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal((20000, 2))
    x, y = z[:, 0], 0.6 * z[:, 0] + 0.8 * z[:, 1]
    assert stats.kendalltau(x, y).statistic == pytest.approx(rank_ci.population_value("kendall", 0.6), abs=0.01)
    assert stats.spearmanr(x, y).statistic == pytest.approx(rank_ci.population_value("spearman", 0.6), abs=0.01)
