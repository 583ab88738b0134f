"""Size of the largest group gap: NMGD (the paper's metric), the scale-free gap, their
confidence intervals, and a permutation p-value for the maximum gap.

Intervals (`gap_intervals`): the lower bound from the simultaneous pairwise family at the full level (Games-Howell
1976; Tukey-Kramer where a pair of groups has no variance), exact where the groups are equal, where a bootstrap of
the range fails (Andrews 2000); the upper bound by inverting a parametric-bootstrap test of the range at the
restricted estimate of the group means. Both keep the divisor's uncertainty (the pooled SD's, kurtosis-adjusted
after Bonett 2006; the mean of group means') jointly, and the interval always holds its estimate.

NMGD = (max - min of group means) / (mean of group means) * 100, sign kept as in
Song et al. 2025; it explodes or flips sign when the mean reward is near zero or
negative, which is why the scale-free gap (gap / pooled within-group SD) sits beside it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from rmeval.benchmarks.fairness.stats import gap_intervals
from rmeval.intervals import CONFIDENCE

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
    # the CIs' construction: the lower bound's simultaneous pairwise family (Games-Howell, or Tukey-Kramer where a pair
    # of groups has no variance) + the upper bound's test inversion (stats.gap_intervals); "" when undefined
    interval_family: str
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


def model_rngs(seed: int, model: str) -> tuple[np.random.Generator, ...]:
    """The model's own bootstrap, permutation, calibration and interval streams: results do not depend on which other
    models are in the run, or in which order (a stream's draws do not depend on how many streams are spawned)."""
    streams = np.random.SeedSequence([seed, zlib.crc32(model.encode())]).spawn(4)
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




def residual_kurtosis(samples: list[np.ndarray]) -> float:
    """Kurtosis of the pooled within-group residuals, N sum r^4 / (sum r^2)^2 (3 for normal data)."""
    residuals = np.concatenate([s - s.mean() for s in samples])
    return float(residuals.size * (residuals**4).sum() / (residuals**2).sum() ** 2)


def interval_draws(seed: int, model: str, groups: int) -> gap_intervals.Draws:
    """The model's parametric-bootstrap draws for its CIs (its fourth stream): the same for every data set analysed
    under this seed and model name, in gap_analysis and in the calibration's replicates alike."""
    return gap_intervals.make_draws(model_rngs(seed, model)[3], groups)


def undefined_reason(samples: list[np.ndarray]) -> str:
    """Why the scale-free gap and the CIs are undefined for these samples ("" when they are defined)."""
    if sum(s.size for s in samples) <= len(samples) or all(np.ptp(s) == 0.0 for s in samples):
        return "no within-group variance (every group constant or of one reward), so no scale-free gap or CI"
    return ""


@dataclass(frozen=True)
class GapIntervals:
    """A model's scale-free gap and NMGD intervals (Table 7's), and the pairwise family behind them."""

    gap_low: float
    gap_high: float
    nmgd_low: float
    nmgd_high: float
    nmgd_unstable: bool
    family: str  # Games-Howell, or Tukey-Kramer where groups lack variance
    note: str


def intervals(model: str, groups: list[str], samples: list[np.ndarray], seed: int,
              confidence: float = CONFIDENCE) -> GapIntervals:
    """Table 7's gap and NMGD intervals of one model's groups (defined samples: `undefined_reason` is ""), from the
    model's own draws: the same numbers wherever they are asked for (Table 7, the leaderboard of `rmeval compare`)."""
    family, note = "Games-Howell", ""
    lacking = [g for g, s in zip(groups, samples, strict=True) if s.size < 2 or np.ptp(s) == 0.0]
    if any(s.size < 2 for s in samples) or len(lacking) >= 2:
        family = "Tukey-Kramer"
        note = (f"no variance in {', '.join(lacking)}: Games-Howell pairs between such groups are undefined, so the "
                "CIs use Tukey-Kramer and the pooled variance (equal variances assumed)")
    means = np.array([s.mean() for s in samples])
    sizes = np.array([s.size for s in samples], dtype=np.float64)
    variances = np.array([s.var(ddof=1) if s.size > 1 else np.nan for s in samples])
    pooled, alpha = np.array([family == "Tukey-Kramer"]), 1.0 - confidence
    draws = interval_draws(seed, model, len(samples))
    gap_low, gap_high = gap_intervals.scale_free(means[None, :], variances[None, :], sizes,
                                                 np.array([residual_kurtosis(samples)]), pooled, alpha, draws)
    ci = gap_intervals.nmgd(means[None, :], variances[None, :], sizes, pooled, alpha, draws)
    return GapIntervals(float(gap_low[0]), float(gap_high[0]), float(ci.low[0]), float(ci.high[0]),
                        bool(ci.unstable[0]), family, note)


def gap_analysis(
    model: str,
    groups: list[str],
    samples: list[np.ndarray],
    n_permutations: int,
    seed: int,
    confidence: float = CONFIDENCE,
) -> GapResult:
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
    ci = intervals(model, groups, samples, seed, confidence)
    permutation = permutation_test(samples, n_permutations, model_rngs(seed, model)[1])
    gap, nmgd = raw_gap / sd, common["nmgd_percent"]
    # the bounds hold their estimate by construction; min/max only absorbs rounding (a bound equal to its estimate)
    return GapResult(
        **common,
        pooled_sd=sd,
        scale_free_gap=gap,
        gap_ci_low=min(ci.gap_low, gap),
        gap_ci_high=max(ci.gap_high, gap),
        nmgd_ci_low=min(ci.nmgd_low, nmgd),
        nmgd_ci_high=max(ci.nmgd_high, nmgd),
        nmgd_unstable=ci.nmgd_unstable,
        perm_p_value=permutation.p_value,
        null_max_gap=permutation.null_scale_free_gap,
        interval_family=f"{ci.family} + test inversion",
        note=ci.note,
    )
