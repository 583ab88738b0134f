"""Tukey HSD and Games-Howell against statsmodels, scipy and the Games-Howell formula."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from rmeval.benchmarks.fairness.stats import posthoc, studentized_range
from scipy import stats

GROUPS = ["physics", "math", "cs", "econ"]


def _samples() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    # unequal sizes and variances; one negative and one near-zero group mean
    return [rng.normal(0.0, 1.0, 14), rng.normal(1.2, 2.5, 31), rng.normal(-2.0, 0.4, 9), rng.normal(0.01, 1.1, 22)]


def test_tukey_matches_statsmodels_pairwise_tukeyhsd() -> None:
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    samples = _samples()
    ours = posthoc.tukey_hsd(GROUPS, samples, alpha=0.05)
    labels = np.concatenate([[f"{i}_{g}" for _ in s] for i, (g, s) in enumerate(zip(GROUPS, samples, strict=True))])
    reference = pairwise_tukeyhsd(np.concatenate(samples), labels, alpha=0.05)
    # statsmodels orders pairs by sorted label; our labels sort in GROUPS order thanks to the index prefix
    assert len(ours) == len(reference.pvalues) == 6
    for pair, p_value, diff, (low, high), reject in zip(
        ours, reference.pvalues, reference.meandiffs, reference.confint, reference.reject, strict=True
    ):
        assert pair.mean_diff == pytest.approx(diff, rel=1e-10)
        assert pair.p_adj == pytest.approx(p_value, rel=1e-5, abs=1e-9)
        assert (pair.ci_low, pair.ci_high) == pytest.approx((low, high), rel=1e-5)
        assert pair.reject == bool(reject)


def test_tukey_matches_scipy_tukey_hsd() -> None:
    samples = _samples()
    ours = {(p.group_a, p.group_b): p for p in posthoc.tukey_hsd(GROUPS, samples, alpha=0.05)}
    reference = stats.tukey_hsd(*samples)
    interval = reference.confidence_interval(0.95)
    for i, j in combinations(range(4), 2):
        pair = ours[(GROUPS[i], GROUPS[j])]
        # scipy reports mean(i) - mean(j); we report mean(j) - mean(i)
        assert pair.mean_diff == pytest.approx(-reference.statistic[i, j], rel=1e-10)
        assert pair.p_adj == pytest.approx(reference.pvalue[i, j], rel=1e-5, abs=1e-9)
        assert pair.ci_low == pytest.approx(-interval.high[i, j], rel=1e-5)


def test_games_howell_with_two_groups_is_the_welch_t_test() -> None:
    # With k = 2 the studentized range of two means is sqrt(2)|t|, so Games-Howell = Welch's t-test.
    a, b = _samples()[:2]
    (pair,) = posthoc.games_howell(["a", "b"], [a, b], alpha=0.05)
    welch = stats.ttest_ind(b, a, equal_var=False)
    assert pair.p_adj == pytest.approx(welch.pvalue, rel=1e-6)
    low, high = welch.confidence_interval(0.95)
    assert (pair.ci_low, pair.ci_high) == pytest.approx((low, high), rel=1e-6)
    assert pair.df == pytest.approx(welch.df, rel=1e-10)


def test_games_howell_matches_the_formula() -> None:
    samples = _samples()
    ours = posthoc.games_howell(GROUPS, samples, alpha=0.05)
    k = len(samples)
    for pair, (i, j) in zip(ours, combinations(range(k), 2), strict=True):
        a, b = samples[i], samples[j]
        se2_a, se2_b = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
        df = (se2_a + se2_b) ** 2 / (se2_a**2 / (len(a) - 1) + se2_b**2 / (len(b) - 1))
        t = (np.mean(b) - np.mean(a)) / np.sqrt(se2_a + se2_b)
        p = stats.studentized_range.sf(abs(t) * np.sqrt(2), k, df)
        half = stats.studentized_range.ppf(0.95, k, df) / np.sqrt(2) * np.sqrt(se2_a + se2_b)
        assert pair.df == pytest.approx(df, rel=1e-10)
        assert pair.p_adj == pytest.approx(p, rel=1e-8, abs=1e-12)
        assert pair.ci_low == pytest.approx(np.mean(b) - np.mean(a) - half, rel=1e-5, abs=1e-6)
        assert pair.reject == (p < 0.05)


def test_games_howell_differs_from_tukey_under_unequal_variances() -> None:
    samples = _samples()
    tukey = [p.p_adj for p in posthoc.tukey_hsd(GROUPS, samples, alpha=0.05)]
    games_howell = [p.p_adj for p in posthoc.games_howell(GROUPS, samples, alpha=0.05)]
    assert not np.allclose(tukey, games_howell, rtol=1e-3)


@pytest.mark.parametrize(("k", "alpha"), [(3, 0.05), (8, 0.04), (2, 0.008), (5, 0.037)])
def test_critical_q_matches_scipy_for_every_df_from_one(k: int, alpha: float) -> None:
    """The interpolant of log q in 1/df (shipped node values, or scipy's for an alpha not in the table)."""
    df = np.array([1.0, 1.37, 2.9, 7.5, 12.7, 313.0, 1000.0])
    exact = [stats.studentized_range.ppf(1 - alpha, k, value) for value in df]
    assert posthoc.critical_q_many(k, alpha, df) == pytest.approx(exact, rel=2e-7)  # scipy's own root finding: ~1e-7
    assert posthoc.critical_q(k, alpha, 0.5) == pytest.approx(stats.studentized_range.ppf(1 - alpha, k, 0.5))
    assert np.isnan(posthoc.critical_q(k, alpha, float("nan")))


def test_the_shipped_quantile_table_is_scipys() -> None:
    """studentized_range.json holds scipy's quantiles at the nodes: a seeded sample of its entries recomputed."""
    document = json.loads(studentized_range.TABLE.read_text())
    assert document["nodes"] == studentized_range.NODES
    table = document["log_q"]
    assert sorted(map(int, table)) == list(studentized_range.TABLE_GROUPS)
    rng = np.random.default_rng(0)
    for _ in range(3):
        k = int(rng.choice(list(studentized_range.TABLE_GROUPS)))
        alpha = float(rng.choice(studentized_range.TABLE_ALPHAS))
        node = int(rng.integers(studentized_range.NODES))
        df = 2.0 / (1.0 + studentized_range.chebyshev_nodes()[node])
        exact = np.log(stats.studentized_range.ppf(1 - alpha, k, df))
        assert table[str(k)][f"{alpha:.12g}"][node] == pytest.approx(exact, rel=1e-12), (k, alpha, node)
