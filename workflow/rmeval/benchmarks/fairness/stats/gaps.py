"""Size of the largest group gap: NMGD (the paper's metric), the scale-free gap, their
stratified bootstrap CIs, and a permutation p-value for the maximum gap.

NMGD = (max - min of group means) / (mean of group means) * 100, sign kept as in
Song et al. 2025; it explodes or flips sign when the mean reward is near zero or
negative, which is why the scale-free gap (gap / pooled within-group SD) sits beside it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

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
    # True when the bootstrap CI of the mean of group means contains 0: NMGD's sign and size are then arbitrary.
    nmgd_unstable: bool
    perm_p_value: float
    # mean scale-free gap over the label permutations: the largest gap pure noise gives at these group sizes
    null_max_gap: float
    n_bootstrap: int
    n_permutations: int


def nmgd_percent(group_means: np.ndarray) -> float:
    """The paper's normalised maximum group difference, in percent, sign kept."""
    return float((group_means.max() - group_means.min()) / group_means.mean() * 100.0)


def pooled_sd(samples: list[np.ndarray]) -> float:
    n_total = sum(s.size for s in samples)
    ss_within = sum(((s - s.mean()) ** 2).sum() for s in samples)
    return float(np.sqrt(ss_within / (n_total - len(samples))))


def model_rngs(seed: int, model: str) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent bootstrap and permutation streams per model: results do not depend
    on which other models are in the run, or in which order."""
    bootstrap, permutation = np.random.SeedSequence([seed, zlib.crc32(model.encode())]).spawn(2)
    return np.random.default_rng(bootstrap), np.random.default_rng(permutation)


def bootstrap_replicates(
    samples: list[np.ndarray], n_bootstrap: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Stratified bootstrap (resample within each group): per replicate, the group means
    (B, k) and the pooled within-group SD (B,)."""
    k = len(samples)
    n_total = sum(s.size for s in samples)
    means = np.empty((n_bootstrap, k))
    ss_within = np.zeros(n_bootstrap)
    for g, values in enumerate(samples):
        centred = values - values.mean()  # centring keeps sum-of-squares arithmetic stable
        for start in range(0, n_bootstrap, _CHUNK):
            stop = min(start + _CHUNK, n_bootstrap)
            draw = centred[rng.integers(0, values.size, size=(stop - start, values.size))]
            draw_mean = draw.mean(axis=1)
            means[start:stop, g] = draw_mean + values.mean()
            ss_within[start:stop] += (draw**2).sum(axis=1) - values.size * draw_mean**2
    return means, np.sqrt(np.maximum(ss_within, 0.0) / (n_total - k))


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


def bias_corrected_interval(replicates: np.ndarray, estimate: float, confidence: float) -> tuple[float, float]:
    """Bias-corrected (BC) percentile interval (Efron 1987).

    The range of group means is biased upwards (the max of noisy means overshoots), so a
    plain percentile interval sits too high and can exclude 0 for a null gap; BC shifts
    the percentiles by z0 = Phi^-1(share of replicates below the estimate).
    """
    from scipy import stats

    finite = replicates[np.isfinite(replicates)]
    below = (np.sum(finite < estimate) + 0.5 * np.sum(finite == estimate)) / finite.size
    below = min(max(below, 0.5 / finite.size), 1.0 - 0.5 / finite.size)  # keep z0 finite
    z0 = stats.norm.ppf(below)
    z = stats.norm.ppf([0.5 - confidence / 2, 0.5 + confidence / 2])
    low, high = np.percentile(finite, 100.0 * stats.norm.cdf(2.0 * z0 + z))
    return float(low), float(high)


def gap_analysis(
    model: str,
    groups: list[str],
    samples: list[np.ndarray],
    n_bootstrap: int,
    n_permutations: int,
    seed: int,
    confidence: float = 0.95,
) -> GapResult:
    means = np.array([s.mean() for s in samples])
    sd = pooled_sd(samples)
    raw_gap = float(means.max() - means.min())
    bootstrap_rng, permutation_rng = model_rngs(seed, model)
    boot_means, boot_sd = bootstrap_replicates(samples, n_bootstrap, bootstrap_rng)
    boot_gap = np.ptp(boot_means, axis=1)
    boot_centre = boot_means.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_nmgd = boot_gap / boot_centre * 100.0
    tails = [50.0 * (1.0 - confidence), 100.0 - 50.0 * (1.0 - confidence)]
    scale_free = raw_gap / sd
    gap_low, gap_high = bias_corrected_interval(boot_gap / boot_sd, scale_free, confidence)
    nmgd_low, nmgd_high = bias_corrected_interval(boot_nmgd, nmgd_percent(means), confidence)
    centre_low, centre_high = np.percentile(boot_centre, tails)
    permutation = permutation_test(samples, n_permutations, permutation_rng)
    return GapResult(
        max_group=groups[int(means.argmax())],
        min_group=groups[int(means.argmin())],
        raw_gap=raw_gap,
        pooled_sd=sd,
        scale_free_gap=scale_free,
        gap_ci_low=float(gap_low),
        gap_ci_high=float(gap_high),
        mean_of_means=float(means.mean()),
        nmgd_percent=nmgd_percent(means),
        nmgd_ci_low=float(nmgd_low),
        nmgd_ci_high=float(nmgd_high),
        nmgd_unstable=bool(centre_low <= 0.0 <= centre_high),
        perm_p_value=permutation.p_value,
        null_max_gap=permutation.null_scale_free_gap,
        n_bootstrap=n_bootstrap,
        n_permutations=n_permutations,
    )
