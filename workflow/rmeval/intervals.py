"""Confidence intervals for the mean of per-item scores that lie in a known range (accuracies, reciprocal ranks,
best-of-N shares).

The percentile bootstrap of such a mean collapses to a zero-width interval when every item scores the same bound
(all correct, all wrong), and undercovers near the bounds: at a true accuracy of 0.99 on 100 items it covered only
62 % (issue 33). Instead: the Wilson score interval (Wilson 1927; recommended by Brown, Cai & DasGupta 2001) of the
mean rescaled to [0, 1]. For binary items it is the textbook Wilson interval (statsmodels
`proportion_confint(method="wilson")`). For items anywhere in [0, 1] with mean p, Var(X) <= p (1 - p), with
equality only for binary items, so the binomial-variance interval is conservative there (tests/test_intervals.py
measures its coverage by simulation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# The level of every confidence interval rmeval reports, in every benchmark: its one home. Tables, captions and the
# reproduction verdicts say "95 %"; a function that draws an interval takes `confidence` (default: this).
CONFIDENCE = 0.95


def percentile_bounds(confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The percentiles of an equal-tailed interval at `confidence`, for np.percentile: (2.5, 97.5) at 95 %."""
    tail = 50.0 * (1.0 - confidence)
    return tail, 100.0 - tail


def wilson_interval(proportion: float, n: int, level: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of a proportion (or a [0, 1]-bounded mean) over n items; (nan, nan) for n = 0.

    The interval always holds the estimate (at 0 and 1 it reaches the bound exactly)."""
    from scipy.stats import norm

    return wilson_bounds(proportion, n, float(norm.isf((1.0 - level) / 2)))


def wilson_bounds(proportion: float, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval at the normal quantile z (`wilson_interval` at the level whose z it is): precise
    at levels too close to 1 for a float (a p-value's inversion, rmeval.paired_difference)."""
    if n <= 0:
        return math.nan, math.nan
    if not 0.0 <= proportion <= 1.0:
        raise ValueError(f"proportion {proportion!r} is outside [0, 1]")
    z2n = z * z / n
    centre = (proportion + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(proportion * (1 - proportion) / n + z2n / (4 * n))
    # Rounding can leave the bound a hair inside the estimate at 0 or 1.
    return min(centre - half, proportion), max(centre + half, proportion)


def bounded_mean_interval(values: Sequence[float], low: float, high: float,
                          level: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson interval of the mean of `values`, each in [low, high], in the values' own units."""
    if not high > low:
        raise ValueError(f"bounds [{low}, {high}] are empty")
    n, span = len(values), high - low
    if n == 0:
        return math.nan, math.nan
    outside = next((value for value in values if not low - 1e-9 * span <= value <= high + 1e-9 * span), None)
    if outside is not None:
        raise ValueError(f"value {outside!r} is outside [{low}, {high}]")
    mean = math.fsum(values) / n
    # Clip: the mean of in-range values is in range up to rounding.
    rescaled = min(1.0, max(0.0, (mean - low) / span))
    lower, upper = wilson_interval(rescaled, n, level)
    return low + span * lower, low + span * upper
