"""Ranks of models with simultaneous confidence intervals, from simultaneous intervals for every pairwise difference.

Mogstad, Romano, Shaikh & Wilhelm (2024, "Inference for ranks with applications to mobility across neighbourhoods
and academic achievement across countries", Review of Economic Studies; R package csranks): when the intervals for
all differences theta_j - theta_k hold at once with probability >= 1 - alpha, the sets

    rank_low_j  = 1 + #{k : the interval of theta_k - theta_j lies above 0}      (k surely better than j)
    rank_high_j = p - #{k : the interval of theta_k - theta_j lies below 0}      (k surely worse than j)

hold every model's true rank, rank_j = 1 + #{k : theta_k better than theta_j}, at once with probability >= 1 - alpha.
The pairwise family here is Bonferroni: each of the m = p (p - 1) / 2 pairwise intervals at error rate alpha / m
(`rank_alpha`). The point rank is 1 + the number of models with a strictly better value (ties share the best rank);
"tied with" lists the models the rank interval cannot separate from it (neither surely better nor surely worse).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Rank:
    model: str
    rank: float  # nan for a model without a value
    rank_low: float
    rank_high: float
    tied_with: tuple[str, ...]


def rank_alpha(alpha: float, n_models: int) -> float:
    """Each pairwise interval's error rate for a simultaneous family at `alpha` (Bonferroni over the pairs)."""
    pairs = n_models * (n_models - 1) // 2
    return alpha / max(1, pairs)


def rank_intervals(models: Sequence[str], values: Mapping[str, float], higher_is_better: bool,
                   interval: Callable[[str, str], tuple[float, float]]) -> list[Rank]:
    """Ranks of `models` by `values` (nan: unranked), with simultaneous rank intervals.

    interval(a, b): the (simultaneous) interval of value_a - value_b, for every pair of ranked models with a
    before b in `models`."""
    ranked = [model for model in models if math.isfinite(values.get(model, math.nan))]
    sign = 1.0 if higher_is_better else -1.0
    better = {model: set() for model in ranked}  # k surely better than model
    worse = {model: set() for model in ranked}
    for i, a in enumerate(ranked):
        for b in ranked[i + 1:]:
            low, high = interval(a, b)
            low, high = (low, high) if sign > 0 else (-high, -low)  # of "a better than b", in better-units
            if low > 0:
                better[b].add(a)
                worse[a].add(b)
            elif high < 0:
                better[a].add(b)
                worse[b].add(a)
    out = []
    p = len(ranked)
    for model in models:
        if model not in better:
            out.append(Rank(model, math.nan, math.nan, math.nan, ()))
            continue
        rank = 1 + sum(sign * (values[other] - values[model]) > 0 for other in ranked)
        tied = tuple(other for other in ranked if other != model and other not in better[model]
                     and other not in worse[model])
        out.append(Rank(model, float(rank), float(1 + len(better[model])), float(p - len(worse[model])), tied))
    return out
