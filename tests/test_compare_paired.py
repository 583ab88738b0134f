"""Paired comparisons of two models on the same items (rmeval.paired_difference), Holm and BH (rmeval.multiplicity):
equal to statsmodels where it has the method, Tango's interval equal to an independent brute-force inversion of its
score test, interval and test in agreement by construction, and checked by seeded simulation with a known truth
(size of each test at 0.05 for two equally good models with correlated errors, coverage of each interval, also where
two models almost never disagree). The full simulation, with its measured numbers, is perf/compare_simulation.py
(CONTRIBUTING "Which model is better")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rmeval.multiplicity import bh_q_values, holm
from rmeval.paired_difference import (
    MCNEMAR,
    MOVER_SUM,
    TANGO_BOUNDED,
    Difference,
    combined_difference,
    normal_interval,
    paired_bounded,
    score_p,
    tango_interval,
    wald_p,
    wilson_mean,
)
from scipy.optimize import brentq
from scipy.stats import norm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests


# Monte Carlo allowance of a simulated rate at 0.05 / 0.95 over R data sets: three standard errors
def _allowance(replicates: int, rate: float = 0.05) -> float:
    return 3 * math.sqrt(rate * (1 - rate) / replicates)


def _table(a: np.ndarray, b: np.ndarray) -> list[list[int]]:
    return [[int(((a == 1) & (b == 1)).sum()), int(((a == 1) & (b == 0)).sum())],
            [int(((a == 0) & (b == 1)).sum()), int(((a == 0) & (b == 0)).sum())]]


def test_the_test_at_0_is_statsmodels_mcnemar_without_continuity_correction():
    for a_only in range(0, 41, 3):
        for b_only in range(0, 41, 4):
            table = [[17, a_only], [b_only, 5]]
            expected = mcnemar(table, exact=False, correction=False).pvalue if a_only + b_only else 1.0
            assert score_p(a_only, b_only, 22 + a_only + b_only) == pytest.approx(expected, rel=1e-10, abs=1e-15)
    rng = np.random.default_rng(0)
    a = (rng.uniform(size=300) < 0.7).astype(float)
    b = np.where(rng.uniform(size=300) < 0.8, a, 1 - a)
    table = _table(a, b)
    diff = paired_bounded(a.tolist(), b.tolist())
    assert diff.test == MCNEMAR
    assert diff.p_value == pytest.approx(mcnemar(table, exact=False, correction=False).pvalue, rel=1e-10)
    assert diff.note == f"discordant {table[0][1]}/{table[1][0]}"


def _brute_force_tango(ahead_a: int, ahead_b: int, n: int, alpha: float) -> tuple[float, float]:
    """Tango's (1998) interval from its definition, without its closed form: the nuisance q = p(a wrong, b right) at
    each difference where the multinomial likelihood's derivative in q is 0 (scipy's brentq; the log-likelihood is
    concave in q), the score statistic from it, and the bounds where the statistic is +-z (brentq again)."""
    z = norm.isf(alpha / 2)
    rest = n - ahead_a - ahead_b

    def statistic(delta: float) -> float:
        low, high = max(0.0, -delta), (1.0 - delta) / 2.0

        def slope(q: float) -> float:  # d/dq of a log(q + delta) + b log(q) + rest log(1 - 2q - delta)
            return (ahead_a / (q + delta) if ahead_a else 0.0) + (ahead_b / q if ahead_b else 0.0) - (
                2.0 * rest / (1.0 - 2.0 * q - delta) if rest else 0.0)

        span = high - low
        ends = (low + 1e-9 * span, high - 1e-9 * span)
        if slope(ends[0]) <= 0:
            q = low
        elif slope(ends[1]) >= 0:
            q = high
        else:
            q = brentq(slope, *ends, xtol=1e-15)
        return (ahead_a - ahead_b - n * delta) / math.sqrt(n * (2.0 * q + delta - delta * delta))

    estimate = (ahead_a - ahead_b) / n
    lower = brentq(lambda d: statistic(d) - z, -1 + 1e-6, estimate - 1e-12, xtol=1e-13)
    upper = brentq(lambda d: statistic(d) + z, estimate + 1e-12, 1 - 1e-6, xtol=1e-13)
    return lower, upper


@pytest.mark.parametrize(("ahead_a", "ahead_b", "n"), [(0, 0, 100), (1, 0, 100), (2, 0, 50), (5, 0, 100),
                                                       (1, 7, 21), (6, 16, 161), (40, 20, 160), (12, 9, 500)])
def test_tango_interval_equals_a_brute_force_inversion_of_its_score_test(ahead_a, ahead_b, n):
    for alpha in (0.05, 0.005):
        expected = _brute_force_tango(ahead_a, ahead_b, n, alpha)
        assert tango_interval(ahead_a, ahead_b, n).with_alpha(alpha) == pytest.approx(expected, abs=2e-7)


def test_no_disagreement_is_not_a_zero_width_interval():
    """Two checkpoints that agree on every item: the interval is +-z^2 / (n + z^2), not (0, 0) (Newcombe's gave
    (0, 0) at a mean of 0.5: it missed every true difference when no item was discordant)."""
    items = [1.0, 0.0] * 50
    diff = paired_bounded(items, items)
    z2 = norm.isf(0.025) ** 2
    assert diff.interval.at() == pytest.approx((-z2 / (100 + z2), z2 / (100 + z2)), rel=1e-9)
    assert diff.p_value == 1.0 and diff.note == "discordant 0/0"
    # one item in a hundred: 0.01 is inside, and so is 0 (McNemar's p = 0.32)
    one = paired_bounded([1.0] + items[1:], [0.0] + items[1:])
    low, high = one.interval.at()
    assert low < 0 < 0.01 < high and one.p_value == pytest.approx(2 * norm.sf(1.0))


@pytest.mark.parametrize("alpha", [0.05, 0.005, 0.05 / 28])
def test_interval_and_test_agree_over_a_grid(alpha):
    """The interval leaves out 0 exactly when p < alpha: every discordant split up to 40 at three sizes, bounded
    items (best-of-4 shares), and sums of parts (whose p inverts the MOVER interval)."""
    for n in (40, 500):
        for ahead_a in range(0, 41):
            for ahead_b in range(0, 41 - ahead_a, 4):
                low, high = tango_interval(ahead_a, ahead_b, n).with_alpha(alpha)
                assert (not low <= 0.0 <= high) == (score_p(ahead_a, ahead_b, n) < alpha), (ahead_a, ahead_b, n)
    rng = np.random.default_rng(3)
    values = np.array([0.0, 1 / 3, 0.5, 1.0])
    for _ in range(25):
        a = values[rng.integers(0, 4, size=60)]
        b = np.where(rng.uniform(size=60) < 0.8, a, values[rng.integers(0, 4, size=60)])
        diff = paired_bounded(a.tolist(), b.tolist())
        low, high = diff.interval.with_alpha(alpha)
        assert diff.test == TANGO_BOUNDED and (not low <= 0.0 <= high) == (diff.p_value < alpha)
        parts = [diff, paired_bounded(*(x.tolist() for x in _correlated_binary(rng, 80, 0.7, 0.66, 0.8)))]
        combined = combined_difference(parts, [0.4, 0.6])
        low, high = combined.interval.with_alpha(alpha)
        assert combined.test == MOVER_SUM
        if abs(combined.p_value - alpha) > 1e-9 * alpha:
            assert (not low <= 0.0 <= high) == (combined.p_value < alpha)


@pytest.mark.parametrize(("n", "per_hundred", "one_way"), [(100, 1, True), (100, 2, True), (500, 5, True),
                                                         (50, 2, False), (100, 20, False)])
def test_coverage_where_two_models_almost_never_disagree(n, per_hundred, one_way):
    """Checkpoints that disagree on a few items in a hundred, one way (the true difference is the discordant rate) or
    both ways (it is 0): seeded counts of discordant items, coverage at 0.05 and at a Bonferroni level (0.005: ten
    pairs), the test each time equal to statsmodels' McNemar (Newcombe's interval covered 63 % at 1 in 100)."""
    rate = per_hundred / 100
    cells = (rate, 0.0) if one_way else (rate / 2, rate / 2)
    truth = cells[0] - cells[1]
    rng = np.random.default_rng(n + per_hundred)
    replicates = 400
    counts = rng.multinomial(n, [*cells, 1 - rate], size=replicates)[:, :2]
    seen: dict[tuple[int, int], tuple[bool, bool]] = {}
    for ahead_a, ahead_b in map(tuple, counts.tolist()):
        if (ahead_a, ahead_b) not in seen:
            interval = tango_interval(ahead_a, ahead_b, n)
            table = [[n - ahead_a - ahead_b, ahead_a], [ahead_b, 0]]
            p_value = mcnemar(table, exact=False, correction=False).pvalue if ahead_a + ahead_b else 1.0
            assert score_p(ahead_a, ahead_b, n) == pytest.approx(p_value, rel=1e-9)
            seen[(ahead_a, ahead_b)] = tuple(low <= truth <= high for low, high in
                                             (interval.with_alpha(0.05), interval.with_alpha(0.005)))
    covered = np.array([seen[key] for key in map(tuple, counts.tolist())]).mean(axis=0)
    assert covered[0] >= 0.93 and covered[1] >= 0.985


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


def test_identical_models_differ_by_0_with_p_1():
    items = [0.0, 1 / 3, 0.5, 1.0, 1.0, 0.25] * 10
    for values in (items, [1.0, 0.0] * 30):
        diff = paired_bounded(values, values)
        low, high = diff.interval.at()
        assert diff.difference == 0 and diff.p_value == 1.0 and low <= 0 <= high
    combined = combined_difference([paired_bounded(items, items), paired_bounded([1.0, 0.0], [1.0, 0.0])], [0.5, 0.5])
    assert combined.difference == 0 and combined.p_value == 1.0
    low, high = combined.interval.at()
    assert low < 0 < high


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
    # its p-value inverts the interval: at 1 - p the interval's bound nearest 0 is 0
    bound = combined.interval.with_alpha(combined.p_value)
    assert min(abs(bound[0]), abs(bound[1])) == pytest.approx(0.0, abs=1e-9)
    # a part known only by its bootstrap standard error (Ties): its normal interval enters the sum, p from the Wald
    # test alone when it is the only part
    bootstrap = Difference(0.5, 0.4, 20, normal_interval(0.1, 0.05), wald_p(0.1, 0.05), "paired bootstrap (Ties)")
    assert combined_difference([bootstrap], [1.0]).p_value == pytest.approx(wald_p(0.1, 0.05), rel=1e-9)
    with_ties = combined_difference([*parts, bootstrap], [0.25] * 4)
    assert with_ties.test == MOVER_SUM and 0 < with_ties.p_value < 1


def _correlated_binary(rng, n, p_a, p_b, rho):
    shared = rng.standard_normal(n)
    other = rho * shared + math.sqrt(1 - rho ** 2) * rng.standard_normal(n)
    return (shared < norm.ppf(p_a)).astype(float), (other < norm.ppf(p_b)).astype(float)


@pytest.mark.parametrize(("p_a", "p_b", "rho"), [(0.8, 0.8, 0.5), (0.8, 0.8, 0.9), (0.95, 0.95, 0.7),
                                                 (0.8, 0.72, 0.6)])
def test_binary_items_size_and_coverage_by_simulation(p_a, p_b, rho):
    """Two models on 200 items with correlated errors (a Gaussian copula): the asymptotic McNemar test keeps its
    level and Tango's interval covers."""
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
    draws: Tango's test on the discordant masses keeps its level and its interval covers."""
    values = np.array([0.0, 1 / 3, 0.5, 1.0])
    probabilities = np.cumsum([0.3, 0.05, 0.05, 0.6])
    truth = float((values * np.diff(probabilities, prepend=0)).sum())
    rng = np.random.default_rng(5)
    replicates, rejected, covered = 250, 0, 0
    for _ in range(replicates):
        u = rng.uniform(size=150)
        w = np.where(rng.uniform(size=150) < 0.6, u, rng.uniform(size=150))
        a, b = values[np.searchsorted(probabilities, u)], values[np.searchsorted(probabilities, w)]
        diff = paired_bounded(a.tolist(), b.tolist())
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
        combined = combined_difference(parts, weights)
        rejected += combined.p_value < 0.05
        low, high = combined.interval.at()
        covered += low <= 0.0 <= high
    assert covered / replicates >= 0.93
    assert rejected / replicates <= 0.05 + _allowance(replicates)
