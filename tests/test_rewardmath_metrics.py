"""RewardMATH metric definitions: edge cases by hand, and agreement with an independent re-implementation of the
official evaluation (sort-based MRR, verdict counting) on the shared official result files."""

from __future__ import annotations

import json
import math

import pytest
from rmeval.benchmarks.rewardmath.aggregation import STEP_AGGREGATIONS, aggregate, check_step_scores
from rmeval.benchmarks.rewardmath.metrics import (
    PairScores,
    ProblemScores,
    pairwise_accuracy,
    problem_outcome,
    summarize,
)
from rmeval.benchmarks.rewardmath.official import read_rewardmath_file
from rmeval.errors import RmevalError


def _problem(chosen, rejected, key="p"):
    return ProblemScores(key, chosen, tuple(rejected))


def test_strict_win_is_correct_with_rank_one():
    outcome = problem_outcome(_problem(2.0, [1.0, 0.5, -3.0]))
    assert outcome.correct and outcome.reciprocal_rank == 1.0


def test_tie_with_best_rejected_fails_and_ranks_against_chosen():
    outcome = problem_outcome(_problem(1.0, [1.0, 0.0, 0.5]))
    assert not outcome.correct
    assert outcome.reciprocal_rank == pytest.approx(1 / 2)


def test_all_equal_scores_rank_chosen_last():
    outcome = problem_outcome(_problem(0.3, [0.3] * 9))
    assert not outcome.correct
    assert outcome.reciprocal_rank == pytest.approx(1 / 10)


def test_rank_counts_rejected_at_or_above_chosen():
    outcome = problem_outcome(_problem(0.0, [1.0, 2.0, 0.0, -1.0, -2.0]))
    assert outcome.reciprocal_rank == pytest.approx(1 / 4)


def test_no_rejected_solutions_is_an_error():
    with pytest.raises(RmevalError, match="no rejected"):
        problem_outcome(_problem(1.0, []))


@pytest.mark.parametrize("bad", [math.nan, math.inf, None, "7"])
def test_non_finite_scores_name_the_problem(bad):
    with pytest.raises(RmevalError, match=r"row 3: rejected\[1\]"):
        problem_outcome(_problem(1.0, [0.0, bad], key="row 3"))


def test_summary_percentages_and_n():
    problems = [_problem(2, [1, 1]), _problem(1, [1, 0]), _problem(0, [1, 2])]
    summary = summarize(problems)
    assert summary.n == 3
    assert summary.accuracy == pytest.approx(100 / 3)
    assert summary.mrr == pytest.approx(100 * (1 + 1 / 2 + 1 / 3) / 3)
    assert summary.accuracy_ci[0] < summary.accuracy < summary.accuracy_ci[1]
    assert summary.mrr_ci[0] < summary.mrr < summary.mrr_ci[1]


def test_intervals_are_wilson_on_the_bounded_scale():
    from statsmodels.stats.proportion import proportion_confint

    # 2 of 3 problems ranked first, one last of three solutions: accuracy 2/3; per-problem MRR in [1/3, 1].
    problems = [_problem(2, [1, 1]), _problem(3, [1, 0]), _problem(0, [1, 2])]
    summary = summarize(problems)
    low, high = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert summary.accuracy_ci == pytest.approx((100 * low, 100 * high), rel=1e-9)
    rescaled = (summary.mrr / 100 - 1 / 3) / (2 / 3)  # (7/9 - 1/3) / (2/3) = 2/3
    low, high = proportion_confint(rescaled * 3, 3, alpha=0.05, method="wilson")
    assert summary.mrr_ci == pytest.approx((100 * (1 / 3 + 2 / 3 * low), 100 * (1 / 3 + 2 / 3 * high)), rel=1e-9)


def test_all_solved_gives_a_one_sided_interval_not_a_point():
    summary = summarize([_problem(1, [0, 0])] * 100)
    assert summary.accuracy_ci[1] == 100.0 and summary.accuracy_ci[0] < 97  # Wilson: 96.30
    n, accuracy, (low, high) = pairwise_accuracy([PairScores(str(i), 0.0, 1.0) for i in range(100)])
    assert (accuracy, low) == (0.0, 0.0) and high > 3


def test_step_list_of_length_one_gives_the_step_for_every_aggregation():
    steps = check_step_scores([0.42], "row")
    assert {name: aggregate(steps, name, "row") for name in STEP_AGGREGATIONS} == dict.fromkeys(STEP_AGGREGATIONS, 0.42)


def test_step_aggregations_values():
    steps = [0.5, 0.8, 0.2]
    assert aggregate(steps, "prod", "r") == pytest.approx(0.08)
    assert aggregate(steps, "geo", "r") == pytest.approx(0.08 ** (1 / 3))
    assert aggregate(steps, "min", "r") == 0.2
    assert aggregate(steps, "mean", "r") == pytest.approx(0.5)
    assert aggregate(steps, "last", "r") == 0.2


@pytest.mark.parametrize(("value", "message"), [([], "empty list"), ("0.3", "expected a list"),
                                                ([0.1, None], "step 1"), ([0.1, math.nan], "step 1")])
def test_bad_step_lists_are_errors(value, message):
    with pytest.raises(RmevalError, match=message):
        check_step_scores(value, "file.json: row 0: score[2]")


def test_geometric_mean_of_negative_product_is_an_error():
    with pytest.raises(RmevalError, match="geo"):
        aggregate([-0.5, 0.5], "geo", "row 0")


def test_rewardbench_pairwise_accuracy_counts_ties_as_failures():
    pairs = [PairScores("a", 1.0, 0.0), PairScores("b", 0.0, 0.0), PairScores("c", -1.0, 2.0), PairScores("d", 3, 1)]
    n, accuracy, _ = pairwise_accuracy(pairs)
    assert (n, accuracy) == (4, 50.0)


# --- the official evaluation, re-implemented here from its definitions, independently of rmeval ---

def _official_mrr(chosen, rejected):
    items = [(value, "rej") for value in rejected] + [(value, "cho") for value in chosen]
    ordered = sorted(items, key=lambda item: (item[0], item[1]), reverse=True)
    return 1 / next(index for index, item in enumerate(ordered, start=1) if item[1] == "cho")


_OFFICIAL_STEP_FUNCTIONS = {
    "prod": math.prod,
    "geo": lambda steps: math.prod(steps) ** (1 / len(steps)),
    "min": min,
    "mean": lambda steps: sum(steps) / len(steps),
    "last": lambda steps: steps[-1],
}


def _official_metrics(rows, function):
    accuracy, mrr = [], []
    for row in rows:
        chosen, rejected = [], []
        if function == "pairwise":
            wins = [verdict == position for verdict, position in zip(row["score"], row["chosen_position"], strict=True)]
            chosen = [sum(wins) + 1]
            rejected = [1 if win else len(wins) + 2 for win in wins]
        else:
            for reference, score in zip(row["solution_reference"], row["score"], strict=True):
                score = _OFFICIAL_STEP_FUNCTIONS[function](score) if function != "scalar" else score
                (chosen if reference == "human_to_GPT-4" else rejected).append(score)
        accuracy.append(min(chosen) > max(rejected))
        mrr.append(_official_mrr(chosen, rejected))
    return round(100 * sum(accuracy) / len(accuracy), 2), round(100 * sum(mrr) / len(mrr), 2)


@pytest.mark.parametrize(("stem", "aggregation", "expected"), [
    ("internlm2_reward", "scalar", (37.27, 55.17)),  # anchors from issue 6
    ("Math_Shepherd_reward", "prod", (17.18, 34.68)),
    ("chatgpt_reward", "scalar", None),  # 485 rows: duplicated problems counted as given; many ties
    ("gpt4_pairwise_reward", "pairwise", None),  # null verdicts
    ("llama3_8B_pairwise_reward", "pairwise", None),
])
def test_official_files_match_the_official_definitions(shared_data, stem, aggregation, expected):
    path = shared_data / "rewardmath" / "results_rewardmath" / f"{stem}.json"
    rows = json.loads(path.read_text())
    official = _official_metrics(rows, aggregation)
    if expected is not None:
        assert official == expected
    setup = next(s for s in read_rewardmath_file(path) if s.aggregation == aggregation)
    summary = summarize(setup.problems)
    assert summary.n == len(rows)
    assert (round(summary.accuracy, 2), round(summary.mrr, 2)) == official


def test_every_shared_official_file_and_aggregation(shared_data):
    files = sorted((shared_data / "rewardmath" / "results_rewardmath").glob("*.json"))
    assert len(files) == 31
    checked = 0
    for path in files:
        rows = json.loads(path.read_text())
        for setup in read_rewardmath_file(path):
            summary = summarize(setup.problems)
            official = _official_metrics(rows, setup.aggregation)
            assert (round(summary.accuracy, 2), round(summary.mrr, 2)) == official, (path.stem, setup.aggregation)
            checked += 1
    assert checked == 47
