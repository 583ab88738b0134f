"""`rmeval rewardmath-metrics`: RewardMATH accuracy / MRR and RewardBench math-prm accuracy, side by side.

Inputs (any combination, at least one of --official / --scores):
- --official DIR: official RewardMATH result files (`*.json`; setup = file stem);
- --official-rewardbench DIR: official RewardBench math-prm result files, joined to the former by model name;
- --scores DIR --data DIR: the workflow's own score tables and prepared data (setup = model name), for
  --subjects (default all seven; a subject whose prepared table is empty needs no score file).

With --data, reward-free baselines (random, fewest / most steps, shortest / longest solution) are computed on
the prepared solutions and added as rows of source `baseline` (`rmeval.benchmarks.rewardmath.baselines`). A
trivial baseline scored as a model (adapter `baseline`, known from its score sidecars) is a row of source
`workflow` and kind `baseline`.

Writes to --out the tables the catalogue declares for rule rewardmath_metrics
(`rmeval.benchmarks.rewardmath.catalogue`), each by the builder it names (`metric_tables`) (CSV: machine columns,
model = display name, setup = file stem or model name; Markdown / LaTeX: human headers, a dagger on runs with
fewer problems than the full benchmark):
- rewardmath_metrics.csv (model, setup, source, kind, aggregation, n, full_set, accuracy, mrr; percent,
  2 decimals) + .md + .tex;
- rewardmath_metrics_ci.csv: the same with 95% Wilson CIs and the number of missing judge verdicts;
- rewardmath_breakdown.csv: accuracy / MRR (with CIs) by MATH subject and by level;
- rewardbench_math_prm_accuracy.csv (+ .md, .tex): one-to-one accuracy (with CI) per setup and aggregation;
- rewardmath_vs_rewardbench.csv (+ .md, .tex): each RewardMATH row next to its model's RewardBench accuracy;
  the notes give the rank correlation over full-set models (`rmeval.benchmarks.rewardmath.agreement`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.benchmarks.rewardmath.aggregation import STEP_AGGREGATIONS
from rmeval.benchmarks.rewardmath.catalogue import BENCHMARK, METRICS_RULE
from rmeval.benchmarks.rewardmath.metric_tables import MetricTables
from rmeval.benchmarks.rewardmath.metrics import SetupScores, pairwise_accuracy, summarize
from rmeval.benchmarks.rewardmath.names import BASELINE, JUDGE, display_name, registry_names, setup_kind
from rmeval.benchmarks.rewardmath.official import (
    PairSetup,
    load_problem_info,
    model_key,
    official_files,
    read_rewardbench_file,
    read_rewardmath_file,
)
from rmeval.benchmarks.rewardmath.subjects import (
    REWARDBENCH_MATH_PRM_PAIRS,
    REWARDMATH_PROBLEMS,
    SUBJECT_SLUGS,
)
from rmeval.benchmarks.rewardmath.tables import percent2
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError


@dataclass(frozen=True)
class Sourced:
    source: str  # official | workflow | baseline
    setup: SetupScores


@dataclass(frozen=True)
class SourcedPairs:
    source: str
    setup: PairSetup


@dataclass
class Collected:
    setups: list[Sourced]
    pairs: list[SourcedPairs]
    random_rewardmath: Any = None  # baselines.RandomExpectation, when the prepared data has RewardMATH rows
    random_rewardbench_pairs: int = 0  # pairs of the prepared RewardBench table (random baseline: 50 %)
    baseline_models: set[str] = field(default_factory=set)  # workflow models that are trivial baselines


def collect(args: argparse.Namespace) -> Collected:
    from rmeval.benchmarks.rewardmath.workflow_scores import (
        problem_info_from_data,
        read_model_rewardbench,
        read_model_rewardmath,
    )

    if not args.official and not args.scores:
        raise RmevalError("give --official DIR and/or --scores DIR --data DIR")
    if args.scores and not args.data:
        raise RmevalError("--scores needs --data (the prepared tables of rmeval rewardmath-prepare)")
    problem_info = None
    if args.problems:
        problem_info = load_problem_info(args.problems)
    elif args.data:
        problem_info = problem_info_from_data(Path(args.data))
    setups: list[Sourced] = []
    pairs: list[SourcedPairs] = []
    baseline_models: set[str] = set()
    if args.scores:
        scores_dir, data_dir = Path(args.scores), Path(args.data)
        models = args.models or sorted(path.name for path in scores_dir.iterdir() if path.is_dir())
        if not models:
            raise RmevalError(f"{scores_dir}: no model folders")
        from rmeval.models.baseline import scored_baselines

        baseline_models = set(scored_baselines(scores_dir, list(models)))
        for model in models:
            model_setups = read_model_rewardmath(model, scores_dir, data_dir, args.subjects)
            setups += [Sourced("workflow", setup) for setup in model_setups]
            pairs += [SourcedPairs("workflow", setup) for setup in read_model_rewardbench(model, scores_dir, data_dir)]
    if args.official:
        for path in official_files(args.official):
            setups += [Sourced("official", setup) for setup in read_rewardmath_file(path, problem_info)]
    if args.official_rewardbench:
        for path in official_files(args.official_rewardbench):
            pairs += [SourcedPairs("official", setup) for setup in read_rewardbench_file(path)]
    collected = Collected(setups, pairs, baseline_models=baseline_models)
    if args.data:
        add_baselines(collected, Path(args.data), args.subjects)
    seen: set[tuple[str, str, str]] = set()
    for item in collected.setups:
        key = (item.source, item.setup.setup, item.setup.aggregation)
        if key in seen:
            raise RmevalError(f"setup {key[1]!r} ({key[2]}) appears twice: rename one of its sources")
        seen.add(key)
    return collected


def add_baselines(collected: Collected, data_dir: Path, subjects: list[str]) -> None:
    """The reward-free baselines on the prepared data (the same problems the workflow's models score)."""
    from rmeval.benchmarks.rewardmath import baselines

    problems = baselines.read_rewardmath_solutions(data_dir, subjects)
    if problems:
        collected.random_rewardmath = baselines.random_rewardmath([len(problem.rejected) for problem in problems])
        collected.setups += [Sourced(BASELINE, setup) for setup in baselines.rewardmath_baseline_setups(problems)]
    pairs = baselines.read_rewardbench_solutions(data_dir)
    if pairs:
        collected.random_rewardbench_pairs = len(pairs)
        collected.pairs += [SourcedPairs(BASELINE, setup) for setup in baselines.rewardbench_baseline_setups(pairs)]


def _ci_fields(prefix: str, ci: tuple[float, float]) -> dict[str, float]:
    return {f"{prefix}_ci_low": percent2(ci[0]), f"{prefix}_ci_high": percent2(ci[1])}


def _identity(setup: str, source: str, aggregation: str, names: dict[str, str], mode: str = "",
              baseline: bool = False) -> dict[str, Any]:
    # `mode` comes from the scores themselves (an LLM judge's rating / verdict columns), so a workflow judge is
    # shown as one even where its aggregation alone ("scalar") would read as a classifier's; `baseline`: a workflow
    # model that is a trivial baseline (its score sidecars say so).
    kind = BASELINE if baseline else JUDGE if mode.startswith("judge") else setup_kind(setup, source, aggregation)
    return {"model": display_name(setup, source, names), "setup": setup, "source": source,
            "kind": kind, "aggregation": aggregation}


def _is_baseline_model(collected: Collected, source: str, setup: str) -> bool:
    return source == "workflow" and setup in collected.baseline_models


def metric_rows(collected: Collected, names: dict[str, str]) -> list[dict[str, Any]]:
    from rmeval.benchmarks.rewardmath.baselines import RANDOM

    rows = []
    for item in collected.setups:
        summary = summarize(item.setup.problems)
        rows.append({
            **_identity(item.setup.setup, item.source, item.setup.aggregation, names, item.setup.mode,
                        _is_baseline_model(collected, item.source, item.setup.setup)), "n": summary.n,
            "full_set": summary.n >= REWARDMATH_PROBLEMS,
            "accuracy": percent2(summary.accuracy), "mrr": percent2(summary.mrr),
            **_ci_fields("accuracy", summary.accuracy_ci), **_ci_fields("mrr", summary.mrr_ci),
            "n_missing_verdicts": item.setup.n_missing_verdicts, "position_agreement": item.setup.position_agreement,
        })
    random = collected.random_rewardmath
    if random is not None:
        nan = float("nan")
        position = next((i for i, row in enumerate(rows) if row["source"] == BASELINE), len(rows))
        rows.insert(position, {
            **_identity(RANDOM, BASELINE, "scalar", names), "n": random.n, "full_set": random.n >= REWARDMATH_PROBLEMS,
            "accuracy": percent2(random.accuracy), "mrr": percent2(random.mrr), **_ci_fields("accuracy", (nan, nan)),
            **_ci_fields("mrr", (nan, nan)), "n_missing_verdicts": 0, "position_agreement": None,
        })
    return rows


def breakdown_rows(setups: list[Sourced], names: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    for item in setups:
        for by in ("subject", "level"):
            groups: dict[Any, list] = {}
            for problem in item.setup.problems:
                value = getattr(problem, by)
                if value is not None and value != "":
                    groups.setdefault(value, []).append(problem)
            for value in sorted(groups, key=str):
                summary = summarize(groups[value])
                rows.append({
                    "model": display_name(item.setup.setup, item.source, names), "setup": item.setup.setup,
                    "aggregation": item.setup.aggregation, "by": by, "value": value,
                    "n": summary.n, "accuracy": percent2(summary.accuracy), "mrr": percent2(summary.mrr),
                    **_ci_fields("accuracy", summary.accuracy_ci), **_ci_fields("mrr", summary.mrr_ci),
                })
    return rows


def rewardbench_rows(collected: Collected, names: dict[str, str]) -> list[dict[str, Any]]:
    from rmeval.benchmarks.rewardmath.baselines import RANDOM

    rows = []
    for item in collected.pairs:
        n, accuracy, ci = pairwise_accuracy(item.setup.pairs)
        rows.append({**_identity(item.setup.setup, item.source, item.setup.aggregation, names,
                                 baseline=_is_baseline_model(collected, item.source, item.setup.setup)), "n": n,
                     "full_set": n >= REWARDBENCH_MATH_PRM_PAIRS, "accuracy": percent2(accuracy),
                     **_ci_fields("accuracy", ci)})
    n_random = collected.random_rewardbench_pairs
    if n_random:
        position = next((i for i, row in enumerate(rows) if row["source"] == BASELINE), len(rows))
        nan = float("nan")
        rows.insert(position, {**_identity(RANDOM, BASELINE, "scalar", names), "n": n_random,
                               "full_set": n_random >= REWARDBENCH_MATH_PRM_PAIRS, "accuracy": 50.0,
                               **_ci_fields("accuracy", (nan, nan))})
    return rows


def side_by_side(metrics: list[dict[str, Any]], rewardbench: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every RewardMATH row, with the RewardBench accuracy of the same model (and aggregation) when known.

    A scalar model's RewardBench accuracy is its `scalar` row; a pairwise judge has no RewardBench score.
    """
    by_key: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rewardbench:
        key = (row["source"], model_key(row["setup"]), row["aggregation"])
        if key in by_key:
            raise RmevalError(f"RewardBench setups {by_key[key]['setup']!r} and {row['setup']!r} name the same model")
        by_key[key] = row
    rows = []
    for row in metrics:
        match = by_key.get((row["source"], model_key(row["setup"]), row["aggregation"]))
        rows.append({
            **{key: row[key] for key in ("model", "setup", "source", "kind", "aggregation")},
            "n_rewardmath": row["n"], "rewardmath_full_set": row["full_set"],
            "rewardmath_accuracy": row["accuracy"], "rewardmath_accuracy_ci_low": row["accuracy_ci_low"],
            "rewardmath_accuracy_ci_high": row["accuracy_ci_high"], "rewardmath_mrr": row["mrr"],
            "rewardmath_mrr_ci_low": row["mrr_ci_low"], "rewardmath_mrr_ci_high": row["mrr_ci_high"],
            "n_rewardbench": match["n"] if match else None,
            "rewardbench_full_set": match["full_set"] if match else None,
            "rewardbench_accuracy": match["accuracy"] if match else None,
            "rewardbench_accuracy_ci_low": match["accuracy_ci_low"] if match else None,
            "rewardbench_accuracy_ci_high": match["accuracy_ci_high"] if match else None,
            "rewardbench_setup": match["setup"] if match else None,
        })
    return rows


def write_all(collected: Collected, out: Path, names: dict[str, str],
              prm_aggregation: str) -> MetricTables:
    """Every table the catalogue gives rule rewardmath_metrics, each written by the builder it names."""
    metrics = metric_rows(collected, names)
    rewardbench = rewardbench_rows(collected, names)
    tables = MetricTables(metrics, rewardbench, breakdown_rows(collected.setups, names),
                          side_by_side(metrics, rewardbench), prm_aggregation)
    for output in BENCHMARK.of_rule(METRICS_RULE):
        output.build()(tables, out, output.stem)
    return tables


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardmath-metrics", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--official", help="folder of official RewardMATH result files (*.json)")
    parser.add_argument("--official-rewardbench", help="folder of official RewardBench math-prm result files")
    parser.add_argument("--problems", help="JSON/JSONL with problem, subject, level: breaks official files down "
                                           "(default: the prepared tables of --data, when given)")
    parser.add_argument("--scores", help="the workflow's score folder: {model}/{subject}.parquet")
    parser.add_argument("--data", help="the prepared data folder of rmeval rewardmath-prepare (also gives the "
                                       "baselines)")
    parser.add_argument("--models", nargs="+", help="models to read under --scores (default: every subfolder)")
    parser.add_argument("--subjects", nargs="+", default=list(SUBJECT_SLUGS), choices=list(SUBJECT_SLUGS),
                        metavar="SUBJECT", help="MATH subject slugs scored under --scores (default: all seven)")
    parser.add_argument("--registry", help="model registry (config/models.yaml): official files are shown under "
                                           "the registry name of the model they ran")
    parser.add_argument("--prm-aggregation", default=schema_default("rewardmath.prm_aggregation"),
                        choices=list(STEP_AGGREGATIONS),
                        help="the step aggregation that stands for each PRM in the side-by-side table "
                             "(default: %(default)s)")
    parser.add_argument("--out", required=True, help="output folder for the tables")
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    collected = collect(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = write_all(collected, out, registry_names(args.registry), args.prm_aggregation)
    print(f"rewardmath-metrics: {len(tables.metrics)} RewardMATH rows, {len(tables.rewardbench)} RewardBench rows"
          f" -> {out}")
    return 0
