"""Is one model's group gap really smaller than another's (benchmarks/fairness/stats/gap_difference.py)? Its
estimates equal the fairness tables' definitions (gaps.py's scale-free gap, the ANOVA F and Cohen's f), its
noncentral-F bounds scipy's, and by seeded simulation with a known truth (3 groups, two models scoring the same
papers with correlated errors) its test keeps its level in the three shapes of the null "equal gaps" (both fair;
the same pattern; mirrored patterns), where the issue's paired permutation test rejected 30 % of the time, and its
interval covers the true difference. perf/compare_simulation.py runs the full simulation (CONTRIBUTING)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rmeval.benchmarks.fairness.stats.gap_difference import (
    covariance,
    f_difference,
    f_interval,
    f_model,
    gap_difference,
    gap_model,
    noncentral_f_tail,
)
from rmeval.benchmarks.fairness.stats.gaps import pooled_sd
from scipy.stats import f as f_dist
from scipy.stats import f_oneway, ncf


def _data(rng, means_a, means_b, n, rho=0.5):
    k = len(means_a)
    labels = np.repeat(np.arange(k), n)
    shared = rng.standard_normal(labels.size)
    other = rho * shared + math.sqrt(1 - rho ** 2) * rng.standard_normal(labels.size)
    return np.asarray(means_a)[labels] + shared, np.asarray(means_b)[labels] + other, labels


def test_estimates_are_the_tables_definitions():
    rng = np.random.default_rng(0)
    a, _, labels = _data(rng, (0, 0.2, 0.5, 0.1), (0, 0, 0, 0), [30, 40, 25, 50][0])
    groups = [a[labels == g] for g in range(4)]
    means = [g.mean() for g in groups]
    gap = gap_model(a, labels, 4)
    assert gap.gap == pytest.approx((max(means) - min(means)) / pooled_sd(groups), rel=1e-12)
    model = f_model(a, labels, 4)
    assert model.statistic == pytest.approx(f_oneway(*groups).statistic, rel=1e-10)
    between = sum(g.size * (g.mean() - a.mean()) ** 2 for g in groups)
    within = sum(((g - g.mean()) ** 2).sum() for g in groups)
    assert model.f == pytest.approx(math.sqrt(between / within), rel=1e-12)


def test_noncentral_f_tails_equal_scipy():
    for df_between, df_within in ((2, 117), (7, 15992), (7, 232)):
        for noncentrality in (0.0, 0.01, 1.0, 10.0, 100.0, 1000.0, 8000.0):
            for statistic in (0.1, 0.9, 3.0, 10.0, 40.0):
                args = (statistic, df_between, df_within)
                upper = f_dist.sf(*args) if noncentrality == 0 else ncf.sf(*args, noncentrality)
                lower = f_dist.cdf(*args) if noncentrality == 0 else ncf.cdf(*args, noncentrality)
                assert noncentral_f_tail(*args, noncentrality, True) == pytest.approx(upper, rel=1e-9, abs=1e-14)
                assert noncentral_f_tail(*args, noncentrality, False) == pytest.approx(lower, rel=1e-9, abs=1e-14)


def test_covariances_are_the_influence_functions_sums():
    """The per-group sums of `covariance` equal the sum over papers of the products of the two models' influence
    functions, written out here from their definition (group means, pooled variance, the delta method)."""
    rng = np.random.default_rng(4)
    k, labels = 4, np.repeat(np.arange(4), [30, 45, 25, 60])
    rng.shuffle(labels)

    def influence(rewards):
        sizes = np.bincount(labels).astype(float)
        means = np.bincount(labels, weights=rewards) / sizes
        residuals = rewards - means[labels]
        variance = (residuals ** 2).sum() / (labels.size - k)
        pairs = [(g, h) for g in range(k) for h in range(k) if g != h]
        matrix = np.zeros((labels.size, len(pairs)))
        for column, (g, h) in enumerate(pairs):
            mean_part = (np.where(labels == g, 1.0, 0.0) - np.where(labels == h, 1.0, 0.0)) * residuals / sizes[
                labels] * np.sqrt(sizes[labels] / (sizes[labels] - 1)) / math.sqrt(variance)
            value = (means[g] - means[h]) / math.sqrt(variance)
            variance_part = (residuals ** 2 - (residuals ** 2).mean()) / (labels.size - k)
            matrix[:, column] = mean_part - value * variance_part / (2 * variance)
        return matrix

    a, b = rng.standard_normal(labels.size) + 0.3 * labels, rng.standard_normal(labels.size)
    expected = influence(a).T @ influence(b)
    assert covariance(gap_model(a, labels, k), gap_model(b, labels, k)) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_noncentral_f_bounds_solve_scipys_tails():
    rng = np.random.default_rng(1)
    a, _, labels = _data(rng, (0, 0.5, 0.8), (0, 0, 0), 60)
    model = f_model(a, labels, 3)
    low, high = f_interval(model).at()
    args = (model.statistic, model.df_between, model.df_within)
    assert low > 0 and ncf.sf(*args, low ** 2 * model.n) == pytest.approx(0.025, abs=1e-7)
    assert ncf.cdf(*args, high ** 2 * model.n) == pytest.approx(0.025, abs=1e-7)
    # equal groups, F inside the central F's 95 %: the lower bound is 0 (scipy's ncf is wrong at exactly 0)
    model = f_model(rng.standard_normal(labels.size), labels, 3)
    assert 0.05 < f_dist.sf(model.statistic, 2, model.df_within) < 0.95
    low, high = f_interval(model).at()
    assert low == 0.0 and ncf.cdf(model.statistic, 2, model.df_within, high ** 2 * model.n) == pytest.approx(0.025)


def test_the_p_value_inverts_the_interval_and_identical_models_give_0_and_1():
    rng = np.random.default_rng(2)
    for shift in (0.0, 0.2, 0.5):
        a, b, labels = _data(rng, (0, shift, 2 * shift), (0, 0, 0), 80)
        first, second = gap_model(a, labels, 3), gap_model(b, labels, 3)
        interval, p_value = gap_difference(first, second)
        low, high = interval.at()
        assert low <= interval.estimate <= high
        assert (p_value < 0.05) == (low > 0 or high < 0)
        if p_value < 1:
            at_p = interval.with_alpha(p_value)
            assert min(abs(at_p[0]), abs(at_p[1])) == pytest.approx(0.0, abs=1e-9)
        f_int, f_p = f_difference(f_model(a, labels, 3), f_model(b, labels, 3))
        assert (f_p < 0.05) == (f_int.at()[0] > 0 or f_int.at()[1] < 0)
    same = gap_model(a, labels, 3)
    interval, p_value = gap_difference(same, same)
    assert interval.estimate == 0.0 and p_value == 1.0 and interval.at()[0] <= 0 <= interval.at()[1]
    f_same = f_model(a, labels, 3)
    assert f_difference(f_same, f_same)[1] == 1.0


def test_constant_rewards_leave_the_gap_undefined_not_an_error():
    labels = np.repeat(np.arange(3), 10)
    constant = gap_model(np.ones(30), labels, 3)
    assert not constant.defined and "constant" in constant.note
    interval, p_value = gap_difference(constant, gap_model(np.arange(30.0), labels, 3))
    assert math.isnan(interval.estimate) and math.isnan(p_value)
    assert not f_model(np.ones(30), labels, 3).defined


NULL_SHAPES = {
    "both fair": ((0, 0, 0), (0, 0, 0)),
    "same pattern": ((0, 0.15, 0.3), (0, 0.15, 0.3)),
    "mirrored pattern": ((0, 0.15, 0.3), (0.3, 0.15, 0)),
}


@pytest.mark.parametrize("shape", list(NULL_SHAPES))
def test_equal_gaps_keep_the_level_and_the_interval_covers(shape):
    """120 data sets of 3 groups x 200 papers per shape (perf/compare_simulation.py: 3 x 40 and 3 x 500, 1000 each)."""
    means_a, means_b = NULL_SHAPES[shape]
    rng = np.random.default_rng(sum(map(ord, shape)))
    replicates, rejected, covered = 120, 0, 0
    for _ in range(replicates):
        a, b, labels = _data(rng, means_a, means_b, 200)
        interval, p_value = gap_difference(gap_model(a, labels, 3), gap_model(b, labels, 3))
        rejected += p_value < 0.05
        low, high = interval.at()
        covered += low <= 0.0 <= high
    assert rejected / replicates <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / replicates)
    assert covered / replicates >= 0.93


def test_one_fair_model_against_a_gap_of_0_3_sd_is_found():
    """Power at 3 x 500 with one model fair and the other's gap 0.3 SD (0 / 0.15 / 0.3): 54 % in
    perf/compare_simulation.py (issue 40 aims for >= 50 %); here 60 data sets, and the interval covers 0.3."""
    rng = np.random.default_rng(11)
    replicates, rejected, covered = 60, 0, 0
    for _ in range(replicates):
        a, b, labels = _data(rng, (0, 0.15, 0.3), (0, 0, 0), 500)
        interval, p_value = gap_difference(gap_model(a, labels, 3), gap_model(b, labels, 3))
        rejected += p_value < 0.05
        low, high = interval.at()
        covered += low <= 0.3 <= high
    assert rejected / replicates >= 0.3 and covered / replicates >= 0.9
