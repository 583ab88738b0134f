"""`rmeval rewardmath-summary`: the RewardMATH results in plain words, as a Markdown section.

Reads `rewardmath_vs_rewardbench.csv` (rmeval rewardmath-metrics) and says which model ranks the correct
solution first most often and which least, how the models compare with the reward-free baselines, and whether
RewardBench's one-to-one math-prm accuracy ranks the models as RewardMATH does. Only runs on the full
benchmarks are compared; partial runs are named. The same section is RewardMATH's part of the run's summary
(results/summary.md, `rmeval run-summary` through `summary_section`); this command writes it alone
(results/rewardmath/summary.md).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rmeval import cli_settings
from rmeval.benchmarks.rewardmath.aggregation import STEP_AGGREGATIONS
from rmeval.benchmarks.rewardmath.agreement import (
    Agreement,
    Point,
    one_per_model,
    rank_agreement,
    read_points,
)
from rmeval.benchmarks.rewardmath.catalogue import BENCHMARK, METRICS_RULE
from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_MATH_PRM_PAIRS, REWARDMATH_PROBLEMS

if TYPE_CHECKING:
    from rmeval.run_outputs.context import RunContext

HEADING = "## RewardMATH (math robustness)"


def _name(point: Point) -> str:
    if point.is_baseline:  # a reward-free rule: the table's own (`Fewest steps`), or a baseline scored as a model
        return point.model.lower() if point.source == "baseline" else f"{point.model} (a trivial baseline)"
    if point.kind == "PRM":
        return f"{point.model} ({point.aggregation})"
    if point.kind == "LLM judge":
        return f"{point.model} ({'pairwise' if point.aggregation == 'pairwise' else 'direct'})"
    return point.model


def _ci(values: tuple[float, float]) -> str:
    low, high = values
    return "" if math.isnan(low) or math.isnan(high) else f" (95% CI {low:.2f}–{high:.2f})"


def _above(point: Point, level: float) -> bool:
    """Above `level` beyond its CI when it has one, else by the point estimate."""
    low = point.accuracy_ci[0]
    return (low if not math.isnan(low) else point.accuracy) > level


def _agreement_words(agreement: Agreement, alpha: float) -> str:
    if agreement.n < 3:
        return (f"Too few models have both scores on the full benchmarks (n = {agreement.n}) to say whether "
                "RewardBench math-prm ranks them as RewardMATH does.")
    stats = (f"Spearman ρ = {agreement.spearman:.2f}, p = {agreement.spearman_p:.2g}; Kendall τ = "
             f"{agreement.kendall:.2f}; n = {agreement.n} models")
    if agreement.spearman_p >= alpha:
        verdict = ("RewardBench math-prm does not reliably predict the RewardMATH ranking: the rank correlation "
                   "is not distinguishable from chance")
    elif agreement.spearman >= 0.7:
        verdict = "RewardBench math-prm ranks the models much as RewardMATH does"
    elif agreement.spearman > 0:
        verdict = "RewardBench math-prm agrees with RewardMATH only loosely"
    else:
        verdict = "RewardBench math-prm ranks the models in the opposite order to RewardMATH"
    return f"{verdict} ({stats})."


def _largest_disagreement(models: Sequence[Point]) -> str:
    """The model whose two ranks differ most, in words."""
    with_both = [point for point in models if point.has_rewardbench and point.full_set]
    if len(with_both) < 3:
        return ""
    by_rb = sorted(with_both, key=lambda point: -point.rewardbench)
    by_rm = sorted(with_both, key=lambda point: -point.accuracy)
    worst = max(with_both, key=lambda point: (abs(by_rb.index(point) - by_rm.index(point)), -point.rewardbench))
    return (f" The largest disagreement: {_name(worst)} is #{by_rb.index(worst) + 1} of {len(with_both)} on "
            f"RewardBench math-prm ({worst.rewardbench:.2f} %) but #{by_rm.index(worst) + 1} on RewardMATH "
            f"({worst.accuracy:.2f} %).")


def render(points: Sequence[Point], prm_aggregation: str, alpha: float) -> str:
    """The RewardMATH section of the summary, as Markdown, at significance level `alpha`."""
    rows = one_per_model(points, prm_aggregation)
    models = [point for point in rows if not point.is_baseline]
    # the table's reward-free rules by name, and trivial baselines scored as models (source workflow) by theirs
    baselines = {point.setup if point.source == "baseline" else f"workflow:{point.setup}": point
                 for point in rows if point.is_baseline}
    full = [point for point in models if point.rewardmath_full]
    partial = [point for point in models if not point.rewardmath_full]
    lines = [HEADING, ""]
    lines.append(
        f"RewardMATH (Kim et al. 2024) asks a reward model to score one correct solution above nine wrong ones, "
        f"for each of {REWARDMATH_PROBLEMS} MATH problems: accuracy is the share of problems where the correct "
        f"solution scores strictly highest, MRR the mean of one over its rank. Guessing at random gives 10 % "
        f"accuracy and 29.29 % MRR. {len(full)} setup(s) ran on the full set (PRMs under {prm_aggregation}; "
        f"all aggregations are in the tables)."
    )
    lines.append("")
    if full:
        ranked = sorted(full, key=lambda point: (-point.accuracy, point.model))
        best, worst = ranked[0], ranked[-1]
        lines.append(f"- **Best:** {_name(best)}, accuracy {best.accuracy:.2f} %{_ci(best.accuracy_ci)}, "
                     f"MRR {best.mrr:.2f} %. **Worst:** {_name(worst)}, accuracy {worst.accuracy:.2f} %, "
                     f"MRR {worst.mrr:.2f} %.")
        random = baselines.get("random")
        chance = random.accuracy if random is not None else 10.0
        beat_chance = [point for point in full if _above(point, chance)]
        text = (f"- **Against the baselines:** {len(beat_chance)} of {len(full)} beat random guessing "
                f"({chance:.2f} %) beyond their 95% CI; ")
        step_baselines = [point for name, point in baselines.items() if name != "random" and point.rewardmath_full]
        partial_baselines = [name for name, point in baselines.items() if name != "random" and not point.rewardmath_full]
        if step_baselines:
            strongest = max(step_baselines, key=lambda point: point.accuracy)
            beat = [point for point in full if _above(point, strongest.accuracy)]
            text += (f"the best reward-free rule on RewardMATH, {_name(strongest)}, scores "
                     f"{strongest.accuracy:.2f} %, and {len(beat)} of {len(full)} beat it.")
        elif partial_baselines:
            text += ("the step-count and length baselines ran on fewer problems than the full set here (the "
                     "prepared data is a sample), so they are not compared.")
        else:
            text += "the step-count and length baselines need the prepared data (`--data`), not given here."
        lines.append(text)
    else:
        lines.append("- No setup ran on the full set: nothing here is comparable with the paper.")
    fewest = baselines.get("fewest steps")
    with_rb = [point for point in full if point.has_rewardbench and point.rewardbench_full]
    if fewest is not None and fewest.rewardbench_full and not math.isnan(fewest.rewardbench):
        n_pairs = fewest.n_rewardbench or REWARDBENCH_MATH_PRM_PAIRS
        fewer = round(fewest.rewardbench * n_pairs / 100)
        below = [point for point in with_rb if point.rewardbench <= fewest.rewardbench]
        lines.append(
            f"- **RewardBench math-prm is easy to game:** its correct solution has fewer steps than the wrong one in "
            f"{fewer} of {n_pairs} pairs, so preferring the shorter step list alone scores {fewest.rewardbench:.2f} %"
            + (f"; {len(below)} of {len(with_rb)} model(s) score no higher than that." if with_rb else ".")
        )
    agreement = rank_agreement(points, prm_aggregation, "accuracy")
    lines.append(f"- **Does RewardBench math-prm agree?** {_agreement_words(agreement, alpha)}"
                 f"{_largest_disagreement(models)}")
    if partial or agreement.left_out:
        names = sorted({_name(point) for point in partial} | set(agreement.left_out))
        lines.append(f"- **Partial runs** (fewer than {REWARDMATH_PROBLEMS} problems or "
                     f"{REWARDBENCH_MATH_PRM_PAIRS} pairs; not ranked, not in the correlation): {', '.join(names)}.")
    lines.append("")
    lines.append(_where_line())
    return "\n".join(lines) + "\n"


def _where_line() -> str:
    """Where the headline tables (those with Markdown / LaTeX versions) and the figure are, from the catalogue."""
    first, *others = [output for output in BENCHMARK.of_rule(METRICS_RULE) if output.formats]
    tables = ", ".join([f"`{first.sibling('*')}`", *(f"`{output.stem}.*`" for output in others)])
    return f"Tables: {tables}; figure: `{BENCHMARK.get('figure').path}`."


def summary_section(context: RunContext) -> str:
    """RewardMATH's section of the run's summary (`Benchmark.summary_section`): its side-by-side table, the PRM
    aggregation of the run (`prm_aggregation`, its run_settings) and the run's alpha."""
    (key,) = context.benchmark.summary_inputs
    return render(read_points(context.path(key)), context.options["prm_aggregation"], context.alpha)


def build_parser() -> argparse.ArgumentParser:
    from rmeval.config_check import schema_default

    parser = argparse.ArgumentParser(prog="rmeval rewardmath-summary", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", required=True, type=Path,
                        help="rewardmath_vs_rewardbench.csv of rmeval rewardmath-metrics")
    parser.add_argument("--out", required=True, type=Path,
                        help="Markdown file to write (e.g. results/rewardmath/summary.md)")
    parser.add_argument("--prm-aggregation", default=schema_default("rewardmath.prm_aggregation"),
                        choices=list(STEP_AGGREGATIONS), help="the step aggregation that stands for each PRM")
    parser.add_argument("--alpha", type=float, default=schema_default("stats.alpha"),
                        help="significance level for the rank correlation (default: stats.alpha's)")
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    from rmeval.io.atomic import write_text_atomic

    args = cli_settings.parse_args(build_parser(), argv)
    write_text_atomic(render(read_points(args.table), args.prm_aggregation, args.alpha), args.out)
    print(f"rewardmath-summary: wrote {args.out}")
    return 0
