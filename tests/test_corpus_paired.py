"""The paired design's statistics (rmeval.benchmarks.fairness.corpus.paired) against independent implementations:
scipy's Friedman and related-samples t test, statsmodels' Holm, an exact enumeration of the Wilcoxon signed-rank
null distribution, scipy's t interval; and the paired tables built from score files."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.corpus import paired
from rmeval.benchmarks.fairness.corpus.paired_tables import paired_tables
from rmeval.benchmarks.fairness.stats.loading import load_scores
from scipy import stats
from statsmodels.stats.multitest import multipletests

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("k", [3, 5])
def test_friedman_matches_scipy_with_and_without_ties(k):
    values = RNG.normal(size=(25, k)) + np.arange(k) * 0.3
    q, p, w = paired.friedman(values)
    expected = stats.friedmanchisquare(*values.T)
    assert q == pytest.approx(expected.statistic, rel=1e-12) and p == pytest.approx(expected.pvalue, rel=1e-10)
    assert w == pytest.approx(expected.statistic / (25 * (k - 1)))
    tied = np.round(values, 0)  # many ties within pairs: scipy's tie correction
    q, p, _ = paired.friedman(tied)
    expected = stats.friedmanchisquare(*tied.T)
    assert q == pytest.approx(expected.statistic, rel=1e-12) and p == pytest.approx(expected.pvalue, rel=1e-10)


def test_paired_t_matches_scipy():
    a, b = RNG.normal(size=30), RNG.normal(size=30) + 0.2
    t, p = paired.paired_t(a, b)
    expected = stats.ttest_rel(a, b)
    assert t == pytest.approx(expected.statistic, rel=1e-12) and p == pytest.approx(expected.pvalue, rel=1e-10)


def test_mean_ci_is_the_t_interval():
    values = RNG.normal(size=12)
    mean, low, high = paired.mean_ci(values)
    expected = stats.t.interval(0.95, 11, loc=values.mean(), scale=stats.sem(values))
    assert (low, high) == pytest.approx(expected, rel=1e-12) and mean == pytest.approx(values.mean())


def exact_wilcoxon_p(d: np.ndarray) -> tuple[float, float]:
    """Two-sided exact p of the signed-rank test by enumerating all 2^n sign vectors (no ties, no zeros)."""
    ranks = stats.rankdata(np.abs(d))
    observed = ranks[d > 0].sum()
    sums = [sum(r for r, s in zip(ranks, signs, strict=True) if s)
            for signs in itertools.product((0, 1), repeat=len(d))]
    sums = np.array(sums)
    lower, upper = (sums <= observed).mean(), (sums >= observed).mean()
    return min(observed, ranks.sum() - observed), min(1.0, 2 * min(lower, upper))


def test_wilcoxon_matches_the_exact_null_distribution():
    d = RNG.normal(size=11) + 0.4
    statistic, p = paired.wilcoxon(d)
    expected_statistic, expected_p = exact_wilcoxon_p(d)
    assert statistic == expected_statistic and p == pytest.approx(expected_p, rel=1e-12)


def test_holm_matches_statsmodels():
    p_values = [0.01, 0.04, 0.03, 0.2, 0.0001, float("nan")]
    ours = paired.holm(p_values)
    expected = multipletests(p_values[:-1], method="holm")[1]
    assert ours[:-1] == pytest.approx(list(expected), rel=1e-12) and math.isnan(ours[-1])


def test_win_shares_split_ties():
    values = np.array([[3.0, 1.0, 2.0], [1.0, 5.0, 5.0], [0.0, 0.0, 0.0], [2.0, 1.0, 0.0]])
    assert paired.win_shares(values) == pytest.approx([(1 + 0 + 1 / 3 + 1) / 4, (0.5 + 1 / 3) / 4,
                                                       (0.5 + 1 / 3) / 4])


def test_incomplete_pairs_are_left_out_and_counted():
    rewards = {"a": {"a1": 1.0, "a2": 2.0, "a3": 3.0}, "b": {"b1": 0.5, "b2": 1.5}}
    pairs = {"a": {"a1": "k1", "a2": "k2", "a3": "k3"}, "b": {"b1": "k1", "b2": "k2"}}
    data = paired.paired_matrix("m", rewards, pairs, ["a", "b"])
    assert data.pair_ids == ["k1", "k2"] and data.incomplete == 1
    assert data.values.tolist() == [[1.0, 0.5], [2.0, 1.5]]


def test_tables_from_score_files_match_scipy(tmp_path):
    """Two groups: paired t and Wilcoxon rows; post hoc Holm; within-pair differences against the pair mean."""
    n = 9
    a, b = RNG.normal(size=n), RNG.normal(size=n) + 0.5
    ids = {"a": [f"a{i}" for i in range(n)], "b": [f"b{i}" for i in range(n)]}
    for group, rewards in (("a", a), ("b", b)):
        folder = tmp_path / "scores" / "m"
        folder.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"id": ids[group][::-1], "reward": rewards[::-1]}).to_parquet(folder / f"{group}.parquet")
    scores = load_scores(tmp_path / "scores", models=["m"], groups=["a", "b"])
    pairs = {g: {row_id: f"k{i}" for i, row_id in enumerate(ids[g])} for g in ("a", "b")}
    frames = paired_tables(scores, pairs, alpha=0.05, bootstrap=200, seed=0)
    table = frames["table_paired"].set_index("test")
    assert table.loc["paired_t", "p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-10)
    assert table.loc["wilcoxon", "p_value"] == pytest.approx(stats.wilcoxon(a - b).pvalue, rel=1e-10)
    assert table.loc["paired_t", "estimate"] == pytest.approx((a - b).mean())
    assert table.loc["wilcoxon", "ci_low"] <= np.median(a - b) <= table.loc["wilcoxon", "ci_high"]
    groups = frames["paired_groups"].set_index("group")
    assert groups.loc["a", "mean_difference"] == pytest.approx(((a - b) / 2).mean())
    assert groups.loc["a", "win_share"] == pytest.approx((a > b).mean())
    posthoc = frames["paired_posthoc"].iloc[0]
    assert posthoc["p_holm"] == pytest.approx(stats.ttest_rel(a, b).pvalue)  # one comparison: Holm keeps p
