"""The tables of `rmeval rewardmath-metrics`, one builder each; the catalogue (rewardmath/catalogue.py) names them.

Every builder takes the rows computed once by the command (`MetricTables`), the output folder and the file stem
from the catalogue, and writes the CSV (machine columns) and, for the three headline tables, the Markdown and
LaTeX versions (display rows: human labels, a dagger on partial runs, notes under the table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rewardmath.aggregation import STEP_AGGREGATIONS
from rmeval.benchmarks.rewardmath.names import BASELINE, JUDGE
from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_MATH_PRM_PAIRS, REWARDMATH_PROBLEMS
from rmeval.benchmarks.rewardmath.tables import (
    DAGGER,
    PAIR_HEADERS,
    SIDE_LATEX_HEADERS,
    SOURCE_LABELS,
    write_table,
)

Row = dict[str, Any]

WILSON_NOTE = ("CIs: Wilson score intervals (Wilson 1927) of the share of pairs won; a bootstrap collapses to zero "
               "width at 0 or 100%.")

METRIC_COLUMNS = ["model", "setup", "source", "kind", "aggregation", "n", "full_set", "accuracy", "mrr"]
METRIC_BRIEF = ["model", "source", "kind", "aggregation", "n", "accuracy", "mrr"]
CI_COLUMNS = ["model", "setup", "aggregation", "source", "kind", "n", "full_set", "accuracy", "accuracy_ci_low",
              "accuracy_ci_high", "mrr", "mrr_ci_low", "mrr_ci_high", "n_missing_verdicts", "position_agreement"]
BREAKDOWN_COLUMNS = ["model", "setup", "aggregation", "by", "value", "n", "accuracy", "accuracy_ci_low",
                     "accuracy_ci_high", "mrr", "mrr_ci_low", "mrr_ci_high"]
REWARDBENCH_COLUMNS = ["model", "setup", "source", "kind", "aggregation", "n", "full_set", "accuracy",
                       "accuracy_ci_low", "accuracy_ci_high"]
REWARDBENCH_BRIEF = ["model", "source", "kind", "aggregation", "n", "accuracy", "accuracy_ci"]
SIDE_BY_SIDE_COLUMNS = ["model", "setup", "source", "kind", "aggregation", "n_rewardmath", "rewardmath_full_set",
                        "rewardmath_accuracy", "rewardmath_accuracy_ci_low", "rewardmath_accuracy_ci_high",
                        "rewardmath_mrr", "rewardmath_mrr_ci_low", "rewardmath_mrr_ci_high", "n_rewardbench",
                        "rewardbench_full_set", "rewardbench_accuracy", "rewardbench_accuracy_ci_low",
                        "rewardbench_accuracy_ci_high", "rewardbench_setup"]
SIDE_BY_SIDE_BRIEF = ["model", "kind", "aggregation", "n_rewardmath", "rewardmath_accuracy", "rewardmath_mrr",
                      "n_rewardbench", "rewardbench_accuracy"]

FULL = ("full_set",)
BOTH_FULL = ("rewardmath_full_set", "rewardbench_full_set")
LATEX_RULES = {"rule_between": "group"}  # a \midrule between this run's, official and baseline rows


@dataclass(frozen=True)
class MetricTables:
    """The rows behind every table of rewardmath-metrics (rmeval.benchmarks.rewardmath.cli_metrics)."""

    metrics: list[Row]
    rewardbench: list[Row]
    breakdown: list[Row]
    side_by_side: list[Row]
    prm_aggregation: str


@dataclass(frozen=True)
class Shown:
    """A headline table's Markdown and LaTeX versions: their columns, and style options for both or LaTeX only."""

    markdown: list[str]
    latex: list[str]
    style: dict[str, Any] = field(default_factory=dict)
    latex_style: dict[str, Any] = field(default_factory=dict)


_SOURCE_ORDER = {"workflow": 0, "official": 1, BASELINE: 2}
_KIND_ORDER = {"classifier": 0, "PRM": 1, JUDGE: 2, BASELINE: 3}


def display_rows(rows: list[Row], full_keys: tuple[str, ...]) -> list[Row]:
    """Rows for Markdown / LaTeX: this run's models first, then official ones by kind and name, then the baselines;
    a dagger on partial runs, human source labels, the file stem only for official rows, the CI as one cell."""
    from rmeval.benchmarks.rewardmath.baselines import BASELINE_NAMES

    def order(row: Row) -> tuple:
        aggregation = STEP_AGGREGATIONS.index(row["aggregation"]) if row["aggregation"] in STEP_AGGREGATIONS else -1
        baseline = BASELINE_NAMES.index(row["setup"]) if row["setup"] in BASELINE_NAMES else -1
        return (_SOURCE_ORDER.get(row["source"], 0), _KIND_ORDER.get(row["kind"], 0), baseline,
                row["model"].lower(), aggregation)

    shown = []
    for row in sorted(rows, key=order):
        partial = any(row.get(key) is False for key in full_keys)
        low, high = row.get("accuracy_ci_low"), row.get("accuracy_ci_high")
        ci = "" if low is None or high is None or low != low or high != high else f"{low:.2f}–{high:.2f}"
        shown.append({**row, "model": row["model"] + (f" {DAGGER}" if partial else ""),
                      "source": SOURCE_LABELS.get(row["source"], row["source"]),
                      "aggregation": display_aggregation(row["kind"], row["aggregation"]),
                      "setup": row["setup"] if row["source"] == "official" else "", "accuracy_ci": ci,
                      "group": (row["source"], row["kind"])})
    return shown


def display_aggregation(kind: str, aggregation: str) -> str:
    """What a reader calls it: a direct LLM judge's score is `direct`; a baseline has no aggregation."""
    if kind == BASELINE:
        return ""
    if kind == JUDGE and aggregation == "scalar":
        return "direct"
    return aggregation


BASELINE_NOTE = ("Baselines read no mathematics: random is the expected value of a random ranking; fewest / most "
                 "steps and shortest / longest solution (in characters of the scored text) score each solution by "
                 "its step count or length, ties counted as for models (a tie fails).")


MODEL_BASELINE_NOTE = ("This run's rows of kind baseline are trivial baselines scored as models (adapter baseline: "
                       "length = the characters of the scored text, random = a seeded random reward, constant = a "
                       "tie everywhere), not reward models.")


def _notes(rows: list[Row], full_keys: tuple[str, ...], what: str) -> list[str]:
    notes = []
    if any(row.get(key) is False for row in rows for key in full_keys):
        notes.append(f"{DAGGER} run on fewer {what}; not comparable with full-set rows.")
    if any(row["source"] == BASELINE for row in rows):
        notes.append(BASELINE_NOTE)
    if any(row["source"] == "workflow" and row["kind"] == BASELINE for row in rows):
        notes.append(MODEL_BASELINE_NOTE)
    if any(row["source"] == "official" for row in rows):
        notes.append("Official rows: the result files of the RewardMATH authors (file stems in the CSV).")
    return notes


def _write_csv(rows: list[Row], columns: list[str], out_dir: Path, stem: str) -> None:
    write_table(rows, columns, out_dir, stem, "", formats=("csv",))


def _write_shown(shown: list[Row], layout: Shown, out_dir: Path, stem: str, caption: str, notes: list[str]) -> None:
    write_table(shown, layout.markdown, out_dir, stem, caption, formats=("md",), notes=notes, **layout.style)
    write_table(shown, layout.latex, out_dir, stem, caption, formats=("tex",), notes=notes, **layout.style,
                **LATEX_RULES, **layout.latex_style)


def metrics_table(tables: MetricTables, out_dir: Path, stem: str) -> None:
    """rewardmath_metrics.csv / .md / .tex: accuracy and MRR per setup and aggregation."""
    _write_csv(tables.metrics, METRIC_COLUMNS, out_dir, stem)
    notes = _notes(tables.metrics, FULL, f"problems than the full benchmark ({REWARDMATH_PROBLEMS})")
    _write_shown(display_rows(tables.metrics, FULL), Shown(["model", "setup", *METRIC_BRIEF[1:]], METRIC_BRIEF),
                 out_dir, stem, "RewardMATH accuracy and MRR (%) per setup and aggregation", notes)


def metrics_ci_table(tables: MetricTables, out_dir: Path, stem: str) -> None:
    """rewardmath_metrics_ci.csv: the same rows with 95% Wilson CIs and missing judge verdicts."""
    _write_csv(tables.metrics, CI_COLUMNS, out_dir, stem)


def breakdown_table(tables: MetricTables, out_dir: Path, stem: str) -> None:
    """rewardmath_breakdown.csv: accuracy / MRR by MATH subject and by level."""
    _write_csv(tables.breakdown, BREAKDOWN_COLUMNS, out_dir, stem)


def rewardbench_table(tables: MetricTables, out_dir: Path, stem: str) -> None:
    """rewardbench_math_prm_accuracy.csv / .md / .tex: one-to-one accuracy (with CI) per setup and aggregation."""
    _write_csv(tables.rewardbench, REWARDBENCH_COLUMNS, out_dir, stem)
    notes = _notes(tables.rewardbench, FULL, f"pairs than the full benchmark ({REWARDBENCH_MATH_PRM_PAIRS})")
    layout = Shown(["model", "setup", *REWARDBENCH_BRIEF[1:]], REWARDBENCH_BRIEF,
                   style={"headers": PAIR_HEADERS, "right": ("accuracy_ci",)})
    _write_shown(display_rows(tables.rewardbench, FULL), layout, out_dir, stem,
                 "RewardBench math-prm one-to-one accuracy (%) with 95% Wilson CIs", [*notes, WILSON_NOTE])


def side_by_side_table(tables: MetricTables, out_dir: Path, stem: str) -> None:
    """rewardmath_vs_rewardbench.csv / .md / .tex: each RewardMATH row next to its model's RewardBench accuracy;
    the notes give the rank correlations over full-set models (PRMs under the chosen aggregation)."""
    from rmeval.benchmarks.rewardmath.agreement import point_from_row, rank_agreement

    combined, prm_aggregation = tables.side_by_side, tables.prm_aggregation
    _write_csv(combined, SIDE_BY_SIDE_COLUMNS, out_dir, stem)
    notes = [f"PRMs under {prm_aggregation} (all aggregations in the CSV).",
             *_notes(combined, BOTH_FULL, f"problems or pairs than the full benchmarks ({REWARDMATH_PROBLEMS} / "
                                          f"{REWARDBENCH_MATH_PRM_PAIRS})")]
    points = [point_from_row(row) for row in combined]
    for metric, label in (("accuracy", "accuracy"), ("mrr", "MRR")):
        agreement = rank_agreement(points, prm_aggregation, metric)
        notes.append(f"RewardBench math-prm accuracy vs RewardMATH {label}: {agreement.describe()}; PRMs under "
                     f"{prm_aggregation}, baselines and partial runs excluded.")
    shown = display_rows([row for row in combined if row["kind"] != "PRM" or row["aggregation"] == prm_aggregation],
                         BOTH_FULL)
    layout = Shown(SIDE_BY_SIDE_BRIEF, SIDE_BY_SIDE_BRIEF, latex_style={
        "headers": SIDE_LATEX_HEADERS, "groups": (("", 3), ("RewardMATH", 3), ("RewardBench", 2))})
    _write_shown(shown, layout, out_dir, stem, "RewardMATH accuracy and MRR next to RewardBench math-prm accuracy (%)",
                 notes)


def capability_table(tables: MetricTables, out_dir: Path, stem: str) -> None:
    """model, measure, score: each workflow model's RewardMATH accuracy (a PRM under the run's step aggregation),
    the benchmark's `capability` file for the fairness benchmark's fairness_vs_capability; trivial baselines out."""
    chosen: dict[str, Row] = {}
    for row in tables.metrics:
        if row["source"] != "workflow" or row.get("kind") == BASELINE:
            continue
        if row["setup"] not in chosen or row["aggregation"] == tables.prm_aggregation:
            chosen[row["setup"]] = row
    rows = [{"model": setup, "measure": "RewardMATH accuracy", "score": row["accuracy"]}
            for setup, row in chosen.items()]
    _write_csv(rows, ["model", "measure", "score"], out_dir, stem)
