"""The leaderboard's figure: for each benchmark's headline metric, every model's rank (dot) with its simultaneous
rank interval (bar), best first; baselines hollow and labelled. Models whose bars overlap cannot be told apart."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.intervals import CONFIDENCE
from rmeval.plotting.style import message_panel, pyplot, save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rmeval.run_outputs.compare.parts import Results

DPI = 200
RANKED_COLOUR, BASELINE_COLOUR = "#0072B2", "#D55E00"


def _panels(results: Results) -> list[tuple[str, str, list[dict[str, Any]]]]:
    panels: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in results.leaderboard:
        panels.setdefault((row["benchmark"], row["metric"]), []).append(row)
    return [(bench, metric, rows) for (bench, metric), rows in panels.items()]


def _title(results: Results, bench: str, metric: str) -> str:
    return f"{bench}: {results.labels.get((bench, metric), metric)}"


def draw(results: Results) -> Figure:
    plt = pyplot()
    panels = _panels(results)
    if not panels:
        figure, axes = plt.subplots(figsize=(6.0, 2.0), layout="constrained")
        message_panel(axes, "Ranks with their intervals", "No benchmark of this run has a leaderboard: "
                      "no enabled benchmark declares a comparison, or no model has scores.")
        return figure
    heights = [max(len(rows), 1) for _, _, rows in panels]
    figure, grid = plt.subplots(len(panels), 1, figsize=(7.0, 0.32 * sum(heights) + 0.9 * len(panels) + 0.4),
                                squeeze=False, layout="constrained", gridspec_kw={"height_ratios": heights})
    for axes, (bench, metric, rows) in zip((row[0] for row in grid), panels, strict=True):
        _panel(axes, results, bench, metric, rows)
    figure.suptitle(f"Ranks with {CONFIDENCE:.0%} intervals holding for all models at once", fontsize=9,
                    x=0.01, ha="left")
    return figure


def _panel(axes: Any, results: Results, bench: str, metric: str, rows: Sequence[dict[str, Any]]) -> None:
    ordered = sorted(rows, key=lambda row: (not math.isfinite(row["rank"]), row["rank"], row["model"]))
    count = len(ordered)
    decimals = results.decimals.get((bench, metric), 2)
    for index, row in enumerate(ordered):
        y = count - 1 - index
        if not math.isfinite(row["rank"]):
            axes.text(1, y, "no value", va="center", fontsize=7, color="#777777")
            continue
        colour = BASELINE_COLOUR if row["baseline"] else RANKED_COLOUR
        axes.plot([row["rank_low"], row["rank_high"]], [y, y], color=colour, linewidth=3, alpha=0.35,
                  solid_capstyle="round")
        axes.plot(row["rank"], y, marker="o", color=colour, markerfacecolor="white" if row["baseline"] else colour,
                  markersize=6, zorder=3)
    labels = [f"{row['model']}{' (baseline)' if row['baseline'] else ''}  "
              f"{'' if not math.isfinite(row['value']) else format(row['value'], f'.{decimals}f')}"
              for row in ordered]
    axes.set_yticks(range(count - 1, -1, -1), labels)
    axes.set_xlim(0.5, max(count, 1) + 0.5)
    axes.set_xticks(range(1, count + 1))
    axes.set_ylim(-0.7, count - 0.3)
    axes.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    axes.set_title(_title(results, bench, metric), loc="left", fontweight="bold")
    axes.set_xlabel("rank (1 = best)")


def write_figure(results: Results, out_dir: Path) -> list[Path]:
    from rmeval.run_outputs.catalogue import RUN

    output = RUN.get("compare_figure")
    return save_figure(draw(results), out_dir, output.stem, DPI, (output.suffix, *output.formats))
