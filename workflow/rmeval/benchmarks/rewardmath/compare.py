"""RewardMATH's part of `rmeval compare` (its catalogue's `compare`): two models on the same problems.

Each model's score files are read as `rmeval rewardmath-metrics` reads them (`workflow_scores.read_model_rewardmath`;
a PRM under the run's `rewardmath.prm_aggregation`, as its capability file), and every problem scored by both is
paired by its problem id. Accuracy (0/1 per problem: Newcombe's interval, the exact McNemar test) and MRR (a
reciprocal rank in [1/(k+1), 1] per problem: MOVER on Wilson intervals, p from inverting it), in percent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rmeval.errors import RmevalError
from rmeval.paired_difference import Difference, Interval, paired_bounded, wilson_mean

if TYPE_CHECKING:
    from rmeval.run_outputs.compare.parts import CompareContext, ComparisonPart

PERCENT = 100.0
ACCURACY, MRR = "accuracy", "mrr"
METHOD = ("Two models on the problems both scored (paired by problem id; a PRM under rewardmath.prm_aggregation). "
          "Accuracy: Newcombe's (1998) hybrid score interval for paired proportions and the exact McNemar test. "
          "MRR: MOVER on the two Wilson intervals (Zou & Donner 2008) and the paired randomization (sign-flip) "
          "test.")


@dataclass(frozen=True)
class Outcomes:
    """One model's per-problem results, by problem id."""

    model: str
    aggregation: str
    correct: dict[str, float]
    reciprocal: dict[str, float]
    lowest: float  # the smallest possible reciprocal rank, 1 / (k + 1)


def _problem_id(key: str) -> str:
    return key.rsplit(": problem_id ", 1)[-1]


def _subjects(context: CompareContext, model: str, data_dir: Path) -> list[str]:
    from rmeval.benchmarks.rewardmath.subjects import SUBJECT_SLUGS
    from rmeval.benchmarks.rewardmath.workflow_scores import find_score_file

    chosen = context.options.get("subjects")
    if chosen:
        return list(chosen)
    return [slug for slug in SUBJECT_SLUGS
            if (data_dir / f"{slug}.parquet").is_file() and find_score_file(context.scores / model, slug)]


def outcomes(context: CompareContext, model: str, data_dir: Path) -> Outcomes:
    from rmeval.benchmarks.rewardmath.metrics import problem_outcome
    from rmeval.benchmarks.rewardmath.workflow_scores import read_model_rewardmath

    setups = read_model_rewardmath(model, context.scores, data_dir, _subjects(context, model, data_dir))
    wanted = context.options.get("prm_aggregation")
    setup = next((s for s in setups if s.aggregation == wanted), setups[0])
    correct, reciprocal = {}, {}
    for problem in setup.problems:
        outcome = problem_outcome(problem)
        key = _problem_id(problem.key)
        correct[key], reciprocal[key] = float(outcome.correct), outcome.reciprocal_rank
    lowest = min(1.0 / (1 + len(problem.rejected)) for problem in setup.problems)
    return Outcomes(model, setup.aggregation, correct, reciprocal, lowest)


def comparison_part(context: CompareContext) -> ComparisonPart:
    from rmeval.benchmarks.rewardmath.catalogue import DATA
    from rmeval.run_outputs.compare.parts import ComparisonPart, Metric

    data_dir = context.data or context.root / Path(DATA).parent
    found: dict[str, Outcomes] = {}
    notes = []
    for model in context.model_folders():
        try:
            found[model] = outcomes(context, model, data_dir)
        except RmevalError as error:
            notes.append(f"{model} left out: {error}")
    lowest = min((item.lowest for item in found.values()), default=0.0)
    estimates: dict[tuple[str, str], Interval] = {}
    for model, item in found.items():
        estimates[(ACCURACY, model)] = wilson_mean(list(item.correct.values())).scaled(PERCENT)
        estimates[(MRR, model)] = wilson_mean(list(item.reciprocal.values()), lowest, 1.0).scaled(PERCENT)

    def compare(a: str, b: str) -> dict[str, Difference]:
        first, second = found[a], found[b]
        shared = [key for key in first.correct if key in second.correct]
        alone = len(first.correct) + len(second.correct) - 2 * len(shared)
        note = f"{alone} problems scored by one model alone left out" if alone else ""
        out = {}
        for name, attribute, low in ((ACCURACY, "correct", 0.0), (MRR, "reciprocal", lowest)):
            values_a = [getattr(first, attribute)[key] for key in shared]
            values_b = [getattr(second, attribute)[key] for key in shared]
            diff = paired_bounded(values_a, values_b, low, 1.0).scaled(PERCENT)
            out[name] = diff.with_note(note)
        return out

    metrics = (Metric(ACCURACY, "RewardMATH accuracy", True, True, 2, "%"),
               Metric(MRR, "RewardMATH MRR", True, True, 2, "%"))
    return ComparisonPart(metrics, tuple(found), estimates, compare, METHOD, tuple(notes))
