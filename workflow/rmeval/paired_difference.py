"""Two models scored on the same items: the difference of their means, its confidence interval and its test.

Both models scored the same items, so their errors are correlated and two overlapping intervals say nothing about
the difference: every method here is paired, and every interval is the inversion of the test reported beside it, so
that a 95 % interval leaves out 0 exactly when p < 0.05.

- **Items in a known range** (accuracies, best-of-N results, reciprocal ranks), rescaled to [0, 1]: Tango's (1998)
  score interval for a difference of paired proportions and its score test at 0. For 0/1 items Tango's statistic at
  a difference of 0 is McNemar's, (b - c) / sqrt(b + c) on the discordant counts (statsmodels
  `mcnemar(exact=False, correction=False)`), so the test is McNemar's asymptotic test, which Fagerland, Lydersen &
  Laake (2013, BMC Med Res Methodol 13:91) prefer to the exact conditional one (too conservative); Tango's interval
  is among those their 2014 review (Stat Med 33:2850) recommends. It keeps its coverage where two models almost
  never disagree: with no discordant item it is not (0, 0) but about +-z^2 / (n + z^2). Newcombe's method 10 (MOVER
  on Wilson intervals), used before, covered 63 % at one expected disagreement in 100 items (issue 45). Items
  strictly between the bounds (best-of-N ties, reciprocal ranks) enter as their discordant masses, b = sum of the
  positive differences and c = sum of the negative ones: each item's difference d is treated as the -1 / 0 / +1
  difference of the same mean (+-1 with probability |d|), the most dispersed it could be (as the Wilson interval of
  `rmeval.intervals` treats a bounded mean as a proportion).
- **A weighted sum of such differences on disjoint item sets** (RewardBench sections from their subsets weighted by
  the official counts; overall scores): MOVER for a linear combination of independent estimates (Zou & Donner 2008)
  on the parts' intervals, and the p-value that inverts it: the error rate at which its interval first reaches 0.
- **A statistic with a bootstrap standard error** (RewardBench 2 Ties): the normal interval and the Wald test.

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

    @property
    def difference(self) -> float:
        return self.interval.estimate

    def scaled(self, factor: float) -> Difference:
        return Difference(self.value_a * factor, self.value_b * factor, self.n, self.interval.scaled(factor),
                          self.p_value, self.test, self.note)

    def with_note(self, note: str) -> Difference:
        joined = "; ".join(text for text in (self.note, note) if text)
        return Difference(self.value_a, self.value_b, self.n, self.interval, self.p_value, self.test, joined)


def undefined_difference(n: int, test: str, note: str, value_a: float = math.nan,
                         value_b: float = math.nan) -> Difference:
    return Difference(value_a, value_b, n, undefined(), math.nan, test, note)


# ----------------------------------------------------------------------------- root finding
def _root(function: Callable[[float], float], low: float, high: float, f_low: float, f_high: float,
          tolerance: float = 1e-11) -> float:
    """A root of `function` between low and high, where f_low and f_high have opposite signs: Brent's (1973)
    method (inverse quadratic interpolation, secant or bisection; the root stays bracketed). scipy.optimize's
    brentq would do the same, but its import alone costs 0.3 s a run."""
    a, b, fa, fb = low, high, f_low, f_high
    if abs(fa) < abs(fb):
        a, b, fa, fb = b, a, fb, fa
    c, fc, d, bisected = a, fa, a, True
    for _ in range(200):
        if fb == 0.0 or abs(b - a) <= tolerance * max(1.0, abs(b)):
            return b
        if fa != fc and fb != fc:
            step = (a * fb * fc / ((fa - fb) * (fa - fc)) + b * fa * fc / ((fb - fa) * (fb - fc))
                    + c * fa * fb / ((fc - fa) * (fc - fb)))
        else:
            step = b - fb * (b - a) / (fb - fa)
        edge = (3.0 * a + b) / 4.0
        if (not min(edge, b) < step < max(edge, b) or (bisected and abs(step - b) >= abs(b - c) / 2.0)
                or (not bisected and abs(step - b) >= abs(c - d) / 2.0)):
            step, bisected = (a + b) / 2.0, True
        else:
            bisected = False
        f_step = function(step)
        d, c, fc = c, b, fb
        if (fa < 0.0) != (f_step < 0.0):
            b, fb = step, f_step
        else:
            a, fa = step, f_step
        if abs(fa) < abs(fb):
            a, b, fa, fb = b, a, fb, fa
    return b


# ----------------------------------------------------------------------------- bounded items
def wald_p(estimate: float, standard_error: float) -> float:
    from scipy.special import ndtr

    if not (math.isfinite(estimate) and math.isfinite(standard_error)):
        return math.nan
    if estimate == 0.0:
        return 1.0
    if standard_error == 0.0:
        return 0.0
    return float(2.0 * ndtr(-abs(estimate) / standard_error))


def tango_excess(delta: float, ahead_a: float, ahead_b: float, n: int, z: float) -> float:
    """Tango's (1998) score statistic at a difference `delta`, as numerator - z * its standard error (positive
    exactly when the statistic exceeds z; finite where the standard error vanishes). ahead_a: the discordant count
    (or mass) with a ahead of b; ahead_b: the reverse. The nuisance p(a behind) is its maximum-likelihood value under
    `delta` (Tango's closed form, the positive root of 2n q^2 + B q + C = 0)."""
    quadratic = 2.0 * n
    linear = -(ahead_a + ahead_b) + (2.0 * n - ahead_a + ahead_b) * delta
    constant = -ahead_b * delta * (1.0 - delta)
    behind = (math.sqrt(max(0.0, linear * linear - 4.0 * quadratic * constant)) - linear) / (2.0 * quadratic)
    variance = n * (2.0 * behind + delta * (1.0 - delta))
    return (ahead_a - ahead_b - n * delta) - z * math.sqrt(max(0.0, variance))


def tango_statistic(ahead_a: float, ahead_b: float, n: int) -> float:
    """Tango's statistic at a difference of 0: McNemar's (b - c) / sqrt(b + c); 0 without a discordant item."""
    total = ahead_a + ahead_b
    return (ahead_a - ahead_b) / math.sqrt(total) if total > 0 else 0.0


def _tango_lower(ahead_a: float, ahead_b: float, n: int, z: float) -> float:
    """The lower bound: the difference below the estimate where the statistic reaches z. The bracket is split at 0
    by the test at 0 itself, so that the bound leaves out 0 exactly when the test rejects at z. The root is sought
    in s = sqrt(estimate - difference), in which the statistic is smooth even where its standard error vanishes at
    the estimate (no discordant item: it grows as the root of the distance there)."""
    estimate = (ahead_a - ahead_b) / n
    if estimate <= -1.0 or z <= 0.0:
        return estimate
    low, high = 0.0, math.sqrt(estimate + 1.0)  # in s; s = 0 is the estimate, the top is -1
    if estimate > 0.0:
        if abs(tango_statistic(ahead_a, ahead_b, n)) > z:
            high = math.sqrt(estimate)
        else:
            low = math.sqrt(estimate)

    def excess(s: float) -> float:  # negative while the difference is inside, positive beyond the bound
        return tango_excess(estimate - s * s, ahead_a, ahead_b, n, z)

    # at the estimate the statistic is 0, below z, even where its standard error vanishes
    f_low = excess(low) if low > 0.0 else -1.0
    f_high = excess(high)
    if f_low >= 0.0:  # the statistic equals z at 0: 0 is the bound
        return estimate - low * low
    if f_high <= 0.0:  # at the split point 0, the edge of rounding; or the statistic stays below z down to -1
        return estimate - high * high
    root = _root(excess, low, high, f_low, f_high)
    return estimate - root * root


def tango_interval(ahead_a: float, ahead_b: float, n: int) -> Interval:
    """Tango's score interval of the difference of two paired proportions, (ahead_a - ahead_b) / n, at any alpha;
    the upper bound is the lower bound of the reversed comparison, negated (the statistic is antisymmetric)."""
    def bounds(alpha: float) -> tuple[float, float]:
        z = z_of(alpha)
        return _tango_lower(ahead_a, ahead_b, n, z), -_tango_lower(ahead_b, ahead_a, n, z)

    return Interval((ahead_a - ahead_b) / n, bounds)


def score_p(ahead_a: float, ahead_b: float, n: int) -> float:
    """The two-sided p-value of Tango's test at 0 (McNemar's asymptotic test for 0/1 items)."""
    from scipy.special import ndtr

    return float(min(1.0, 2.0 * ndtr(-abs(tango_statistic(ahead_a, ahead_b, n)))))


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


MCNEMAR = "McNemar (score)"
TANGO_BOUNDED = "Tango score (bounded items)"


def paired_bounded(a_items: Sequence[float], b_items: Sequence[float], low: float = 0.0,
                   high: float = 1.0) -> Difference:
    """Model a against model b on the same items, each item's result in [low, high] (item i of both is the same
    item), in the items' units: Tango's score interval and its test at 0 on the discordant counts (0/1 items:
    McNemar's asymptotic test) or masses (items between the bounds)."""
    if len(a_items) != len(b_items):
        raise ValueError(f"paired items: {len(a_items)} against {len(b_items)}")
    n = len(a_items)
    if n == 0:
        return undefined_difference(0, "none", "no item was scored by both models")
    shares_a, shares_b = _shares(a_items, low, high), _shares(b_items, low, high)
    a, b = wilson_mean(a_items, low, high), wilson_mean(b_items, low, high)
    differences = shares_a - shares_b
    ahead_a = math.fsum(differences[differences > 0].tolist())
    ahead_b = -math.fsum(differences[differences < 0].tolist())
    # in the items' units, with the values' own difference as its estimate (the shares' differs by rounding only)
    shares = tango_interval(ahead_a, ahead_b, n).scaled(high - low)
    interval = Interval(a.estimate - b.estimate, shares.bounds)
    p_value = score_p(ahead_a, ahead_b, n)
    if (((shares_a == 0.0) | (shares_a == 1.0)) & ((shares_b == 0.0) | (shares_b == 1.0))).all():
        return Difference(a.estimate, b.estimate, n, interval, p_value, MCNEMAR,
                          f"discordant {int(round(ahead_a))}/{int(round(ahead_b))}")
    return Difference(a.estimate, b.estimate, n, interval, p_value, TANGO_BOUNDED,
                      f"discordant mass {ahead_a:.4g}/{ahead_b:.4g}")


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


MOVER_SUM = "MOVER sum (inverted)"
Z_CEILING = 10.0  # the inverted p-value's floor, 2 * Phi(-10) = 1.5e-23: "smaller than this"


def inverted_p(interval: Interval) -> float:
    """The p-value whose test the interval inverts: the error rate at which the interval's bound nearest 0 reaches
    it (1 at an estimate of 0; at most 1.5e-23). The bounds narrow as alpha grows, so this is exactly the alpha
    above which the interval leaves out 0 (to 1e-12 in the normal quantile)."""
    from scipy.special import ndtr

    estimate = interval.estimate
    if not math.isfinite(estimate):
        return math.nan
    if estimate == 0.0:
        return 1.0
    side = 0 if estimate > 0 else 1

    def nearest(z: float) -> float:  # the bound toward 0, signed so that it is positive while 0 is left out
        bound = interval.bounds(float(2.0 * ndtr(-z)))[side]
        return bound if estimate > 0 else -bound

    top = nearest(Z_CEILING)
    if top > 0.0:
        return float(2.0 * ndtr(-Z_CEILING))
    z = _root(nearest, 0.0, Z_CEILING, abs(estimate), top) if top < 0.0 else Z_CEILING
    return float(min(1.0, 2.0 * ndtr(-z)))


def combined_difference(parts: Sequence[Difference], weights: Sequence[float]) -> Difference:
    """A weighted sum of comparisons on disjoint item sets (a section from its subsets): the values, the MOVER
    interval of the summed difference and the p-value that inverts it."""
    interval = weighted_sum([part.interval for part in parts], weights)
    value_a = math.fsum(w * part.value_a for part, w in zip(parts, weights, strict=True))
    value_b = math.fsum(w * part.value_b for part, w in zip(parts, weights, strict=True))
    return Difference(value_a, value_b, sum(part.n for part in parts), interval, inverted_p(interval),
                      MOVER_SUM)


def normal_interval(estimate: float, standard_error: float) -> Interval:
    """estimate +- z(confidence) * standard_error."""
    if not (math.isfinite(estimate) and math.isfinite(standard_error)):
        return undefined()
    return Interval(estimate, lambda alpha: (estimate - z_of(alpha) * standard_error,
                                             estimate + z_of(alpha) * standard_error))
