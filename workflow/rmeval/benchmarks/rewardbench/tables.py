"""The RewardBench tables (CSV machine columns, Markdown and LaTeX through rmeval.tables); the catalogues name
these builders. Percentages keep full precision in the CSV and two decimals in the Markdown / LaTeX."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rewardbench.metrics import CHANCE, MODEL_MODES, OVERALL, PUBLISHED
from rmeval.tables import Column, frame_csv, render_latex, render_markdown, write_table_files

Row = dict[str, Any]

V2_COLUMNS = (Column("model", "Model"), Column("mode", "Mode"), Column("subset", "Subset"),
              Column("score", "Score (%)", "fixed", 2), Column("n", "n", "int"),
              Column("ci_low", "95% CI low", "fixed", 2), Column("ci_high", "95% CI high", "fixed", 2))
V1_SUBSET_COLUMNS = (Column("model", "Model"), Column("mode", "Mode"), Column("subset", "Subset"),
                     Column("accuracy", "Accuracy (%)", "fixed", 2), Column("n", "n", "int"))
V1_SECTION_COLUMNS = (Column("model", "Model"), Column("mode", "Mode"), Column("section", "Section"),
                      Column("score", "Score (%)", "fixed", 2))


MODE_NOTE = ("Mode: classifier or judge (direct) for a reward model; baseline for the chance row; "
             "`<kind> baseline` for a trivial baseline scored as a model (no weights: length = the response's "
             "characters, random = a seeded random reward, constant = a tie everywhere).")

PUBLISHED_NOTE = ("Mode published: per-item results read from a file instead of running the model (adapter "
                  "published: its authors' published results, or an earlier rmeval run's scores), scored here by the "
                  "same rules on the items its file matched.")


ROUNDING = 0.05  # the leaderboard pages show one decimal


def _overall(row: Row) -> bool:
    return row.get("subset", row.get("section")) == "Overall"


def page_difference(row: Row) -> str:
    """A published model's overall here against its authors' leaderboard page: by how much, and why it may differ."""
    here, page = float(row["score"]), float(row["leaderboard"])
    difference = here - page
    alignment = row.get("alignment") or {}
    if abs(difference) <= ROUNDING:
        why = "within the page's rounding to one decimal"
    elif alignment.get("matched", 0) < alignment.get("run_items", 0) or alignment.get("extra", {}).get("count"):
        why = (f"the file and this run's data differ ({alignment.get('matched')} of {alignment.get('run_items')} "
               "items matched): another dataset revision")
    else:
        why = ("the page was not computed from this file as published: another run or dataset revision, or per-item "
               "scores that moved with their batch (bf16 noise, allenai/reward-bench issue 137)")
    return (f"{row['model']}: {here:.2f} here from its file, {page:.1f} on the authors' leaderboard page "
            f"({row.get('leaderboard_source')}): {difference:+.2f} points, {why}.")


def _write(rows: Sequence[Row], columns: Sequence[Column], out: Path, stem: str, caption: str, note: str,
           partial: str = "") -> None:
    """`partial`: a partial run's note (rmeval.benchmarks.rewardbench.official.partial_note): its Overall rows are
    marked with its dagger in the Markdown and LaTeX, the note says why; the CSV keeps the machine columns."""
    import pandas as pd

    if any(row.get("mode") not in (*MODEL_MODES, CHANCE) for row in rows):  # a baseline model is in the table
        note = f"{note} {MODE_NOTE}"
    published = list(dict.fromkeys(row["note"] for row in rows if row.get("mode") == PUBLISHED and row.get("note")))
    if published:  # where each published model's results come from (source, revision, matched items)
        note = " ".join([note, PUBLISHED_NOTE, *published, *(page_difference(row) for row in rows
                                                              if row.get("leaderboard") is not None and _overall(row))])
    frame = pd.DataFrame(list(rows), columns=[column.key for column in columns])
    shown = list(rows)
    if partial:
        key = columns[2].key  # section (v1) or subset (v2)
        mark = partial.split(" ", 1)[0]
        shown = [{**row, key: f"{row[key]} {mark}"} if row.get(key) == OVERALL else row for row in rows]
        note = f"{note} {partial}."
    write_table_files(out, stem, {"csv": frame_csv(frame),
                                  "md": render_markdown(caption, columns, shown, note),
                                  "tex": render_latex(caption, f"tab:{stem}", columns, shown, note)})


def v2_scores_table(rows: Sequence[Row], out: Path, stem: str, partial: str = "") -> None:
    _write(rows, V2_COLUMNS, out, stem, "RewardBench 2 scores",
           "Non-Ties subsets: best-of-N accuracy, a k-way tie at the top earns 1/k. Ties: the official weighted score. "
           "Overall: the mean of the six subsets (empty when one did not run). Random (chance): 1/N per prompt.",
           partial)


def v1_subsets_table(rows: Sequence[Row], out: Path, stem: str) -> None:
    _write(rows, V1_SUBSET_COLUMNS, out, stem, "RewardBench accuracy per subset",
           "A pair is won when the chosen completion scores strictly higher; a tie is a loss.")


def v1_sections_table(rows: Sequence[Row], out: Path, stem: str, partial: str = "") -> None:
    _write(rows, V1_SECTION_COLUMNS, out, stem, "RewardBench section scores",
           "Sections weight their subsets by the official example counts (math-prm counted as 984, like code); "
           "Overall is the mean of the four sections; a section with no subset in the run scores 0, as officially.",
           partial)


def capability_table(rows: Sequence[Row], measure: str, key: str, path: Path) -> None:
    """model, measure, score: each scored reward model's overall score (a benchmark's `capability` file); the chance
    rows, trivial baselines and published models (not run here: no other benchmark of the run has them) out: the
    file says how capable the run's models are."""
    import pandas as pd

    from rmeval.io.atomic import write_text_atomic

    overall = [{"model": row["model"], "measure": measure, "score": row[key]} for row in rows
               if row.get("mode") in MODEL_MODES and row.get("mode") != PUBLISHED
               and row.get("subset", row.get("section")) == "Overall"]
    write_text_atomic(frame_csv(pd.DataFrame(overall, columns=["model", "measure", "score"])), path)
