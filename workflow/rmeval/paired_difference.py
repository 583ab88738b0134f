"""Two models scored on the same items: the difference of their means, its confidence interval and its test.

Both models scored the same items, so their errors are correlated and two overlapping intervals say nothing about
the difference: every method here is paired.

- **Interval** of a difference of means of items in a known range (accuracies, best-of-N results, reciprocal ranks):
  MOVER (the method of variance estimates recovery, Zou & Donner 2008) built on each model's Wilson score interval
  (`rmeval.intervals`) and the correlation of the two models' items; for 0/1 items this is Newcombe's (1998) method
  10, the hybrid score interval for paired proportions. Of a weighted sum of such differences on disjoint item sets
  (RewardBench sections: subsets weighted by the official counts; overall scores): MOVER for a linear combination of
  independent estimates (Zou & Donner 2008). Of a statistic with a bootstrap standard error (RewardBench 2 Ties):
  the normal interval.
- **Test** of "no difference": the paired randomization test, which swaps the two models' results within an item
  (Fisher 1935): the statistic is the (weighted) sum of the per-item differences, its null distribution the sign
  flips of the nonzero ones. For the 0/1 items of one subset this is exactly the exact McNemar test on the
  discordant pairs, as statsmodels `mcnemar(table, exact=True)` computes it; otherwise it is enumerated (up to
  `EXACT_ITEMS` nonzero differences), drawn (`MONTE_CARLO_DRAWS` seeded sign vectors, up to `DRAWN_ITEMS`; a drawn
  p-value is at least 1 / (1 + draws), 5e-5) or taken from its normal approximation (the statistic over the root of
  its permutation variance; a part known only by a bootstrap standard error adds that variance). Unlike inverting a MOVER interval, it never reports a p-value
  smaller than its null distribution allows (a MOVER interval's bounds stay inside the items' range however high
  the level, so its inversion can never reach 0 on a few items).

An `Interval` is an estimate with its bounds at any error rate alpha = 1 - confidence (parametrised by alpha, not
the confidence, so that levels near 1 stay precise): the comparisons report them at `rmeval.intervals.CONFIDENCE`,
the rank intervals use them at a Bonferroni-adjusted level (`rmeval.ranks`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rmeval.intervals import CONFIDENCE, wilson_bounds

Bounds = Callable[[float], tuple[float, float]]  # alpha (two-sided error rate, 1 - confidence) -> (low, high)


@lru_cache(maxsize=4096)
def z_of(alpha: float) -> float:
    """The normal quantile of a two-sided interval with error rate alpha (1.96 at 0.05); scipy.special's ufuncs
    here and below, not scipy.stats (its import and per-call overhead were most of `rmeval compare`'s time)."""
    from scipy.special import ndtri

    return float(-ndtri(alpha / 2.0))


@dataclass(frozen=True)
class Interval:
    """An estimate and its two-sided confidence interval at any error rate (`bounds(alpha)`)."""

    estimate: float
    bounds: Bounds

    def at(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        return self.with_alpha(1.0 - confidence)

    def with_alpha(self, alpha: float) -> tuple[float, float]:
        if not math.isfinite(self.estimate):
            return math.nan, math.nan
        return self.bounds(alpha)

    def scaled(self, factor: float) -> Interval:
        """The same in other units (a share as a percentage: factor 100)."""
        def bounds(alpha: float) -> tuple[float, float]:
            low, high = self.bounds(alpha)
            return low * factor, high * factor

        return Interval(self.estimate * factor, bounds)


def undefined() -> Interval:
    return Interval(math.nan, lambda alpha: (math.nan, math.nan))


@dataclass(frozen=True)
class Difference:
    """One comparison of model a with model b on one metric: their values on the paired items, the interval of
    a - b, the p-value of "no difference", the test's name and a note (what was left out, what is undefined)."""

    value_a: float
    value_b: float
    n: int
    interval: Interval  # of value_a - value_b
    p_value: float
    test: str
    note: str = ""
    # What a weighted sum's randomization test needs: the per-item differences a_i - b_i (their mean is the
    # difference), or for a statistic known by its bootstrap, the variance of the difference (`null_variance`).
    items: tuple[float, ...] = ()
    null_variance: float = math.nan

    @property
    def difference(self) -> float:
        return self.interval.estimate

    def scaled(self, factor: float) -> Difference:
        return Difference(self.value_a * factor, self.value_b * factor, self.n, self.interval.scaled(factor),
                          self.p_value, self.test, self.note, tuple(v * factor for v in self.items),
                          self.null_variance * factor * factor)

    def with_note(self, note: str) -> Difference:
        joined = "; ".join(text for text in (self.note, note) if text)
        return Difference(self.value_a, self.value_b, self.n, self.interval, self.p_value, self.test, joined,
                          self.items, self.null_variance)


def undefined_difference(n: int, test: str, note: str, value_a: float = math.nan,
                         value_b: float = math.nan) -> Difference:
    return Difference(value_a, value_b, n, undefined(), math.nan, test, note)


# ----------------------------------------------------------------------------- tests
def mcnemar_exact(a_only: int, b_only: int) -> float:
    """The exact McNemar p-value from the discordant counts (a right and b wrong; a wrong and b right): twice the
    binomial(a_only + b_only, 1/2) tail at the smaller count, at most 1 (statsmodels `mcnemar(exact=True)`)."""
    from scipy.special import bdtr

    total = a_only + b_only
    if total == 0:
        return 1.0
    return float(min(1.0, 2.0 * bdtr(min(a_only, b_only), total, 0.5)))


EXACT_ITEMS = 16  # up to 2^16 sign patterns: enumerated
DRAWN_ITEMS = 200  # up to this many nonzero differences: drawn; more: the normal approximation
MONTE_CARLO_DRAWS = 20_000


@dataclass(frozen=True)
class FlipTest:
    p_value: float
    how: str  # "exact", "Monte Carlo", "normal approximation" or "" (nothing to flip)


def sign_flip_test(contributions: Sequence[float], seed: int = 0, extra_variance: float = 0.0) -> FlipTest:
    """The paired randomization test of sum(contributions) = 0 against its sign flips (two-sided): exact over all
    patterns of up to EXACT_ITEMS nonzero terms, from MONTE_CARLO_DRAWS seeded draws ((1 + hits) / (1 + draws)) up
    to DRAWN_ITEMS, else (or with `extra_variance`, a further part's variance) its normal approximation."""
    values = np.asarray(contributions, dtype=np.float64)
    scale = float(np.abs(values).max()) if values.size else 0.0
    values = values[np.abs(values) > 1e-12 * max(scale, 1e-300)]
    observed = float(values.sum())
    tolerance = 1e-9 * max(1.0, float(np.abs(values).sum()))
    variance = float((values * values).sum()) + (extra_variance if math.isfinite(extra_variance) else 0.0)
    if variance <= 0.0:
        return FlipTest(1.0, "")
    if extra_variance > 0.0 or values.size > DRAWN_ITEMS:
        return FlipTest(wald_p(observed, math.sqrt(variance)), "normal approximation")
    if values.size <= EXACT_ITEMS:
        patterns = ((np.arange(2 ** values.size)[:, None] >> np.arange(values.size)) & 1) * 2 - 1
        sums = patterns @ values
        return FlipTest(float(np.mean(np.abs(sums) >= abs(observed) - tolerance)), "exact")
    # Terms of equal size flip as a binomial count: the sum of sign flips is that of binomials, one per magnitude
    # (the same distribution, drawn in a fraction of the time).
    magnitudes, counts = np.unique(np.round(np.abs(values), 12), return_counts=True)
    rng = np.random.default_rng(seed)
    heads = rng.binomial(counts, 0.5, size=(MONTE_CARLO_DRAWS, counts.size))
    sums = (2.0 * heads - counts) @ magnitudes
    hits = int((np.abs(sums) >= abs(observed) - tolerance).sum())
    return FlipTest((1 + hits) / (1 + MONTE_CARLO_DRAWS), "Monte Carlo")


def wald_p(estimate: float, standard_error: float) -> float:
    from scipy.special import ndtr

    if not (math.isfinite(estimate) and math.isfinite(standard_error)):
        return math.nan
    if estimate == 0.0:
        return 1.0
    if standard_error == 0.0:
        return 0.0
    return float(2.0 * ndtr(-abs(estimate) / standard_error))


# ----------------------------------------------------------------------------- bounded items
def _shares(values: Sequence[float], low: float, high: float) -> np.ndarray:
    """The items as shares of [low, high] (ValueError naming the first one outside it)."""
    array = np.asarray(values, dtype=np.float64)
    shares = (array - low) / (high - low)
    outside = np.flatnonzero(~((shares >= -1e-9) & (shares <= 1 + 1e-9)))
    if outside.size:
        raise ValueError(f"value {array[outside[0]]!r} is outside [{low}, {high}]")
    return np.clip(shares, 0.0, 1.0)


def wilson_mean(values: Sequence[float], low: float = 0.0, high: float = 1.0) -> Interval:
    """One model's mean of bounded items with its Wilson score interval at any confidence, in the items' units
    (`rmeval.intervals.bounded_mean_interval` at every level)."""
    if len(values) == 0:
        return undefined()
    if not high > low:
        raise ValueError(f"bounds [{low}, {high}] are empty")
    shares = _shares(values, low, high)
    n, span = shares.size, high - low
    mean = math.fsum(shares.tolist()) / n

    def bounds(alpha: float) -> tuple[float, float]:
        lower, upper = wilson_bounds(mean, n, z_of(alpha))
        return low + span * lower, low + span * upper

    return Interval(low + span * mean, bounds)


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson's r of the paired items; 0 when either is constant (Newcombe's phi rule: no information)."""
    da, db = a - a.mean(), b - b.mean()
    denominator = math.sqrt(float((da * da).sum()) * float((db * db).sum()))
    return float((da * db).sum()) / denominator if denominator > 0 else 0.0


def mover_bounds(a: Interval, b: Interval, correlation: float) -> Bounds:
    """The MOVER interval of a - b from the two estimates' intervals and their correlation (Zou & Donner 2008;
    Newcombe 1998 method 10 for paired proportions)."""
    def bounds(alpha: float) -> tuple[float, float]:
        a_low, a_high = a.bounds(alpha)
        b_low, b_high = b.bounds(alpha)
        da_low, da_high = a.estimate - a_low, a_high - a.estimate
        db_low, db_high = b.estimate - b_low, b_high - b.estimate
        difference = a.estimate - b.estimate
        lower = difference - math.sqrt(max(0.0, da_low ** 2 - 2 * correlation * da_low * db_high + db_high ** 2))
        upper = difference + math.sqrt(max(0.0, da_high ** 2 - 2 * correlation * da_high * db_low + db_low ** 2))
        return lower, upper

    return bounds


def paired_bounded(a_items: Sequence[float], b_items: Sequence[float], low: float = 0.0, high: float = 1.0,
                   seed: int = 0) -> Difference:
    """Model a against model b on the same items, each item's result in [low, high] (item i of both is the same
    item), in the items' units. 0/1 items (only `low` and `high`): Newcombe's interval and the exact McNemar test;
    other bounded items: the MOVER interval and the sign-flip test."""
    if len(a_items) != len(b_items):
        raise ValueError(f"paired items: {len(a_items)} against {len(b_items)}")
    n = len(a_items)
    if n == 0:
        return undefined_difference(0, "none", "no item was scored by both models")
    shares_a, shares_b = _shares(a_items, low, high), _shares(b_items, low, high)
    a, b = wilson_mean(a_items, low, high), wilson_mean(b_items, low, high)
    interval = Interval(a.estimate - b.estimate, mover_bounds(a, b, _correlation(shares_a, shares_b)))
    differences = shares_a - shares_b
    items = tuple(differences.tolist())
    if (((shares_a == 0.0) | (shares_a == 1.0)) & ((shares_b == 0.0) | (shares_b == 1.0))).all():
        a_only, b_only = int((differences > 0).sum()), int((differences < 0).sum())
        return Difference(a.estimate, b.estimate, n, interval, mcnemar_exact(a_only, b_only), "exact McNemar",
                          f"discordant {a_only}/{b_only}", items)
    flip = sign_flip_test(differences, seed)
    return Difference(a.estimate, b.estimate, n, interval, flip.p_value, _flip_name(flip), "", items)


def _flip_name(flip: FlipTest) -> str:
    return f"sign-flip ({flip.how})" if flip.how else "sign-flip"


# ----------------------------------------------------------------------------- sums of independent parts
def weighted_sum(parts: Sequence[Interval], weights: Sequence[float]) -> Interval:
    """sum(w_i theta_i) of independent estimates with the MOVER interval (Zou & Donner 2008): the estimate minus
    (plus) the root of the summed squares of each weighted part's distance to its lower (upper) bound."""
    if len(parts) != len(weights):
        raise ValueError(f"{len(parts)} parts against {len(weights)} weights")
    if not parts or any(not math.isfinite(part.estimate) for part in parts):
        return undefined()
    estimate = math.fsum(w * part.estimate for part, w in zip(parts, weights, strict=True))

    def bounds(alpha: float) -> tuple[float, float]:
        down = up = 0.0
        for part, weight in zip(parts, weights, strict=True):
            low, high = part.bounds(alpha)
            w_low, w_high = sorted((weight * low, weight * high))
            down += (weight * part.estimate - w_low) ** 2
            up += (w_high - weight * part.estimate) ** 2
        return estimate - math.sqrt(down), estimate + math.sqrt(up)

    return Interval(estimate, bounds)


def combined_difference(parts: Sequence[Difference], weights: Sequence[float], seed: int = 0) -> Difference:
    """A weighted sum of comparisons on disjoint item sets (a section from its subsets): the values, the MOVER
    interval of the summed difference and the sign-flip test of sum_s w_s mean(items_s) (a part without items, known
    by its bootstrap, adds w_s^2 times its variance to the normal approximation)."""
    interval = weighted_sum([part.interval for part in parts], weights)
    value_a = math.fsum(w * part.value_a for part, w in zip(parts, weights, strict=True))
    value_b = math.fsum(w * part.value_b for part, w in zip(parts, weights, strict=True))
    contributions = [w * item / len(part.items) for part, w in zip(parts, weights, strict=True) for item in part.items]
    extra = math.fsum(w * w * part.null_variance for part, w in zip(parts, weights, strict=True) if not part.items)
    if not math.isfinite(interval.estimate) or not math.isfinite(extra):
        return Difference(value_a, value_b, sum(part.n for part in parts), interval, math.nan, "sign-flip")
    flip = sign_flip_test(contributions, seed, extra)
    # items whose mean is the difference, as a part's are
    return Difference(value_a, value_b, sum(part.n for part in parts), interval, flip.p_value,
                      f"MOVER sum, {_flip_name(flip)}", "", tuple(c * len(contributions) for c in contributions))


def normal_interval(estimate: float, standard_error: float) -> Interval:
    """estimate +- z(confidence) * standard_error."""
    if not (math.isfinite(estimate) and math.isfinite(standard_error)):
        return undefined()
    return Interval(estimate, lambda alpha: (estimate - z_of(alpha) * standard_error,
                                             estimate + z_of(alpha) * standard_error))
