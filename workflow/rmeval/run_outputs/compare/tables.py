"""comparisons.{csv,md,tex} and leaderboard.{csv,md,tex}: machine columns in the CSV (their names are a contract:
`rmeval run`'s console reads them), per-metric precision and baselines marked in the Markdown and LaTeX."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rmeval.intervals import CONFIDENCE
from rmeval.run_outputs.compare.parts import COMPARISON_COLUMNS, LEADERBOARD_COLUMNS, Results
from rmeval.tables import Column, Formatted, format_number, latex_number

LEVEL = f"{CONFIDENCE:.0%}"
GENERATOR = "`rmeval compare`"
COMPARISONS_CAPTION = (f"Paired comparisons: the difference of two models' values on the items both scored (a - b), "
                       f"its {LEVEL} interval, p-value, Holm-adjusted p and BH q within each benchmark")
LEADERBOARD_CAPTION = (f"Leaderboard: each headline metric's value with its {LEVEL} interval, rank and a rank "
                       f"interval that holds for all models at once at {LEVEL}")
BASELINE_MARK = " (baseline)"
PUBLISHED_MARK = " (published)"
RANK_NOTE = (f"Ranks: 1 + the number of models with a better value (ties share a rank). Rank intervals hold for all "
             f"models at once at {LEVEL} (Mogstad, Romano, Shaikh & Wilhelm 2024): a model is surely better than "
             f"another when their pairwise interval, at the Bonferroni level 1 - {1 - CONFIDENCE:.2g}/m over the m "
             "pairs of a metric, leaves 0; the rank interval runs from 1 + the number surely better to the number "
             "not surely worse, and \"tied with\" names the models it cannot separate.")

COMPARISON_DISPLAY = [
    Column("benchmark", "Benchmark"), Column("metric", "Metric"), Column("model_a", "Model a"),
    Column("model_b", "Model b"), Column("n", "n", "int"), Column("value_a", "a", "text"),
    Column("value_b", "b", "text"), Column("difference", "a - b", "text"), Column("ci", f"{LEVEL} CI", "text"),
    Column("p_value", "p", "p"), Column("p_adjusted", "p (Holm)", "p"), Column("q_value", "q (BH)", "p"),
    Column("test", "Test"),
]
LEADERBOARD_DISPLAY = [
    Column("benchmark", "Benchmark"), Column("metric", "Metric"), Column("model", "Model"),
    Column("value", "Value", "text"), Column("ci", f"{LEVEL} CI", "text"), Column("rank", "Rank", "int"),
    Column("rank_ci", f"Rank ({LEVEL}, all at once)", "text"), Column("tied_with", "Tied with"),
]


def _number(value: Any, decimals: int) -> Formatted:
    text = format_number(value, decimals)
    return Formatted(text, latex_number(text))


def _interval(low: Any, high: Any, decimals: int) -> Formatted:
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        return Formatted("", "")
    text = f"{format_number(low, decimals)} to {format_number(high, decimals)}"
    latex = f"{latex_number(format_number(low, decimals))} to {latex_number(format_number(high, decimals))}"
    return Formatted(text, latex)


def _model(name: str, baselines: Mapping[str, str], published: Mapping[str, str] = {}) -> str:  # noqa: B006
    return name + (BASELINE_MARK if name in baselines else "") + (PUBLISHED_MARK if name in published else "")


def comparison_display(results: Results, baselines: Mapping[str, str]) -> list[dict[str, Any]]:
    shown = []
    for row in results.comparisons:
        decimals = results.decimals.get((row["benchmark"], row["metric"]), 2)
        shown.append({**row, "model_a": _model(row["model_a"], baselines, results.published),
                      "model_b": _model(row["model_b"], baselines, results.published),
                      "value_a": _number(row["value_a"], decimals), "value_b": _number(row["value_b"], decimals),
                      "difference": _number(row["difference"], decimals),
                      "ci": _interval(row["ci_low"], row["ci_high"], decimals)})
    return shown


def _rank_interval(row: Mapping[str, Any]) -> str:
    if not math.isfinite(row["rank_low"]):
        return ""
    low, high = int(row["rank_low"]), int(row["rank_high"])
    return str(low) if low == high else f"{low}-{high}"


def leaderboard_display(results: Results, baselines: Mapping[str, str]) -> list[dict[str, Any]]:
    shown = []
    for row in results.leaderboard:
        decimals = results.decimals.get((row["benchmark"], row["metric"]), 2)
        value = _number(row["value"], decimals)
        if row.get("note"):  # a partial run's value: the note (in the table's notes) says what it is
            mark = row["note"].split(" ", 1)[0]
            value = Formatted(f"{value.text} {mark}", f"{value.latex} {mark}")
        shown.append({**row, "model": _model(row["model"], baselines, results.published), "value": value,
                      "ci": _interval(row["ci_low"], row["ci_high"], decimals),
                      "rank": row["rank"] if math.isfinite(row["rank"]) else None,
                      "rank_ci": _rank_interval(row)})
    return shown


def notes(results: Results, baselines: Mapping[str, str], ranks: bool) -> str:
    parts = [f"{name}: {method}" for name, method in results.methods.items()]
    if ranks:
        parts.append(RANK_NOTE)
    else:
        parts.append("Difference = a - b in the benchmark's units (percentage points for percentages); Holm and BH "
                     "adjust within each benchmark's comparisons.")
    if baselines:
        parts.append("Trivial baselines (no weights: registry adapter `baseline`), marked (baseline): "
                     + ", ".join(f"{model} ({kind})" for model, kind in baselines.items()) + ".")
    if results.published:
        parts.append("Published per-item results (registry adapter `published`: read from the authors' file, not run "
                     "here), marked (published): " + "; ".join(f"{model}: {origin}" for model, origin
                                                                in results.published.items()) + ".")
    parts += results.notes
    return " ".join(parts)


def write_tables(results: Results, out_dir: Path) -> list[Path]:
    import pandas as pd

    from rmeval.run_outputs.catalogue import RUN
    from rmeval.tables import frame_csv, render_latex, render_markdown, write_table_files

    baselines = results.baselines
    paths = []
    for key, rows, columns, display, caption, label, shown in (
            ("comparisons", results.comparisons, COMPARISON_COLUMNS, COMPARISON_DISPLAY, COMPARISONS_CAPTION,
             "tab:comparisons", comparison_display(results, baselines)),
            ("leaderboard", results.leaderboard, LEADERBOARD_COLUMNS, LEADERBOARD_DISPLAY, LEADERBOARD_CAPTION,
             "tab:leaderboard", leaderboard_display(results, baselines))):
        note = notes(results, baselines, ranks=key == "leaderboard")
        frame = pd.DataFrame(rows, columns=columns)
        if key == "leaderboard":
            for column in ("rank", "rank_low", "rank_high"):
                frame[column] = frame[column].astype("Int64")
        texts = {"csv": frame_csv(frame), "md": render_markdown(caption, display, shown, note),
                 "tex": render_latex(caption, label, display, shown, note, generator=GENERATOR)}
        paths += write_table_files(out_dir, Path(RUN.get(key).path).stem, texts)
    return paths

