"""`rmeval compare-figure`: the leaderboard's figure (rule run_compare_figure, from leaderboard.csv alone). For each
benchmark's headline metric, every model's rank (dot) with its simultaneous rank interval (bar), best first;
baselines hollow, in orange, and labelled. Overlapping bars are not a pairwise test: under each panel the pairs
whose paired interval (at the rank intervals' level) holds 0 are named, every other pair is separated."""

from __future__ import annotations

import argparse
import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.catalogue import show_value
from rmeval.intervals import CONFIDENCE
from rmeval.plotting.style import message_panel, pyplot, save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 200
RANKED_COLOUR, BASELINE_COLOUR = "#0072B2", "#D55E00"


def _panels(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, list[Mapping[str, Any]]]]:
    panels: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        panels.setdefault((row["benchmark"], row["metric"]), []).append(row)
    return [(bench, metric, members) for (bench, metric), members in panels.items()]


def draw(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """`rows`: leaderboard.csv's (rmeval.run_outputs.compare.summary.read_rows)."""
    plt = pyplot()
    panels = _panels(rows)
    if not panels:
        figure, axes = plt.subplots(figsize=(6.0, 2.0), layout="constrained")
        message_panel(axes, "Ranks with their intervals", "No benchmark of this run has a leaderboard: "
                      "no enabled benchmark declares a comparison, or no model has scores.")
        return figure
    heights = [len(members) for _, _, members in panels]
    figure, grid = plt.subplots(len(panels), 1, figsize=(7.0, 0.32 * sum(heights) + 0.9 * len(panels) + 0.4),
                                squeeze=False, layout="constrained", gridspec_kw={"height_ratios": heights})
    for axes, (bench, metric, members) in zip((line[0] for line in grid), panels, strict=True):
        _panel(axes, f"{bench}: {metric}", members, _decimals(bench, metric))
    figure.suptitle(f"Ranks with {CONFIDENCE:.0%} intervals holding for all models at once", fontsize=9,
                    x=0.01, ha="left")
    return figure


def _decimals(bench: str, metric: str) -> int:
    """The metric's decimals, as its catalogue gives them (the console, the leaderboard and the summary use them)."""
    from rmeval.benchmarks import catalogue
    from rmeval.benchmarks.catalogue import DECIMALS

    known = catalogue().get(bench)
    return known.compare.decimals_of(metric) if known is not None and known.compare is not None else DECIMALS


def _panel(axes: Any, title: str, rows: Sequence[Mapping[str, Any]], decimals: int = 3) -> None:
    ordered = sorted(rows, key=lambda row: (not math.isfinite(row["rank"]), row["rank"], row["model"]))
    count = len(ordered)
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
              f"{'' if not math.isfinite(row['value']) else show_value(row['value'], decimals)}"
              f"{' ' + str(row['note']).split(' ', 1)[0] if row.get('note') else ''}" for row in ordered]
    axes.set_yticks(range(count - 1, -1, -1), labels)
    axes.set_xlim(0.5, count + 0.5)
    axes.set_xticks(range(1, count + 1))
    axes.set_ylim(-0.7, count - 0.3)
    axes.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    axes.set_title(title, loc="left", fontweight="bold")
    axes.set_xlabel("rank (1 = best; overlapping bars are not a pairwise test)\n" + separation_note(rows), fontsize=7)


def separation_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """The panel's pairs that its paired intervals do not separate (wrapped), or that every pair is separated."""
    from rmeval.run_outputs.compare.summary import pair_relations

    not_separated, separated = pair_relations(rows)
    if not not_separated:
        return "every pair separated" if separated else ""
    text = ("not separated: " + ", ".join(f"{a} vs {b}" for a, b in not_separated)
            + ("; every other pair separated" if separated else ""))
    return "\n".join(textwrap.wrap(text, 110))


def write_figure(leaderboard: Path, out_dir: Path) -> list[Path]:
    from rmeval.run_outputs.catalogue import RUN
    from rmeval.run_outputs.compare.summary import read_rows

    output = RUN.get("compare_figure")
    return save_figure(draw(read_rows(leaderboard)), out_dir, output.stem, DPI, (output.suffix, *output.formats))


def main(argv: list[str]) -> int:
    from rmeval.cli_settings import add_settings_argument, parse_args
    from rmeval.run_outputs.catalogue import RUN

    parser = argparse.ArgumentParser(prog="rmeval compare-figure", description=__doc__)
    parser.add_argument("--leaderboard", type=Path, default=Path(RUN.get("leaderboard").path),
                        help="leaderboard.csv of `rmeval compare` (default: the run's)")
    parser.add_argument("--out", type=Path, default=Path(RUN.get("compare_figure").path).parent,
                        help="folder of the figure (default: results/figures)")
    add_settings_argument(parser)
    args = parse_args(parser, argv)
    paths = write_figure(args.leaderboard, args.out)
    print(f"rmeval compare-figure: wrote {', '.join(map(str, paths))}")
    return 0
