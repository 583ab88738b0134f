"""The answer `rmeval run` prints when the run ends: each model's headline per benchmark with its interval, with two
or more models the comparisons and ranks, then where the tables, figures, summary and report are.

It reads the run's files only, in the layout `rmeval compare` writes (rmeval.run_outputs.compare.tables):
- `results/tables/leaderboard.csv` (benchmark, metric, model, value, ci_low, ci_high, rank, rank_low, rank_high,
  tied_with, baseline, published): each benchmark's headline metrics, per model with its interval, rank and rank interval;
- `results/tables/comparisons.csv` (benchmark, metric, model_a, model_b, n, value_a, value_b, difference, ci_low,
  ci_high, p_value, p_adjusted, q_value, test, note; difference = a - b): the comparisons of those headline
  metrics, the others counted;
- the enabled benchmarks' and the run's catalogued tables and figures, and the run summary.
A file that is absent is said to be absent, in plain words. Nothing here names a benchmark.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rmeval.benchmarks.catalogue import Benchmark, Output
from rmeval.run_outputs.catalogue import RUN
from rmeval.run_outputs.compare.words import show_p

LEADERBOARD = RUN.get("leaderboard").path
COMPARISONS = RUN.get("comparisons").path
INDENT = "  "
TRUE_WORDS = {"true", "1", "yes"}
LISTED_FILES = 4  # per folder, then "and N more"


@dataclass(frozen=True)
class AnswerInputs:
    """What the answer is about: the run directory, its enabled benchmarks (catalogue order), its models (in the
    order given), the config it ran, and the Snakemake command that reruns it (for the report's command)."""

    root: Path
    benchmarks: Sequence[Benchmark]
    models: Sequence[str]
    configfile: str
    snakemake: str
    random_models: Sequence[str] = ()  # models whose rewards mean nothing (random tiny weights)
    strays: int = 0  # files in results/ not from this run (the summary lists them)


# ----------------------------------------------------------------------------- reading
def read_rows(path: Path) -> list[dict[str, str]] | None:
    """A CSV's rows as text, or None when the file is absent."""
    if not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def number(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return None if value is None or math.isnan(value) else value


def decimals_for(text: str | None) -> int:
    """Decimals a number is shown with (its interval takes the same): 1 from 100, 2 from 10, else 3."""
    value = number(text)
    magnitude = abs(value) if value is not None and not math.isinf(value) else 0.0
    return 1 if magnitude >= 100 else 2 if magnitude >= 10 else 3


def show_number(text: str | None, decimals: int | None = None) -> str:
    value = number(text)
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{decimals_for(text) if decimals is None else decimals}f}"


def show_interval(low: str | None, high: str | None, decimals: int) -> str:
    if number(low) is None and number(high) is None:
        return "-"
    return f"[{show_number(low, decimals)}, {show_number(high, decimals)}]"


def render(headers: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[bool]) -> list[str]:
    """A plain-text table: columns two spaces apart, numbers right-aligned."""
    rows = [list(map(str, row)) for row in rows]
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        parts = [cell.rjust(width) if align else cell.ljust(width)
                 for cell, width, align in zip(cells, widths, right, strict=True)]
        return (INDENT * 2 + "  ".join(parts)).rstrip()

    return [line(headers), *(line(row) for row in rows)]


# ----------------------------------------------------------------------------- headlines
def _labelled(row: Mapping[str, str]) -> str:
    baseline = str(row.get("baseline") or "").strip().lower() in TRUE_WORDS
    published = str(row.get("published") or "").strip().lower() in TRUE_WORDS
    return f"{row['model']}{' (baseline)' if baseline else ''}{' (published)' if published else ''}"


def _direction(bench: Benchmark | None, metric: str) -> str:
    if bench is None or bench.compare is None:
        return ""
    return " (higher is better)" if bench.compare.higher_is_better(metric) else " (lower is better)"


def metric_decimals(bench: Benchmark | None, metric: str, value: str | None) -> int:
    """The decimals the metric's catalogue gives it (as the leaderboard and the summary show it); a benchmark that
    declares no comparison: by the value's size."""
    return bench.compare.decimals_of(metric) if bench is not None and bench.compare is not None \
        else decimals_for(value)


def _partial_mark(row: Mapping[str, str]) -> str:
    note = str(row.get("note") or "")
    return f" {note.split(' ', 1)[0]}" if note else ""


def leaderboard_lines(rows: list[dict[str, str]], inputs: AnswerInputs) -> list[str]:
    benchmarks = {bench.name: bench for bench in inputs.benchmarks}
    lines = [f"Headlines with 95% intervals and ranks ({LEADERBOARD}; best first; a rank interval holds for all "
             "models at once)"]
    for (name, metric), group in _grouped(rows, ("benchmark", "metric")).items():
        bench = benchmarks.get(name)
        lines.append(f"{INDENT}{bench.title if bench else name}: {metric}{_direction(bench, metric)}")
        decimals = metric_decimals(bench, metric, group[0].get("value"))
        body = [[_labelled(row), show_number(row.get("value"), decimals) + _partial_mark(row),
                 show_interval(row.get("ci_low"), row.get("ci_high"), decimals),
                 str(row.get("rank") or "-"), _rank_interval(row), str(row.get("tied_with") or "")]
                for row in sorted(group, key=_rank_order)]
        lines += render(["model", "value", "95% CI", "rank", "rank CI", "tied with"], body,
                        [False, True, True, True, True, False])
        lines += [f"{INDENT * 2}{note}" for note in dict.fromkeys(str(row.get("note")) for row in group
                                                                   if row.get("note"))]
    ranked = {row.get("benchmark", "") for row in rows}
    for bench in inputs.benchmarks:
        if bench.name not in ranked:
            why = "its catalogue declares no comparison" if bench.compare is None else "none in the file"
            lines.append(f"{INDENT}{bench.title}: no headline rows ({why})")
    if any(row.get("tied_with") for row in rows):  # a relation of pairs, not a group (issue 45)
        lines.append(f"{INDENT}tied with: the models not separated from this one, pair by pair; two models tied with a "
                     "third may still be separated from each other")
    return lines


def _rank_interval(row: Mapping[str, str]) -> str:
    low, high = row.get("rank_low") or "", row.get("rank_high") or ""
    return f"{low}-{high}" if low and high else "-"


def _rank_order(row: Mapping[str, str]) -> tuple[float, str]:
    rank = number(row.get("rank"))
    return (math.inf if rank is None else rank, row.get("model", ""))


def _grouped(rows: Iterable[dict[str, str]], keys: Sequence[str]) -> dict[tuple[str, ...], list[dict[str, str]]]:
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(key, "") for key in keys), []).append(row)
    return groups


# ----------------------------------------------------------------------------- comparisons
def comparison_lines(rows: list[dict[str, str]], metrics: set[tuple[str, str]],
                     benchmarks: Sequence[Benchmark] = ()) -> list[str]:
    """The comparisons of the headline metrics (benchmark, metric), each then in words; the others are counted."""
    from rmeval.run_outputs.compare.words import reading

    by_name = {bench.name: bench for bench in benchmarks}
    shown = [row for row in rows if (row.get("benchmark", ""), row.get("metric", "")) in metrics]
    lines = [f"Comparisons of the headline metrics ({COMPARISONS}; difference = a - b, p adjusted by Holm within "
             "each benchmark, q by Benjamini-Hochberg)"]
    body = []
    for row in shown:
        decimals = metric_decimals(by_name.get(row.get("benchmark", "")), row.get("metric", ""), row.get("difference"))
        body.append([row.get("benchmark", ""), row.get("metric", ""), row.get("model_a", ""), row.get("model_b", ""),
                     show_number(row.get("difference"), decimals),
                     show_interval(row.get("ci_low"), row.get("ci_high"), decimals),
                     show_p(row.get("p_adjusted")), show_p(row.get("q_value")), row.get("test", "")])
    if body:
        lines += render(["benchmark", "metric", "a", "b", "a - b", "95% CI", "p (Holm)", "q", "test"], body,
                        [False, False, False, False, True, True, True, True, False])
        for row in shown:
            bench = by_name.get(row.get("benchmark", ""))
            lines.append(f"{INDENT * 2}" + reading(bench.compare if bench else None, row.get("metric", ""),
                                                    row.get("model_a", ""), row.get("model_b", ""),
                                                    row.get("difference"), row.get("p_adjusted")))
    else:
        lines.append(f"{INDENT * 2}none of the headline metrics is among them")
    if len(rows) > len(shown):
        lines.append(f"{INDENT}{len(rows) - len(shown)} more (subsets, sections, other measures) in {COMPARISONS}")
    return lines


# ----------------------------------------------------------------------------- files
def _listed(paths: Sequence[str]) -> str:
    names = [path.rsplit("/", 1)[-1] for path in paths]
    more = f" and {len(names) - LISTED_FILES} more" if len(names) > LISTED_FILES else ""
    return ", ".join(names[:LISTED_FILES]) + more


def written(inputs: AnswerInputs, kind: str) -> dict[str, list[str]]:
    """Folder -> the files of that kind ("table": captioned tables, their Markdown where written; "figure") the
    enabled benchmarks and the run wrote, in catalogue order."""
    folders: dict[str, list[str]] = {}
    outputs: list[Output] = [output for bench in inputs.benchmarks for output in bench.outputs]
    for output in [*outputs, *RUN.outputs]:
        if output.per_model or output.caption is None:
            continue
        is_figure = output.suffix == "png"
        if (kind == "figure") != is_figure or (kind == "table" and output.suffix != "csv"):
            continue
        path = output.sibling("md") if "md" in output.formats else output.path
        if (inputs.root / path).is_file():
            folder, _, _ = path.rpartition("/")
            folders.setdefault(folder + "/", []).append(path)
    return folders


def files_lines(inputs: AnswerInputs) -> list[str]:
    rows: list[tuple[str, str]] = []
    for label, kind in (("tables", "table"), ("figures", "figure")):
        found = written(inputs, kind)
        rows += [(label, f"{folder}  {_listed(paths)}") for folder, paths in found.items()] or [(label, "none written")]
    for path in (COMPARISONS, LEADERBOARD, RUN.get("summary").path):
        rows.append((Path(path).stem, path if (inputs.root / path).is_file() else f"absent ({path})"))
    rows.append(("report", f"{inputs.snakemake} --report results/report.html"))
    rows.append(("config", f"{inputs.configfile}  (rerun or edit it: its first lines say how)"))
    if inputs.strays:
        some = "file or folder" if inputs.strays == 1 else "files or folders"
        rows.append(("not ours", f"{inputs.strays} {some} in results/ from earlier runs, listed in the summary; "
                                 "`rmeval run ... --clean` moves them to results/.previous/"))
    width = max(len(label) for label, _ in rows)
    return ["Files", *(f"{INDENT}{label:<{width}}  {text}" for label, text in rows)]


# ----------------------------------------------------------------------------- the whole answer
def answer(inputs: AnswerInputs) -> str:
    from rmeval.run_outputs.summary import random_models_notice

    lines = [random_models_notice(inputs.random_models, strong=""), ""] if inputs.random_models else []
    leaderboard = read_rows(inputs.root / LEADERBOARD)
    if leaderboard is None:
        lines.append(f"No headlines: {LEADERBOARD} is absent (`rmeval compare` writes it; rule run_compare).")
    else:
        lines += leaderboard_lines(leaderboard, inputs)
    lines.append("")
    if len(inputs.models) < 2:
        lines.append("One model: nothing to compare (give a second --model, or --baseline length).")
    else:
        comparisons = read_rows(inputs.root / COMPARISONS)
        if comparisons is None:
            lines.append(f"No comparisons: {COMPARISONS} is absent (`rmeval compare` writes it; rule run_compare).")
        else:
            metrics = {(row.get("benchmark", ""), row.get("metric", "")) for row in leaderboard or []}
            lines += comparison_lines(comparisons, metrics, inputs.benchmarks)
    lines.append("")
    lines += files_lines(inputs)
    return "\n".join(lines)
