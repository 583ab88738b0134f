"""The JudgeBench tables (CSV machine columns, Markdown and LaTeX through rmeval.tables); its catalogue names these
builders. Percentages keep full precision in the CSV and two decimals in the Markdown / LaTeX."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmeval.benchmarks.judgebench.metrics import MODEL_MODES, PAIR_COLUMNS
from rmeval.tables import Column, frame_csv, render_latex, render_markdown, write_table_files

Row = dict[str, Any]

MAIN_COLUMNS = (Column("model", "Model"), Column("split", "Split"),
                Column("knowledge", "Knowledge (%)", "fixed", 2), Column("reasoning", "Reasoning (%)", "fixed", 2),
                Column("math", "Math (%)", "fixed", 2), Column("coding", "Coding (%)", "fixed", 2),
                Column("overall", "Overall (%)", "fixed", 2))
SUBSET_COLUMNS = (Column("model", "Model"), Column("mode", "Mode"), Column("split", "Split"),
                  Column("category", "Category"), Column("subset", "Subset"),
                  Column("accuracy", "Accuracy (%)", "fixed", 2), Column("n", "n", "int"))
RULE = ("Each pair is judged in both orders (the official utils/metrics.py): a decision equal to the label counts "
        "+1, its flip -1, none 0; a pair is correct when the sum is above 0. A reward model decides A>B when "
        "reward A > reward B, else B>A (utils/judges.py), so equal rewards net 0: not correct. Categories by source "
        "prefix: knowledge mmlu-pro, reasoning livebench-reasoning, math livebench-math, coding livecodebench; "
        "overall over all pairs. Split gpt: GPT-4o's responses (350 pairs, the leaderboard's); claude: "
        "Claude-3.5-Sonnet's (270). An empty cell: no pair of that category in the run.")
BASELINE_MARK = " (baseline)"
BASELINE_NOTE = ("A model marked (baseline) is a trivial baseline scored as a model (no weights: length = the "
                 "response's characters, random = a seeded random reward, constant = a tie everywhere).")


def _write(frame: Any, rows: Sequence[Row], columns: Sequence[Column], out: Path, stem: str, caption: str,
           note: str) -> None:
    write_table_files(out, stem, {"csv": frame_csv(frame),
                                  "md": render_markdown(caption, columns, rows, note),
                                  "tex": render_latex(caption, f"tab:{stem}", columns, rows, note)})


def main_table(rows: Sequence[Row], modes: dict[str, str], out: Path, stem: str) -> None:
    """results/tables/judgebench.{csv,md,tex}: exactly `model, split, knowledge, reasoning, math, coding, overall`
    in the CSV; in Markdown and LaTeX a trivial baseline's name carries `(baseline)` (`modes`: model -> mode)."""
    import pandas as pd

    frame = pd.DataFrame(list(rows), columns=[column.key for column in MAIN_COLUMNS])
    shown = [{**row, "model": row["model"] + (BASELINE_MARK if modes.get(row["model"]) not in MODEL_MODES else "")}
             for row in rows]
    note = RULE + (f" {BASELINE_NOTE}" if any(mode not in MODEL_MODES for mode in modes.values()) else "")
    _write(frame, shown, MAIN_COLUMNS, out, stem, "JudgeBench accuracy", note)


def subsets_table(rows: Sequence[Row], out: Path, stem: str) -> None:
    """results/tables/judgebench_subsets.*: per model and split, each category (`all`) and each source in it."""
    import pandas as pd

    frame = pd.DataFrame(list(rows), columns=[column.key for column in SUBSET_COLUMNS])
    note = (f"{RULE} Mode: classifier, judge (direct) or judge (pairwise) for a reward model or an LLM judge; "
            "`<kind> baseline` for a trivial baseline.")
    _write(frame, rows, SUBSET_COLUMNS, out, stem, "JudgeBench accuracy per category and source", note)


def pairs_file(records: Sequence[Row], path: Path) -> None:
    """The per-pair results (model, mode, split, pair_id, ...), one CSV: what a later comparison with published
    judges aligns by `pair_id` (decisions in the pair's published orientation; decision_2 is the swapped order's,
    flipped back)."""
    import pandas as pd

    from rmeval.io.atomic import write_text_atomic

    frame = pd.DataFrame(list(records), columns=["model", "mode", "split", *PAIR_COLUMNS])
    frame["correct"] = frame["correct"].astype(bool).astype(int)
    write_text_atomic(frame_csv(frame), path)


def capability_table(rows: Sequence[Row], modes: dict[str, str], path: Path) -> None:
    """model, measure, score: each reward model's and judge's overall score per split (the benchmark's `capability`
    file); trivial baselines out."""
    import pandas as pd

    from rmeval.io.atomic import write_text_atomic

    kept = [{"model": row["model"], "measure": f"JudgeBench overall ({row['split']})", "score": row["overall"]}
            for row in rows if modes.get(row["model"]) in MODEL_MODES]
    write_text_atomic(frame_csv(pd.DataFrame(kept, columns=["model", "measure", "score"])), path)
