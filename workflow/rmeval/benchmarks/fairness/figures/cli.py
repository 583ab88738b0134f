"""`rmeval fairness-figures`: draw the fairness figures from the tables of `rmeval fairness-stats`.

    rmeval fairness-figures --tables results/tables --out results/figures

The figures are the catalogue's outputs of rule `fairness_figures` (rmeval.benchmarks.fairness.catalogue): each
names its `draw(*tables) -> Figure` and the tables it is drawn from (the gap forest also reads the run record
fairness_stats.json: it marks significance at the alpha the tables used), and is written as PNG and PDF.
`--figures` draws a subset, which needs only that subset's tables (fig2 and fig3 need group_means.csv alone);
`--table KEY=PATH` reads one table from elsewhere than `--tables` (KEY: its catalogue key, e.g. table7).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from rmeval import cli_settings
from rmeval.benchmarks.fairness.catalogue import BENCHMARK, FIGURES_RULE, PAIRED
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError

# Every figure this command may draw (the paired design's is `--paired`'s); a run names those it draws (`--figures`).
FIGURES = tuple(output for output in BENCHMARK.outputs if output.rule == FIGURES_RULE and output.when != PAIRED)
FIGURE_NAMES = tuple(figure.stem for figure in FIGURES)
TABLE_KEYS = tuple(dict.fromkeys(key for figure in FIGURES for key in figure.inputs))


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
    parser.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="KEY=PATH",
        help=f"read table KEY from PATH instead of TABLES (keys: {', '.join(TABLE_KEYS)}); repeatable",
    )
    parser.add_argument(
        "--figures",
        nargs="+",
        choices=FIGURE_NAMES,
        default=list(FIGURE_NAMES),
        metavar="NAME",
        help=f"figures to draw (default: all of {', '.join(FIGURE_NAMES)})",
    )
    parser.add_argument("--dpi", type=int, default=schema_default("figures.dpi"),
                        help="PNG resolution (default: %(default)s)")
    parser.add_argument("--paired", action="store_true",
                        help="also draw the paired design's figure from paired_differences.csv (a paired corpus)")
    cli_settings.add_settings_argument(parser)
    return parser


def table_paths(args: argparse.Namespace) -> dict[str, Path]:
    from rmeval.benchmarks.fairness.figures.inputs import table_paths as in_directory

    paths = in_directory(args.tables, TABLE_KEYS)
    for item in args.table:
        key, equals, path = item.partition("=")
        if not equals or key not in paths or not path:
            raise RmevalError(f"--table {item!r}: expected KEY=PATH with KEY one of {', '.join(TABLE_KEYS)}")
        paths[key] = Path(path)
    return paths


def draw_figures(paths: Mapping[str, Path], out_dir: Path, names: list[str], dpi: int) -> list[Path]:
    """Read every needed table first (so a bad table fails before any figure is written), then draw each
    figure with its catalogue builder and save it under its catalogue name."""
    from rmeval.benchmarks.fairness.figures.inputs import READERS
    from rmeval.plotting.style import save_figure

    figures = [figure for figure in FIGURES if figure.stem in names]
    tables: dict[str, object] = {}
    for figure in figures:
        for key in figure.inputs:
            if key not in tables:
                tables[key] = READERS[key](paths[key])
    written: list[Path] = []
    for figure in figures:
        drawn = figure.build()(*(tables[key] for key in figure.inputs))
        written += save_figure(drawn, out_dir, figure.stem, dpi, (figure.suffix, *figure.formats))
    return written


def draw_paired(tables: Path, out_dir: Path, dpi: int) -> list[Path]:
    import pandas as pd

    from rmeval.benchmarks.fairness.corpus.figure import STEM, draw
    from rmeval.benchmarks.fairness.corpus.paired_tables import DIFFERENCES
    from rmeval.plotting.style import save_figure

    path = tables / f"{DIFFERENCES}.csv"
    if not path.is_file():
        raise RmevalError(f"--paired: {path} is missing; run `rmeval fairness-stats --pairs` first")
    frame = pd.read_csv(path, dtype={"model": str, "group": str, "pair": str})
    if frame.empty:
        raise RmevalError(f"--paired: {path} has no complete pair to draw")
    return save_figure(draw(frame), out_dir, STEM, dpi, ("png", "pdf"))


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    if args.dpi < 50 or args.dpi > 1200:
        raise RmevalError(f"--dpi: {args.dpi} is outside 50-1200")
    written = draw_figures(table_paths(args), args.out, list(dict.fromkeys(args.figures)), args.dpi)
    if args.paired:
        written += draw_paired(args.tables, args.out, args.dpi)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0
