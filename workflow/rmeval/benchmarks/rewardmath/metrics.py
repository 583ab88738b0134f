"""RewardMATH's one-to-many metrics and RewardBench's one-to-one accuracy, with 95 % Wilson CIs.

Definitions (Kim et al. 2024; the official `RewardMATHEvaluation`):
- accuracy: the chosen solution scores strictly above every rejected one; a tie is a failure;
- MRR: 1 / rank of the chosen solution, where every rejected solution scoring at least as high ranks
  above it (ties are ranked against the chosen one), so all-equal scores give 1 / (k + 1).
Each problem (each row as given; duplicated problems count twice, as in the official files) weighs the same.

Intervals: accuracy is a mean of 0/1 outcomes and a problem's reciprocal rank lies in [1 / (k + 1), 1] for k
rejected solutions, so both are means of bounded items: `rmeval.intervals.bounded_mean_interval` (the Wilson score
interval; conservative for the non-binary MRR). A percentile bootstrap over problems collapsed to zero width when
every problem was solved (or none) and covered 62 % at a true accuracy of 0.99 on 100 problems (issue 33).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rmeval.benchmarks.rewardbench.scoring import pair_won
from rmeval.errors import RmevalError
from rmeval.intervals import bounded_mean_interval


@dataclass(frozen=True)
class ProblemScores:
    """The scores of one problem's chosen solution and its rejected ones, under one aggregation."""

    key: str  # where it came from (file row / problem_id), for error messages
    chosen: float
    rejected: tuple[float, ...]
    subject: str | None = None
    level: int | None = None


@dataclass(frozen=True)
class SetupScores:
    """All problems of one setup (a model, or an official result file) under one aggregation."""

    setup: str
    aggregation: str  # scalar | prod | geo | min | mean | last | pairwise
    problems: tuple[ProblemScores, ...]
    n_missing_verdicts: int = 0  # LLM judges: null verdicts (a loss) or ratings (the lowest rating)
    mode: str = ""  # classifier | PRM | judge (direct) | judge (pairwise)
    position_agreement: float | None = None  # pairwise judges judged in both orders: share of consistent verdicts


@dataclass(frozen=True)
class Outcome:
    correct: bool
    reciprocal_rank: float


def check_finite(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RmevalError(f"{where}: score {value!r} is not a finite number")
    return float(value)


def problem_outcome(problem: ProblemScores) -> Outcome:
    if not problem.rejected:
        raise RmevalError(f"{problem.key}: no rejected solutions to compare the chosen one against")
    check_finite(problem.chosen, f"{problem.key}: chosen")
    for index, value in enumerate(problem.rejected):
        check_finite(value, f"{problem.key}: rejected[{index}]")
    at_least_as_high = sum(value >= problem.chosen for value in problem.rejected)
    return Outcome(correct=at_least_as_high == 0, reciprocal_rank=1.0 / (1 + at_least_as_high))


@dataclass(frozen=True)
class MetricSummary:
    n: int
    accuracy: float  # percent
    mrr: float  # percent
    accuracy_ci: tuple[float, float]
    mrr_ci: tuple[float, float]


def summarize(problems: Sequence[ProblemScores]) -> MetricSummary:
    """Accuracy and MRR in percent, with their 95 % Wilson intervals (module docstring)."""
    outcomes = [problem_outcome(problem) for problem in problems]
    if not outcomes:
        raise RmevalError("no problems to evaluate")
    correct = [100.0 * outcome.correct for outcome in outcomes]
    reciprocal = [100.0 * outcome.reciprocal_rank for outcome in outcomes]
    lowest_rank = 100.0 / (1 + max(len(problem.rejected) for problem in problems))
    return MetricSummary(
        n=len(outcomes),
        accuracy=sum(correct) / len(correct),
        mrr=sum(reciprocal) / len(reciprocal),
        accuracy_ci=bounded_mean_interval(correct, 0.0, 100.0),
        mrr_ci=bounded_mean_interval(reciprocal, lowest_rank, 100.0),
    )


@dataclass(frozen=True)
class PairScores:
    key: str
    chosen: float
    rejected: float


def pairwise_accuracy(pairs: Sequence[PairScores]) -> tuple[int, float, tuple[float, float]]:
    """RewardBench's one-to-one accuracy (chosen strictly above rejected), percent, with its 95 % Wilson CI."""
    if not pairs:
        raise RmevalError("no pairs to evaluate")
    wins = []
    for pair in pairs:
        chosen = check_finite(pair.chosen, f"{pair.key}: chosen")
        rejected = check_finite(pair.rejected, f"{pair.key}: rejected")
        wins.append(100.0 * pair_won(chosen, rejected))  # RewardBench's own rule: one code path for math-prm
    return len(wins), sum(wins) / len(wins), bounded_mean_interval(wins, 0.0, 100.0)
