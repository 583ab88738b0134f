"""Paired comparisons of two models on the same items (rmeval.paired_difference), Holm and BH (rmeval.multiplicity):
equal to statsmodels where it has the method, and checked by seeded simulation with a known truth (size of each test
at 0.05 for two equally good models with correlated errors, coverage of each interval). The full simulation, with
its measured numbers, is perf/compare_simulation.py (CONTRIBUTING "Which model is better")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rmeval.multiplicity import bh_q_values, holm
from rmeval.paired_difference import (
    DRAWN_ITEMS,
    EXACT_ITEMS,
    Difference,
    combined_difference,
    mcnemar_exact,
    paired_bounded,
    sign_flip_test,
    wilson_mean,
)
from scipy.stats import norm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint


# Monte Carlo allowance of a simulated rate at 0.05 / 0.95 over R data sets: three standard errors
def _allowance(replicates: int, rate: float = 0.05) -> float:
    return 3 * math.sqrt(rate * (1 - rate) / replicates)


def test_exact_mcnemar_equals_statsmodels():
    for a_only in range(0, 41, 3):
        for b_only in range(0, 41, 4):
            expected = mcnemar([[17, a_only], [b_only, 5]], exact=True).pvalue
            assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    rng = np.random.default_rng(0)
    a = (rng.uniform(size=300) < 0.7).astype(float)
    b = np.where(rng.uniform(size=300) < 0.8, a, 1 - a)
    table = [[int(((a == 1) & (b == 1)).sum()), int(((a == 1) & (b == 0)).sum())],
             [int(((a == 0) & (b == 1)).sum()), int(((a == 0) & (b == 0)).sum())]]
    diff = paired_bounded(a.tolist(), b.tolist())
    assert diff.test == "exact McNemar" and diff.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert diff.note == f"discordant {table[0][1]}/{table[1][0]}"


def test_holm_and_bh_equal_multipletests():
    rng = np.random.default_rng(1)
    for size in (1, 2, 7, 40):
        p = rng.uniform(size=size) ** 3
        assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], rel=1e-12)
        assert bh_q_values(p) == pytest.approx(multipletests(p, method="fdr_bh")[1], rel=1e-12)
    with_nan = [0.01, math.nan, 0.04, 0.2]
    expected = multipletests([0.01, 0.04, 0.2], method="holm")[1]
    adjusted = holm(with_nan)
    assert math.isnan(adjusted[1]) and [adjusted[0], adjusted[2], adjusted[3]] == pytest.approx(expected)


def test_interval_is_newcombes_method_10_on_statsmodels_wilson():
    """Newcombe (1998) method 10 written out from its definition: each proportion's Wilson interval
    (statsmodels), phi the correlation of the paired 0/1 results."""
    rng = np.random.default_rng(2)
    for n in (20, 150):
        a = (rng.uniform(size=n) < 0.6).astype(float)
        b = np.where(rng.uniform(size=n) < 0.7, a, (rng.uniform(size=n) < 0.5).astype(float))
        p1, p2 = a.mean(), b.mean()
        l1, u1 = proportion_confint(int(a.sum()), n, alpha=0.05, method="wilson")
        l2, u2 = proportion_confint(int(b.sum()), n, alpha=0.05, method="wilson")
        phi = np.corrcoef(a, b)[0, 1]
        low = p1 - p2 - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
        high = p1 - p2 + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
        assert paired_bounded(a.tolist(), b.tolist()).interval.at() == pytest.approx((low, high), rel=1e-9)


def test_the_sign_flip_test_is_mcnemar_on_0_1_items_and_exact_or_drawn_elsewhere():
    for a_only, b_only in ((3, 0), (5, 2), (9, 8), (0, 0)):
        items = [1.0] * a_only + [-1.0] * b_only + [0.0] * 10
        assert sign_flip_test(items).p_value == pytest.approx(mcnemar_exact(a_only, b_only), abs=1e-12)
    # 40 nonzero differences: drawn; the same draws give the same p, within Monte Carlo error of the normal one
    items = list(np.linspace(-0.2, 1.0, 40))
    drawn = sign_flip_test(items, seed=3)
    assert drawn.how == "Monte Carlo" and drawn.p_value == sign_flip_test(items, seed=3).p_value
    z = sum(items) / math.sqrt(sum(v * v for v in items))
    assert drawn.p_value == pytest.approx(2 * norm.sf(z), abs=0.01)
    assert sign_flip_test(np.ones(DRAWN_ITEMS + 1) * 0.01).how == "normal approximation"
    assert sign_flip_test([0.5] * EXACT_ITEMS).how == "exact"
    # a few items can never give a tiny p-value (a MOVER interval's inversion did: its bounds stay in the range)
    assert sign_flip_test([0.3, 0.5, 0.2, 0.4]).p_value == pytest.approx(2 / 16)


def test_identical_models_differ_by_0_with_p_1():
    items = [0.0, 1 / 3, 0.5, 1.0, 1.0, 0.25] * 10
    for values in (items, [1.0, 0.0] * 30):
        diff = paired_bounded(values, values)
        low, high = diff.interval.at()
        assert diff.difference == 0 and diff.p_value == 1.0 and low <= 0 <= high
    combined = combined_difference([paired_bounded(items, items), paired_bounded([1.0, 0.0], [1.0, 0.0])], [0.5, 0.5])
    assert combined.difference == 0 and combined.p_value == 1.0


def test_weighted_sum_of_parts():
    rng = np.random.default_rng(4)
    parts = [paired_bounded((rng.uniform(size=n) < 0.7).astype(float).tolist(),
                            (rng.uniform(size=n) < 0.6).astype(float).tolist()) for n in (30, 80, 200)]
    weights = [0.2, 0.3, 0.5]
    combined = combined_difference(parts, weights)
    assert combined.difference == pytest.approx(sum(w * p.difference for p, w in zip(parts, weights, strict=True)))
    low, high = combined.interval.at()
    expected_low = combined.difference - math.sqrt(sum(
        (w * (p.difference - p.interval.at()[0])) ** 2 for p, w in zip(parts, weights, strict=True)))
    assert low == pytest.approx(expected_low) and low <= combined.difference <= high
    # a part known only by its bootstrap standard error (Ties) adds its variance to the normal approximation
    bootstrap = Difference(0.5, 0.4, 20, parts[0].interval, 0.3, "paired bootstrap (Ties)", null_variance=0.01)
    with_ties = combined_difference([*parts, bootstrap], [0.25] * 4)
    assert "normal approximation" in with_ties.test and 0 < with_ties.p_value < 1


def _correlated_binary(rng, n, p_a, p_b, rho):
    shared = rng.standard_normal(n)
    other = rho * shared + math.sqrt(1 - rho ** 2) * rng.standard_normal(n)
    return (shared < norm.ppf(p_a)).astype(float), (other < norm.ppf(p_b)).astype(float)


@pytest.mark.parametrize(("p_a", "p_b", "rho"), [(0.8, 0.8, 0.5), (0.8, 0.8, 0.9), (0.95, 0.95, 0.7),
                                                 (0.8, 0.72, 0.6)])
def test_binary_items_size_and_coverage_by_simulation(p_a, p_b, rho):
    """Two models on 200 items with correlated errors (a Gaussian copula): exact McNemar keeps its level (it is
    conservative: 0.026-0.030 at 0.05 in perf/compare_simulation.py) and Newcombe's interval covers."""
    rng = np.random.default_rng(int(1000 * (p_a + p_b + rho)))
    replicates, rejected, covered = 300, 0, 0
    for _ in range(replicates):
        a, b = _correlated_binary(rng, 200, p_a, p_b, rho)
        diff = paired_bounded(a.tolist(), b.tolist())
        rejected += diff.p_value < 0.05
        low, high = diff.interval.at()
        covered += low <= p_a - p_b <= high
    assert covered / replicates >= 0.93
    if p_a == p_b:
        assert rejected / replicates <= 0.05 + _allowance(replicates)
    else:
        assert rejected / replicates > 0.2  # some power (perf/compare_simulation.py gives it)


def test_best_of_four_items_with_ties_size_and_coverage_by_simulation():
    """Results in {0, 1/3, 1/2, 1} (a 3- or 2-way tie at the top), two equally good models sharing 60 % of their
    draws: the sign-flip test keeps its level and MOVER covers."""
    values = np.array([0.0, 1 / 3, 0.5, 1.0])
    probabilities = np.cumsum([0.3, 0.05, 0.05, 0.6])
    truth = float((values * np.diff(probabilities, prepend=0)).sum())
    rng = np.random.default_rng(5)
    replicates, rejected, covered = 250, 0, 0
    for _ in range(replicates):
        u = rng.uniform(size=150)
        w = np.where(rng.uniform(size=150) < 0.6, u, rng.uniform(size=150))
        a, b = values[np.searchsorted(probabilities, u)], values[np.searchsorted(probabilities, w)]
        diff = paired_bounded(a.tolist(), b.tolist(), seed=7)
        rejected += diff.p_value < 0.05
        low, high = diff.interval.at()
        covered += low <= 0.0 <= high
        assert wilson_mean(a.tolist()).estimate == pytest.approx(a.mean())
    assert truth > 0 and covered / replicates >= 0.93
    assert rejected / replicates <= 0.05 + _allowance(replicates)


def test_weighted_sections_size_and_coverage_by_simulation():
    """A section of three subsets (weights as official counts), both models equally good in each."""
    rng = np.random.default_rng(6)
    sizes, weights, accuracy = (40, 100, 250), (0.2, 0.3, 0.5), (0.6, 0.85, 0.75)
    replicates, rejected, covered = 250, 0, 0
    for _ in range(replicates):
        parts = [paired_bounded(*(x.tolist() for x in _correlated_binary(rng, n, p, p, 0.6)))
                 for n, p in zip(sizes, accuracy, strict=True)]
        combined = combined_difference(parts, weights, seed=1)
        rejected += combined.p_value < 0.05
        low, high = combined.interval.at()
        covered += low <= 0.0 <= high
    assert covered / replicates >= 0.93
    assert rejected / replicates <= 0.05 + _allowance(replicates)
