"""`rmeval rewardmath-metrics`: RewardMATH accuracy / MRR and RewardBench math-prm accuracy, side by side.

Inputs (any combination, at least one of --official / --scores):
- --official DIR: official RewardMATH result files (`*.json`; setup = file stem);
- --official-rewardbench DIR: official RewardBench math-prm result files, joined to the former by model name;
- --scores DIR --data DIR: the workflow's own score tables and prepared data (setup = model name), for
  --subjects (default all seven; a subject whose prepared table is empty needs no score file).

Writes to --out:
- rewardmath_metrics.csv (setup, aggregation, n, accuracy, mrr; percent, 2 decimals) + .md + .tex;
- rewardmath_metrics_ci.csv: the same with bootstrap 95% CIs and the number of missing judge verdicts;
- rewardmath_breakdown.csv: accuracy / MRR (with CIs) by MATH subject and by level;
- rewardbench_math_prm_accuracy.csv: one-to-one accuracy (with CI) per setup and aggregation;
- rewardmath_vs_rewardbench.csv (+ .md, .tex): each RewardMATH row next to its model's RewardBench accuracy.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.rewardmath.metrics import SetupScores, pairwise_accuracy, summarize
from rmeval.rewardmath.official import (
    PairSetup,
    load_problem_info,
    model_key,
    official_files,
    read_rewardbench_file,
    read_rewardmath_file,
)
from rmeval.rewardmath.subjects import SUBJECT_SLUGS
from rmeval.rewardmath.tables import percent2, write_table

METRIC_COLUMNS = ["setup", "mode", "aggregation", "n", "accuracy", "mrr"]
CI_COLUMNS = ["setup", "mode", "aggregation", "source", "n", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "mrr",
              "mrr_ci_low", "mrr_ci_high", "n_missing_verdicts", "position_agreement", "n_bootstrap", "seed"]
BREAKDOWN_COLUMNS = ["setup", "aggregation", "by", "value", "n", "accuracy", "accuracy_ci_low", "accuracy_ci_high",
                     "mrr", "mrr_ci_low", "mrr_ci_high"]
REWARDBENCH_COLUMNS = ["setup", "aggregation", "source", "n", "accuracy", "accuracy_ci_low", "accuracy_ci_high"]
SIDE_BY_SIDE_COLUMNS = ["model", "mode", "aggregation", "source", "rewardmath_accuracy", "rewardmath_accuracy_ci_low",
                        "rewardmath_accuracy_ci_high", "rewardmath_mrr", "rewardbench_accuracy",
                        "rewardbench_accuracy_ci_low", "rewardbench_accuracy_ci_high", "rewardbench_setup"]
SIDE_BY_SIDE_BRIEF = ["model", "mode", "aggregation", "rewardmath_accuracy", "rewardmath_mrr", "rewardbench_accuracy"]


@dataclass(frozen=True)
class Sourced:
    source: str  # official | workflow
    setup: SetupScores


@dataclass(frozen=True)
class SourcedPairs:
    source: str
    setup: PairSetup


def collect(args: argparse.Namespace) -> tuple[list[Sourced], list[SourcedPairs]]:
    from rmeval.rewardmath.workflow_scores import (
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
    if args.official:
        for path in official_files(args.official):
            setups += [Sourced("official", setup) for setup in read_rewardmath_file(path, problem_info)]
    if args.official_rewardbench:
        for path in official_files(args.official_rewardbench):
            pairs += [SourcedPairs("official", setup) for setup in read_rewardbench_file(path)]
    if args.scores:
        scores_dir, data_dir = Path(args.scores), Path(args.data)
        models = args.models or sorted(path.name for path in scores_dir.iterdir() if path.is_dir())
        if not models:
            raise RmevalError(f"{scores_dir}: no model folders")
        for model in models:
            model_setups = read_model_rewardmath(model, scores_dir, data_dir, args.subjects)
            setups += [Sourced("workflow", setup) for setup in model_setups]
            pairs += [SourcedPairs("workflow", setup) for setup in read_model_rewardbench(model, scores_dir, data_dir)]
    seen: set[tuple[str, str]] = set()
    for item in setups:
        key = (item.setup.setup, item.setup.aggregation)
        if key in seen:
            raise RmevalError(f"setup {key[0]!r} ({key[1]}) appears twice: rename one of its sources")
        seen.add(key)
    return setups, pairs


def _ci_fields(prefix: str, ci: tuple[float, float]) -> dict[str, float]:
    return {f"{prefix}_ci_low": percent2(ci[0]), f"{prefix}_ci_high": percent2(ci[1])}


def metric_rows(setups: list[Sourced], n_bootstrap: int, seed: int) -> list[dict[str, Any]]:
    rows = []
    for item in setups:
        summary = summarize(item.setup.problems, n_bootstrap, seed)
        rows.append({
            "setup": item.setup.setup, "aggregation": item.setup.aggregation, "source": item.source, "n": summary.n,
            "accuracy": percent2(summary.accuracy), "mrr": percent2(summary.mrr),
            **_ci_fields("accuracy", summary.accuracy_ci), **_ci_fields("mrr", summary.mrr_ci),
            "n_missing_verdicts": item.setup.n_missing_verdicts, "mode": item.setup.mode,
            "position_agreement": item.setup.position_agreement, "n_bootstrap": n_bootstrap, "seed": seed,
        })
    return rows


def breakdown_rows(setups: list[Sourced], n_bootstrap: int, seed: int) -> list[dict[str, Any]]:
    rows = []
    for item in setups:
        for by in ("subject", "level"):
            groups: dict[Any, list] = {}
            for problem in item.setup.problems:
                value = getattr(problem, by)
                if value is not None and value != "":
                    groups.setdefault(value, []).append(problem)
            for value in sorted(groups, key=str):
                summary = summarize(groups[value], n_bootstrap, seed)
                rows.append({
                    "setup": item.setup.setup, "aggregation": item.setup.aggregation, "by": by, "value": value,
                    "n": summary.n, "accuracy": percent2(summary.accuracy), "mrr": percent2(summary.mrr),
                    **_ci_fields("accuracy", summary.accuracy_ci), **_ci_fields("mrr", summary.mrr_ci),
                })
    return rows


def rewardbench_rows(pairs: list[SourcedPairs], n_bootstrap: int, seed: int) -> list[dict[str, Any]]:
    rows = []
    for item in pairs:
        n, accuracy, ci = pairwise_accuracy(item.setup.pairs, n_bootstrap, seed)
        rows.append({"setup": item.setup.setup, "aggregation": item.setup.aggregation, "source": item.source,
                     "n": n, "accuracy": percent2(accuracy), **_ci_fields("accuracy", ci)})
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
            "model": row["setup"], "mode": row["mode"], "aggregation": row["aggregation"], "source": row["source"],
            "rewardmath_accuracy": row["accuracy"], "rewardmath_accuracy_ci_low": row["accuracy_ci_low"],
            "rewardmath_accuracy_ci_high": row["accuracy_ci_high"], "rewardmath_mrr": row["mrr"],
            "rewardbench_accuracy": match["accuracy"] if match else None,
            "rewardbench_accuracy_ci_low": match["accuracy_ci_low"] if match else None,
            "rewardbench_accuracy_ci_high": match["accuracy_ci_high"] if match else None,
            "rewardbench_setup": match["setup"] if match else None,
        })
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardmath-metrics", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--official", help="folder of official RewardMATH result files (*.json)")
    parser.add_argument("--official-rewardbench", help="folder of official RewardBench math-prm result files")
    parser.add_argument("--problems", help="JSON/JSONL with problem, subject, level: breaks official files down "
                                           "(default: the prepared tables of --data, when given)")
    parser.add_argument("--scores", help="the workflow's score folder: {model}/{subject}.parquet")
    parser.add_argument("--data", help="the prepared data folder of rmeval rewardmath-prepare")
    parser.add_argument("--models", nargs="+", help="models to read under --scores (default: every subfolder)")
    parser.add_argument("--subjects", nargs="+", default=list(SUBJECT_SLUGS), choices=list(SUBJECT_SLUGS),
                        metavar="SUBJECT", help="MATH subject slugs scored under --scores (default: all seven)")
    parser.add_argument("--out", required=True, help="output folder for the tables")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the CIs (0: none)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.bootstrap < 0:
        raise RmevalError("--bootstrap must be >= 0")
    setups, pairs = collect(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    metrics = metric_rows(setups, args.bootstrap, args.seed)
    rewardbench = rewardbench_rows(pairs, args.bootstrap, args.seed)
    write_table(metrics, METRIC_COLUMNS, out, "rewardmath_metrics",
                "RewardMATH accuracy and MRR (%) per setup and aggregation")
    write_table(metrics, CI_COLUMNS, out, "rewardmath_metrics_ci", "", formats=("csv",))
    write_table(breakdown_rows(setups, args.bootstrap, args.seed), BREAKDOWN_COLUMNS, out, "rewardmath_breakdown",
                "", formats=("csv",))
    write_table(rewardbench, REWARDBENCH_COLUMNS, out, "rewardbench_math_prm_accuracy",
                "RewardBench math-prm one-to-one accuracy (%)", formats=("csv", "md"))
    combined = side_by_side(metrics, rewardbench)
    write_table(combined, SIDE_BY_SIDE_COLUMNS, out, "rewardmath_vs_rewardbench", "", formats=("csv",))
    write_table(combined, SIDE_BY_SIDE_BRIEF, out, "rewardmath_vs_rewardbench",
                "RewardMATH accuracy and MRR next to RewardBench math-prm accuracy (%)", formats=("md", "tex"))
    print(f"rewardmath-metrics: {len(metrics)} RewardMATH rows, {len(rewardbench)} RewardBench rows -> {out}")
    return 0
