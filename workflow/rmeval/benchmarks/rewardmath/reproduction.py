"""The RewardMATH benchmark's rows of the run's reproduction table (rmeval.run_outputs.reproduction).

Reads our `rewardmath_metrics.csv` (the catalogue's `reproduction_inputs`; one row per setup and aggregation:
model or setup, aggregation, n, accuracy, mrr) and Kim et al.'s official results
(`resources/published/kim2024_rewardmath.yaml`, the catalogue's `published`).

Verdict rule: accuracy and MRR (%) agree within +-`POINTS_TOLERANCE` percentage points (2; the binomial SE of an
accuracy near 20% over 483 problems is about 1.8 points); a run on fewer of the 483 problems is not comparable
and named in a note.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rewardmath.subjects import REWARDMATH_PROBLEMS
from rmeval.errors import RmevalError
from rmeval.run_outputs.comparison import (
    DIFFERS,
    NOT_COMPARABLE,
    SAME,
    SCALAR,
    Comparison,
    Published,
    ReproductionPart,
    Statistic,
    load_published,
)

if TYPE_CHECKING:
    from rmeval.run_outputs.context import RunContext

POINTS_TOLERANCE = 2.0
STATISTICS: dict[str, str] = {  # key -> label shown in the tables
    "rewardmath_accuracy": "RewardMATH accuracy (%)",
    "rewardmath_mrr": "RewardMATH MRR (%)",
}
DECIMALS = 2
COLUMNS = {"accuracy": "rewardmath_accuracy", "mrr": "rewardmath_mrr"}


def statistics(points_tolerance: float = POINTS_TOLERANCE) -> dict[str, Statistic]:
    rule = f"within +-{points_tolerance:g} percentage points"
    return {key: Statistic(key, label, rule, DECIMALS) for key, label in STATISTICS.items()}


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def our_values(path: Path) -> tuple[dict[tuple[str, str, str], float], dict[tuple[str, str], int]]:
    """(model, aggregation, statistic) -> our value, and (model, aggregation) -> problems it ran on. A model is
    its display name (`model`, else `setup`); the first row of a (model, aggregation) wins."""
    import pandas as pd

    if not path.exists():
        raise RmevalError(f"{path} is missing; run `rmeval rewardmath-metrics` first")
    frame = pd.read_csv(path)
    name = "model" if "model" in frame.columns else "setup"
    missing = [column for column in (name, "aggregation", *COLUMNS) if column not in frame.columns]
    if missing:
        raise RmevalError(f"{path} lacks column(s) {missing}")
    ours: dict[tuple[str, str, str], float] = {}
    problems: dict[tuple[str, str], int] = {}
    for row in frame.to_dict("records"):
        aggregation = row["aggregation"]
        key = (str(row[name]), SCALAR if _missing(aggregation) or not aggregation else str(aggregation))
        if (*key, "rewardmath_accuracy") in ours:
            continue
        for column, statistic in COLUMNS.items():
            ours[(*key, statistic)] = float(row[column])
        if "n" in row and not _missing(row["n"]):
            problems[key] = int(row["n"])
    return ours, problems


def verdict(ours: float, paper: Published, problems: int | None,
            points_tolerance: float = POINTS_TOLERANCE) -> str:
    if problems is not None and problems < REWARDMATH_PROBLEMS:
        return NOT_COMPARABLE
    return SAME if abs(ours - paper.value) <= points_tolerance else DIFFERS


def reproduction_part(context: RunContext) -> ReproductionPart:
    """Our accuracy and MRR beside the official results (`Benchmark.reproduction`)."""
    published = load_published(context.published, STATISTICS)
    (key,) = context.benchmark.reproduction_inputs
    ours, problems = our_values(context.path(key))
    shown = statistics()
    comparisons = []
    for (model, aggregation, statistic), value in ours.items():
        paper = published.values.get((model, aggregation, statistic))
        if paper is not None:
            comparisons.append(Comparison(model, aggregation, shown[statistic], value, paper,
                                          verdict(value, paper, problems.get((model, aggregation))),
                                          published.where_printed.get(statistic, "")))
    compared = {comparison.model for comparison in comparisons}
    small = [f"{model} ({aggregation}) on {n} problems" for (model, aggregation), n in problems.items()
             if n < REWARDMATH_PROBLEMS and model in compared]
    notes = (f"Not comparable, on fewer than the {REWARDMATH_PROBLEMS} problems of the official results: "
             f"{', '.join(small)}.",) if small else ()
    models = tuple(dict.fromkeys(model for model, _, _ in ours))
    return ReproductionPart(tuple(shown.values()), tuple(comparisons), models, published.models, published.papers,
                            notes)
