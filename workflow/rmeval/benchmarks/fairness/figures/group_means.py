"""Figure 2: mean reward per group with 95% CIs, one panel per model (reward scales differ)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rmeval.benchmarks.fairness.figures.inputs import ordered_unique
from rmeval.plotting.layout import group_tick_labels, panel_grid, sample_size_note, wrap_title
from rmeval.plotting.style import group_colors, pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def draw(group_means: pd.DataFrame) -> Figure:
    plt = pyplot()
    models = ordered_unique(group_means["model"])
    groups = ordered_unique(group_means["group"])
    colors = group_colors(groups)
    positions = {group: len(groups) - 1 - i for i, group in enumerate(groups)}  # first group on top

    grid = panel_grid(plt, len(models), len(groups))
    for axes, model in zip(grid.axes, models, strict=True):
        rows = group_means[group_means["model"] == model]
        # Dashed reference: the model's mean over all papers, so above/below-average groups read at a glance.
        weights = rows["n"].where(rows["n"] > 0)
        overall = (
            float((rows["mean"] * weights).sum() / weights.sum())
            if weights.notna().any()
            else float(rows["mean"].mean())
        )
        axes.axvline(overall, color="#888888", linestyle="--", linewidth=0.8, zorder=1)
        for row in rows.itertuples(index=False):
            y = positions[row.group]
            axes.errorbar(
                row.mean,
                y,
                xerr=[[row.mean - row.ci_low], [row.ci_high - row.mean]],
                fmt="o",
                color=colors[row.group],
                ecolor=colors[row.group],
                markersize=5,
                elinewidth=1.6,
                capsize=2.5,
                zorder=3,
            )
        axes.set_title(wrap_title(model), loc="left")
        axes.set_xlabel("mean reward (95% CI)")
        axes.grid(axis="x", color="#e5e5e5", linewidth=0.6, zorder=0)
        axes.margins(x=0.12)
    first = grid.axes[0]
    first.set_yticks([positions[group] for group in groups], group_tick_labels(groups))
    first.set_ylim(-0.6, len(groups) - 0.4)
    note = sample_size_note(list(group_means["n"]))
    grid.figure.suptitle(
        "Mean reward by group" + (f" ({note}; dashed line: the model's overall mean)" if note else ""),
        x=0.01,
        ha="left",
        fontsize=9,
    )
    return grid.figure
