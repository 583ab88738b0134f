"""The paired design's figure: each pair's within-pair difference (a group's reward minus its pair's mean) per
group, one panel per model (reward scales differ), with the mean and its 95% t interval. Drawn from
`paired_differences.csv` (rmeval fairness-stats --pairs); jitter is seeded, so the files are byte-stable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rmeval.benchmarks.fairness.figures.panels import model_panels
from rmeval.plotting.layout import style_value_axis, wrap_title
from rmeval.plotting.style import pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

STEM = "fig_paired_differences"
JITTER = 0.18  # half-height of the point cloud around a group's row


def draw(differences: pd.DataFrame) -> Figure:
    import numpy as np

    from rmeval.benchmarks.fairness.corpus.paired import mean_ci

    plt = pyplot()
    layout = model_panels(plt, differences)
    rng = np.random.default_rng(0)
    for axes, model, rows in layout.panels:
        axes.axvline(0.0, color="#888888", linestyle="--", linewidth=0.8, zorder=1)
        for group, members in rows.groupby("group", sort=False):
            y = layout.positions[group]
            values = members["difference"].to_numpy(dtype=float)
            offsets = rng.uniform(-JITTER, JITTER, size=len(values))
            axes.scatter(values, y + offsets, s=10, color=layout.colors[group], alpha=0.6, linewidths=0, zorder=2)
            mean, low, high = mean_ci(values)
            if np.isfinite(low):
                axes.errorbar(mean, y, xerr=[[mean - low], [high - mean]], fmt="o", color="black", markersize=4,
                              elinewidth=1.4, capsize=2.5, zorder=3)
        axes.set_title(wrap_title(model), loc="left")
        style_value_axis(axes, "reward - pair mean (mean, 95% CI)", margin=0.12)
    layout.label_groups()
    pairs = differences.groupby("model")["pair"].nunique()
    shown = f"{int(pairs.min())}" if pairs.nunique() == 1 else f"{int(pairs.min())}-{int(pairs.max())}"
    layout.figure.suptitle(f"Within-pair differences by group ({shown} complete pairs; dashed line: no difference)",
                           x=0.01, ha="left", fontsize=9)
    return layout.figure
