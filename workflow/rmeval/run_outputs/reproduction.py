"""`rmeval run-reproduction`: every enabled benchmark's numbers beside the published ones, in one table.

Each benchmark named by `--benchmarks` that declares a `reproduction` provider (its catalogue) returns its
comparisons (rmeval.run_outputs.comparison.ReproductionPart): its statistics, read from its own tables, beside
the published values of its own files (`Benchmark.published`), each with its verdict and the rule behind it.
This command orders the rows (by model, in the order the benchmarks list them; a model's scalar rows first,
then its aggregations; then the statistics in the benchmarks' order), names the models no paper has values of,
and writes `reproduction.{csv,md,tex}` (columns model, aggregation, statistic, source, ours, paper,
paper_upper_bound, difference, verdict, rule; and ours_ci_low, ours_ci_high and power where a verdict reads an
interval or our test's power).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmeval.benchmarks.catalogue import import_target
from rmeval.errors import RmevalError
from rmeval.run_outputs.catalogue import RUN
from rmeval.run_outputs.comparison import SAME, SCALAR, Comparison, ReproductionPart, Statistic
from rmeval.run_outputs.context import add_arguments, contexts
from rmeval.tables import Column, Formatted, format_number, format_p_latex, format_p_text, latex_number

CSV_COLUMNS = ["model", "aggregation", "statistic", "source", "ours", "ours_ci_low", "ours_ci_high", "paper",
               "paper_upper_bound", "difference", "power", "verdict", "rule"]
DISPLAY_COLUMNS = [
    Column("model", "Model"),
    Column("statistic", "Statistic"),
    Column("ours", "Ours", "fixed"),
    Column("ours_ci", "Our 95% CI", "text"),
    Column("paper", "Paper", "fixed"),
    Column("difference", "Difference", "fixed"),
    Column("power", "Power", "text"),
    Column("verdict", "Verdict"),
]
CAPTION = "Reproduced beside published: our statistics, the papers' values and whether the conclusion holds"
GENERATOR = "`rmeval run-reproduction`"  # the .tex file's first line names the command that wrote it


def gather(parts: Sequence[ReproductionPart]) -> tuple[list[Comparison], list[str], list[str]]:
    """The table's comparisons in row order, its notes and the papers cited, from the benchmarks' parts."""
    order: dict[str, int] = {}
    for part in parts:
        for statistic in part.statistics:
            order.setdefault(statistic.key, len(order))
    models = list(dict.fromkeys(model for part in parts for model in part.models))
    published = frozenset().union(*(part.published_models for part in parts))
    comparisons = sorted((c for part in parts for c in part.comparisons),
                         key=lambda c: (models.index(c.model), c.aggregation != SCALAR, c.aggregation,
                                        order[c.statistic.key]))
    notes = []
    unpublished = [model for model in models if model not in published]
    if unpublished:
        notes.append(f"Left out (no published values): {', '.join(unpublished)}.")
    notes += [note for part in parts for note in part.notes]
    return comparisons, notes, [paper for part in parts for paper in part.papers]


def _shown(statistic: Statistic, value: float | None, upper_bound: bool = False) -> Formatted:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Formatted("", "")
    if statistic.decimals is None:
        if upper_bound:
            exponent = int(round(math.log10(value)))
            return Formatted(f"<1e{exponent}", f"$<10^{{{exponent}}}$")
        return Formatted(format_p_text(value), format_p_latex(value))
    text = format_number(value, statistic.decimals)
    return Formatted(text, latex_number(text))


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _interval(statistic: Statistic, low: float | None, high: float | None) -> str:
    if _missing(low) or _missing(high):
        return ""
    if math.isinf(low) or math.isinf(high):
        return "unbounded"
    decimals = statistic.decimals if statistic.decimals is not None else 3
    return f"{format_number(low, decimals)} to {format_number(high, decimals)}"


def display_rows(comparisons: Sequence[Comparison]) -> list[dict[str, Any]]:
    shown = []
    for comparison in comparisons:
        statistic = comparison.statistic
        aggregation = "" if comparison.aggregation == SCALAR else f" ({comparison.aggregation})"
        shown.append({"model": comparison.model, "statistic": statistic.label + aggregation,
                      "ours": _shown(statistic, comparison.ours),
                      "paper": _shown(statistic, comparison.paper.value, comparison.paper.upper_bound),
                      "difference": _shown(statistic, comparison.difference),
                      "ours_ci": _interval(statistic, comparison.ours_ci_low, comparison.ours_ci_high),
                      "power": "" if _missing(comparison.power) else f"{comparison.power:.2f}",
                      "verdict": comparison.verdict})
    return shown


def table_note(comparisons: Sequence[Comparison], notes: Sequence[str], papers: Sequence[str]) -> str:
    if not comparisons:
        return " ".join(["No model of this run has published values.", *notes])
    used = list(dict.fromkeys(comparison.statistic for comparison in comparisons))
    rule_text = "; ".join(f"{statistic.label}: {statistic.rule}" for statistic in used)
    text = f"Published values: {'; '.join(papers)}. Difference = ours - paper. Same conclusion when: {rule_text}."
    return " ".join([text, *notes])


def write(comparisons: Sequence[Comparison], notes: Sequence[str], papers: Sequence[str], out_dir: Path) -> list[Path]:
    import pandas as pd

    from rmeval.tables import frame_csv, render_latex, render_markdown, write_table_files

    note = table_note(comparisons, notes, papers)
    shown = display_rows(comparisons)
    rows = [comparison.row() for comparison in comparisons]
    texts = {
        "csv": frame_csv(pd.DataFrame(rows, columns=CSV_COLUMNS)),
        "md": render_markdown(CAPTION, DISPLAY_COLUMNS, shown, note),
        "tex": render_latex(CAPTION, "tab:reproduction", DISPLAY_COLUMNS, shown, note, generator=GENERATOR),
    }
    return write_table_files(out_dir, Path(RUN.get("reproduction").path).stem, texts)


def _published(values: Sequence[str] | None) -> dict[str, list[Path]]:
    """--published NAME=PATH ... -> benchmark -> its files (in the order given)."""
    files: dict[str, list[Path]] = {}
    for value in values or []:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise RmevalError(f"--published: {value!r} is not BENCHMARK=PATH")
        files.setdefault(name, []).append(Path(path))
    return files


def build_parser() -> argparse.ArgumentParser:
    from rmeval.cli_settings import add_settings_argument

    parser = argparse.ArgumentParser(prog="rmeval run-reproduction", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.add_argument("--published", action="append", default=None, metavar="BENCHMARK=PATH",
                        help="a benchmark's published-values file, instead of those its catalogue names "
                             "(repeatable)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: the catalogued one under --root, results/tables)")
    add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    from rmeval.cli_settings import parse_args

    parser = build_parser()
    args = parse_args(parser, argv)
    published = _published(args.published)
    stray = sorted(set(published) - set(args.benchmarks))
    if stray:
        raise RmevalError(f"--published: {', '.join(stray)} is not among --benchmarks")
    parts = [import_target(bench.reproduction)(context)
             for bench, context in contexts(args, "reproduction", published)]
    comparisons, notes, papers = gather(parts)
    out_dir = args.out or args.root / Path(RUN.get("reproduction").path).parent
    paths = write(comparisons, notes, papers, out_dir)
    same = sum(comparison.verdict == SAME for comparison in comparisons)
    for note in notes:
        print(f"rmeval run-reproduction: note: {note}")
    print(f"rmeval run-reproduction: {same} of {len(comparisons)} comparisons reach the paper's conclusion; "
          f"wrote {paths[0].parent}/reproduction.{{csv,md,tex}}")
    return 0

