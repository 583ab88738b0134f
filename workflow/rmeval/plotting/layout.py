"""Panel grids and small text helpers shared by the per-model figures."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Any

from rmeval.labels import group_label

GRID_COLOR = "#e5e5e5"


@dataclass(frozen=True)
class PanelGrid:
    figure: Any
    axes: list[Any]  # one per panel, row-major; spare grid cells are already removed


def panel_grid(plt: Any, n_panels: int, n_rows_per_panel: int, max_columns: int = 4) -> PanelGrid:
    """A grid of panels that share the group axis (y), sized by how many groups each panel lists."""
    columns = min(max_columns, n_panels)
    rows = math.ceil(n_panels / columns)
    panel_height = 0.32 * n_rows_per_panel + 0.9
    figure, grid = plt.subplots(
        rows,
        columns,
        figsize=(2.7 * columns + 1.2, panel_height * rows + 0.4),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    flat = [axes for row in grid for axes in row]
    for spare in flat[n_panels:]:
        spare.remove()
    return PanelGrid(figure=figure, axes=flat[:n_panels])


def wrap_title(text: str, width: int = 28) -> str:
    return "\n".join(textwrap.wrap(text, width=width, break_on_hyphens=False)) or text


def group_tick_labels(groups: list[str]) -> list[str]:
    return [group_label(group) for group in groups]


def group_positions(groups: list[str]) -> dict[str, int]:
    """The y position of each group in a panel: the first group on top."""
    return {group: len(groups) - 1 - i for i, group in enumerate(groups)}


def label_group_axis(axes: Any, groups: list[str], positions: dict[str, int]) -> None:
    """The group (y) axis the panels of a grid share, set once on the first panel."""
    axes.set_yticks([positions[group] for group in groups], group_tick_labels(groups))
    axes.set_ylim(-0.6, len(groups) - 0.4)


def style_value_axis(axes: Any, label: str, margin: float) -> None:
    """A panel's value (x) axis: its label, light grid lines behind the data, room beside the extremes."""
    axes.set_xlabel(label)
    axes.grid(axis="x", color=GRID_COLOR, linewidth=0.6, zorder=0)
    axes.margins(x=margin)


def sample_size_note(counts: list[float]) -> str:
    """`n = 30 papers per group`, or the range when groups differ."""
    finite = [int(count) for count in counts if count == count]
    if not finite:
        return ""
    low, high = min(finite), max(finite)
    if low == high:
        return f"n = {low} papers per group"
    return f"n = {low}-{high} papers per group"
