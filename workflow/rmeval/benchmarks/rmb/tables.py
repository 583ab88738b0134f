"""RMB's tables (CSV machine columns, Markdown and LaTeX through rmeval.tables); the catalogue names these builders.

rmb.csv has exactly `model, helpfulness_bon, helpfulness_pairwise, harmlessness_bon, harmlessness_pairwise, overall`
(percent, full precision); its Markdown / LaTeX add each row's mode, so a trivial baseline reads as one.
rmb_scenarios.* has one row per (model, set, goal, scenario) with its mode and item count.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rmb.layout import CELLS, MAIN_COLUMNS, OVERALL
from rmeval.tables import Column, frame_csv, render_latex, render_markdown, write_table_files

Row = dict[str, Any]
CHANCE = "baseline"  # the mode of the chance row

MAIN_COLUMNS_SHOWN = (Column("model", "Model"), Column("mode", "Mode"),
                      *(Column(cell.column, f"{cell.label} (%)", "fixed", 2) for cell in CELLS),
                      Column(OVERALL, "Overall (%)", "fixed", 2))
SCENARIO_COLUMNS = (Column("model", "Model"), Column("mode", "Mode"), Column("set", "Set"), Column("goal", "Goal"),
                    Column("scenario", "Scenario"), Column("accuracy", "Accuracy (%)", "fixed", 2),
                    Column("n", "n", "int"))

RULES_NOTE = (
    "Pairwise: a pair counts when the chosen response's reward is strictly higher than the rejected one's, a tie a "
    "loss (eval/scripts/my_run_rm.py). BoN: an item counts only when the best response's reward is strictly higher "
    "than every loser's, the paper's definition (Zhou et al. 2025, arXiv:2410.09893, its best-of-N evaluation); "
    "the repository publishes no BoN script, so these numbers follow the paper, not code. Overall is the mean of the "
    "four cells. Each distinct response text is scored once per model.")
AVERAGE_NOTES = {
    "items": "Each cell averages its items (rmb.average: items), as the official script's accuracy over the pairs it "
             "loads (a folder run).",
    "scenarios": "Each cell is the mean of its scenarios' accuracies (rmb.average: scenarios), each scenario weighing "
                 "the same whatever its size."}
MODE_NOTE = ("Mode: classifier or judge (direct) for a reward model; baseline for the chance row (pairwise 1/2, BoN "
             "the mean of 1/N); `<kind> baseline` for a trivial baseline scored as a model (no weights: length = the "
             "response's characters, random = a seeded random reward, constant = a tie everywhere).")


def _write(rows: Sequence[Row], columns: Sequence[Column], csv_columns: Sequence[str], out: Path, stem: str,
           caption: str, note: str) -> None:
    import pandas as pd

    frame = pd.DataFrame(list(rows), columns=list(csv_columns))
    write_table_files(out, stem, {"csv": frame_csv(frame),
                                  "md": render_markdown(caption, columns, rows, note),
                                  "tex": render_latex(caption, f"tab:{stem}", columns, rows, note)})


def main_table(rows: Sequence[Row], out: Path, stem: str, average: str) -> None:
    _write(rows, MAIN_COLUMNS_SHOWN, MAIN_COLUMNS, out, stem, "RMB accuracy",
           f"{RULES_NOTE} {AVERAGE_NOTES[average]} {MODE_NOTE}")


def scenarios_table(rows: Sequence[Row], out: Path, stem: str, average: str) -> None:
    _write(rows, SCENARIO_COLUMNS, [column.key for column in SCENARIO_COLUMNS], out, stem,
           "RMB accuracy per scenario", f"{RULES_NOTE} {AVERAGE_NOTES[average]} {MODE_NOTE}")


def capability_table(rows: Sequence[Row], path: Path) -> None:
    """model, measure, score: each scored reward model's overall (the benchmark's `capability` file); the chance row
    and trivial baselines out."""
    import math

    import pandas as pd

    from rmeval.benchmarks.rmb.metrics import MODEL_MODES
    from rmeval.io.atomic import write_text_atomic

    kept = [{"model": row["model"], "measure": "RMB overall", "score": row[OVERALL]} for row in rows
            if row["mode"] in MODEL_MODES and not math.isnan(row[OVERALL])]
    write_text_atomic(frame_csv(pd.DataFrame(kept, columns=["model", "measure", "score"])), path)
