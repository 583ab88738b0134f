"""The fairness benchmark's part of `rmeval compare` (its catalogue's `compare`): is one model's group gap smaller
than another's, on the same papers?

Reads the score folder `{model}/{group}.parquet|csv` (columns id, reward), as `rmeval fairness-stats` does; two
models are compared on the papers both scored, paired by `id` within each group. Metrics (lower = fairer): the
scale-free gap (Table 7: max group-mean difference / pooled within-group SD) and Cohen's f. The methods are in
`stats/gap_difference.py`; `claims` tests Song et al.'s comparative claims on this run's models.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rmeval.paired_difference import Difference, Interval, undefined

if TYPE_CHECKING:
    from rmeval.run_outputs.compare.parts import ClaimsContext, CompareContext, ComparisonPart

GAP, COHENS_F = "scale_free_gap", "cohens_f"
GAP_TEST = "intersection-union, moment selection"
F_TEST = "noncentral F, Bonferroni"
METHOD = ("Two models on the papers both scored (paired by id). Scale-free gap (max group-mean difference / pooled "
          "within-group SD; lower = fairer): the interval of the difference of two gaps and its test invert an "
          "intersection-union test over the two models' standardised group differences (Berger 1982) with moment "
          "selection (Andrews & Soares 2010) and delta-method standard errors from both models' rewards on the same "
          "papers; they keep their level whether both models are fair, share a pattern or have mirrored ones, where "
          "a paired permutation test or a percentile bootstrap does not. A model's own gap interval is Table 7's "
          "(simultaneous Games-Howell lower bound, inverted parametric-bootstrap test of the range above). Cohen's f = sqrt(SS_between / SS_within): each model's noncentral-F interval (Steiger 2004), "
          "the difference's the conservative (Bonferroni) combination of the two. The interval of a difference of "
          "two gaps can be wider than the two models' own intervals suggest: it holds simultaneously over every pair "
          "of groups (either model's largest gap may come from another pair in a resample) and at the least "
          "favourable null (moment selection keeps the level whichever group pairs bind), so it is not the "
          "difference of the two single intervals.")


@dataclass(frozen=True)
class Loaded:
    """One model's rewards per group, rows sorted by id."""

    model: str
    ids: dict[str, np.ndarray]
    rewards: dict[str, np.ndarray]


def _load(context: CompareContext) -> tuple[list[Loaded], list[str], list[str]]:
    """The models with complete scores, the groups they share, and notes on what was left out."""
    from rmeval.benchmarks.fairness.stats.loading import load_scores

    loaded, notes = context.read_models(lambda model: load_scores(context.scores, [model]).models[0])
    if not loaded:
        return [], [], notes
    counts = Counter(frozenset(scores.group_names) for scores in loaded.values())
    shared = max(counts, key=lambda found: (counts[found], len(found)))
    # the run's group order (config order, as fairness-stats gets it), so that a model's own interval draws what
    # Table 7's did; standalone, sorted (as fairness-stats without --groups)
    order = [group for group in context.options.get("groups") or () if group in shared]
    groups = order if len(order) == len(shared) else sorted(shared)
    models = []
    for model, scores in loaded.items():
        mine = {group.group: group for group in scores.groups}
        lacking = sorted(set(groups) - set(mine))
        if lacking:
            notes.append(f"{model} left out: no scores of group(s) {', '.join(lacking)} that the other models have.")
            continue
        ids, rewards = {}, {}
        for group in groups:
            order = np.argsort(mine[group].ids, kind="stable")
            ids[group], rewards[group] = mine[group].ids[order], mine[group].rewards[order]
        models.append(Loaded(model, ids, rewards))
    return models, groups, notes


class Fairness:
    """The loaded models and their gap / f statistics, computed once per model or per pair of paper sets."""

    def __init__(self, models: list[Loaded], groups: list[str]) -> None:
        self.models = {item.model: item for item in models}
        self.groups = groups
        self._full: dict[str, tuple[Any, Any]] = {}

    def arrays(self, item: Loaded, keep: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        rewards, labels = [], []
        for index, group in enumerate(self.groups):
            values = item.rewards[group] if keep is None else item.rewards[group][keep[group]]
            rewards.append(values)
            labels.append(np.full(values.size, index, dtype=np.int64))
        return np.concatenate(rewards), np.concatenate(labels)

    def full(self, model: str) -> tuple[Any, Any]:
        """The model's (GapModel, FModel) on all of its papers."""
        from rmeval.benchmarks.fairness.stats.gap_difference import f_model, gap_model

        if model not in self._full:
            rewards, labels = self.arrays(self.models[model])
            self._full[model] = gap_model(rewards, labels, len(self.groups)), f_model(rewards, labels, len(self.groups))
        return self._full[model]

    def paired(self, a: str, b: str) -> tuple[tuple[Any, Any], tuple[Any, Any], int, int]:
        """Both models' statistics on the papers both scored, and how many papers each scored alone."""
        from rmeval.benchmarks.fairness.stats.gap_difference import f_model, gap_model

        first, second = self.models[a], self.models[b]
        if all(np.array_equal(first.ids[g], second.ids[g]) for g in self.groups):
            return self.full(a), self.full(b), 0, 0
        keep_a, keep_b = {}, {}
        for group in self.groups:
            shared = np.intersect1d(first.ids[group], second.ids[group])
            keep_a[group] = np.searchsorted(first.ids[group], shared)
            keep_b[group] = np.searchsorted(second.ids[group], shared)
        only_a = sum(first.ids[g].size - keep_a[g].size for g in self.groups)
        only_b = sum(second.ids[g].size - keep_b[g].size for g in self.groups)
        k = len(self.groups)
        out = []
        for item, keep in ((first, keep_a), (second, keep_b)):
            rewards, labels = self.arrays(item, keep)
            out.append((gap_model(rewards, labels, k), f_model(rewards, labels, k)))
        return out[0], out[1], only_a, only_b


def _difference(value_a: float, value_b: float, n: int, result: tuple[Interval, float], test: str,
                note: str) -> Difference:
    interval, p_value = result
    return Difference(value_a, value_b, n, interval, p_value, test, note)


def _table7_interval(item: Loaded, groups: list[str], gap: float, seed: int) -> Interval:
    """A model's own gap interval, Table 7's construction with its draws (stats/gaps.py `intervals`), so that the
    leaderboard and Table 7 give one interval for one number."""
    from rmeval.benchmarks.fairness.stats import gaps

    samples = [item.rewards[group] for group in groups]

    def bounds(alpha: float) -> tuple[float, float]:
        found = gaps.intervals(item.model, groups, samples, seed, 1.0 - alpha)
        return min(found.gap_low, gap), max(found.gap_high, gap)

    return Interval(gap, bounds)


def comparison_part(context: CompareContext) -> ComparisonPart:
    from rmeval.benchmarks.fairness.stats.gap_difference import (
        f_difference,
        f_interval,
        gap_difference,
    )
    from rmeval.run_outputs.compare.parts import ComparisonPart, Metric

    spec = context.benchmark.compare
    assert spec is not None
    loaded, groups, notes = _load(context)
    fairness = Fairness(loaded, groups)
    full = fairness.full
    metrics = (Metric(GAP, "scale-free gap (SD)", spec.higher_is_better(GAP), True, spec.decimals_of(GAP)),
               Metric(COHENS_F, "Cohen's f", spec.higher_is_better(COHENS_F), True, spec.decimals_of(COHENS_F)))
    estimates: dict[tuple[str, str], Interval] = {}
    for item in loaded:
        gap, f = full(item.model)
        estimates[(GAP, item.model)] = _table7_interval(item, groups, gap.gap, context.seed) if gap.defined \
            else undefined()
        estimates[(COHENS_F, item.model)] = f_interval(f) if f.defined else undefined()
        notes += [f"{item.model}: {model.note}" for model in (gap,) if model.note]

    def compare(a: str, b: str) -> dict[str, Difference]:
        (gap_a, f_a), (gap_b, f_b), only_a, only_b = (
            (full(a), full(b), 0, 0) if a == b else fairness.paired(a, b))
        left = (f"{only_a} / {only_b} papers scored by {a} / {b} alone left out" if only_a or only_b else "")
        why = "; ".join(text for text in (left, gap_a.note, gap_b.note) if text)
        return {GAP: _difference(gap_a.gap, gap_b.gap, gap_a.n, gap_difference(gap_a, gap_b), GAP_TEST, why),
                COHENS_F: _difference(f_a.f, f_b.f, f_a.n, f_difference(f_a, f_b), F_TEST,
                                      "; ".join(t for t in (left, f_a.note, f_b.note) if t))}

    return ComparisonPart(metrics, tuple(item.model for item in loaded), estimates, compare, METHOD, tuple(notes))


# ----------------------------------------------------------------------------- claims
def _real(rows: list[Mapping[str, Any]], baselines: Mapping[str, str]) -> list[Mapping[str, Any]]:
    return [row for row in rows if row["model_a"] not in baselines and row["model_b"] not in baselines]


def _against(model_set: set[str], rows: list[Mapping[str, Any]], alpha: float) -> tuple[int, int, int]:
    """Of the scale-free-gap comparisons between a model of `model_set` and one outside it: (how many, how many
    favour the set's model significantly, how many the other significantly)."""
    from rmeval.run_outputs.compare.summary import favours

    relevant = [row for row in rows if (row["model_a"] in model_set) != (row["model_b"] in model_set)]
    significant = [row for row in relevant if math.isfinite(row["p_adjusted"]) and row["p_adjusted"] < alpha]
    winners = [favours(row, higher_is_better=False) for row in significant]
    return len(relevant), sum(w in model_set for w in winners), sum(w is not None and w not in model_set
                                                                    for w in winners)


def claims(context: ClaimsContext) -> list[str]:
    """Song et al. read "Nemotron is fairer than the others" and "the top-2 RewardBench models have the lowest
    NMGD" off point values; here both are tested with the paired comparisons of the scale-free gap (Holm)."""
    rows = _real([row for row in context.comparisons if row["metric"] == GAP], context.baselines)
    board = [row for row in context.leaderboard if row["metric"] == GAP and not row["baseline"]
             and math.isfinite(row["value"])]
    if len(board) < 2:
        return []
    alpha = context.alpha
    lines = []
    fairest = min(board, key=lambda row: (row["value"], row["model"]))["model"]
    total, wins, losses = _against({fairest}, rows, alpha)
    lines.append(f"- Song et al.'s \"Nemotron is fairer than the others\" read a single ranking off point values. "
                 f"Here the smallest scale-free gap is {fairest}'s: " + (
                     f"significantly smaller than the other model's gap in {wins} of its {total} comparison(s) "
                     f"(Holm, alpha {alpha:g}); the claim holds only if it is smaller in all of them." if total else
                     "not compared with the others in this run."))
    lines.append(_top2_line(context, rows, alpha))
    return [line for line in lines if line]


def _top2_line(context: ClaimsContext, rows: list[Mapping[str, Any]], alpha: float) -> str:
    from rmeval.benchmarks.fairness.capability import claim_from_table

    path = context.path("capability")
    if not path.exists():
        return ""
    import pandas as pd

    claim = claim_from_table(pd.read_csv(path))
    if not claim["basis"]:
        return ("- Song et al.'s \"the top-2 RewardBench models have the lowest NMGD\": not tested (too few models "
                "with a capability value).")
    top = set(claim["top2"])
    total, wins, losses = _against(top, rows, alpha)
    return (f"- Song et al.'s \"the top-2 RewardBench models have the lowest NMGD\": the two best by "
            f"{claim['basis']} ({', '.join(claim['top2'])}) have a significantly smaller scale-free gap in {wins} and "
            f"a significantly larger one in {losses} of their {total} comparisons with the other models (Holm, alpha "
            f"{alpha:g}); the claim holds only if they are smaller in all of them.")
