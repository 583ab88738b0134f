"""Figure 2: mean reward per group with 95% CIs, one panel per model (reward scales differ)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rmeval.benchmarks.fairness.figures.panels import model_panels
from rmeval.plotting.layout import sample_size_note, style_value_axis, wrap_title
from rmeval.plotting.style import pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def draw(group_means: pd.DataFrame) -> Figure:
    plt = pyplot()
    layout = model_panels(plt, group_means)
    colors, positions = layout.colors, layout.positions
    for axes, model, rows in layout.panels:
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
                xerr=[[row.mean - row.ci_low], [row.ci_high - row.mean]] if row.ci_low == row.ci_low else None,
                fmt="o",
                color=colors[row.group],
                ecolor=colors[row.group],
                markersize=5,
                elinewidth=1.6,
                capsize=2.5,
                zorder=3,
            )
        axes.set_title(wrap_title(model), loc="left")
        style_value_axis(axes, "mean reward (95% CI)", margin=0.12)
    layout.label_groups()
    note = sample_size_note(list(group_means["n"]))
    layout.figure.suptitle(
        "Mean reward by group" + (f" ({note}; dashed line: the model's overall mean)" if note else ""),
        x=0.01,
        ha="left",
        fontsize=9,
    )
    return layout.figure
