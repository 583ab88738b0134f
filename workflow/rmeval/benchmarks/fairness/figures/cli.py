"""`rmeval fairness-figures`: draw the fairness figures from the tables of `rmeval fairness-stats`.

    rmeval fairness-figures --tables results/tables --out results/figures

Each figure is written as PNG and PDF. `--figures` draws a subset, which needs only that
subset's tables (fig2 and fig3 need group_means.csv alone). Individual `--group-means`,
`--gap`, `--adjusted` and `--rank-points` paths override the files found under `--tables`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rmeval.benchmarks.fairness.figures.inputs import TablePaths
from rmeval.errors import RmevalError


@dataclass(frozen=True)
class FigureJob:
    name: str  # the stem of the output files
    table: str  # the TablePaths field it is drawn from
    reader: str  # the loader in rmeval.benchmarks.fairness.figures.inputs
    module: str  # the module holding `render(table, out_dir, dpi)`


FIGURES: tuple[FigureJob, ...] = (
    FigureJob("fig2_group_means", "group_means", "read_group_means", "rmeval.benchmarks.fairness.figures.group_means"),
    FigureJob("fig3_standardized", "group_means", "read_group_means", "rmeval.benchmarks.fairness.figures.standardized"),
    FigureJob("fig_gap_forest", "gap", "read_gap", "rmeval.benchmarks.fairness.figures.gap_forest"),
    FigureJob("fig_length_adjusted", "adjusted", "read_adjusted", "rmeval.benchmarks.fairness.figures.length_adjusted"),
    FigureJob("fig_gap_vs_rank", "rank_points", "read_rank_points", "rmeval.benchmarks.fairness.figures.gap_vs_rank"),
)
FIGURE_NAMES = tuple(job.name for job in FIGURES)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rmeval fairness-figures",
        description="Figures 2-3 of Song et al. 2025 and the extra fairness figures, as PNG and PDF.",
    )
    parser.add_argument(
        "--tables",
        type=Path,
        default=Path("results/tables"),
        help="folder written by `rmeval fairness-stats` (default: results/tables)",
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder for the figures")
    parser.add_argument("--group-means", type=Path, help="group_means.csv (default: TABLES/group_means.csv)")
    parser.add_argument("--gap", type=Path, help="table7_gap.csv (default: TABLES/table7_gap.csv)")
    parser.add_argument(
        "--adjusted", type=Path, help="adjusted_group_means.csv (default: TABLES/adjusted_group_means.csv)"
    )
    parser.add_argument(
        "--rank-points",
        type=Path,
        help="rank_vs_fairness_points.csv (default: TABLES/rank_vs_fairness_points.csv)",
    )
    parser.add_argument(
        "--figures",
        nargs="+",
        choices=FIGURE_NAMES,
        default=list(FIGURE_NAMES),
        metavar="NAME",
        help=f"figures to draw (default: all of {', '.join(FIGURE_NAMES)})",
    )
    parser.add_argument("--dpi", type=int, default=200, help="PNG resolution (default: 200)")
    return parser


def table_paths(args: argparse.Namespace) -> TablePaths:
    defaults = TablePaths.in_directory(args.tables)
    return TablePaths(
        group_means=args.group_means or defaults.group_means,
        gap=args.gap or defaults.gap,
        adjusted=args.adjusted or defaults.adjusted,
        rank_points=args.rank_points or defaults.rank_points,
    )


def draw_figures(paths: TablePaths, out_dir: Path, names: list[str], dpi: int) -> list[Path]:
    """Read every needed table first (so a bad table fails before any figure is written), then draw."""
    import importlib

    from rmeval.benchmarks.fairness.figures import inputs

    jobs = [job for job in FIGURES if job.name in names]
    tables: dict[str, object] = {}
    for job in jobs:
        if job.table not in tables:
            reader: Callable[[Path], object] = getattr(inputs, job.reader)
            tables[job.table] = reader(getattr(paths, job.table))
    written: list[Path] = []
    for job in jobs:
        module = importlib.import_module(job.module)
        written += module.render(tables[job.table], out_dir, dpi)
    return written


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.dpi < 50 or args.dpi > 1200:
        raise RmevalError(f"--dpi: {args.dpi} is outside 50-1200")
    written = draw_figures(table_paths(args), args.out, list(dict.fromkeys(args.figures)), args.dpi)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0
