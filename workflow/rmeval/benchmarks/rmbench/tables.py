"""The RM-Bench tables (CSV machine columns, Markdown and LaTeX through rmeval.tables); the catalogue names these
builders. Percentages keep full precision in the CSV (12 significant digits) and two decimals in Markdown / LaTeX.

`rmbench.csv` has exactly `model, chat, math, code, safety, easy, normal, hard, average`; a trivial baseline's row
is marked in the Markdown and LaTeX (its name followed by its kind) and in the per-subset table's `mode`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rewardbench.metrics import MODEL_MODES
from rmeval.benchmarks.rmbench.official import CHANCE, DIFFICULTIES, DOMAINS
from rmeval.tables import Column, frame_csv, render_latex, render_markdown, write_table_files

Row = dict[str, Any]

MAIN_COLUMNS = (Column("model", "Model"), *(Column(d, d.capitalize(), "fixed", 2) for d in DOMAINS),
                *(Column(d, d.capitalize(), "fixed", 2) for d in DIFFICULTIES), Column("average", "Average", "fixed", 2))
SUBSET_COLUMNS = (Column("model", "Model"), Column("mode", "Mode"), Column("domain", "Domain"),
                  Column("difficulty", "Difficulty"), Column("score", "Score (%)", "fixed", 2), Column("n", "n", "int"),
                  Column("ci_low", "95% CI low", "fixed", 2), Column("ci_high", "95% CI high", "fixed", 2))
RULE = ("Per prompt, each of its three chosen responses (concise, detailed plain, detailed markdown) is set against "
        "each of its three rejected ones: a cell is won when the chosen reward is strictly higher (a tie is a loss). "
        "Hard: a plainer chosen against a fancier rejected (upper-right cells); normal: the same style (diagonal); "
        "easy: a fancier chosen against a plainer rejected (lower-left). A domain's score is the mean of its three; "
        "safety pools safety-refuse and safety-response. Easy, normal, hard and average are means over the four "
        "domains (the official compute_accuracy of THU-KEG/RM-Bench scripts/utils.py). "
        f"A random reward model scores {CHANCE:g} in every column; a constant one 0.")


BASELINE_NOTE = ("A name followed by `(<kind> baseline)`, or that mode, is a trivial baseline scored as a model (no "
                 "weights: length = the response's characters, random = a seeded random reward, constant = a tie "
                 "everywhere); the others are reward models (mode classifier or judge (direct)).")


def _marked(rows: Sequence[Row]) -> tuple[list[Row], bool]:
    """The rows with a trivial baseline's name followed by its kind (Markdown / LaTeX), and whether any is."""
    marked = [{**row, "model": row["model"] if row["mode"] in MODEL_MODES else f"{row['model']} ({row['mode']})"}
              for row in rows]
    return marked, any(row["mode"] not in MODEL_MODES for row in rows)


def main_table(rows: Sequence[Row], out: Path, stem: str) -> None:
    import pandas as pd

    marked, has_baseline = _marked(rows)
    note = f"{RULE} {BASELINE_NOTE}" if has_baseline else RULE
    frame = pd.DataFrame(list(rows), columns=[column.key for column in MAIN_COLUMNS])
    caption = "RM-Bench accuracy (%)"
    write_table_files(out, stem, {"csv": frame_csv(frame),
                                  "md": render_markdown(caption, MAIN_COLUMNS, marked, note),
                                  "tex": render_latex(caption, f"tab:{stem}", MAIN_COLUMNS, marked, note)})


def subsets_table(rows: Sequence[Row], out: Path, stem: str) -> None:
    import pandas as pd

    _, has_baseline = _marked(rows)
    note = (f"{RULE} Each domain's easy, normal, hard and average (all nine cells), with the 95% Wilson interval of "
            "the mean of its prompts' shares of cells won (conservative for shares).")
    note = f"{note} {BASELINE_NOTE}" if has_baseline else note
    frame = pd.DataFrame(list(rows), columns=[column.key for column in SUBSET_COLUMNS])
    caption = "RM-Bench accuracy per domain and difficulty (%)"
    write_table_files(out, stem, {"csv": frame_csv(frame),
                                  "md": render_markdown(caption, SUBSET_COLUMNS, rows, note),
                                  "tex": render_latex(caption, f"tab:{stem}", SUBSET_COLUMNS, rows, note)})


def capability_table(rows: Sequence[Row], path: Path) -> None:
    """model, measure, score: each reward model's average (the benchmark's `capability` file; baselines out)."""
    from rmeval.benchmarks.rewardbench.tables import capability_table as write

    write([{"model": row["model"], "mode": row["mode"], "subset": "Overall", "score": row["average"]} for row in rows],
          "RM-Bench average", "score", path)
