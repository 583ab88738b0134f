"""Figure 3: group means z-scored within each model, as an annotated model x group heatmap.

z = (group mean - mean of the model's group means) / SD of the model's group means (ddof=0),
so every row has mean 0 and SD 1 whatever the model's reward scale. A model whose group
means are all equal has no defined z-scores; its cells are greyed and marked n/a.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rmeval.benchmarks.fairness.figures.inputs import ordered_unique
from rmeval.labels import group_label
from rmeval.plotting.style import pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def standardized_means(group_means: pd.DataFrame) -> pd.DataFrame:
    """Model x group matrix of z-scored group means (rows and columns in the table's order)."""
    import numpy as np

    models = ordered_unique(group_means["model"])
    groups = ordered_unique(group_means["group"])
    matrix = group_means.pivot(index="model", columns="group", values="mean").reindex(
        index=models, columns=groups
    )
    centred = matrix.sub(matrix.mean(axis=1), axis=0)
    spread = matrix.std(axis=1, ddof=0)
    # Relative tolerance: equal means that differ only by float rounding are still "all equal".
    flat = spread <= 1e-12 * matrix.abs().max(axis=1).clip(lower=1.0)
    return centred.div(spread.where(~flat, np.nan), axis=0)


def draw(group_means: pd.DataFrame) -> Figure:
    import numpy as np

    plt = pyplot()
    z = standardized_means(group_means)
    values = z.to_numpy(dtype="float64")
    n_models, n_groups = values.shape
    limit = max(2.0, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 2.0)

    figure, axes = plt.subplots(figsize=(0.95 * n_groups + 2.6, 0.45 * n_models + 1.6), layout="constrained")
    cmap = plt.get_cmap("RdBu_r").with_extremes(bad="#dddddd")
    image = axes.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-limit, vmax=limit, aspect="auto")
    for i in range(n_models):
        for j in range(n_groups):
            value = values[i, j]
            text = "n/a" if not np.isfinite(value) else f"{value:+.2f}"
            # White text on the dark ends of the colour map, black elsewhere.
            color = "white" if np.isfinite(value) and abs(value) > 0.6 * limit else "black"
            axes.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
    axes.set_xticks(range(n_groups), [group_label(group) for group in z.columns], rotation=30, ha="right")
    axes.set_yticks(range(n_models), list(z.index))
    axes.tick_params(length=0)
    for spine in axes.spines.values():
        spine.set_visible(False)
    axes.set_xticks(np.arange(-0.5, n_groups, 1), minor=True)
    axes.set_yticks(np.arange(-0.5, n_models, 1), minor=True)
    axes.grid(which="minor", color="white", linewidth=1.5)
    axes.tick_params(which="minor", length=0)
    colorbar = figure.colorbar(image, ax=axes, shrink=0.9)
    colorbar.set_label("z-score of the group mean within the model")
    axes.set_title(
        "Standardized group means (red: favoured groups, blue: disfavoured; each row has mean 0, SD 1)",
        loc="left",
    )
    return figure
