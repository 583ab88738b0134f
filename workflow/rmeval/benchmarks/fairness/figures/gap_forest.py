"""Forest plot of the scale-free gap (max group-mean difference / pooled within-group SD) per model.

Unlike the NMGD, this gap does not divide by the mean reward, so it is comparable across models
whatever their scale or sign. Each row is annotated with the groups at the extremes, the
permutation p-value and the NMGD with its bootstrap CI, so the two metrics can be read side by side.
A square marks a permutation p-value below the alpha the tables were computed with (`stats.alpha`, from the
run record of `rmeval fairness-stats`), which the title states. A trivial baseline (the record's `baselines`) is
labelled as one, and a length baseline's gap is drawn as a dashed line across the models: what length alone gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rmeval.labels import group_label
from rmeval.plotting.style import pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

# Cohen's conventional small / medium / large standardized differences, as reading aids.
EFFECT_SIZE_MARKS = ((0.2, "small"), (0.5, "medium"), (0.8, "large"))


def format_p(p_value: float) -> str:
    if not math.isfinite(p_value):
        return "p n/a"
    if p_value < 0.001:
        return "p < 0.001"
    return f"p = {p_value:.3f}"


def format_nmgd(row: pd.Series) -> str:
    if not math.isfinite(row["nmgd_percent"]):
        return "NMGD n/a"
    text = f"NMGD {row['nmgd_percent']:.1f}%"
    if math.isfinite(row["nmgd_ci_low"]) and math.isfinite(row["nmgd_ci_high"]):
        text += f" [{row['nmgd_ci_low']:.1f}, {row['nmgd_ci_high']:.1f}]"
    elif math.isinf(row["nmgd_ci_low"]) or math.isinf(row["nmgd_ci_high"]):
        text += " [unbounded]"
    # fairness-stats flags an NMGD whose denominator (the mean reward) is compatible with 0.
    if str(row.get("nmgd_unstable", "")).strip().lower() in {"true", "1", "yes"}:
        text += " (unstable: mean reward near 0)"
    return text


def significant(p_value: float, alpha: float) -> bool:
    """What a square marks: a permutation p-value below the run's alpha."""
    return math.isfinite(p_value) and p_value < alpha


def draw(gap: pd.DataFrame, record: Mapping[str, Any]) -> Figure:
    """`gap`: table7_gap.csv; `record`: fairness_stats.json (its `settings.alpha` is the significance level)."""
    import matplotlib.transforms as transforms

    alpha = float(record["settings"]["alpha"])
    plt = pyplot()
    rows = gap.sort_values("scale_free_gap", ascending=True, kind="stable").reset_index(drop=True)
    figure, axes = plt.subplots(figsize=(8.0, 0.5 * len(rows) + 1.3), layout="constrained")

    ci_high = rows["gap_ci_high"].max(skipna=True) if rows["gap_ci_high"].notna().any() else 0.0
    upper = float(max(rows["scale_free_gap"].max(skipna=True) if rows["scale_free_gap"].notna().any() else 0.0,
                      ci_high))
    # Labels would collide when the axis is wide, so the x label explains the dotted lines instead.
    for position, _ in EFFECT_SIZE_MARKS:
        if position <= upper * 1.15:
            axes.axvline(position, color="#bbbbbb", linestyle=":", linewidth=0.9, zorder=0)
    for y, row in rows.iterrows():
        gap = row["scale_free_gap"]
        if not math.isfinite(gap):  # no within-group variance: no gap to draw (table7's note says why)
            axes.plot(0.0, y, marker="x", color="#777777", markersize=6, zorder=3)
            continue
        has_ci = math.isfinite(row["gap_ci_low"]) and math.isfinite(row["gap_ci_high"])
        xerr = [[gap - row["gap_ci_low"]], [row["gap_ci_high"] - gap]] if has_ci else None
        square = significant(row["perm_p_value"], alpha)
        axes.errorbar(
            gap,
            y,
            xerr=xerr,
            fmt="s" if square else "o",
            color="#0072B2" if square else "#777777",
            markersize=6,
            elinewidth=1.6,
            capsize=3,
            zorder=3,
        )
    to_right_margin = transforms.blended_transform_factory(axes.transAxes, axes.transData)
    for y, row in rows.iterrows():
        extremes = f"{group_label(str(row['max_group']))} > {group_label(str(row['min_group']))}"
        if not math.isfinite(row["scale_free_gap"]):
            extremes = "gap undefined: no within-group variance"
        axes.text(
            1.03,
            y,
            f"{extremes}\n{format_p(row['perm_p_value'])} · {format_nmgd(row)}",
            transform=to_right_margin,
            va="center",
            fontsize=7.5,
        )
    baselines = record.get("baselines") or {}
    length_gaps = [row["scale_free_gap"] for _, row in rows.iterrows()
                   if (baselines.get(row["model"]) or {}).get("kind") == "length" and math.isfinite(row["scale_free_gap"])]
    for gap in length_gaps:
        axes.axvline(gap, color="#D55E00", linestyle="--", linewidth=1.0, zorder=1)
    axes.set_yticks(range(len(rows)), [f"{m} (baseline)" if m in baselines else m for m in rows["model"]])
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.set_xlim(left=0.0, right=max(upper * 1.1, 0.1))
    marks = " / ".join(f"{position:g}" for position, _ in EFFECT_SIZE_MARKS)
    names = " / ".join(label for _, label in EFFECT_SIZE_MARKS)
    axes.set_xlabel(
        "scale-free gap: (max - min group mean) / pooled within-group SD, 95% CI\n"
        f"dotted lines: {marks} ({names} standardized difference)"
        + ("; dashed: the length baseline's gap (length alone)" if length_gaps else "")
    )
    axes.set_title(
        f"Largest group gap per model (squares: permutation p < {alpha:g}; circles: not significant)",
        loc="left",
    )
    return figure
