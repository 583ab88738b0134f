"""The per-model panel grid of the group figures (group means, length-adjusted means): one panel per model,
in the table's order, sharing a group axis with the first group on top."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.fairness.figures.inputs import ordered_unique
from rmeval.plotting.layout import group_positions, label_group_axis, panel_grid
from rmeval.plotting.style import group_colors

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ModelPanels:
    figure: Any
    groups: list[str]
    colors: dict[str, str]  # group -> colour, the same in every panel
    positions: dict[str, int]  # group -> y
    panels: list[tuple[Any, str, pd.DataFrame]]  # (axes, model, the model's rows)

    def label_groups(self) -> None:
        """The shared group axis, set once on the first panel."""
        label_group_axis(self.panels[0][0], self.groups, self.positions)


def model_panels(plt: Any, table: pd.DataFrame) -> ModelPanels:
    models = ordered_unique(table["model"])
    groups = ordered_unique(table["group"])
    colors = group_colors(groups)
    grid = panel_grid(plt, len(models), len(groups))
    panels = [(axes, model, table[table["model"] == model]) for axes, model in zip(grid.axes, models, strict=True)]
    return ModelPanels(grid.figure, groups, colors, group_positions(groups), panels)
