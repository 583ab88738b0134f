"""The answer `rmeval run` prints when the run ends: each model's headline per benchmark with its interval, with two
or more models the comparisons and ranks, then where the tables, figures, summary and report are.

It reads the run's files only:
- `results/tables/leaderboard.csv` (benchmark, metric, model, value, ci_low, ci_high, rank, rank_low, rank_high,
  tied_with, baseline): the headlines with their intervals and ranks; where it is absent, each benchmark's own
  table named by its catalogue's `headlines`, saying so;
- `results/tables/comparisons.csv` (benchmark, metric, model_a, model_b, n, value_a, value_b, difference, ci_low,
  ci_high, p_value, p_adjusted, q_value, test, note; difference = a - b): the comparisons of the headline metrics,
  the others counted;
- each enabled benchmark's catalogued tables and figures, and the run summary.
A file that is absent is said to be absent, in plain words. Nothing here names a benchmark.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rmeval.benchmarks.catalogue import Benchmark, Headline

LEADERBOARD = "results/tables/leaderboard.csv"
COMPARISONS = "results/tables/comparisons.csv"
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
    baselines: frozenset[str] = frozenset()  # the models that are trivial baselines


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


def show_p(text: str | None) -> str:
    value = number(text)
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


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
def _labelled(row: Mapping[str, str], model_column: str = "model") -> str:
    baseline = str(row.get("baseline") or "").strip().lower() in TRUE_WORDS
    return f"{row[model_column]}{' (baseline)' if baseline else ''}"


def leaderboard_lines(rows: list[dict[str, str]], inputs: AnswerInputs) -> list[str]:
    titles = {bench.name: bench.title for bench in inputs.benchmarks}
    lines = [f"Headlines with 95% intervals and ranks ({LEADERBOARD}; a rank interval holds for all models at once)"]
    for (benchmark, metric), group in _grouped(rows, ("benchmark", "metric")).items():
        lines.append(f"{INDENT}{titles.get(benchmark, benchmark)}: {metric}")
        body = [[_labelled(row), show_number(row.get("value")),
                 show_interval(row.get("ci_low"), row.get("ci_high"), decimals_for(row.get("value"))),
                 str(row.get("rank") or "-"), _rank_interval(row), str(row.get("tied_with") or "")]
                for row in sorted(group, key=_rank_order)]
        lines += render(["model", "value", "95% CI", "rank", "rank CI", "tied with"], body,
                        [False, True, True, True, True, False])
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


def headline_lines(inputs: AnswerInputs) -> list[str]:
    """Each benchmark's headline from its own table (its catalogue's `headlines`), where the run has no leaderboard."""
    lines = [f"No leaderboard: {LEADERBOARD} is absent, so no ranks; each benchmark's headline from its own table "
             "(95% intervals where the table has them)"]
    for bench in inputs.benchmarks:
        for headline in bench.headlines:
            path = bench.get(headline.output).path
            lines.append(f"{INDENT}{bench.title}: {headline.metric} ({headline.better} is better; {path})")
            rows = read_rows(inputs.root / path)
            if rows is None:
                lines.append(f"{INDENT * 2}{path} is absent")
                continue
            body = _headline_rows(rows, headline, inputs.models, inputs.baselines)
            if not body:
                lines.append(f"{INDENT * 2}no row of this run's models in {path}")
                continue
            lines += render(["model", "value", "95% CI"], body, [False, True, True])
    return lines


def _headline_rows(rows: list[dict[str, str]], headline: Headline, models: Sequence[str],
                   baselines: frozenset[str]) -> list[list[str]]:
    kept = [row for row in rows if row.get("model") in models
            and all(row.get(column) == value for column, value in headline.where.items())]
    several = len({row["model"] for row in kept}) < len(kept)
    body = []
    for row in sorted(kept, key=lambda row: models.index(row["model"])):
        label = row["model"] + (f" ({row.get(headline.detail, '')})" if several and headline.detail else "")
        label += " (baseline)" if row["model"] in baselines else ""
        interval = (show_interval(row.get(headline.ci_low), row.get(headline.ci_high), decimals_for(row.get(headline.value)))
                    if headline.ci_low and headline.ci_high else "no interval in this table")
        body.append([label, show_number(row.get(headline.value)), interval])
    return body


# ----------------------------------------------------------------------------- comparisons
def comparison_lines(rows: list[dict[str, str]], metrics: set[tuple[str, str]]) -> list[str]:
    """The comparisons of the headline metrics (benchmark, metric); the others are counted."""
    shown = [row for row in rows if (row.get("benchmark", ""), row.get("metric", "")) in metrics]
    lines = [f"Comparisons of the headline metrics ({COMPARISONS}; difference = a - b, p adjusted by Holm within "
             "each benchmark, q by Benjamini-Hochberg)"]
    body = [[row.get("benchmark", ""), row.get("metric", ""), row.get("model_a", ""), row.get("model_b", ""),
             show_number(row.get("difference")),
             show_interval(row.get("ci_low"), row.get("ci_high"), decimals_for(row.get("difference"))),
             show_p(row.get("p_adjusted")), show_p(row.get("q_value")), row.get("test", "")] for row in shown]
    if body:
        lines += render(["benchmark", "metric", "a", "b", "a - b", "95% CI", "p (Holm)", "q", "test"], body,
                        [False, False, False, False, True, True, True, True, False])
    else:
        lines.append(f"{INDENT * 2}none of the headline metrics is among them")
    if len(rows) > len(shown):
        lines.append(f"{INDENT}{len(rows) - len(shown)} more (subsets, sections, other measures) in {COMPARISONS}")
    return lines


def headline_metrics(inputs: AnswerInputs, leaderboard: list[dict[str, str]] | None) -> set[tuple[str, str]]:
    if leaderboard:
        return {(row.get("benchmark", ""), row.get("metric", "")) for row in leaderboard}
    return {(bench.name, headline.metric) for bench in inputs.benchmarks for headline in bench.headlines}


# ----------------------------------------------------------------------------- files
def _listed(paths: Sequence[str]) -> str:
    names = [path.rsplit("/", 1)[-1] for path in paths]
    more = f" and {len(names) - LISTED_FILES} more" if len(names) > LISTED_FILES else ""
    return ", ".join(names[:LISTED_FILES]) + more


def written(inputs: AnswerInputs, kind: str) -> dict[str, list[str]]:
    """Folder -> the files of that kind ("table": captioned tables, their Markdown where written; "figure") the
    enabled benchmarks wrote, in catalogue order."""
    folders: dict[str, list[str]] = {}
    for bench in inputs.benchmarks:
        for output in bench.outputs:
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
    from rmeval.run_outputs.catalogue import RUN

    rows: list[tuple[str, str]] = []
    for label, kind in (("tables", "table"), ("figures", "figure")):
        found = written(inputs, kind)
        rows += [(label, f"{folder}  {_listed(paths)}") for folder, paths in found.items()] or [(label, "none written")]
    for path in (COMPARISONS, LEADERBOARD, RUN.get("summary").path):
        rows.append((Path(path).stem, path if (inputs.root / path).is_file() else f"absent ({path})"))
    rows.append(("report", f"{inputs.snakemake} --report results/report.html"))
    rows.append(("config", f"{inputs.configfile}  (rerun or edit it: its first lines say how)"))
    width = max(len(label) for label, _ in rows)
    return ["Files", *(f"{INDENT}{label:<{width}}  {text}" for label, text in rows)]


# ----------------------------------------------------------------------------- the whole answer
def answer(inputs: AnswerInputs) -> str:
    leaderboard = read_rows(inputs.root / LEADERBOARD)
    lines = leaderboard_lines(leaderboard, inputs) if leaderboard else headline_lines(inputs)
    lines.append("")
    if len(inputs.models) < 2:
        lines.append("One model: nothing to compare (give a second --model, or --baseline length).")
    else:
        comparisons = read_rows(inputs.root / COMPARISONS)
        if comparisons is None:
            lines.append(f"No comparisons: {COMPARISONS} is absent (this workflow writes no paired comparisons).")
        else:
            lines += comparison_lines(comparisons, headline_metrics(inputs, leaderboard))
    lines.append("")
    lines += files_lines(inputs)
    return "\n".join(lines)
