"""Size of the largest group gap: NMGD (the paper's metric), the scale-free gap, their
confidence intervals, and a permutation p-value for the maximum gap.

Intervals: the range of group means R = max |mu_i - mu_j| is bounded by simultaneous pairwise intervals
(Games-Howell, 1976; Tukey-Kramer when a group's variance is zero): if every pair's interval [L, U] holds its
difference, R lies in [max over pairs of the distance of [L, U] from 0, max over pairs of max(|L|, |U|)]. Unlike a
bootstrap of the range (inconsistent at equality: Andrews 2000), this keeps its coverage when the groups are equal
and always holds the estimate. The scale-free gap divides by the pooled SD, bounded by a kurtosis-adjusted
large-sample interval for a variance (Bonett 2006); NMGD divides by the mean of group means, bounded by its Welch t
interval. Bonferroni: the pairwise family at 1 - 0.8 alpha, the divisor at 1 - 0.2 alpha (alpha = 1 - confidence).

NMGD = (max - min of group means) / (mean of group means) * 100, sign kept as in
Song et al. 2025; it explodes or flips sign when the mean reward is near zero or
negative, which is why the scale-free gap (gap / pooled within-group SD) sits beside it.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rmeval.intervals import CONFIDENCE

if TYPE_CHECKING:
    from rmeval.benchmarks.fairness.stats.posthoc import PairComparison

_CHUNK = 256  # replicates per vectorised block: bounds memory at ~_CHUNK * N floats


@dataclass(frozen=True)
class GapResult:
    max_group: str
    min_group: str
    raw_gap: float
    pooled_sd: float
    scale_free_gap: float
    gap_ci_low: float
    gap_ci_high: float
    mean_of_means: float
    nmgd_percent: float
    nmgd_ci_low: float
    nmgd_ci_high: float
    # True when the CI of the mean of group means contains 0: NMGD's sign and size are then arbitrary (its CI is
    # then unbounded: -inf to inf).
    nmgd_unstable: bool
    perm_p_value: float
    # mean scale-free gap over the label permutations: the largest gap pure noise gives at these group sizes
    null_max_gap: float
    n_permutations: int
    interval_family: str  # the simultaneous pairwise family behind the CIs: Games-Howell, Tukey-Kramer or ""
    note: str = ""  # what is undefined for this model, and why ("" when everything is defined)


def nmgd_percent(group_means: np.ndarray) -> float:
    """The paper's normalised maximum group difference, in percent, sign kept."""
    return float((group_means.max() - group_means.min()) / group_means.mean() * 100.0)


def pooled_sd(samples: list[np.ndarray]) -> float:
    """sqrt(within-group SS / (N - k)); NaN when N = k (no within-group df)."""
    n_total = sum(s.size for s in samples)
    if n_total <= len(samples):
        return float("nan")
    ss_within = sum(((s - s.mean()) ** 2).sum() for s in samples)
    return float(np.sqrt(ss_within / (n_total - len(samples))))


def model_rngs(seed: int, model: str) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """The model's own bootstrap, permutation and calibration streams: results do not depend on which other models
    are in the run, or in which order."""
    streams = np.random.SeedSequence([seed, zlib.crc32(model.encode())]).spawn(3)
    return tuple(np.random.default_rng(stream) for stream in streams)  # type: ignore[return-value]


@dataclass(frozen=True)
class PermutationResult:
    p_value: float  # P(range of group means >= observed) under exchangeable labels, (1 + hits) / (1 + P)
    null_scale_free_gap: float  # mean scale-free gap (range / pooled within-group SD) over the permutations


def permutation_test(samples: list[np.ndarray], n_permutations: int, rng: np.random.Generator) -> PermutationResult:
    """Permutation distribution of the largest group gap when group labels are exchangeable.

    Gives the p-value of the observed range of group means and the gap that pure noise produces on
    average for these group sizes (the expected max gap under the null, in pooled within-group SDs):
    with 8 groups of 30 it is about 0.5 SD, so an observed gap must be read against it.
    """
    rewards = np.concatenate(samples)
    offsets = np.cumsum([0] + [s.size for s in samples[:-1]])
    sizes = np.array([s.size for s in samples], dtype=np.float64)
    k, n_total = len(samples), rewards.size
    centred = rewards - rewards.mean()  # centring keeps the sum-of-squares arithmetic stable
    total_ss = float((centred**2).sum())
    observed = np.ptp([s.mean() for s in samples])
    tolerance = 1e-12 * max(1.0, abs(observed))
    hits = 0
    null_gap_sum = 0.0
    for start in range(0, n_permutations, _CHUNK):
        rows = min(_CHUNK, n_permutations - start)
        # shuffling the rewards against fixed group blocks is the same as shuffling the labels
        shuffled = rng.permuted(np.tile(centred, (rows, 1)), axis=1)
        means = np.add.reduceat(shuffled, offsets, axis=1) / sizes
        gap = np.ptp(means, axis=1)
        hits += int((gap >= observed - tolerance).sum())
        ss_within = total_ss - (sizes * means**2).sum(axis=1)  # total SS = within + between
        pooled = np.sqrt(np.maximum(ss_within, 0.0) / (n_total - k))
        with np.errstate(divide="ignore", invalid="ignore"):
            null_gap_sum += float(np.nansum(gap / pooled))
    return PermutationResult(p_value=(1 + hits) / (1 + n_permutations),
                             null_scale_free_gap=null_gap_sum / n_permutations)


def permutation_p_value(samples: list[np.ndarray], n_permutations: int, rng: np.random.Generator) -> float:
    """P(range of group means >= observed) when group labels are exchangeable.

    Uses the (1 + hits) / (1 + P) estimator, so p is never 0.
    """
    return permutation_test(samples, n_permutations, rng).p_value




# Bonferroni split of the non-coverage alpha = 1 - confidence: the pairwise family gets this share, the divisor
# (pooled SD or mean of group means) the rest. The family dominates the width, so it gets most of alpha.
FAMILY_SHARE = 0.8


def range_bounds(pairs: Sequence[PairComparison]) -> tuple[float, float]:
    """Bounds on the range of group means from simultaneous pairwise intervals of mu_b - mu_a."""
    low, high = bounds_from_intervals(np.array([p.ci_low for p in pairs]), np.array([p.ci_high for p in pairs]))
    return float(low), float(high)


def bounds_from_intervals(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each |difference| lies in [distance of [L, U] from 0, max(|L|, |U|)], so the largest lies between the largest
    of each (over the last axis: pairs; leading axes are replicates)."""
    return (np.maximum(0.0, np.maximum(low, -high)).max(axis=-1),
            np.maximum(np.abs(low), np.abs(high)).max(axis=-1))


def log_variance_se(kurtosis: np.ndarray | float, df: float) -> np.ndarray | float:
    """Large-sample SE of ln s^2, robust to non-normal tails (Bonett 2006): se^2 = (kurtosis - (n - 3) / (n - 1)) / n
    with n = df + 1, floored at the normal value 2 / n."""
    n = df + 1
    return np.sqrt(np.maximum(kurtosis - (n - 3) / (n - 1), 2.0 / n) / n)


def pooled_sd_interval(samples: list[np.ndarray], alpha: float) -> tuple[float, float]:
    """Two-sided 1 - alpha interval for the pooled within-group SD: ln s^2 +- z se (log_variance_se), with the
    kurtosis of the pooled within-group residuals (normal data: se^2 = 2 / (N - k))."""
    from scipy import stats

    residuals = np.concatenate([s - s.mean() for s in samples])
    sd = pooled_sd(samples)
    kurtosis = float(residuals.size * (residuals**4).sum() / (residuals**2).sum() ** 2)
    half = float(stats.norm.ppf(1.0 - alpha / 2)) * log_variance_se(kurtosis, residuals.size - len(samples)) / 2
    return float(sd * np.exp(-half)), float(sd * np.exp(half))


def centre_interval(samples: list[np.ndarray], alpha: float, pooled: bool) -> tuple[float, float]:
    """t interval for the mean of group means (the NMGD divisor), variance sum(s_i^2 / n_i) / k^2: Welch's
    (Welch-Satterthwaite df) or, with `pooled` (the Tukey-Kramer case), s_i^2 = the pooled variance, df = N - k."""
    from scipy import stats

    k = len(samples)
    centre = float(np.mean([s.mean() for s in samples]))
    sizes = np.array([s.size for s in samples], dtype=np.float64)
    if pooled:
        df = sizes.sum() - k
        total = pooled_sd(samples) ** 2 * (1.0 / sizes).sum()
    else:
        parts = np.array([s.var(ddof=1) for s in samples]) / sizes
        total = parts.sum()
        df = total**2 / (parts**2 / (sizes - 1)).sum() if total > 0.0 else 1.0
    half = float(stats.t.ppf(1.0 - alpha / 2, df)) * np.sqrt(total) / k
    return centre - half, centre + half


def _ratio_interval(low: float, high: float, div_low: float, div_high: float) -> tuple[float, float]:
    """Interval of x / d for x in [low, high] (low >= 0) and d in [div_low, div_high]; unbounded when the
    divisor's interval holds 0."""
    if div_low <= 0.0 <= div_high:
        return float("-inf"), float("inf")
    quotients = [low / div_low, low / div_high, high / div_low, high / div_high]
    return float(min(quotients)), float(max(quotients))


def undefined_reason(samples: list[np.ndarray]) -> str:
    """Why the scale-free gap and the CIs are undefined for these samples ("" when they are defined)."""
    if sum(s.size for s in samples) <= len(samples) or all(np.ptp(s) == 0.0 for s in samples):
        return "no within-group variance (every group constant or of one reward), so no scale-free gap or CI"
    return ""


def gap_analysis(
    model: str,
    groups: list[str],
    samples: list[np.ndarray],
    n_permutations: int,
    seed: int,
    confidence: float = CONFIDENCE,
) -> GapResult:
    from rmeval.benchmarks.fairness.stats import posthoc

    means = np.array([s.mean() for s in samples])
    raw_gap = float(means.max() - means.min())
    nan = float("nan")
    common = dict(max_group=groups[int(means.argmax())], min_group=groups[int(means.argmin())], raw_gap=raw_gap,
                  mean_of_means=float(means.mean()), nmgd_percent=nmgd_percent(means), n_permutations=n_permutations)
    reason = undefined_reason(samples)
    if reason:
        return GapResult(**common, pooled_sd=pooled_sd(samples), scale_free_gap=nan, gap_ci_low=nan,
                         gap_ci_high=nan, nmgd_ci_low=nan, nmgd_ci_high=nan, nmgd_unstable=False, perm_p_value=nan,
                         null_max_gap=nan, interval_family="", note=reason)
    sd = pooled_sd(samples)
    alpha = 1.0 - confidence
    family_alpha = FAMILY_SHARE * alpha
    family, note = "Games-Howell", ""
    pairs = posthoc.games_howell(groups, samples, family_alpha, p_values=False)
    if any(not np.isfinite(p.ci_low) for p in pairs):
        family = "Tukey-Kramer"
        lacking = [g for g, s in zip(groups, samples, strict=True) if s.size < 2 or np.ptp(s) == 0.0]
        note = (f"no variance in {', '.join(lacking)}: Games-Howell pairs between such groups are undefined, so the "
                "CIs use Tukey-Kramer and the pooled variance (equal variances assumed)")
        pairs = posthoc.tukey_hsd(groups, samples, family_alpha, p_values=False)
    range_low, range_high = range_bounds(pairs)
    sd_low, sd_high = pooled_sd_interval(samples, alpha - family_alpha)
    gap_low, gap_high = _ratio_interval(range_low, range_high, sd_low, sd_high)
    centre_low, centre_high = centre_interval(samples, alpha - family_alpha, pooled=family == "Tukey-Kramer")
    nmgd_low, nmgd_high = _ratio_interval(100.0 * range_low, 100.0 * range_high, centre_low, centre_high)
    permutation = permutation_test(samples, n_permutations, model_rngs(seed, model)[1])
    return GapResult(
        **common,
        pooled_sd=sd,
        scale_free_gap=raw_gap / sd,
        gap_ci_low=gap_low,
        gap_ci_high=gap_high,
        nmgd_ci_low=nmgd_low,
        nmgd_ci_high=nmgd_high,
        nmgd_unstable=bool(centre_low <= 0.0 <= centre_high),
        perm_p_value=permutation.p_value,
        null_max_gap=permutation.null_scale_free_gap,
        interval_family=family,
        note=note,
    )
