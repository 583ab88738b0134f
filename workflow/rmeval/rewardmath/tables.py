"""RewardMATH result tables as CSV, Markdown and LaTeX, written atomically."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def percent2(value: float) -> float:
    """Percent with two decimals (NaN stays NaN: a CI that could not be computed)."""
    return value if math.isnan(value) else round(value, 2)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_csv(rows: Sequence[Row], columns: Sequence[str], path: Path) -> None:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(column)) for column in columns])
    _write_atomic(path, buffer.getvalue())


def to_markdown(rows: Sequence[Row], columns: Sequence[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(row.get(column)) for column in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                   "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def to_latex(rows: Sequence[Row], columns: Sequence[str], caption: str, label: str) -> str:
    numeric = [all(isinstance(row.get(column), (int, float)) for row in rows) and rows for column in columns]
    spec = "".join("r" if is_numeric else "l" for is_numeric in numeric)
    lines = [
        r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(caption)}}}", rf"\label{{{label}}}",
        rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
        " & ".join(latex_escape(column) for column in columns) + r" \\", r"\midrule",
    ]
    lines += [" & ".join(latex_escape(_cell(row.get(column))) for column in columns) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_table(rows: Sequence[Row], columns: Sequence[str], out_dir: Path, stem: str, caption: str,
                formats: Sequence[str] = ("csv", "md", "tex")) -> list[Path]:
    """`stem.csv` (+ `.md`, `.tex`); the LaTeX table needs booktabs."""
    written = []
    if "csv" in formats:
        write_csv(rows, columns, out_dir / f"{stem}.csv")
        written.append(out_dir / f"{stem}.csv")
    if "md" in formats:
        _write_atomic(out_dir / f"{stem}.md", to_markdown(rows, columns))
        written.append(out_dir / f"{stem}.md")
    if "tex" in formats:
        _write_atomic(out_dir / f"{stem}.tex", to_latex(rows, columns, caption, f"tab:{stem}"))
        written.append(out_dir / f"{stem}.tex")
    return written
