"""The summary's "Which model is better" section, from comparisons.csv and leaderboard.csv (what `rmeval compare`
wrote): per benchmark and headline metric the models best first with their rank intervals and the pairs their
pairwise intervals do and do not separate, how many comparisons are significant after Holm, each benchmark's own
claims (its catalogue's `compare.claims`: a paper's comparative claims tested on this run's models), and for each
real model on how many subsets it beats the length baseline significantly."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import rmeval.benchmarks as benchmarks
from rmeval.benchmarks.catalogue import Benchmark, import_target
from rmeval.intervals import CONFIDENCE
from rmeval.run_outputs.compare.parts import ClaimsContext

TITLE = "## Which model is better"
LENGTH = "length"  # the baseline kind whose comparisons the summary counts
NUMBERS = {"n", "value_a", "value_b", "difference", "ci_low", "ci_high", "p_value", "p_adjusted", "q_value", "value",
           "rank", "rank_low", "rank_high"}


def read_rows(path: Path) -> list[dict[str, Any]]:
    """A CSV of `rmeval compare` with its numeric columns as floats (nan when empty), `baseline` and `published` as
    bools."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for key in NUMBERS & set(row):
            row[key] = float(row[key]) if row[key] not in ("", None) else math.nan
        for flag in ("baseline", "published"):
            if flag in row:
                row[flag] = str(row[flag]).strip().lower() == "true"
    return rows


def _significant(row: Mapping[str, Any], alpha: float) -> bool:
    return math.isfinite(row["p_adjusted"]) and row["p_adjusted"] < alpha


def favours(row: Mapping[str, Any], higher_is_better: bool) -> str | None:
    """The model a comparison's difference favours (None at a difference of 0 or nan)."""
    difference = row["difference"]
    if not math.isfinite(difference) or difference == 0:
        return None
    a_better = difference > 0 if higher_is_better else difference < 0
    return row["model_a"] if a_better else row["model_b"]


def _value(value: float, decimals: int) -> str:
    """A value with its metric's decimals (the catalogue's: as the console and the leaderboard show it)."""
    from rmeval.benchmarks.catalogue import show_value

    return "no value" if not math.isfinite(value) else show_value(value, decimals)


def pair_relations(rows: Sequence[Mapping[str, Any]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The ranked models' pairs, from each row's `tied_with` (the models its pairwise intervals at the rank
    intervals' level cannot separate from it): (not separated, separated as (better, worse)), each best first.
    Not being separated does not carry from one pair to the next: A-B and B-C may hold while A is better than C."""
    ranked = sorted((row for row in rows if math.isfinite(row["rank"])), key=lambda row: (row["rank"], row["model"]))
    tied = {row["model"]: {m for m in str(row.get("tied_with") or "").split("; ") if m} for row in ranked}
    not_separated, separated = [], []
    for i, first in enumerate(ranked):
        for second in ranked[i + 1:]:
            a, b = first["model"], second["model"]
            if b in tied[a] or a in tied[b]:
                not_separated.append((a, b))
            else:  # a separated pair's interval leaves out 0 on the side of its estimate: the better rank is better
                separated.append((a, b))
    return not_separated, separated


def _pairs_text(not_separated: Sequence[tuple[str, str]], separated: Sequence[tuple[str, str]]) -> str:
    parts = []
    if not_separated:
        parts.append(", ".join(f"{a} vs {b}" for a, b in not_separated) + ": not separated")
    better: dict[str, list[str]] = {}
    for a, b in separated:
        better.setdefault(a, []).append(b)
    if better:
        clause = "; ".join(f"{a} is better than {', '.join(worse)}" for a, worse in better.items())
        parts.append(clause if not_separated else f"every pair is separated: {clause}")
    return "; ".join(parts)


def ordered_line(label: str, rows: Sequence[Mapping[str, Any]], decimals: int = 3) -> str:
    """One headline metric: the models best first, each with its value (a partial run's marked, its note after)
    and rank interval, then its pairs: those not separated and those separated."""
    ranked = sorted(rows, key=lambda row: (not math.isfinite(row["rank"]), row["rank"], row["model"]))
    items = []
    for row in ranked:
        mark = (" (baseline)" if row["baseline"] else "") + (" (published)" if row.get("published") else "")
        if not math.isfinite(row["rank"]):
            items.append(f"{row['model']}{mark}: no value")
            continue
        low, high = int(row["rank_low"]), int(row["rank_high"])
        span = f"rank {low}" if low == high else f"rank {low}-{high}"
        partial = f" {row['note'].split(' ', 1)[0]}" if row.get("note") else ""
        items.append(f"{row['model']}{mark} {_value(row['value'], decimals)}{partial} ({span})")
    # the ties as pairs, those not separated and those separated, never a group as one tie (issue 45)
    pairs = _pairs_text(*pair_relations(rows))
    tie_text = f". Pairs: {pairs}" if pairs else ""
    notes = sorted({str(row["note"]) for row in ranked if row.get("note")})
    return f"- **{label}**, best first: " + "; ".join(items) + tie_text + "." + "".join(f" {note}." for note in notes)


def benchmark_lines(bench: Benchmark, comparisons: Sequence[Mapping[str, Any]],
                    leaderboard: Sequence[Mapping[str, Any]], alpha: float) -> list[str]:
    lines = [f"### {bench.title}", ""]
    by_metric: dict[str, list[Mapping[str, Any]]] = {}
    for row in leaderboard:
        by_metric.setdefault(row["metric"], []).append(row)
    models = list(dict.fromkeys(row["model"] for row in leaderboard))
    if len(models) < 2:
        lines.append(f"Only one model ({', '.join(models) or 'none'}) has scores here: nothing to compare.")
        return lines
    assert bench.compare is not None
    for metric, rows in by_metric.items():
        lines.append(ordered_line(metric, rows, bench.compare.decimals_of(metric)))
    if comparisons:
        significant = [row for row in comparisons if _significant(row, alpha)]
        lines.append(f"- {len(significant)} of {len(comparisons)} paired comparisons differ significantly "
                     f"(Holm-adjusted p < {alpha:g} within this benchmark).")
    else:
        lines.append("- No pair of models was compared here (compare.baseline / compare.pairs name none of its models).")
    return lines


def baseline_lines(chosen: Sequence[Benchmark], comparisons: Sequence[Mapping[str, Any]],
                   baselines: Mapping[str, str], models: Sequence[str], alpha: float) -> list[str]:
    """For each real model, against the length baseline: per headline metric what the comparison says ("A's gap is
    smaller than length-baseline's (difference, p)"), per benchmark with subsets on how many it is significantly
    better."""
    from rmeval.run_outputs.compare.words import reading

    length = next((model for model, kind in baselines.items() if kind == LENGTH), None)
    if length is None:
        return []
    lines = [f"### Against the length baseline ({length})", ""]
    real = [model for model in models if model not in baselines]
    if not real:
        return [*lines, "No real model is in this run, only baselines: nothing to beat."]
    for model in real:
        parts = []
        for bench in chosen:
            assert bench.compare is not None
            rows = [row for row in comparisons if row["benchmark"] == bench.name
                    and {row["model_a"], row["model_b"]} == {model, length}]
            if not rows:
                continue
            subsets = [row for row in rows if row["metric"].startswith("subset:")]
            if subsets:
                better = sum(_significant(row, alpha) and favours(row, bench.compare.higher_is_better(row["metric"]))
                             == model for row in subsets)
                parts.append(f"{bench.name}: significantly better than {length} on {better} of its {len(subsets)} "
                             "subsets")
                continue
            for row in rows:
                a, b, sign = (row["model_a"], row["model_b"], 1.0) if row["model_a"] == model else \
                    (row["model_b"], row["model_a"], -1.0)
                parts.append(f"{bench.name}: " + reading(bench.compare, row["metric"], a, b,
                                                          sign * row["difference"], row["p_adjusted"]))
        text = "; ".join(parts) if parts else f"not compared with {length} in this run (compare.baseline / pairs)"
        lines.append(f"- {model} against {length} (Holm-adjusted p, significant below {alpha:g}): {text}.")
    return lines


def section(root: Path, comparisons_path: Path, leaderboard_path: Path, names: Sequence[str], alpha: float,
            baselines: Mapping[str, str]) -> str:
    """The section, in Markdown."""
    intro = (f"Paired comparisons of the models on the items both scored (`{comparisons_path.name}`: difference, "
             f"{CONFIDENCE:.0%} interval, p-value; Holm-adjusted within each benchmark) and ranks with intervals that "
             f"hold for all models at once at {CONFIDENCE:.0%} (`{leaderboard_path.name}`). Overlapping single-model "
             "intervals say nothing about a difference: these comparisons are paired. Per headline metric, a pair is "
             "\"not separated\" when its paired interval at the rank intervals' level (Bonferroni over the pairs) "
             "holds 0; that does not carry from one pair to the next, so each pair is named, and overlapping rank "
             "intervals are not a pairwise test.")
    if not (comparisons_path.exists() and leaderboard_path.exists()):
        return "\n".join([TITLE, "", "Not written: run `rmeval compare` first."]) + "\n"
    comparisons, leaderboard = read_rows(comparisons_path), read_rows(leaderboard_path)
    chosen = [benchmarks.benchmark(name) for name in dict.fromkeys(names)
              if benchmarks.benchmark(name).compare is not None]
    lines = [TITLE, "", intro, ""]
    if not chosen:
        return "\n".join([*lines, "No enabled benchmark compares models."]) + "\n"
    for bench in chosen:
        mine = [row for row in comparisons if row["benchmark"] == bench.name]
        board = [row for row in leaderboard if row["benchmark"] == bench.name]
        lines += benchmark_lines(bench, mine, board, alpha)
        assert bench.compare is not None
        if bench.compare.claims:
            context = ClaimsContext(bench, root, alpha, mine, board, dict(baselines))
            lines += list(import_target(bench.compare.claims)(context))
        lines.append("")
    models = list(dict.fromkeys(row["model"] for row in leaderboard))
    lines += baseline_lines(chosen, comparisons, baselines, models, alpha)
    return "\n".join(lines).rstrip("\n") + "\n"
