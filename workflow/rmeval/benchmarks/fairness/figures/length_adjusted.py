"""Length-adjusted versus raw group means (ANCOVA reward ~ group + log(n_tokens)), one panel per model.

A hollow marker is the raw group mean and a filled one the mean adjusted to the common
average log length; a long connecting line means abstract length moves that group's
reward. When the score files carried no token counts there is nothing to adjust for, and
the figure says so instead of showing an empty plot.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rmeval.benchmarks.fairness.figures.panels import model_panels
from rmeval.plotting.layout import style_value_axis, wrap_title
from rmeval.plotting.style import message_panel, pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

UNAVAILABLE = (
    "No length-adjusted means: the score files have no n_tokens column,\n"
    "so the ANCOVA reward ~ group + log(n_tokens) could not be fitted."
)


def retained_gap_text(rows: pd.DataFrame) -> str:
    """How much of the max-min gap between group means survives the length adjustment."""
    raw_gap = rows["raw_mean"].max() - rows["raw_mean"].min()
    adjusted_gap = rows["adjusted_mean"].max() - rows["adjusted_mean"].min()
    if not (math.isfinite(raw_gap) and math.isfinite(adjusted_gap)) or raw_gap <= 0:
        return "gap retained: n/a"
    return f"gap retained after adjustment: {100 * adjusted_gap / raw_gap:.0f}%"


def draw(adjusted: pd.DataFrame) -> Figure:
    plt = pyplot()
    usable = adjusted.dropna(subset=["raw_mean"])
    if usable.empty or usable["adjusted_mean"].isna().all():
        figure, axes = plt.subplots(figsize=(6.5, 2.2))
        message_panel(axes, "Length-adjusted vs raw group means", UNAVAILABLE)
        return figure

    layout = model_panels(plt, usable)
    colors, positions = layout.colors, layout.positions
    for axes, model, rows in layout.panels:
        if rows["adjusted_mean"].isna().all():
            axes.set_title(wrap_title(model), loc="left")
            axes.text(
                0.5,
                0.5,
                "no token counts\nfor this model",
                transform=axes.transAxes,
                ha="center",
                va="center",
                fontsize=8,
                color="#666666",
            )
            continue
        for row in rows.itertuples(index=False):
            y = positions[row.group]
            color = colors[row.group]
            if math.isfinite(row.adjusted_mean):
                axes.plot([row.raw_mean, row.adjusted_mean], [y, y], color=color, linewidth=1.4, zorder=2)
                axes.plot(row.adjusted_mean, y, "o", color=color, markersize=5.5, zorder=3)
            axes.plot(
                row.raw_mean,
                y,
                "o",
                markerfacecolor="white",
                markeredgecolor=color,
                markeredgewidth=1.4,
                markersize=5.5,
                zorder=4,
            )
        axes.set_title(f"{wrap_title(model)}\n{retained_gap_text(rows)}", loc="left")
        style_value_axis(axes, "mean reward", margin=0.15)
    layout.label_groups()
    legend_handles = [
        plt.Line2D(
            [],
            [],
            marker="o",
            linestyle="none",
            markerfacecolor="white",
            markeredgecolor="#333333",
            label="raw mean",
        ),
        plt.Line2D([], [], marker="o", linestyle="none", color="#333333", label="adjusted for log(n_tokens)"),
    ]
    layout.figure.legend(handles=legend_handles, loc="outside lower center", ncols=2, frameon=False)
    layout.figure.suptitle(
        "Group means before and after adjusting for abstract length", x=0.01, ha="left", fontsize=9
    )
    return layout.figure
