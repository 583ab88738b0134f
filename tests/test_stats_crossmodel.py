"""Cross-model correlations, rank agreement and rank-versus-fairness."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.stats import crossmodel
from scipy import stats

VECTORS = {
    "a": np.array([1.0, 2.0, 3.0, 4.0, 2.5]),
    "b": np.array([-3.0, -1.0, -2.0, 0.5, -0.7]),  # negative rewards: correlations ignore location/scale
    "c": np.array([0.01, -0.02, 0.005, 0.0, 0.03]),
}


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_correlation_matrix_matches_pandas(method: str) -> None:
    ours = crossmodel.correlation_matrix(VECTORS, method)
    reference = pd.DataFrame(VECTORS).corr(method=method).to_numpy()
    np.testing.assert_allclose(ours, reference, rtol=1e-12)


def test_rank_agreement_matches_scipy() -> None:
    rows = crossmodel.rank_agreement(VECTORS)
    assert [(r.model_a, r.model_b) for r in rows] == [("a", "b"), ("a", "c"), ("b", "c")]
    for row in rows:
        x, y = VECTORS[row.model_a], VECTORS[row.model_b]
        assert row.kendall_tau == pytest.approx(stats.kendalltau(x, y).statistic)
        assert row.spearman_rho == pytest.approx(stats.spearmanr(x, y).statistic)
        assert row.top_group_match == (np.argmax(x) == np.argmax(y))
    assert rows[0].top_group_match  # a and b both favour group 3


def test_rank_vs_fairness_with_too_few_ranked_models_is_nan_with_a_note() -> None:
    row = crossmodel.rank_vs_fairness("scale_free_gap", {"a": 1, "b": None, "c": 4}, {"a": 0.1, "b": 0.2, "c": 0.3})
    assert math.isnan(row.spearman_rho) and math.isnan(row.p_value)
    assert row.n_models == 2
    assert row.note.startswith("only 2 models of this run have a published RewardBench rank")
    assert "needs at least 3" in row.note


def test_no_ranked_model_is_said_plainly_not_as_a_count_of_zero() -> None:
    """Issue 39: the demo's summary said "only 0 model(s) have a rewardbench_rank in the registry"."""
    none = crossmodel.rank_vs_fairness("scale_free_gap", {"a": None, "b": None}, {"a": 0.1, "b": 0.2})
    assert none.note.startswith("no model of this run has a published RewardBench rank") and "0 model" not in none.note
    one = crossmodel.rank_vs_fairness("scale_free_gap", {"a": 3, "b": None}, {"a": 0.1, "b": 0.2})
    assert one.note.startswith("only 1 model of this run has a published")


def test_rank_vs_fairness_matches_scipy_spearman() -> None:
    ranks = {"a": 1, "b": 3, "c": 7, "d": 12, "e": None}
    values = {"a": 0.1, "b": 0.35, "c": 0.2, "d": 0.6, "e": 0.05}
    row = crossmodel.rank_vs_fairness("scale_free_gap", ranks, values)
    reference = stats.spearmanr([1, 3, 7, 12], [0.1, 0.35, 0.2, 0.6])
    assert row.n_models == 4 and row.note == ""
    assert row.spearman_rho == pytest.approx(reference.statistic)
    assert row.p_value == pytest.approx(reference.pvalue)
