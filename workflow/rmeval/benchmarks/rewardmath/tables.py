"""RewardMATH result tables as CSV, Markdown and LaTeX, on the shared frames of `rmeval.tables`.

The CSV keeps machine column names (the contract other stages read); Markdown and LaTeX show human headers
(`HEADERS`), right-align every numeric column, print percentages with two decimals, and carry the table's
notes under it. What is RewardMATH's own: columns are numeric by their values (not by a declared kind), a
\\midrule between runs of rows from different sources, an optional group header row, and the symbols its
notes use. The LaTeX table needs `\\usepackage{booktabs}`; a dagger marks runs on fewer problems than the full
benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmeval.tables import (
    LATEX_TEXT_SPECIALS,
    latex_row,
    latex_table,
    markdown_escape,
    markdown_table,
    write_table_files,
)
from rmeval.tables import latex_escape as shared_latex_escape

Row = dict[str, Any]

DAGGER = "†"

# Machine column -> header shown in Markdown / LaTeX.
HEADERS: dict[str, str] = {
    "model": "Model",
    "setup": "Result file",
    "source": "Source",
    "kind": "Kind",
    "aggregation": "Aggregation",
    "n": "Problems",
    "accuracy": "Accuracy (%)",
    "mrr": "MRR (%)",
    "accuracy_ci_low": "Accuracy 95% CI low",
    "accuracy_ci_high": "Accuracy 95% CI high",
    "mrr_ci_low": "MRR 95% CI low",
    "mrr_ci_high": "MRR 95% CI high",
    "accuracy_ci": "95% CI",
    "full_set": "Full set",
    "n_rewardmath": "RewardMATH problems",
    "rewardmath_accuracy": "RewardMATH accuracy (%)",
    "rewardmath_mrr": "RewardMATH MRR (%)",
    "n_rewardbench": "RewardBench pairs",
    "rewardbench_accuracy": "RewardBench math-prm accuracy (%)",
}
# Columns whose header changes with the table: RewardBench counts pairs, not problems.
PAIR_HEADERS = {**HEADERS, "n": "Pairs"}
# The side-by-side LaTeX table: short headers under a "RewardMATH" / "RewardBench math-prm" group row.
SIDE_LATEX_HEADERS = {**HEADERS, "n_rewardmath": "Problems", "rewardmath_accuracy": "Acc. (%)",
                      "rewardmath_mrr": "MRR (%)", "n_rewardbench": "Pairs", "rewardbench_accuracy": "Acc. (%)"}
SOURCE_LABELS = {"workflow": "this run", "official": "official", "baseline": ""}  # a baseline's kind says it


def percent2(value: float) -> float:
    """Percent with two decimals (NaN stays NaN: a CI that could not be computed)."""
    return value if math.isnan(value) else round(value, 2)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _numeric_columns(rows: Sequence[Row], columns: Sequence[str]) -> list[bool]:
    """A column is numeric when every filled cell is a number (blank cells, e.g. a missing score, do not count)."""
    flags = []
    for column in columns:
        values = [row.get(column) for row in rows if _cell(row.get(column)) != ""]
        flags.append(bool(values) and all(_is_number(value) for value in values))
    return flags


def csv_text(rows: Sequence[Row], columns: Sequence[str]) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(column)) for column in columns])
    return buffer.getvalue()


def to_markdown(rows: Sequence[Row], columns: Sequence[str], caption: str = "", notes: Sequence[str] = (),
                headers: dict[str, str] = HEADERS, right: Sequence[str] = ()) -> str:
    numeric = [flag or column in right for column, flag in zip(columns, _numeric_columns(rows, columns), strict=True)]
    cells = [[markdown_escape(_cell(row.get(column))) for column in columns] for row in rows]
    return markdown_table(caption, [headers.get(column, column) for column in columns], numeric, cells,
                          " ".join(notes))


# The notes' symbols as LaTeX; dashes typed as Unicode become LaTeX's en and em dashes.
LATEX_SPECIALS = {**LATEX_TEXT_SPECIALS, DAGGER: r"$^\dagger$", "ρ": r"$\rho$", "τ": r"$\tau$", "≥": r"$\geq$",
                  "–": "--", "—": "---"}


def latex_escape(text: str) -> str:
    return shared_latex_escape(text, LATEX_SPECIALS, literal_hyphens=False)


def to_latex(rows: Sequence[Row], columns: Sequence[str], caption: str, label: str, notes: Sequence[str] = (),
             headers: dict[str, str] = HEADERS, rule_between: str | None = "source",
             groups: Sequence[tuple[str, int]] = (), right: Sequence[str] = ()) -> str:
    """A booktabs table; a \\midrule separates runs of rows that differ in `rule_between` (e.g. baselines).

    `groups` adds a header row above the column headers: (label, number of columns) from the left, "" for none,
    each label underlined by \\cmidrule. `right` right-aligns text columns that hold numbers (a CI "a–b").
    """
    numeric = _numeric_columns(rows, columns)
    spec = "".join("r" if is_numeric or column in right else "l" for column, is_numeric in zip(columns, numeric,
                                                                                                strict=True))
    head = []
    if groups:
        cells, rules, start = [], [], 1
        for text, width in groups:
            cells.append(rf"\multicolumn{{{width}}}{{c}}{{{latex_escape(text)}}}" if text and width > 1
                         else latex_escape(text) if text else " & ".join([""] * width))
            if text:
                rules.append(rf"\cmidrule(lr){{{start}-{start + width - 1}}}")
            start += width
        head += [latex_row(cells), " ".join(rules)]
    head.append(latex_row([latex_escape(headers.get(column, column)) for column in columns]))
    body, previous = [], None
    for index, row in enumerate(rows):
        group = row.get(rule_between) if rule_between else None
        if index and group != previous:
            body.append(r"\midrule")
        previous = group
        body.append(latex_row([latex_escape(_cell(row.get(column))) for column in columns]))
    note = ([r"\begin{minipage}{\linewidth}\footnotesize", latex_escape("Note. " + " ".join(notes)), r"\end{minipage}"]
            if notes else [])
    return latex_table(latex_escape(caption), label, spec, head, body, note, "`rmeval rewardmath-metrics`",
                       (r"\small", r"\setlength{\tabcolsep}{4pt}"))


def write_table(rows: Sequence[Row], columns: Sequence[str], out_dir: Path, stem: str, caption: str,
                formats: Sequence[str] = ("csv", "md", "tex"), notes: Sequence[str] = (),
                headers: dict[str, str] = HEADERS, **latex: Any) -> list[Path]:
    """`stem.csv` (+ `.md`, `.tex`); the LaTeX table needs booktabs."""
    texts = {}
    if "csv" in formats:
        texts["csv"] = csv_text(rows, columns)
    if "md" in formats:
        texts["md"] = to_markdown(rows, columns, caption, notes, headers, latex.get("right", ()))
    if "tex" in formats:
        texts["tex"] = to_latex(rows, columns, caption, f"tab:{stem}", notes, headers, **latex)
    return write_table_files(out_dir, stem, texts)
