"""Reward-free baselines for RewardMATH and RewardBench math-prm, computed from the solutions themselves.

A baseline is a rule that scores a solution without reading its mathematics: the number of steps (fewer or
more is better) or its length in characters of the scored response text (the steps joined by newlines, as
`rmeval rewardmath-prepare` writes it; characters, not tokens, so that no tokenizer is involved). The scores
go through the same metrics as a model's (`metrics.summarize`, `metrics.pairwise_accuracy`): a tie fails
accuracy and ranks against the chosen solution in MRR. RewardBench's chosen solution is shorter than its
rejected one in most pairs, so a model that merely prefers short solutions scores high there (Kim et al. 2024).

`random` is the expectation of a uniformly random ranking (no ties): accuracy 1 / (k + 1) and MRR
H(k + 1) / (k + 1) for k rejected solutions (10 % and 29.29 % for RewardMATH's 1-of-10), 50 % one-to-one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rewardmath.metrics import PairScores, ProblemScores, SetupScores
from rmeval.benchmarks.rewardmath.official import PairSetup
from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_STEM, SUBJECT_SLUGS
from rmeval.errors import RmevalError

RANDOM = "random"


@dataclass(frozen=True)
class Baseline:
    name: str  # setup name in the tables
    label: str  # what it does, for notes and the summary
    score: Callable[[Sequence[str]], float] | None  # steps -> score; None: the random expectation


def _chars(steps: Sequence[str]) -> float:
    return float(len("\n".join(steps)))


BASELINES: tuple[Baseline, ...] = (
    Baseline(RANDOM, "random ranking (expected value)", None),
    Baseline("fewest steps", "prefers the solution with the fewest steps", lambda steps: -float(len(steps))),
    Baseline("most steps", "prefers the solution with the most steps", lambda steps: float(len(steps))),
    Baseline("shortest solution", "prefers the shortest solution (characters)", lambda steps: -_chars(steps)),
    Baseline("longest solution", "prefers the longest solution (characters)", _chars),
)
BASELINE_NAMES = tuple(baseline.name for baseline in BASELINES)
# Shown in the tables (the setup column keeps `name`).
BASELINE_DISPLAY = {RANDOM: "Random (expected)", "fewest steps": "Fewest steps", "most steps": "Most steps",
                    "shortest solution": "Shortest solution (chars)", "longest solution": "Longest solution (chars)"}


def harmonic(n: int) -> float:
    return sum(1.0 / rank for rank in range(1, n + 1))


@dataclass(frozen=True)
class RandomExpectation:
    n: int
    accuracy: float  # percent
    mrr: float  # percent


def random_rewardmath(rejected_counts: Sequence[int]) -> RandomExpectation:
    if not rejected_counts:
        raise RmevalError("no problems for the random baseline")
    accuracy = [100.0 / (k + 1) for k in rejected_counts]
    mrr = [100.0 * harmonic(k + 1) / (k + 1) for k in rejected_counts]
    return RandomExpectation(len(rejected_counts), sum(accuracy) / len(accuracy), sum(mrr) / len(mrr))


def _steps(value: Any, where: str) -> list[str]:
    if value is None or isinstance(value, str) or len(value) == 0:
        raise RmevalError(f"{where}: no solution steps to compute the baselines from")
    return [str(step) for step in value]


@dataclass(frozen=True)
class SolutionProblem:
    key: str
    chosen: list[str]
    rejected: tuple[list[str], ...]
    subject: str | None
    level: int | None


def read_rewardmath_solutions(data_dir: Path, subjects: Sequence[str] = SUBJECT_SLUGS) -> list[SolutionProblem]:
    """The prepared subject tables, grouped by problem: the chosen solution's steps and the rejected ones'."""
    import pandas as pd

    problems: list[SolutionProblem] = []
    for slug in subjects:
        path = data_dir / f"{slug}.parquet"
        if not path.is_file():
            continue
        table = pd.read_parquet(path, columns=["id", "problem_id", "solution_type", "steps", "subject", "level"])
        for problem_id, rows in table.groupby("problem_id", sort=False):
            where = f"{path}: problem_id {problem_id}"
            chosen = rows[rows["solution_type"] == "chosen"]
            if len(chosen) != 1:
                raise RmevalError(f"{where}: {len(chosen)} chosen solutions; expected exactly one")
            first = chosen.iloc[0]
            rejected = tuple(_steps(steps, f"{where}: id {row_id!r}") for row_id, steps in
                             zip(rows.loc[rows["solution_type"] != "chosen", "id"],
                                 rows.loc[rows["solution_type"] != "chosen", "steps"], strict=True))
            level = first["level"]
            problems.append(SolutionProblem(where, _steps(first["steps"], f"{where}: chosen"), rejected,
                                            str(first["subject"]), None if level != level else int(level)))
    return problems


def read_rewardbench_solutions(data_dir: Path) -> list[tuple[str, list[str], list[str]]]:
    """(key, chosen steps, rejected steps) per pair of the prepared RewardBench math-prm table."""
    import pandas as pd

    path = data_dir / f"{REWARDBENCH_STEM}.parquet"
    if not path.is_file():
        return []
    table = pd.read_parquet(path, columns=["pair_id", "role", "steps"])
    pairs: dict[str, dict[str, list[str]]] = {}
    for pair_id, role, steps in zip(table["pair_id"], table["role"], table["steps"], strict=True):
        where = f"{path}: pair {pair_id}"
        roles = pairs.setdefault(str(pair_id), {})
        if role in roles:
            raise RmevalError(f"{where}: two {role} rows")
        roles[str(role)] = _steps(steps, f"{where} ({role})")
    out = []
    for pair_id, roles in pairs.items():
        if set(roles) != {"chosen", "rejected"}:
            raise RmevalError(f"{path}: pair {pair_id} needs one chosen and one rejected row, has {sorted(roles)}")
        out.append((f"{path}: pair {pair_id}", roles["chosen"], roles["rejected"]))
    return out


def rewardmath_baseline_setups(problems: Sequence[SolutionProblem]) -> list[SetupScores]:
    """One SetupScores per scored baseline (not `random`: see `random_rewardmath`)."""
    setups = []
    for baseline in BASELINES:
        if baseline.score is None:
            continue
        scored = tuple(
            ProblemScores(problem.key, baseline.score(problem.chosen),
                          tuple(baseline.score(steps) for steps in problem.rejected), problem.subject, problem.level)
            for problem in problems
        )
        setups.append(SetupScores(baseline.name, "scalar", scored))
    return setups


def rewardbench_baseline_setups(pairs: Sequence[tuple[str, list[str], list[str]]]) -> list[PairSetup]:
    setups = []
    for baseline in BASELINES:
        if baseline.score is None:
            continue
        scored = tuple(PairScores(key, baseline.score(chosen), baseline.score(rejected)) for key, chosen, rejected in pairs)
        setups.append(PairSetup(baseline.name, "scalar", scored))
    return setups
