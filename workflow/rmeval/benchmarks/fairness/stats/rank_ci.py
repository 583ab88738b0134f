"""Confidence intervals for Spearman's and Kendall's rank correlations over a handful of points (3 and more: the
models of a run), where Fisher-z intervals (Bonett & Wright 2000: n >= 4 and 5, and only approximately) fail.

Method: the Neyman construction (Neyman 1937) under a Gaussian copula, by Monte Carlo. A rank statistic's sampling
distribution depends on the data only through their copula; for a Gaussian copula with correlation r it is that of
n bivariate normal pairs, whose population Kendall tau is (2 / pi) arcsin r and Spearman rho (6 / pi) arcsin(r / 2)
(Kruskal 1958). The interval holds every r at which the observed statistic lies in the central 1 - alpha of its
distribution (both tails above alpha / 2, the statistic being discrete), mapped to the population tau or rho. At
r = 0 that distribution is the permutation distribution, the same for every copula: the interval excludes 0 exactly
when the exact equal-tailed permutation test rejects independence, whatever the data. Elsewhere it is exact for
data with a Gaussian copula (any monotone transform of bivariate normal data), the assumption behind the Fisher-z
intervals too; with ties (rare for continuous scores) the statistic is tau-b and the reference untied.

Monte Carlo: DRAWS samples of n pairs from one seeded stream per (seed, n), the same for every r (common random
numbers, so the tail probabilities move smoothly with r), and a bisection in r per bound.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from rmeval.intervals import CONFIDENCE

DRAWS = 10_000  # the Monte Carlo error of a 2.5 % tail probability is 0.16 points
STATISTICS = ("spearman", "kendall")
_BISECTIONS = 14  # r to 1.2e-4
_TOLERANCE = 1e-9  # ties between a simulated and the observed statistic (both are exact rationals)


@lru_cache(maxsize=32)
def _draws(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x, the noise of y, x's ranks, x's pair signs) of DRAWS samples of n pairs: what every r shares."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, n]))
    x, noise = rng.standard_normal((DRAWS, n)), rng.standard_normal((DRAWS, n))
    i, j = np.triu_indices(n, 1)
    return x, noise, _ranks(x), np.sign(x[:, i] - x[:, j])


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n along the last axis (continuous draws: no ties)."""
    return np.argsort(np.argsort(values, axis=-1), axis=-1).astype(np.float64) + 1.0


def _simulated(statistic: str, seed: int, n: int, r: float) -> np.ndarray:
    """The statistic of each of the DRAWS samples of n pairs with normal correlation r."""
    x, noise, x_ranks, x_signs = _draws(seed, n)
    y = r * x + np.sqrt(1.0 - r * r) * noise
    if statistic == "spearman":
        d = x_ranks - _ranks(y)
        return 1.0 - 6.0 * (d * d).sum(axis=1) / (n * (n * n - 1.0))
    i, j = np.triu_indices(n, 1)
    return (x_signs * np.sign(y[:, i] - y[:, j])).sum(axis=1) / i.size


def population_value(statistic: str, r: float | np.ndarray) -> float | np.ndarray:
    """The population Spearman rho or Kendall tau of a Gaussian copula with correlation r."""
    if statistic == "spearman":
        return 6.0 / np.pi * np.arcsin(np.asarray(r) / 2.0)
    return 2.0 / np.pi * np.arcsin(np.asarray(r))


def interval(statistic: str, observed: float, n: int, seed: int,
             confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The 1 - alpha interval of the population `statistic` (spearman or kendall) given its `observed` value over n
    >= 3 points; (nan, nan) when undefined."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic: {statistic!r} is not one of {STATISTICS}")
    if n < 3 or not np.isfinite(observed):
        return float("nan"), float("nan")
    tail = (1.0 - confidence) / 2.0

    def upper_tail(r: float) -> float:  # P_r(T >= observed), increasing in r
        return float(np.mean(_simulated(statistic, seed, n, r) >= observed - _TOLERANCE))

    def lower_tail(r: float) -> float:  # P_r(T <= observed), decreasing in r
        return float(np.mean(_simulated(statistic, seed, n, r) <= observed + _TOLERANCE))

    # low: the smallest r still accepted by the upper tail; high: the largest accepted by the lower tail
    low = -1.0 if upper_tail(-1.0 + 1e-12) > tail else _boundary(lambda r: upper_tail(r) > tail, -1.0, 1.0)
    high = 1.0 if lower_tail(1.0 - 1e-12) > tail else _boundary(lambda r: lower_tail(r) <= tail, -1.0, 1.0)
    return float(population_value(statistic, low)), float(population_value(statistic, high))


def _boundary(accepted_above: Callable[[float], bool], low: float, high: float) -> float:
    """Bisection for the r at which the monotone predicate `accepted_above` turns from False to True."""
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2.0
        if accepted_above(middle):
            high = middle
        else:
            low = middle
    return (low + high) / 2.0
