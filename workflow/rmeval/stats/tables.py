"""Write one table as CSV (full precision, machine-readable), Markdown and LaTeX
(rounded, with a caption and a footnote giving n per group and the data source)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# Column -> header shown in the Markdown / LaTeX versions (the CSV keeps the raw names).
DISPLAY_NAMES: dict[str, str] = {
    "model": "Model",
    "rewardbench_rank": "RewardBench rank",
    "f_statistic": "F",
    "p_value": "p",
    "significant_pairs": "Significant pairs",
    "total_pairs": "Total pairs",
    "nmgd_percent": "NMGD (%)",
    "pearson_r": "Pearson r",
    "group": "Group",
    "group_a": "Group A",
    "group_b": "Group B",
    "n": "n",
    "mean": "Mean",
    "std": "SD",
    "sem": "SEM",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "welch_f": "Welch F",
    "welch_p": "Welch p",
    "kruskal_h": "Kruskal H",
    "kruskal_p": "Kruskal p",
    "eta_sq": "eta^2",
    "omega_sq": "omega^2",
    "cohens_f": "Cohen's f",
    "max_group": "Highest group",
    "min_group": "Lowest group",
    "scale_free_gap": "Scale-free gap",
    "gap_ci_low": "Gap CI low",
    "gap_ci_high": "Gap CI high",
    "nmgd_ci_low": "NMGD CI low",
    "nmgd_ci_high": "NMGD CI high",
    "perm_p_value": "Permutation p",
    "group_f": "Group F",
    "group_p": "Group p",
    "length_coef": "log-length coef.",
    "length_p": "Length p",
    "raw_gap": "Raw gap",
    "adjusted_gap": "Adjusted gap",
    "gap_retained_percent": "Gap retained (%)",
    "kendall_tau": "Kendall tau",
    "spearman_rho": "Spearman rho",
    "top_group_match": "Same top group",
    "n_models": "Models",
    "metric": "Metric",
    "nmgd_unstable": "NMGD unstable",
    "mean_diff": "Mean diff.",
    "std_error": "SE",
    "q_statistic": "q",
    "p_adj": "p (adj.)",
    "reject": "Significant",
    "raw_mean": "Raw mean",
    "adjusted_mean": "Adjusted mean",
    "note": "Note",
}

_LATEX_HEADERS = {"eta^2": r"$\eta^2$", "omega^2": r"$\omega^2$", "Kendall tau": r"Kendall $\tau$",
                  "Spearman rho": r"Spearman $\rho$"}
_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                   "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


@dataclass
class Table:
    stem: str  # file name without extension, e.g. "table1_anova"
    caption: str
    frame: pd.DataFrame
    footnote: str = ""


def _is_p_column(column: str) -> bool:
    return column in {"p_value", "p_adj", "perm_p_value"} or column.endswith("_p")


def format_cell(value: object, column: str) -> str:
    """Human rounding: 3 significant digits for p-values, 2 decimals for percents, 4 s.f. otherwise."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    if isinstance(value, int) or type(value).__name__.startswith("int"):
        return str(int(value))
    if isinstance(value, float) or type(value).__name__.startswith("float"):
        number = float(value)
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        if _is_p_column(column):
            return "<1e-300" if number == 0.0 else f"{number:.3g}"
        if column.endswith("percent") or column.startswith("nmgd"):
            return f"{number:.2f}"
        if column == "rewardbench_rank" and number.is_integer():
            return str(int(number))
        return f"{number:.4g}"
    return str(value)


def _atomic_write(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def to_markdown(table: Table) -> str:
    columns = list(table.frame.columns)
    headers = [DISPLAY_NAMES.get(c, c.replace("_", " ")) for c in columns]
    numeric = [table.frame[c].dtype.kind in "iuf" for c in columns]
    lines = [f"**{table.caption}**", "", "| " + " | ".join(headers) + " |"]
    lines.append("|" + "|".join("---:" if is_numeric else ":---" for is_numeric in numeric) + "|")
    for row in table.frame.itertuples(index=False):
        cells = [format_cell(v, c).replace("|", "\\|") for v, c in zip(row, columns, strict=True)]
        lines.append("| " + " | ".join(cells) + " |")
    if table.frame.empty:
        lines.append("| " + " | ".join("" for _ in columns) + " |")
    if table.footnote:
        lines += ["", f"*Note.* {table.footnote}"]
    return "\n".join(lines) + "\n"


def to_latex(table: Table) -> str:
    """A booktabs table (needs \\usepackage{booktabs}) with the footnote under the rule."""
    columns = list(table.frame.columns)
    align = "".join("r" if table.frame[c].dtype.kind in "iuf" else "l" for c in columns)
    headers = []
    for c in columns:
        shown = DISPLAY_NAMES.get(c, c.replace("_", " "))
        headers.append(_LATEX_HEADERS.get(shown, latex_escape(shown)))
    lines = [
        "% Generated by `rmeval fairness-stats`; needs \\usepackage{booktabs}.",
        "\\begin{table}[htbp]",
        "\\centering",
        f"\\caption{{{latex_escape(table.caption)}}}",
        f"\\label{{tab:{table.stem}}}",
        f"\\begin{{tabular}}{{{align}}}",
        "\\toprule",
        " & ".join(headers) + " \\\\",
        "\\midrule",
    ]
    for row in table.frame.itertuples(index=False):
        cells = [latex_escape(format_cell(v, c)) or "--" for v, c in zip(row, columns, strict=True)]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    if table.footnote:
        lines += ["\\par\\smallskip", f"\\parbox{{\\linewidth}}{{\\footnotesize \\textit{{Note.}} "
                  f"{latex_escape(table.footnote)}}}"]
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def write_table(table: Table, out_dir: Path, formats: tuple[str, ...] = ("csv", "md", "tex")) -> list[Path]:
    """Write the table in each format atomically (`path.tmp` then rename)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        path = out_dir / f"{table.stem}.{fmt}"
        if fmt == "csv":
            text = table.frame.to_csv(index=False, float_format="%.12g", lineterminator="\n")
        elif fmt == "md":
            text = to_markdown(table)
        elif fmt == "tex":
            text = to_latex(table)
        else:
            raise ValueError(fmt)
        _atomic_write(path, text)
        written.append(path)
    return written
