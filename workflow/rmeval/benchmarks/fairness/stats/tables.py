"""Write one fairness table as CSV (full precision, raw column names, machine-readable), Markdown and LaTeX
(human headers, the paper's precision, a caption and a short note). Formatting lives in `rmeval.tables`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.labels import group_label
from rmeval.tables import Column, frame_csv, render_latex, render_markdown, write_table_files

if TYPE_CHECKING:
    import pandas as pd

# CSV column -> (header, kind, decimals, LaTeX header or None). Precision follows Song et al. (2025):
# F and NMGD 2 decimals, Pearson r 3; everything else keeps one precision per column.
COLUMN_SPECS: dict[str, tuple[str, str, int, str | None]] = {
    "model": ("Model", "text", 0, None),
    "rewardbench_rank": ("RewardBench Rank", "int", 0, None),
    "f_statistic": ("F", "fixed", 2, "$F$"),
    "p_value": ("p", "p", 0, "$p$"),
    "significant_pairs": ("Significant pairs", "int", 0, None),
    "total_pairs": ("Total pairs", "int", 0, None),
    "nmgd_percent": ("NMGD (%)", "fixed", 2, None),
    "pearson_r": ("Pearson r", "fixed", 3, "Pearson $r$"),
    "group": ("Group", "text", 0, None),
    "group_a": ("Group A", "text", 0, None),
    "group_b": ("Group B", "text", 0, None),
    "n": ("n", "int", 0, "$n$"),
    "mean": ("Mean", "fixed", 3, None),
    "std": ("SD", "fixed", 3, None),
    "sem": ("SEM", "fixed", 3, None),
    "ci_low": ("95% CI low", "fixed", 3, None),
    "ci_high": ("95% CI high", "fixed", 3, None),
    "truncated_percent": ("Truncated (%)", "fixed", 1, None),
    "welch_f": ("Welch F", "fixed", 2, "Welch $F$"),
    "welch_p": ("Welch p", "p", 0, "Welch $p$"),
    "kruskal_h": ("Kruskal-Wallis H", "fixed", 2, "Kruskal-Wallis $H$"),
    "kruskal_p": ("Kruskal-Wallis p", "p", 0, "Kruskal-Wallis $p$"),
    "eta_sq": ("eta²", "fixed", 3, r"$\eta^2$"),
    "omega_sq": ("omega²", "fixed", 3, r"$\omega^2$"),
    "cohens_f": ("Cohen's f", "fixed", 3, "Cohen's $f$"),
    "max_group": ("Highest group", "text", 0, None),
    "min_group": ("Lowest group", "text", 0, None),
    "scale_free_gap": ("Scale-free gap (SD)", "fixed", 2, None),
    "gap_ci_low": ("Gap CI low", "fixed", 2, None),
    "gap_ci_high": ("Gap CI high", "fixed", 2, None),
    "null_max_gap": ("Null max gap (SD)", "fixed", 2, None),
    "nmgd_ci_low": ("NMGD CI low", "fixed", 2, None),
    "nmgd_ci_high": ("NMGD CI high", "fixed", 2, None),
    "perm_p_value": ("Permutation p", "p", 0, "Permutation $p$"),
    "nmgd_unstable": ("NMGD unstable", "bool", 0, None),
    "group_f": ("Group F", "fixed", 2, "Group $F$"),
    "group_p": ("Group p", "p", 0, "Group $p$"),
    "length_coef": ("log-length coef.", "fixed", 3, None),
    "length_p": ("Length p", "p", 0, "Length $p$"),
    "raw_gap": ("Raw gap", "fixed", 3, None),
    "adjusted_gap": ("Adjusted gap", "fixed", 3, None),
    "gap_retained_percent": ("Gap retained (%)", "fixed", 1, None),
    "kendall_tau": ("Kendall tau", "fixed", 3, r"Kendall $\tau$"),
    "spearman_rho": ("Spearman rho", "fixed", 3, r"Spearman $\rho$"),
    "top_group_match": ("Same top group", "bool", 0, None),
    "n_models": ("Models", "int", 0, None),
    "metric": ("Metric", "text", 0, None),
    "model_a": ("Model A", "text", 0, None),
    "model_b": ("Model B", "text", 0, None),
    "mean_diff": ("Mean diff.", "fixed", 3, None),
    "std_error": ("SE", "fixed", 3, None),
    "df": ("df", "fixed", 1, None),
    "q_statistic": ("q", "fixed", 2, "$q$"),
    "p_adj": ("p (adj.)", "p", 0, "$p$ (adj.)"),
    "reject": ("Significant", "bool", 0, None),
    "raw_mean": ("Raw mean", "fixed", 3, None),
    "adjusted_mean": ("Adjusted mean", "fixed", 3, None),
    "note": ("Note", "text", 0, None),
    "q_value": ("q", "p", 0, "$q$"),
    "pairs_ci_low": ("Pairs CI low", "int", 0, None),
    "pairs_ci_high": ("Pairs CI high", "int", 0, None),
    "welch_q": ("Welch q", "p", 0, "Welch $q$"),
    "kruskal_q": ("Kruskal-Wallis q", "p", 0, "Kruskal-Wallis $q$"),
    "perm_q_value": ("Permutation q", "p", 0, "Permutation $q$"),
    "interval_family": ("CI family", "text", 0, None),
    "test": ("Test", "text", 0, None),
    "groups": ("Groups", "int", 0, None),
    "alpha": ("alpha", "fixed", 3, r"$\alpha$"),
    "mde_cohens_f": ("MDE (Cohen's f)", "fixed", 3, "MDE (Cohen's $f$)"),
    "paper_cohens_f": ("Paper's Cohen's f", "fixed", 3, "Paper's Cohen's $f$"),
    "power_at_paper_effect": ("Power at paper's f", "fixed", 3, "Power at paper's $f$"),
    "scenario": ("Planted", "text", 0, None),
    "planted_effect": ("Planted f", "fixed", 3, "Planted $f$"),
    "planted_gap": ("Planted gap (SD)", "fixed", 3, None),
    "replicates": ("Replicates", "int", 0, None),
    "rejection_rate": ("Rejection rate", "fixed", 3, None),
    "analytic_power": ("Analytic power", "fixed", 3, None),
    "coverage": ("Gap CI coverage", "fixed", 3, None),
}
# Columns whose values are config group keys: shown in plain words (`computer_science` -> `computer science`).
GROUP_COLUMNS = {"group", "group_a", "group_b", "max_group", "min_group"}
# Values of table10's `metric` column in plain words.
METRIC_LABELS = {"nmgd_percent": "NMGD (%)", "abs_nmgd_percent": "|NMGD| (%)", "scale_free_gap": "Scale-free gap"}


@dataclass
class Table:
    stem: str  # file name without extension, e.g. "table1_anova"
    caption: str
    frame: pd.DataFrame
    footnote: str = ""
    # Columns not in COLUMN_SPECS (e.g. the model names of a correlation matrix): key -> Column.
    extra_columns: dict[str, Column] = field(default_factory=dict)


def column_for(key: str, frame: pd.DataFrame | None = None, extra: dict[str, Column] | None = None) -> Column:
    """The display column of a CSV column: its spec, else one inferred from the dtype (3 decimals for floats)."""
    if extra and key in extra:
        return extra[key]
    if key in COLUMN_SPECS:
        header, kind, decimals, latex = COLUMN_SPECS[key]
        return Column(key, header, kind, decimals, latex)
    dtype = frame[key].dtype.kind if frame is not None and key in frame else "O"
    kind = {"i": "int", "u": "int", "f": "fixed", "b": "bool"}.get(dtype, "text")
    return Column(key, key.replace("_", " "), kind, 3)


def _has_text(values: pd.Series) -> bool:
    """A `note` column with any text (an all-empty one is left out of .md and .tex; the CSV keeps it)."""
    return bool(values.fillna("").astype(str).str.strip().ne("").any())


def display_rows(table: Table) -> tuple[list[Column], list[dict[str, Any]]]:
    """Columns and rows as the Markdown and LaTeX versions show them."""
    keys = [key for key in table.frame.columns if key != "note" or _has_text(table.frame[key])]
    columns = [column_for(key, table.frame, table.extra_columns) for key in keys]
    rows = []
    for record in table.frame.to_dict("records"):
        for key in GROUP_COLUMNS & set(record):
            if isinstance(record[key], str):
                record[key] = group_label(record[key])
        if isinstance(record.get("metric"), str):
            record["metric"] = METRIC_LABELS.get(record["metric"], record["metric"])
        rows.append(record)
    return columns, rows


def to_markdown(table: Table) -> str:
    columns, rows = display_rows(table)
    return render_markdown(table.caption, columns, rows, table.footnote)


def to_latex(table: Table) -> str:
    columns, rows = display_rows(table)
    return render_latex(table.caption, f"tab:{table.stem}", columns, rows, table.footnote,
                        generator="`rmeval fairness-stats`")


def to_csv(table: Table) -> str:
    return frame_csv(table.frame)


RENDERERS: dict[str, Callable[[Table], str]] = {"csv": to_csv, "md": to_markdown, "tex": to_latex}


def write_table(table: Table, out_dir: Path, formats: tuple[str, ...] = ("csv", "md", "tex")) -> list[Path]:
    """Write the table in each format (csv, md, tex), each atomically."""
    unknown = [fmt for fmt in formats if fmt not in RENDERERS]
    if unknown:
        raise ValueError(f"table {table.stem}: unknown format(s) {unknown}; expected one of {list(RENDERERS)}")
    return write_table_files(out_dir, table.stem, {fmt: RENDERERS[fmt](table) for fmt in formats})
