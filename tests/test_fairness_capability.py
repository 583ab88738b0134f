"""Fairness against capability (rmeval.benchmarks.fairness.capability) on tables: the per-model join, the rank
correlations with exact / permutation p-values, the top-2 claim, its reproduction row and summary sentence."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks.fairness import capability as cap
from rmeval.benchmarks.fairness.reproduction import our_values, verdict
from rmeval.errors import RmevalError
from rmeval.run_outputs.comparison import DIFFERS, NOT_COMPARABLE, SAME, Published


def test_exact_p_values_match_scipy_for_small_n():
    from scipy import stats

    x, y = [30.0, 41.0, 34.0, 50.0, 45.0], [6.0, 12.0, 11.0, 3.0, 4.0]
    a = cap.associate("abs_nmgd_percent", "RewardBench overall", x, y, permutations=100, seed=0,
                      higher_is_better=True)
    assert a.p_method == "exact" and a.n == 5
    assert a.spearman_rho == pytest.approx(stats.spearmanr(x, y).statistic)
    # scipy's own exact Kendall p (no ties) is the same two-sided test
    assert a.kendall_p == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue)
    exact_rho = stats.permutation_test((y,), lambda v: stats.spearmanr(x, v).statistic,
                                       permutation_type="pairings", n_resamples=math.inf).pvalue
    assert a.spearman_p == pytest.approx(exact_rho)
    assert a.better_is_fairer is (a.spearman_rho < 0)


def test_many_models_use_seeded_permutations_and_ranks_read_the_other_way():
    x = [float(i) for i in range(1, 11)]  # published ranks: 1 = best
    y = [float(i) + (0.5 if i % 3 == 0 else 0.0) for i in range(10)]  # worse rank, larger gap
    a = cap.associate("scale_free_gap", cap.PUBLISHED_RANK, x, y, permutations=500, seed=1, higher_is_better=False)
    assert a.p_method == "permutation (500)" and a.spearman_rho > 0.9 and a.better_is_fairer is True
    assert 0 < a.spearman_p <= 2 / 501  # the observed order counts once
    again = cap.associate("scale_free_gap", cap.PUBLISHED_RANK, x, y, permutations=500, seed=1,
                          higher_is_better=False)
    assert again == a


def test_too_few_or_constant_values_leave_the_correlation_empty_with_a_note():
    few = cap.associate("eta_sq", "m", [1.0, 2.0, math.nan], [0.1, 0.2, 0.3], 100, 0, True)
    assert few.n == 2 and math.isnan(few.spearman_rho) and "needs >= 3" in few.note
    flat = cap.associate("eta_sq", "m", [1.0, 1.0, 1.0], [0.1, 0.2, 0.3], 100, 0, True)
    assert "constant" in flat.note


def _rows() -> list[dict]:
    fairness = {"a": {"abs_nmgd_percent": 2.0}, "b": {"abs_nmgd_percent": 5.0},
                "c": {"abs_nmgd_percent": 9.0}, "d": {"abs_nmgd_percent": 1.0}}
    measures = {"RewardBench 2 overall": {"a": 80.0, "b": 70.0, "c": 60.0}}
    return cap.per_model_rows(fairness, measures, {"a": 3, "b": 1, "c": 2, "d": None})


def test_per_model_rows_keep_run_scores_and_label_published_ranks():
    rows = {row["model"]: row for row in _rows()}
    assert rows["a"]["RewardBench 2 overall"] == 80.0 and rows["a"][cap.PUBLISHED_RANK] == 3.0
    assert math.isnan(rows["d"]["RewardBench 2 overall"]) and rows["d"]["run_on"] == "none"


def test_the_top2_claim_prefers_the_run_s_scores_over_published_ranks():
    claim = cap.top2_claim(_rows(), ["RewardBench 2 overall"])
    assert claim["basis"] == "RewardBench 2 overall" and claim["top2"] == ["a", "b"]
    assert claim["lowest2"] == ["a", "b"] and claim["count"] == 2.0 and claim["n"] == 3
    by_rank = cap.top2_claim(_rows(), [])
    assert by_rank["basis"] == cap.PUBLISHED_RANK and by_rank["top2"] == ["b", "c"] and by_rank["count"] == 1.0
    assert "does not support" in cap.claim_sentence(by_rank) and "supports" in cap.claim_sentence(claim)
    assert "not tested" in cap.claim_sentence(cap.top2_claim(_rows()[:2], []))


def test_written_tables_round_trip_into_the_reproduction_row(tmp_path: Path):
    rows = _rows()
    associations = [cap.associate(k, "RewardBench 2 overall", [r["RewardBench 2 overall"] for r in rows],
                                  [r.get(k, math.nan) for r in rows], 100, 0, True) for k in cap.FAIRNESS]
    claim = cap.top2_claim(rows, ["RewardBench 2 overall"])
    cap.write_tables(rows, associations, ["RewardBench 2 overall"], tmp_path, claim)
    frame = pd.read_csv(tmp_path / "fairness_vs_capability.csv")
    assert cap.claim_from_table(frame)["count"] == 2.0
    assert "Top-2 by RewardBench 2 overall: a, b" in (tmp_path / "fairness_vs_capability.md").read_text()
    assert (tmp_path / "fairness_vs_capability_correlations.tex").read_text().count("\\\\") >= 5
    for name in ("table1", "table2", "table3", "table4"):
        pd.DataFrame({"model": []}).to_csv(tmp_path / f"{name}.csv", index=False)
    tables = {name: tmp_path / f"{name}.csv" for name in ("table1", "table2", "table3")}
    tables |= {"table4": tmp_path / "absent.csv", "capability": tmp_path / "fairness_vs_capability.csv"}
    ours, facts = our_values(tables)
    assert ours[(cap.CLAIM_MODEL, "scalar", "top2_lowest_abs_nmgd")] == 2.0
    paper = Published(2.0, False)
    assert verdict("top2_lowest_abs_nmgd", cap.CLAIM_MODEL, 2.0, paper, facts, 0.05, None) == SAME
    assert verdict("top2_lowest_abs_nmgd", cap.CLAIM_MODEL, 1.0, paper, facts, 0.05, None) == DIFFERS
    assert verdict("top2_lowest_abs_nmgd", cap.CLAIM_MODEL, math.nan, paper, facts, 0.05, None) == NOT_COMPARABLE


def test_a_capability_file_without_its_columns_is_named(tmp_path: Path):
    bad = tmp_path / "x_capability.csv"
    bad.write_text("model,score\na,1\n")
    with pytest.raises(RmevalError, match=r"x_capability.csv: missing column\(s\) \['measure'\]"):
        cap.capability_values([bad])


def test_rewardmath_declares_its_accuracy_as_capability(tmp_path: Path):
    from rmeval.benchmarks.rewardmath.catalogue import BENCHMARK
    from rmeval.benchmarks.rewardmath.metric_tables import MetricTables, capability_table

    rows = [{"setup": "prm", "source": "workflow", "aggregation": agg, "accuracy": acc}
            for agg, acc in (("prod", 10.0), ("min", 30.0), ("geo", 20.0))]
    rows += [{"setup": "cls", "source": "workflow", "aggregation": "scalar", "accuracy": 40.0},
             {"setup": "Official", "source": "official", "aggregation": "scalar", "accuracy": 90.0}]
    capability_table(MetricTables(rows, [], [], [], "min"), tmp_path, "rewardmath_capability")
    written = cap.capability_values([tmp_path / "rewardmath_capability.csv"])
    assert written == {"RewardMATH accuracy": {"prm": 30.0, "cls": 40.0}}  # the run's aggregation; no official rows
    assert BENCHMARK.get(BENCHMARK.capability).path == "results/tables/rewardmath_capability.csv"


def test_the_correlations_carry_intervals_and_the_summary_line_reads_them(tmp_path: Path):
    """Issue 41: rho and tau get 95% intervals valid from 3 models on (stats.rank_ci) in the correlations table, and
    the "better models are fairer" line quotes rho's."""
    from rmeval.benchmarks.fairness.summary import better_is_fairer_lines

    x, y = [30.0, 41.0, 34.0, 50.0, 45.0], [6.0, 12.0, 11.0, 3.0, 4.0]
    a = cap.associate("scale_free_gap", "RewardBench overall", x, y, permutations=100, seed=0, higher_is_better=True)
    assert a.spearman_ci_low <= a.spearman_rho <= a.spearman_ci_high
    assert a.kendall_ci_low <= a.kendall_tau <= a.kendall_ci_high
    assert a.spearman_ci_low < 0 < a.spearman_ci_high  # 5 models, exact p = 0.35: the interval holds 0
    rows = _rows()
    cap.write_tables(rows, [a], ["RewardBench overall"], tmp_path, cap.top2_claim(rows, []))
    table = pd.read_csv(tmp_path / "fairness_vs_capability_correlations.csv")
    assert {"spearman_ci_low", "spearman_ci_high", "kendall_ci_low", "kendall_ci_high"} <= set(table.columns)
    (line,) = better_is_fairer_lines({"fairness_vs_capability_correlations": table}, 0.05)
    assert f"95% CI {a.spearman_ci_low:.2f} to {a.spearman_ci_high:.2f}" in line and "5 models" in line
