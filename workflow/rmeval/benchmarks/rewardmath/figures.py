"""`rmeval rewardmath-figures`: RewardBench math-prm accuracy against RewardMATH accuracy and MRR, per model.

The paper's point (Kim et al. 2024, Fig. 1): a model's one-to-one RewardBench math accuracy does not predict
its one-to-many RewardMATH accuracy. Each point is a model; PRMs are shown under one step aggregation
(--prm-aggregation, default prod); the reward-free baselines (fewest steps, ...) are grey crosses. Error bars
on both axes of both panels are the 95% Wilson CIs of rmeval rewardmath-metrics (the random baseline is an
expected value and has none). Runs on fewer problems than the full benchmarks are hollow, marked with a dagger
and left out of the rank correlations in the panel titles (which give the number of models used).

Labels are placed by a deterministic search: for each point (top to bottom), the first offset on rings of
growing radius whose text box overlaps no placed label, no marker and stays inside the axes.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

from rmeval import cli_settings
from rmeval.benchmarks.rewardmath.aggregation import STEP_AGGREGATIONS
from rmeval.benchmarks.rewardmath.agreement import Point, one_per_model, rank_agreement, read_points
from rmeval.benchmarks.rewardmath.tables import DAGGER
from rmeval.config_check import schema_default

FONT_SIZE = 7
# Offsets tried for a label, in points: 8 directions on rings of growing radius (the first free one wins).
_DIRECTIONS = ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1))
_RADII = (4, 9, 15, 22, 30, 40, 52)
STYLES = {"classifier": ("o", "tab:blue"), "PRM": ("s", "tab:orange"), "LLM judge": ("^", "tab:green"),
          "baseline": ("X", "0.45")}


def plotted_points(points: Sequence[Point], prm_aggregation: str) -> list[Point]:
    """What the figure shows: one point per model (and baseline) that has both scores."""
    return [point for point in one_per_model(points, prm_aggregation)
            if point.has_rewardbench and not math.isnan(point.accuracy)]


def _label(point: Point) -> str:
    return point.model if point.full_set else f"{point.model} {DAGGER}"


def _errors(values: list[float], cis: list[tuple[float, float]]):
    lows = [max(0.0, v - lo) if not math.isnan(lo) else 0.0 for v, (lo, _) in zip(values, cis, strict=True)]
    highs = [max(0.0, hi - v) if not math.isnan(hi) else 0.0 for v, (_, hi) in zip(values, cis, strict=True)]
    return [lows, highs]


def _overlap(a, b) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0


def _outside(box, frame) -> float:
    inside = _overlap(box, frame)
    return box.width * box.height - inside


def place_labels(axis, labels: Sequence[tuple[str, float, float]], renderer) -> list:
    """Annotate each (text, x, y) at the first free offset; returns the annotations (deterministic)."""
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    dpi = axis.figure.dpi
    frame = axis.get_window_extent(renderer)
    marker = 4.5 * dpi / 72
    centres = [axis.transData.transform((x, y)) for _, x, y in labels]
    obstacles = [Bbox.from_extents(cx - marker, cy - marker, cx + marker, cy + marker) for cx, cy in centres]
    placed: list = []
    annotations: list = []
    order = sorted(range(len(labels)), key=lambda i: (-labels[i][2], labels[i][1], labels[i][0]))
    pad = 1.5 * dpi / 72
    for index in order:
        text, x, y = labels[index]
        best = None
        for radius in _RADII:
            for dx, dy in _DIRECTIONS:
                offset = (dx * radius, dy * radius)
                ha = "left" if dx > 0 else "right" if dx < 0 else "center"
                va = "bottom" if dy > 0 else "top" if dy < 0 else "center"
                annotation = axis.annotate(text, (x, y), xytext=offset, textcoords="offset points", ha=ha, va=va,
                                           fontsize=FONT_SIZE)
                annotation.update_positions(renderer)  # place the text as a draw would, then measure the text alone
                box = Text.get_window_extent(annotation, renderer).padded(pad)
                annotation.remove()
                cost = sum(_overlap(box, other) for other in placed)
                cost += sum(_overlap(box, other) for other in obstacles)
                cost += 4 * _outside(box, frame)
                if best is None or cost < best[0]:
                    best = (cost, offset, ha, va, radius, box)
                if cost == 0:
                    break
            if best[0] == 0:
                break
        _, offset, ha, va, radius, box = best
        arrow = {"arrowstyle": "-", "color": "0.55", "lw": 0.5, "shrinkA": 0, "shrinkB": 2} if radius > _RADII[1] else None
        annotations.append(axis.annotate(text, (x, y), xytext=offset, textcoords="offset points", ha=ha, va=va,
                                         fontsize=FONT_SIZE, arrowprops=arrow))
        placed.append(box)
    return annotations


def _limits(values: list[float], cis: list[tuple[float, float]]) -> tuple[float, float]:
    finite = [v for v in values if not math.isnan(v)] + [c for ci in cis for c in ci if not math.isnan(c)]
    low, high = min(finite), max(finite)
    span = max(high - low, 5.0)
    return max(-2.0, low - 0.12 * span), min(102.0, high + 0.12 * span)


def build_figure(points: Sequence[Point], prm_aggregation: str):
    """The two-panel figure with labels placed; returns the matplotlib Figure (the caller saves or inspects it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = plotted_points(points, prm_aggregation)
    figure, axes = plt.subplots(1, 2, figsize=(13, 6), dpi=150, constrained_layout=True)
    panels = (("accuracy", "accuracy_ci", "RewardMATH accuracy (%)"), ("mrr", "mrr_ci", "RewardMATH MRR (%)"))
    handles: dict[str, object] = {}
    for axis, (metric, ci_name, label) in zip(axes, panels, strict=True):
        if not shown:
            axis.text(0.5, 0.5, "no model has both a RewardMATH and a RewardBench math-prm score",
                      ha="center", va="center", wrap=True, transform=axis.transAxes)
        for kind, (marker, color) in STYLES.items():
            for full in (True, False):
                chosen = [point for point in shown if point.kind == kind and point.full_set == full]
                if not chosen:
                    continue
                xs = [point.rewardbench for point in chosen]
                ys = [getattr(point, metric) for point in chosen]
                name = f"PRM ({prm_aggregation})" if kind == "PRM" else kind
                container = axis.errorbar(
                    xs, ys, xerr=_errors(xs, [point.rewardbench_ci for point in chosen]),
                    yerr=_errors(ys, [getattr(point, ci_name) for point in chosen]), fmt=marker, color=color,
                    ecolor=color, alpha=0.85, capsize=2, elinewidth=0.8, markersize=6,
                    markerfacecolor=color if full else "white", label=name if full else f"{name}, partial run")
                handles.setdefault(container.get_label(), container)
        if shown:  # the CIs of partial runs (a few problems) would squash the rest: they may leave the axes
            full = [p for p in shown if p.full_set] or shown
            axis.set_xlim(*_limits([p.rewardbench for p in shown], [p.rewardbench_ci for p in full]))
            axis.set_ylim(*_limits([getattr(p, metric) for p in shown], [getattr(p, ci_name) for p in full]))
        axis.set_xlabel("RewardBench math-prm accuracy (%)")
        axis.set_ylabel(label)
        axis.set_title(rank_agreement(points, prm_aggregation, metric).describe(), fontsize=9)
        axis.grid(alpha=0.3)
    if handles:
        figure.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=min(6, len(handles)),
                      fontsize=8, frameon=False)
    figure.suptitle("One-to-one RewardBench math accuracy vs one-to-many RewardMATH "
                    f"(error bars: 95% Wilson CIs; {DAGGER} partial run, not in the correlation)", fontsize=10)
    figure.canvas.draw()  # settle the constrained layout, then freeze it so label boxes stay where measured
    figure.set_layout_engine("none")
    renderer = figure.canvas.get_renderer()
    for axis, (metric, _, _) in zip(axes, panels, strict=True):
        place_labels(axis, [(_label(point), point.rewardbench, getattr(point, metric)) for point in shown], renderer)
    return figure


def draw(points: Sequence[Point], prm_aggregation: str, png: Path, pdf: Path) -> None:
    import matplotlib.pyplot as plt

    from rmeval.io.atomic import replacing

    figure = build_figure(points, prm_aggregation)
    for path in (png, pdf):
        fmt = path.suffix.lstrip(".")
        # No creation date in the PDF, as plotting.style.save_figure does: a redrawn figure is byte-identical.
        metadata = {"CreationDate": None} if fmt == "pdf" else None
        with replacing(path) as temporary:
            figure.savefig(temporary, format=fmt, dpi=figure.dpi, metadata=metadata)
    plt.close(figure)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardmath-figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", required=True, help="rewardmath_vs_rewardbench.csv of rmeval rewardmath-metrics")
    parser.add_argument("--png", required=True, help="output PNG")
    parser.add_argument("--pdf", required=True, help="output PDF")
    parser.add_argument("--prm-aggregation", default=schema_default("rewardmath.prm_aggregation"),
                        choices=list(STEP_AGGREGATIONS),
                        help="which step aggregation stands for each PRM (default: %(default)s)")
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    points = read_points(Path(args.table))
    draw(points, args.prm_aggregation, Path(args.png), Path(args.pdf))
    shown = plotted_points(points, args.prm_aggregation)
    print(f"rewardmath-figures: {len(shown)} points -> {args.png}, {args.pdf}")
    return 0
