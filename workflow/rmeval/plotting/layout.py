"""Panel grids and small text helpers shared by the per-model figures."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Any

from rmeval.benchmarks.fairness.figures.inputs import group_label


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


def sample_size_note(counts: list[float]) -> str:
    """`n = 30 papers per group`, or the range when groups differ."""
    finite = [int(count) for count in counts if count == count]
    if not finite:
        return ""
    low, high = min(finite), max(finite)
    if low == high:
        return f"n = {low} papers per group"
    return f"n = {low}-{high} papers per group"
