"""Confidence intervals for the range of group means R = max mu - min mu over a divisor: the scale-free gap
(R / pooled within-group SD) and NMGD (100 R / mean of group means). One function per bound, vectorised over
rows (data sets: one in `gaps.gap_analysis`, a block of label shuffles in `calibration`), so both report the
same numbers.

Lower bound, at 1 - alpha: simultaneous pairwise intervals (Games & Howell 1976; Tukey-Kramer with the pooled
variance where a pair of groups has no variance) bound every difference, so R >= max over pairs of (|d| - h). The
family is exact where the groups are equal, the one place where the lower bound alone can miss (the upper bound
always holds R = 0), and conservative elsewhere. Each pair's SE is widened by the divisor's relative SE (delta
method), so that dividing by an estimated divisor keeps the bound when the gap is large.

Upper bound, at 1 - alpha / 2: the largest r that a parametric-bootstrap test of R = r does not reject, the test
rejecting when the estimate would come out at most the observed one in no more than alpha / 2 of the draws
(inverting a test of the range). Under R = r the configuration of the group means is a nuisance; the test plays it
at the estimate restricted to range r (the highest group moved up and the lowest down, shares by their variances),
the other groups shrunk towards their precision-weighted mean by the method-of-moments factor sqrt(1 - (m - 1) / F)
(their observed spread less what noise adds, so that the selection of the extremes does not place them nearer to
the extremes than they are). Each of B draws (the group means' errors and the divisor's, seeded per model) gives an
estimate at most the observed one exactly for r up to a value in closed form (the bootstrap range is a maximum of
four lines in r), so the upper bound is the (1 - alpha / 2) quantile of those B values: no root search. A bootstrap
of the range is inconsistent where groups tie (Andrews 2000); here ties can only widen the upper bound (at equality
it cannot miss), and the two bounds' failures are disjoint events, so the interval misses alpha where the groups are
equal and about alpha / 2 + alpha / 2 when they are far apart, less in between (the lower bound's family is
conservative there). Coverage and width by simulation: perf/stats_coverage.py, CONTRIBUTING.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DRAWS = 2000  # parametric-bootstrap draws per model: the Monte Carlo error of a 97.5 % quantile's level is 0.35 %
_CHUNK = 64  # rows per block of the upper bound


@dataclass(frozen=True)
class Draws:
    """One model's standard normal draws, shared by every data set analysed under its seed."""

    means: np.ndarray  # (B, k): the group means' errors, in SEs
    divisor: np.ndarray  # (B,): the error of the log pooled variance, in its SEs


def make_draws(rng: np.random.Generator, groups: int, count: int = DRAWS) -> Draws:
    return Draws(rng.standard_normal((count, groups)), rng.standard_normal(count))


def log_variance_se(kurtosis: np.ndarray | float, df: float) -> np.ndarray | float:
    """Large-sample SE of ln s^2, robust to non-normal tails (Bonett 2006): se^2 = (kurtosis - (n - 3) / (n - 1)) / n
    with n = df + 1, floored at the normal value 2 / n."""
    n = df + 1
    return np.sqrt(np.maximum(kurtosis - (n - 3) / (n - 1), 2.0 / n) / n)


def _upper_index(count: int, alpha: float) -> int:
    """The order statistic used as the (1 - alpha) quantile of `count` draws (rounded up: conservative)."""
    return min(count - 1, int(np.ceil((1.0 - alpha) * (count - 1))))


def lower_bounds(means: np.ndarray, variances: np.ndarray, sizes: np.ndarray, alpha: float, pooled: np.ndarray,
                 relative_variance: np.ndarray) -> np.ndarray:
    """Per row, the lower 1 - alpha bound of the range of group means (raw units) from the simultaneous pairwise
    family: Games-Howell (Welch SEs and df) or, in `pooled` rows (`variances` then the pooled one repeated),
    Tukey-Kramer (df N - k). `relative_variance` (per row): the divisor's squared relative SE; each pair's SE^2
    becomes se^2 + d^2 relative_variance."""
    from rmeval.benchmarks.fairness.stats import posthoc

    k = sizes.size
    i, j = np.triu_indices(k, 1)
    parts = variances / sizes
    se2 = parts[:, i] + parts[:, j]
    with np.errstate(divide="ignore", invalid="ignore"):
        welch = se2**2 / (parts[:, i] ** 2 / (sizes[i] - 1) + parts[:, j] ** 2 / (sizes[j] - 1))
    df = np.where(pooled[:, None], sizes.sum() - k, welch)
    d = means[:, j] - means[:, i]
    half = posthoc.critical_q_many(k, alpha, df) / np.sqrt(2.0) * np.sqrt(se2 + d**2 * relative_variance[:, None])
    return np.maximum(0.0, np.abs(d) - half).max(axis=1)


def _extremes(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row the highest and the lowest group, distinct even where every mean is equal."""
    top, bottom = means.argmax(axis=1), means.argmin(axis=1)
    return top, np.where(bottom == top, (top + 1) % means.shape[1], bottom)


def _rest_configuration(means: np.ndarray, parts: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """The non-extreme groups shrunk towards their precision-weighted mean by sqrt(max(0, 1 - (m - 1) / F)), F their
    weighted sum of squares about it, m their number (those with a variance; a constant group stays)."""
    movable = rest & (parts > 0.0)
    with np.errstate(divide="ignore"):
        weights = np.where(movable, 1.0 / np.where(movable, parts, 1.0), 0.0)
    total = weights.sum(axis=1, keepdims=True)
    centre = (weights * means).sum(axis=1, keepdims=True) / np.where(total > 0, total, 1.0)
    spread = (weights * (means - centre) ** 2).sum(axis=1, keepdims=True)
    count = movable.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.sqrt(np.clip(1.0 - (count - 1) / spread, 0.0, 1.0))
    factor = np.where(count >= 2, np.where(spread > 0, factor, 0.0), 1.0)
    return np.where(movable, centre + factor * (means - centre), means)


def _line(numerator: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """numerator / slope, a slope of 0 reading as no limit (numerator >= 0) or as already exceeded."""
    safe = np.where(slope > 0, slope, 1.0)
    return np.where(slope > 0, numerator / safe, np.where(numerator >= 0, np.inf, -np.inf))


def upper_bounds(means: np.ndarray, variances: np.ndarray, sizes: np.ndarray, alpha: float, draws: Draws,
                 ratio: np.ndarray) -> np.ndarray:
    """Per row, the upper 1 - alpha bound of the range of group means (raw units, divided later by the estimated
    divisor) by inverting the parametric-bootstrap test described in the module docstring. `ratio` (rows x B): each
    draw's divisor over the estimated one (1 for the raw range): an estimate below the observed one means
    R* / divisor* <= R / divisor, i.e. R* <= R ratio. Rows go in blocks of _CHUNK (memory: a few _CHUNK x B)."""
    return np.concatenate([_upper_block(means[start:start + _CHUNK], variances[start:start + _CHUNK], sizes, alpha,
                                        draws, ratio[start:start + _CHUNK])
                           for start in range(0, means.shape[0], _CHUNK)])


def _upper_block(means: np.ndarray, variances: np.ndarray, sizes: np.ndarray, alpha: float, draws: Draws,
                 ratio: np.ndarray) -> np.ndarray:
    rows, k = means.shape
    parts = variances / sizes
    se = np.sqrt(parts)
    top, bottom = _extremes(means)
    index = np.arange(rows)
    rest = np.ones((rows, k), dtype=bool)
    rest[index, top] = rest[index, bottom] = False
    normal = draws.means  # B x k
    top_draw = means[index, top][:, None] + normal[:, top].T * se[index, top][:, None]  # rows x B
    bottom_draw = means[index, bottom][:, None] + normal[:, bottom].T * se[index, bottom][:, None]
    # the other groups' highest and lowest draw, one group at a time (rows x B, never rows x B x k); an extreme
    # placed at -inf / +inf drops out, so with k = 2 they stay -inf / +inf
    placed = _rest_configuration(means, parts, rest)
    high = np.full(top_draw.shape, -np.inf)
    low = np.full(top_draw.shape, np.inf)
    for group in range(k):
        draw = normal[:, group][None, :] * se[:, group:group + 1]
        np.maximum(high, np.where(rest[:, group], placed[:, group], -np.inf)[:, None] + draw, out=high)
        np.minimum(low, np.where(rest[:, group], placed[:, group], np.inf)[:, None] + draw, out=low)
    share_top = parts[index, top] / np.maximum(parts[index, top] + parts[index, bottom], np.finfo(float).tiny)
    observed = means[index, top] - means[index, bottom]
    limit = observed[:, None] * ratio
    # moving the extremes apart by x (top up by share_top x, bottom down by the rest) gives a bootstrap range of
    # max(high, top + share_top x) - min(low, bottom - share_bottom x): the maximum of four lines in x
    with np.errstate(invalid="ignore"):
        headroom = np.minimum.reduce([
            _line(limit - high + bottom_draw, np.broadcast_to((1.0 - share_top)[:, None], limit.shape)),
            _line(limit - top_draw + low, np.broadcast_to(share_top[:, None], limit.shape)),
            limit - top_draw + bottom_draw])
        headroom = np.where(high - low <= limit, headroom, -np.inf)
    cut = _upper_index(draws.means.shape[0], alpha)
    return observed + np.partition(np.maximum(headroom, 0.0), cut, axis=1)[:, cut]


def divisor_ratio(draws: Draws, log_variance_se: np.ndarray) -> np.ndarray:
    """Rows x B: the pooled SD of each draw over the estimated one, exp(z se / 2) with se the SE of ln s^2."""
    return np.exp(np.outer(log_variance_se / 2.0, draws.divisor))


def centre_ratio(means: np.ndarray, variances: np.ndarray, sizes: np.ndarray, draws: Draws) -> np.ndarray:
    """Rows x B: |mean of group means| of each draw over the estimated one (the draws' group-mean errors, so the
    divisor and the range move together)."""
    centre = means.mean(axis=1, keepdims=True)
    shifted = centre + draws.means @ np.sqrt(variances / sizes).T / sizes.size  # B x rows
    return np.abs(shifted.T) / np.abs(centre)


def _design(variances: np.ndarray, sizes: np.ndarray, pooled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the variances each group's SE uses: its own, or the pooled one in `pooled` rows; the pooled variance)."""
    pooled_variance = np.where(sizes > 1, variances * (sizes - 1), 0.0).sum(axis=1) / (sizes.sum() - sizes.size)
    return np.where(pooled[:, None], pooled_variance[:, None], variances), pooled_variance


def scale_free(means: np.ndarray, variances: np.ndarray, sizes: np.ndarray, kurtosis: np.ndarray, pooled: np.ndarray,
               alpha: float, draws: Draws) -> tuple[np.ndarray, np.ndarray]:
    """The scale-free gap's 1 - alpha interval per row (rows x k `means` and sample `variances`, NaN for a group of
    one). `pooled` rows give every group the pooled variance (Tukey-Kramer: where a pair of groups has no
    variance); `kurtosis`: the pooled within-group residuals' (Bonett's SE of ln s^2)."""
    variances, pooled_variance = _design(variances, sizes, pooled)
    sd = np.sqrt(pooled_variance)
    log_se = np.asarray(log_variance_se(kurtosis, sizes.sum() - sizes.size), dtype=np.float64)
    low = lower_bounds(means, variances, sizes, alpha, pooled, log_se**2 / 4.0) / sd
    high = upper_bounds(means, variances, sizes, alpha / 2, draws, divisor_ratio(draws, log_se)) / sd
    return low, high


@dataclass(frozen=True)
class NmgdIntervals:
    low: np.ndarray  # NMGD's (%), per row; -inf to inf where `unstable`
    high: np.ndarray
    unstable: np.ndarray  # the 1 - alpha t interval of the mean of group means holds 0


def nmgd(means: np.ndarray, variances: np.ndarray, sizes: np.ndarray, pooled: np.ndarray, alpha: float,
         draws: Draws) -> NmgdIntervals:
    """NMGD's 1 - alpha interval per row (arguments as `scale_free`'s); unbounded where the t interval of the mean of
    group means (Welch-Satterthwaite df; N - k when pooled) holds 0, since NMGD's size and sign are then arbitrary."""
    from scipy import stats

    k = sizes.size
    variances, _ = _design(variances, sizes, pooled)
    centre = means.mean(axis=1)
    parts = variances / sizes
    total = parts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        welch = np.where(total > 0, total**2 / (parts**2 / (sizes - 1)).sum(axis=1), 1.0)
        half = stats.t.ppf(1.0 - alpha / 2, np.where(pooled, sizes.sum() - k, welch)) * np.sqrt(total) / k
        unstable = np.abs(centre) <= half
        scale = 100.0 / np.abs(centre)
        low = lower_bounds(means, variances, sizes, alpha, pooled, total / k**2 / centre**2) * scale
        high = upper_bounds(means, variances, sizes, alpha / 2, draws,
                            centre_ratio(means, variances, sizes, draws)) * scale
    negative = centre < 0  # NMGD keeps the mean's sign (0.0 - x: a bound of 0 stays 0, not -0)
    return NmgdIntervals(np.where(unstable, -np.inf, np.where(negative, 0.0 - high, low)),
                         np.where(unstable, np.inf, np.where(negative, 0.0 - low, high)), unstable)
