"""Rows of `rewardmath_vs_rewardbench.csv` as points, and whether RewardBench math-prm ranks models as RewardMATH does.

Used by the table notes (`rmeval rewardmath-metrics`), the figure and the summary, so that all three report
the same correlation over the same models: every model (not baseline) with both scores on the full benchmarks
(483 RewardMATH problems, 447 RewardBench pairs), a PRM under one step aggregation. Runs on fewer problems are
left out and named.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_MATH_PRM_PAIRS, REWARDMATH_PROBLEMS
from rmeval.errors import RmevalError

REQUIRED_COLUMNS = ("model", "kind", "aggregation", "source", "n_rewardmath", "rewardmath_accuracy",
                    "rewardmath_mrr", "n_rewardbench", "rewardbench_accuracy")


def _number(value: Any) -> float:
    if value is None or value == "":
        return math.nan
    return float(value)


@dataclass(frozen=True)
class Point:
    model: str
    setup: str
    kind: str  # classifier | PRM | LLM judge | baseline
    aggregation: str
    source: str
    n_rewardmath: int
    accuracy: float
    accuracy_ci: tuple[float, float]
    mrr: float
    mrr_ci: tuple[float, float]
    n_rewardbench: int | None
    rewardbench: float
    rewardbench_ci: tuple[float, float]

    @property
    def rewardmath_full(self) -> bool:
        return self.n_rewardmath >= REWARDMATH_PROBLEMS

    @property
    def rewardbench_full(self) -> bool:
        return (self.n_rewardbench or 0) >= REWARDBENCH_MATH_PRM_PAIRS

    @property
    def full_set(self) -> bool:
        """On both full benchmarks (what the cross-benchmark correlation needs)."""
        return self.rewardmath_full and self.rewardbench_full

    @property
    def has_rewardbench(self) -> bool:
        return not math.isnan(self.rewardbench)

    @property
    def is_baseline(self) -> bool:
        return self.kind == "baseline"


def point_from_row(row: Mapping[str, Any]) -> Point:
    n_rewardbench = row.get("n_rewardbench")
    return Point(
        model=str(row["model"]), setup=str(row.get("setup") or row["model"]), kind=str(row["kind"]),
        aggregation=str(row["aggregation"]), source=str(row["source"]),
        n_rewardmath=int(_number(row["n_rewardmath"])),
        accuracy=_number(row["rewardmath_accuracy"]),
        accuracy_ci=(_number(row.get("rewardmath_accuracy_ci_low")), _number(row.get("rewardmath_accuracy_ci_high"))),
        mrr=_number(row["rewardmath_mrr"]),
        mrr_ci=(_number(row.get("rewardmath_mrr_ci_low")), _number(row.get("rewardmath_mrr_ci_high"))),
        n_rewardbench=None if n_rewardbench in (None, "") else int(_number(n_rewardbench)),
        rewardbench=_number(row["rewardbench_accuracy"]),
        rewardbench_ci=(_number(row.get("rewardbench_accuracy_ci_low")),
                        _number(row.get("rewardbench_accuracy_ci_high"))),
    )


def read_points(path: Path) -> list[Point]:
    if not path.is_file():
        raise RmevalError(f"table not found: {path} (run rmeval rewardmath-metrics)")
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in REQUIRED_COLUMNS if column not in (reader.fieldnames or [])]
        if missing:
            raise RmevalError(f"{path}: missing column(s) {missing}")
        rows = list(reader)
    points = []
    for index, row in enumerate(rows):
        try:
            points.append(point_from_row(row))
        except ValueError as error:
            raise RmevalError(f"{path}: row {index + 2}: {error}") from error
    return points


def one_per_model(points: Sequence[Point], prm_aggregation: str) -> list[Point]:
    """Each setup once: PRMs only under `prm_aggregation` (every other kind has one aggregation)."""
    return [point for point in points if point.kind != "PRM" or point.aggregation == prm_aggregation]


@dataclass(frozen=True)
class Agreement:
    metric: str  # accuracy | mrr
    n: int
    spearman: float
    spearman_p: float
    kendall: float
    kendall_p: float
    left_out: tuple[str, ...]  # models with both scores but on fewer problems than the full set

    def describe(self) -> str:
        """One line for a figure title or a table note."""
        if self.n < 3:
            text = f"fewer than 3 full-set models (n = {self.n}): no rank correlation"
        else:
            text = f"Spearman ρ = {self.spearman:.2f}, Kendall τ = {self.kendall:.2f} (n = {self.n} models"
            text += ")" if not self.left_out else f"; {len(self.left_out)} partial run(s) left out)"
        return text


def rank_agreement(points: Sequence[Point], prm_aggregation: str, metric: str = "accuracy") -> Agreement:
    """Rank correlation of RewardBench math-prm accuracy with RewardMATH `metric` over full-set models."""
    candidates = [point for point in one_per_model(points, prm_aggregation)
                  if not point.is_baseline and point.has_rewardbench]
    used = [point for point in candidates if point.full_set]
    left_out = tuple(point.model for point in candidates if not point.full_set)
    if len(used) < 3:
        return Agreement(metric, len(used), math.nan, math.nan, math.nan, math.nan, left_out)
    from scipy import stats

    xs = [point.rewardbench for point in used]
    ys = [getattr(point, metric) for point in used]
    spearman = stats.spearmanr(xs, ys)
    kendall = stats.kendalltau(xs, ys)
    return Agreement(metric, len(used), float(spearman.statistic), float(spearman.pvalue),
                     float(kendall.statistic), float(kendall.pvalue), left_out)
