"""`rmeval compare`: is one reward model better than another, and is the difference real?

Reads the run's score folders (each benchmark that declares a comparison: its catalogue's `compare`) and writes
`comparisons.{csv,md,tex}` (every pair of models, or each model against `--baseline`, or only `--pairs`, on the
items both scored: the difference of the benchmark's values a - b, its 95 % interval and its p-value, Holm-adjusted
and BH q-values within each benchmark's family of comparisons), `leaderboard.{csv,md,tex}` (one row per headline
metric and model: value, interval, rank, a rank interval holding for all models at once at 95 % and the models it
cannot separate); `rmeval compare-figure` draws the ranks with their intervals from the leaderboard.

By hand, on a plain fairness score folder ({model}/{group}.csv|parquet, rows paired by `id`):
    rmeval compare --benchmark fairness --scores DIR --out DIR [--baseline MODEL] [--pairs A:B,C:D]
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rmeval.benchmarks as benchmarks
from rmeval.benchmarks.catalogue import Benchmark, import_target
from rmeval.errors import RmevalError
from rmeval.intervals import CONFIDENCE
from rmeval.paired_difference import Difference
from rmeval.run_outputs.compare.parts import TIED_SEPARATOR, CompareContext, ComparisonPart, Results


@dataclass(frozen=True)
class Pairs:
    """Which pairs to compare: every pair (a before b in table order), each model against `baseline`
    (difference = model - baseline), or exactly `explicit` (a:b as given)."""

    baseline: str | None = None
    explicit: tuple[tuple[str, str], ...] = ()

    def of(self, models: Sequence[str]) -> list[tuple[str, str]]:
        if self.explicit:
            return [(a, b) for a, b in self.explicit if a in models and b in models]
        if self.baseline:
            return [(model, self.baseline) for model in models if model != self.baseline] \
                if self.baseline in models else []
        return [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]

    def missing(self, models: Sequence[str]) -> list[str]:
        """The requested models this benchmark has no values of."""
        wanted = [m for pair in self.explicit for m in pair] if self.explicit else \
            ([self.baseline] if self.baseline else [])
        return list(dict.fromkeys(model for model in wanted if model not in models))


def parse_pairs(text: str | Sequence[str] | None) -> tuple[tuple[str, str], ...]:
    """"A:B,C:D" (or a list of "A:B") -> ((A, B), (C, D))."""
    if not text:
        return ()
    items = text.split(",") if isinstance(text, str) else list(text)
    pairs = []
    for item in items:
        a, sep, b = item.strip().partition(":")
        if not sep or not a.strip() or not b.strip() or a.strip() == b.strip():
            raise RmevalError(f"--pairs: {item!r} is not MODEL_A:MODEL_B (two different models)")
        pairs.append((a.strip(), b.strip()))
    return tuple(dict.fromkeys(pairs))


def _row(bench: str, metric: str, a: str, b: str, diff: Difference) -> dict[str, Any]:
    low, high = diff.interval.at(CONFIDENCE)
    return {"benchmark": bench, "metric": metric, "model_a": a, "model_b": b, "n": diff.n, "value_a": diff.value_a,
            "value_b": diff.value_b, "difference": diff.difference, "ci_low": low, "ci_high": high,
            "p_value": diff.p_value, "p_adjusted": math.nan, "q_value": math.nan, "test": diff.test,
            "note": diff.note}


def _adjust(rows: list[dict[str, Any]]) -> None:
    """Holm's p and BH's q over one benchmark's family of comparisons (in place)."""
    from rmeval.multiplicity import bh_q_values, holm

    p_values = [row["p_value"] for row in rows]
    for row, adjusted, q in zip(rows, holm(p_values), bh_q_values(p_values), strict=True):
        row["p_adjusted"], row["q_value"] = adjusted, q


class Differences:
    """part.compare(a, b), computed once per ordered pair."""

    def __init__(self, part: ComparisonPart) -> None:
        self.part = part
        self._cache: dict[tuple[str, str], Mapping[str, Difference]] = {}

    def __call__(self, a: str, b: str) -> Mapping[str, Difference]:
        if (a, b) not in self._cache:
            self._cache[(a, b)] = self.part.compare(a, b)
        return self._cache[(a, b)]


def leaderboard_rows(bench: str, part: ComparisonPart, differences: Differences,
                     baselines: Mapping[str, str]) -> list[dict[str, Any]]:
    """One row per headline metric and model: value and interval, rank and simultaneous rank interval."""
    from rmeval.ranks import rank_alpha, rank_intervals

    rows = []
    for metric in (m for m in part.metrics if m.headline):
        estimates = {model: part.estimates[(metric.name, model)] for model in part.models
                     if (metric.name, model) in part.estimates}
        values = {model: estimate.estimate for model, estimate in estimates.items()}
        ranked = [model for model in part.models if math.isfinite(values.get(model, math.nan))]
        alpha = rank_alpha(1.0 - CONFIDENCE, len(ranked))

        def interval(a: str, b: str, metric_name: str = metric.name, alpha: float = alpha) -> tuple[float, float]:
            return differences(a, b)[metric_name].interval.with_alpha(alpha)

        ranks = rank_intervals(part.models, values, metric.higher_is_better, interval)
        # best first, as the console and the summary list them; a model without a value last
        for rank in sorted(ranks, key=lambda found: (not math.isfinite(found.rank), found.rank, found.model)):
            estimate = estimates.get(rank.model)
            low, high = estimate.at(CONFIDENCE) if estimate is not None else (math.nan, math.nan)
            rows.append({"benchmark": bench, "metric": metric.name, "model": rank.model,
                         "value": estimate.estimate if estimate is not None else math.nan, "ci_low": low,
                         "ci_high": high, "rank": rank.rank, "rank_low": rank.rank_low, "rank_high": rank.rank_high,
                         "tied_with": TIED_SEPARATOR.join(rank.tied_with), "baseline": rank.model in baselines,
                         "note": metric.note})
    return rows


def compare_benchmark(bench: Benchmark, context: CompareContext, pairs: Pairs, baselines: Mapping[str, str],
                      results: Results) -> None:
    """One benchmark's rows of both tables, adjusted within its family, into `results`."""
    assert bench.compare is not None
    part: ComparisonPart = import_target(bench.compare.provider)(context)
    results.methods[bench.name] = part.method
    results.titles[bench.name] = bench.title
    results.notes += [f"{bench.name}: {note}" for note in part.notes]
    results.notes += [f"{bench.name} {metric.name}: {metric.note}." for metric in part.metrics if metric.note
                      and metric.headline]
    for metric in part.metrics:
        results.decimals[(bench.name, metric.name)] = metric.decimals
        results.labels[(bench.name, metric.name)] = metric.label
    models = list(part.models)
    lacking = pairs.missing(models)
    if lacking:
        results.notes.append(f"{bench.name}: no scores of {', '.join(lacking)}: its comparisons are left out.")
    differences = Differences(part)
    rows = []
    chosen = pairs.of(models)
    if len(models) < 2:
        results.notes.append(f"{bench.name}: only {len(models)} model ({', '.join(models) or 'none'}) has scores: "
                             "nothing to compare.")
    for a, b in chosen:
        for metric_name, diff in differences(a, b).items():
            rows.append(_row(bench.name, metric_name, a, b, diff))
    _adjust(rows)
    results.comparisons += rows
    results.leaderboard += leaderboard_rows(bench.name, part, differences, baselines)


def run_compare(chosen: Sequence[tuple[Benchmark, CompareContext]], pairs: Pairs,
                baselines: Mapping[str, str]) -> Results:
    results = Results(baselines=dict(baselines))
    for bench, context in chosen:
        compare_benchmark(bench, context, pairs, baselines, results)
        results.published.update(published_models(context))
    for row in results.leaderboard:
        row["published"] = row["model"] in results.published
    if not chosen:
        results.notes.append("No enabled benchmark declares a comparison: nothing to compare.")
    named = [m for pair in pairs.explicit for m in pair] + ([pairs.baseline] if pairs.baseline else [])
    known = {row["model"] for row in results.leaderboard} | {m for row in results.comparisons
                                                             for m in (row["model_a"], row["model_b"])}
    unknown = [model for model in dict.fromkeys(named) if model not in known]
    if unknown and chosen:
        raise RmevalError(f"--baseline / --pairs: no benchmark of this run has scores of {', '.join(unknown)}")
    return results


def published_models(context: CompareContext) -> dict[str, str]:
    """The models of a benchmark's score folder whose sidecars say published results wrote them (adapter
    `published`, not run here) -> their file's origin (source and pin)."""
    from rmeval.models.catalogue import is_published
    from rmeval.scoring.sidecar import model_sidecar

    found = {}
    for model in context.model_folders():
        record = model_sidecar(context.scores / model)
        if record is not None and is_published(record):
            details = (record.get("adapter_details") or {}).get("published") or {}
            found[model] = f"{details.get('model')} from {details.get('origin')}"
    return found


# ----------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    from rmeval.cli_settings import add_settings_argument
    from rmeval.config_check import schema_default

    parser = argparse.ArgumentParser(prog="rmeval compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark", "--benchmarks", dest="benchmarks", nargs="+", required=True,
                        choices=list(benchmarks.catalogue()), help="the benchmarks to compare on, in table order")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="the run directory its files are read from (default: the working directory)")
    parser.add_argument("--scores", type=Path, default=None,
                        help="with one benchmark: its score folder {model}/{table}.parquet|csv (default: the run's)")
    parser.add_argument("--data", type=Path, default=None,
                        help="with one benchmark: its prepared items, where it needs them (default: the run's)")
    parser.add_argument("--models", type=json.loads, default={},
                        help='JSON {"<benchmark>": [models, in table order]} (default: every model folder)')
    parser.add_argument("--baseline", default=schema_default("compare.baseline"),
                        help="compare every model with this one (difference = model - baseline)")
    parser.add_argument("--pairs", default=None, help="compare only these pairs: A:B,C:D (difference = A - B)")
    parser.add_argument("--baseline-models", nargs="*", default=[], metavar="MODEL=KIND",
                        help="the trivial baselines among the models (registry adapter `baseline`) and their kind")
    parser.add_argument("--alpha", type=float, default=schema_default("stats.alpha"),
                        help="significance level of the summary's claims (default: stats.alpha's)")
    parser.add_argument("--bootstrap", type=int, default=schema_default("stats.bootstrap"))
    parser.add_argument("--seed", type=int, default=schema_default("stats.seed"))
    parser.add_argument("--options", type=json.loads, default={},
                        help='JSON {"<benchmark>": {"<option>": value}}: its comparison run_settings')
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of the tables (default: results/tables under --root); `rmeval compare-figure` "
                             "draws the leaderboard")
    add_settings_argument(parser)
    return parser


def baseline_kinds(values: Sequence[str]) -> dict[str, str]:
    kinds = {}
    for value in values:
        model, _, kind = value.partition("=")
        if not model:
            raise RmevalError(f"--baseline-models: {value!r} is not MODEL=KIND")
        kinds[model] = kind or "baseline"
    return kinds


def _default(key: str) -> Any:
    """A comparison option's config key's schema default; None for a key without one (`rewardmath.subjects`: all)."""
    from rmeval.config_check import schema_default

    try:
        return schema_default(key)
    except KeyError:
        return None


def contexts(args: argparse.Namespace) -> list[tuple[Benchmark, CompareContext]]:
    """(benchmark, context) of each named benchmark that declares a comparison."""
    from rmeval.benchmarks.catalogue import scores_dir

    names = list(dict.fromkeys(args.benchmarks))
    if (args.scores or args.data) and len(names) != 1:
        raise RmevalError("--scores / --data: name exactly one --benchmark")
    if not isinstance(args.models, dict) or not isinstance(args.options, dict):
        raise RmevalError("--models / --options: expected a JSON object keyed by benchmark")
    chosen = []
    for name in names:
        bench = benchmarks.benchmark(name)
        if bench.compare is None:
            if args.scores:
                raise RmevalError(f"--benchmark {name}: it declares no comparison (its catalogue's `compare`)")
            continue
        given = args.options.get(name) or {}
        unknown = sorted(set(given) - set(bench.compare.run_settings))
        if unknown:
            raise RmevalError(f"--options: {name}: unknown option(s) {', '.join(unknown)}")
        options = {option: given[option] if option in given else _default(key)
                   for option, key in bench.compare.run_settings.items()}
        scores = args.scores or args.root / scores_dir(name)
        chosen.append((bench, CompareContext(bench, args.root, scores, args.data, tuple(args.models.get(name) or ()),
                                             options, args.bootstrap, args.seed)))
    return chosen


def main(argv: list[str]) -> int:
    from rmeval.cli_settings import parse_args
    from rmeval.run_outputs.catalogue import RUN
    from rmeval.run_outputs.compare.tables import write_tables

    args = parse_args(build_parser(), argv)
    if args.baseline and args.pairs:
        raise RmevalError("--baseline and --pairs: give one of them")
    if not 0.0 < args.alpha < 1.0:
        raise RmevalError(f"--alpha: {args.alpha} is not in (0, 1)")
    pairs = Pairs(args.baseline or None, parse_pairs(args.pairs))
    baselines = baseline_kinds(args.baseline_models)
    results = run_compare(contexts(args), pairs, baselines)
    out = args.out or args.root / Path(RUN.get("comparisons").path).parent
    paths = write_tables(results, out)
    for note in results.notes:
        print(f"rmeval compare: note: {note}")
    significant = sum(row["p_adjusted"] < args.alpha for row in results.comparisons
                      if math.isfinite(row["p_adjusted"]))
    print(f"rmeval compare: {len(results.comparisons)} comparisons, {significant} significant after Holm at "
          f"alpha {args.alpha:g}; {len(results.leaderboard)} leaderboard rows; wrote {', '.join(map(str, paths))}")
    return 0
