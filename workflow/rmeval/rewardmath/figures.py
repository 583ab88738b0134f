"""`rmeval rewardmath-figures`: RewardBench math-prm accuracy against RewardMATH accuracy (and MRR), per model.

The paper's point (Kim et al. 2024, Fig. 1): a model's one-to-one RewardBench math accuracy does not predict
its one-to-many RewardMATH accuracy. Each point is a model; PRMs are shown under one step aggregation
(--prm-aggregation, default prod). Error bars are the bootstrap 95% CIs of rmeval rewardmath-metrics; the
panel titles give Spearman's rho and Kendall's tau across models.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path

from rmeval.errors import RmevalError
from rmeval.rewardmath.aggregation import STEP_AGGREGATIONS

REQUIRED_COLUMNS = ("model", "aggregation", "rewardmath_accuracy", "rewardmath_mrr", "rewardbench_accuracy")


@dataclass(frozen=True)
class ModelPoint:
    model: str
    kind: str  # classifier | PRM | judge (direct) | judge (pairwise): the table's `mode`
    rewardbench: float
    rewardbench_ci: tuple[float, float]
    accuracy: float
    accuracy_ci: tuple[float, float]
    mrr: float


def _number(text: str | None) -> float:
    return float(text) if text not in (None, "") else math.nan


def read_points(path: Path, prm_aggregation: str) -> list[ModelPoint]:
    if not path.is_file():
        raise RmevalError(f"table not found: {path} (run rmeval rewardmath-metrics)")
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in REQUIRED_COLUMNS if column not in (reader.fieldnames or [])]
        if missing:
            raise RmevalError(f"{path}: missing column(s) {missing}")
        rows = list(reader)
    points = []
    for row in rows:
        if row["rewardbench_accuracy"] in ("", None):
            continue  # e.g. LLM judges: no RewardBench score to compare
        is_prm = row["aggregation"] in STEP_AGGREGATIONS
        if (is_prm and row["aggregation"] != prm_aggregation) or row["aggregation"] == "pairwise-both":
            continue
        points.append(ModelPoint(
            model=row["model"].removesuffix("_reward"),
            kind=row.get("mode") or ("PRM" if is_prm else "classifier"),
            rewardbench=_number(row["rewardbench_accuracy"]),
            rewardbench_ci=(_number(row.get("rewardbench_accuracy_ci_low")),
                            _number(row.get("rewardbench_accuracy_ci_high"))),
            accuracy=_number(row["rewardmath_accuracy"]),
            accuracy_ci=(_number(row.get("rewardmath_accuracy_ci_low")),
                         _number(row.get("rewardmath_accuracy_ci_high"))),
            mrr=_number(row["rewardmath_mrr"]),
        ))
    return points


def rank_correlations(xs: list[float], ys: list[float]) -> str:
    if len(xs) < 3:
        return "fewer than 3 models: no rank correlation"
    from scipy import stats

    rho = stats.spearmanr(xs, ys).statistic
    tau = stats.kendalltau(xs, ys).statistic
    return f"Spearman ρ = {rho:.2f}, Kendall τ = {tau:.2f} (n = {len(xs)})"


def _errors(values: list[float], cis: list[tuple[float, float]]):
    lows = [max(0.0, v - lo) if not math.isnan(lo) else 0.0 for v, (lo, _) in zip(values, cis, strict=True)]
    highs = [max(0.0, hi - v) if not math.isnan(hi) else 0.0 for v, (_, hi) in zip(values, cis, strict=True)]
    return [lows, highs]


def draw(points: list[ModelPoint], prm_aggregation: str, png: Path, pdf: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.8), constrained_layout=True)
    panels = (("accuracy", "RewardMATH accuracy (%)"), ("mrr", "RewardMATH MRR (%)"))
    styles = {"classifier": ("o", "tab:blue"), "PRM": ("s", "tab:orange"), "judge (direct)": ("^", "tab:green"),
              "judge (pairwise)": ("D", "tab:red")}
    for axis, (metric, label) in zip(axes, panels, strict=True):
        if not points:
            axis.text(0.5, 0.5, "no model has both a RewardMATH and a RewardBench math-prm score",
                      ha="center", va="center", wrap=True, transform=axis.transAxes)
        for kind, (marker, color) in styles.items():
            chosen = [point for point in points if point.kind == kind]
            if not chosen:
                continue
            xs = [point.rewardbench for point in chosen]
            ys = [getattr(point, metric) for point in chosen]
            xerr = _errors(xs, [point.rewardbench_ci for point in chosen])
            yerr = _errors(ys, [point.accuracy_ci for point in chosen]) if metric == "accuracy" else None
            name = f"PRM ({prm_aggregation})" if kind == "PRM" else kind
            axis.errorbar(xs, ys, xerr=xerr, yerr=yerr, fmt=marker, color=color, ecolor=color, alpha=0.85,
                          capsize=2, elinewidth=0.8, label=name)
            for point, x, y in zip(chosen, xs, ys, strict=True):
                axis.annotate(point.model, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
        axis.set_xlabel("RewardBench math-prm accuracy (%)")
        axis.set_ylabel(label)
        axis.set_title(rank_correlations([p.rewardbench for p in points], [getattr(p, metric) for p in points]),
                       fontsize=9)
        axis.grid(alpha=0.3)
        if points:
            axis.legend(fontsize=8, loc="best")
    figure.suptitle("One-to-one RewardBench math accuracy vs one-to-many RewardMATH", fontsize=11)
    for path in (png, pdf):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.stem + ".tmp" + path.suffix)  # keep the suffix: matplotlib picks the format by it
        figure.savefig(tmp, dpi=200)
        os.replace(tmp, path)
    plt.close(figure)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardmath-figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", required=True, help="rewardmath_vs_rewardbench.csv of rmeval rewardmath-metrics")
    parser.add_argument("--png", required=True, help="output PNG")
    parser.add_argument("--pdf", required=True, help="output PDF")
    parser.add_argument("--prm-aggregation", default="prod", choices=list(STEP_AGGREGATIONS),
                        help="which step aggregation stands for each PRM")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    points = read_points(Path(args.table), args.prm_aggregation)
    draw(points, args.prm_aggregation, Path(args.png), Path(args.pdf))
    print(f"rewardmath-figures: {len(points)} models -> {args.png}, {args.pdf}")
    return 0
