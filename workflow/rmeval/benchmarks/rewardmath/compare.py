"""RewardMATH's part of `rmeval compare` (its catalogue's `compare`): two models on the same problems.

Each model's score files are read as `rmeval rewardmath-metrics` reads them (`workflow_scores.read_model_rewardmath`;
a PRM under the run's `rewardmath.prm_aggregation`, as its capability file), and every problem scored by both is
paired by its problem id. Accuracy (0/1 per problem: Tango's score interval and McNemar's test, the one it
inverts) and MRR (a reciprocal rank in [1/(k+1), 1] per problem: Tango's interval and test on the discordant
masses), in percent.
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
          "Accuracy: Tango's (1998) score interval for paired proportions and McNemar's asymptotic test, the test "
          "it inverts (a 95 % interval leaves out 0 exactly when p < 0.05). MRR (reciprocal ranks rescaled to "
          "[0, 1]): the same on the discordant masses, each problem's positive and negative differences.")


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


def scalar_outcomes(model: str, files: list[tuple[Path, Path]]) -> Outcomes | None:
    """A classifier's outcomes (score files of `id, reward` only), vectorised: per problem, the rejected solutions
    scoring at least as high as the chosen one (`metrics.problem_outcome`'s rule); None for a PRM or an LLM judge
    (their step rewards and verdicts go through `workflow_scores`, as the metrics stage reads them)."""
    import pandas as pd

    from rmeval.benchmarks.rewardmath.workflow_scores import JUDGE_COLUMNS, _read_table
    from rmeval.score_alignment import aligned_rewards

    frames = []
    for data_path, score_path in files:
        scores = _read_table(score_path)
        if {"step_rewards", *JUDGE_COLUMNS} & set(scores.columns):
            return None
        data = pd.read_parquet(data_path, columns=["id", "problem_id", "solution_type"])
        frames.append(data.assign(reward=aligned_rewards(data["id"].astype(str), scores, score_path)))
    if not frames:
        raise RmevalError(f"model {model!r}: no scored RewardMATH solutions")
    table = pd.concat(frames, ignore_index=True)
    table["problem_id"] = table["problem_id"].astype(str)
    is_chosen = table["solution_type"] == "chosen"
    counts = is_chosen.groupby(table["problem_id"]).sum()
    if (counts != 1).any():
        problem = counts.index[counts != 1][0]
        raise RmevalError(f"model {model!r}: problem_id {problem}: {int(counts[problem])} chosen solutions; expected "
                          "exactly one")
    chosen = table[is_chosen].set_index("problem_id")["reward"]
    rejected = table[~is_chosen]
    above = (rejected["reward"].to_numpy() >= chosen.reindex(rejected["problem_id"]).to_numpy())
    ranks = pd.Series(above, index=rejected["problem_id"].to_numpy()).groupby(level=0).sum().reindex(chosen.index)
    if ranks.isna().any():
        raise RmevalError(f"model {model!r}: problem_id {ranks.index[ranks.isna()][0]}: no rejected solutions to "
                          "compare the chosen one against")
    sizes = rejected.groupby("problem_id").size()
    correct = {key: float(value == 0) for key, value in ranks.items()}
    reciprocal = {key: 1.0 / (1.0 + value) for key, value in ranks.items()}
    return Outcomes(model, "scalar", correct, reciprocal, 1.0 / (1.0 + float(sizes.max())))


def outcomes(context: CompareContext, model: str, data_dir: Path) -> Outcomes:
    from rmeval.benchmarks.rewardmath.metrics import problem_outcome
    from rmeval.benchmarks.rewardmath.workflow_scores import find_score_file, read_model_rewardmath

    subjects = _subjects(context, model, data_dir)
    files = [(data_dir / f"{slug}.parquet", find_score_file(context.scores / model, slug)) for slug in subjects]
    if all(score is not None for _, score in files):
        fast = scalar_outcomes(model, files)
        if fast is not None:
            return fast
    setups = read_model_rewardmath(model, context.scores, data_dir, subjects)
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
    found, notes = context.read_models(lambda model: outcomes(context, model, data_dir))
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

    spec = context.benchmark.compare
    assert spec is not None
    metrics = (Metric(ACCURACY, "RewardMATH accuracy", True, True, spec.decimals_of(ACCURACY), "%"),
               Metric(MRR, "RewardMATH MRR", True, True, spec.decimals_of(MRR), "%"))
    return ComparisonPart(metrics, tuple(found), estimates, compare, METHOD, tuple(notes))
