"""Fairness gap against RewardBench rank: do better-ranked models have smaller group gaps?

Two panels share the rank axis: the scale-free gap and the paper's NMGD. Spearman's rho is
shown when at least three models have a rank. Models without a `rewardbench_rank` in the
registry are listed under the plot rather than silently dropped; with fewer than two ranked
models the figure is a single panel saying that no ranks are available and how to add them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rmeval.plotting.style import figure_renderer, message_panel, pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

STEM = "fig_gap_vs_rank"
MIN_RANKED_MODELS = 2
MIN_MODELS_FOR_RHO = 3
NO_RANKS = (
    "No RewardBench ranks available for these models ({ranked} of {total} ranked).\n"
    "Set `rewardbench_rank` for each model in config/models.yaml (or inline in your config)\n"
    "to plot the fairness gap against RewardBench rank."
)

PANELS = (
    ("scale_free_gap", "scale-free gap (max - min mean) / pooled SD"),
    ("nmgd_percent", "NMGD (%)"),
)


def spearman_text(ranks: pd.Series, values: pd.Series) -> str:
    from scipy.stats import spearmanr

    paired = [(r, v) for r, v in zip(ranks, values, strict=True) if math.isfinite(r) and math.isfinite(v)]
    if len(paired) < MIN_MODELS_FOR_RHO:
        return f"Spearman rho needs >= {MIN_MODELS_FOR_RHO} ranked models"
    result = spearmanr([r for r, _ in paired], [v for _, v in paired])
    if not math.isfinite(result.statistic):
        return "Spearman rho undefined (constant values)"
    return f"Spearman rho = {result.statistic:+.2f}, p = {result.pvalue:.3g} (n = {len(paired)})"


def draw(points: pd.DataFrame) -> Figure:
    plt = pyplot()
    ranked = points[points["rewardbench_rank"].notna()]
    unranked = list(points.loc[points["rewardbench_rank"].isna(), "model"])
    if len(ranked) < MIN_RANKED_MODELS:
        figure, axes = plt.subplots(figsize=(7.0, 2.4))
        message_panel(
            axes,
            "Fairness gap vs RewardBench rank",
            NO_RANKS.format(ranked=len(ranked), total=len(points)),
        )
        return figure

    from matplotlib.ticker import MaxNLocator

    figure, grid = plt.subplots(1, 2, figsize=(9.0, 3.6), sharex=True, layout="constrained")
    for axes, (column, label) in zip(grid, PANELS, strict=True):
        axes.scatter(ranked["rewardbench_rank"], ranked[column], color="#0072B2", s=28, zorder=3)
        for row in ranked.itertuples(index=False):
            value = getattr(row, column)
            if math.isfinite(value):
                axes.annotate(
                    row.model,
                    (row.rewardbench_rank, value),
                    xytext=(4, 3),
                    textcoords="offset points",
                    fontsize=7,
                )
        if ranked["rewardbench_rank"].nunique() <= 12:
            ranks = sorted(int(rank) for rank in ranked["rewardbench_rank"].unique())
            axes.set_xticks(ranks, [str(rank) for rank in ranks])
        else:
            axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_xlabel("RewardBench rank (1 = best)")
        axes.set_ylabel(label)
        axes.set_title(spearman_text(ranked["rewardbench_rank"], ranked[column]), loc="left", fontsize=8)
        axes.grid(color="#eeeeee", linewidth=0.6, zorder=0)
        axes.margins(x=0.2, y=0.15)
    grid[1].axhline(0.0, color="#999999", linewidth=0.6)
    figure.suptitle("Is the better-ranked model fairer? (lower gap = fairer)", x=0.01, ha="left", fontsize=9)
    if unranked:
        figure.text(
            0.01,
            -0.02,
            "Not shown (no rewardbench_rank): " + ", ".join(unranked),
            fontsize=7,
            color="#555555",
            ha="left",
            va="top",
        )
    return figure


render = figure_renderer(draw, STEM)
