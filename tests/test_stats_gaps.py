"""NMGD, scale-free gap, bootstrap CIs and the permutation test."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
from rmeval.benchmarks.fairness.stats import gaps
from scipy import stats

GROUPS = ["a", "b", "c"]


def _samples(shift: float = 0.0) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.normal(shift, 1.0, 15) , rng.normal(shift + 0.6, 2.0, 25), rng.normal(shift - 0.3, 0.5, 10)]


def test_nmgd_follows_the_paper_formula_and_keeps_the_sign() -> None:
    assert gaps.nmgd_percent(np.array([1.0, 2.0, 3.0])) == pytest.approx(100.0)  # (3-1)/2*100
    assert gaps.nmgd_percent(np.array([-1.0, -2.0, -3.0])) == pytest.approx(-100.0)  # negative mean flips sign
    # near-zero mean: a tiny gap becomes an enormous NMGD
    assert gaps.nmgd_percent(np.array([-0.1, 0.1002])) == pytest.approx(0.2002 / 0.0001 * 100.0)


def test_scale_free_gap_is_range_over_pooled_sd() -> None:
    samples = [np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0, 7.0]), np.array([0.0, 2.0])]
    result = gaps.gap_analysis("m", GROUPS, samples, n_bootstrap=200, n_permutations=200, seed=0)
    pooled = np.sqrt((2.0 + 5.0 + 2.0) / (9 - 3))  # within-group sums of squares / (N - k)
    assert result.pooled_sd == pytest.approx(pooled)
    assert result.raw_gap == pytest.approx(5.5 - 1.0)
    assert result.scale_free_gap == pytest.approx(4.5 / pooled)
    assert (result.max_group, result.min_group) == ("b", "c")
    assert result.nmgd_percent == pytest.approx(4.5 / np.mean([2.0, 5.5, 1.0]) * 100)


def test_bootstrap_and_permutation_are_identical_for_the_same_seed() -> None:
    first = gaps.gap_analysis("model-x", GROUPS, _samples(), n_bootstrap=300, n_permutations=300, seed=42)
    second = gaps.gap_analysis("model-x", GROUPS, _samples(), n_bootstrap=300, n_permutations=300, seed=42)
    other = gaps.gap_analysis("model-x", GROUPS, _samples(), n_bootstrap=300, n_permutations=300, seed=43)
    assert first == second
    assert (first.gap_ci_low, first.perm_p_value) != (other.gap_ci_low, other.perm_p_value)


def test_bootstrap_is_stratified_and_has_the_textbook_standard_error() -> None:
    samples = _samples()
    boot_means, boot_sd = gaps.bootstrap_replicates(samples, 4000, np.random.default_rng(0))
    for g, values in enumerate(samples):
        # SE of a resampled mean with n fixed per group: sd(ddof=0) / sqrt(n)
        assert boot_means[:, g].std() == pytest.approx(values.std() / np.sqrt(values.size), rel=0.06)
        assert boot_means[:, g].mean() == pytest.approx(values.mean(), abs=0.05)
    assert np.median(boot_sd) == pytest.approx(gaps.pooled_sd(samples), rel=0.05)


def test_permutation_p_value_approaches_the_exact_permutation_distribution() -> None:
    samples = [np.array([0.1, 0.5, 0.2]), np.array([1.1, 0.9]), np.array([0.4, 1.6, 0.3])]
    rewards = np.concatenate(samples)
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    observed = np.ptp([s.mean() for s in samples])
    ranges = []
    for order in set(permutations(labels)):  # every distinct relabelling (560)
        order = np.array(order)
        ranges.append(np.ptp([rewards[order == g].mean() for g in range(3)]))
    exact = np.mean(np.array(ranges) >= observed - 1e-12)
    estimate = gaps.permutation_p_value(samples, 5000, np.random.default_rng(1))
    assert estimate == pytest.approx(exact, abs=0.02)


def test_permutation_p_value_is_never_zero() -> None:
    samples = [np.arange(30.0), np.arange(30.0) + 100.0]
    p = gaps.permutation_p_value(samples, 199, np.random.default_rng(0))
    assert p == pytest.approx(1 / 200)


def test_bias_corrected_interval_matches_the_bc_formula() -> None:
    rng = np.random.default_rng(5)
    replicates = rng.gamma(2.0, 1.0, 5000)
    estimate = 1.5
    z0 = stats.norm.ppf(np.mean(replicates < estimate))
    lo_q, hi_q = stats.norm.cdf(2 * z0 + stats.norm.ppf([0.025, 0.975]))
    expected = np.percentile(replicates, [100 * lo_q, 100 * hi_q])
    assert gaps.bias_corrected_interval(replicates, estimate, 0.95) == pytest.approx(tuple(expected))
    # with the estimate at the median, BC reduces to the percentile interval
    median = float(np.median(replicates))
    assert gaps.bias_corrected_interval(replicates, median, 0.95) == pytest.approx(
        tuple(np.percentile(replicates, [2.5, 97.5])), rel=1e-3
    )


@pytest.mark.parametrize("shift", [-8.0, 0.0])
def test_nmgd_ci_for_negative_and_near_zero_means(shift: float) -> None:
    result = gaps.gap_analysis("m", GROUPS, _samples(shift), n_bootstrap=500, n_permutations=100, seed=0)
    if shift < 0:  # a clearly negative mean: NMGD negative, interval on the negative side, stable
        assert result.nmgd_percent < 0
        assert result.nmgd_ci_high < 0
        assert not result.nmgd_unstable
    else:  # mean reward indistinguishable from 0: flagged, interval spans both signs
        assert result.nmgd_unstable
        assert result.nmgd_ci_low < 0 < result.nmgd_ci_high
    # the scale-free gap does not depend on the location of the rewards
    reference = gaps.gap_analysis("m", GROUPS, _samples(0.0), n_bootstrap=500, n_permutations=100, seed=0)
    assert result.scale_free_gap == pytest.approx(reference.scale_free_gap)
