"""Comparisons across models: correlation of group-mean vectors (Table 4 and its
generalisation), agreement of group orderings, and the paper's claim that models
ranked higher on RewardBench are fairer."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from rmeval.intervals import CONFIDENCE


@dataclass(frozen=True)
class Correlation:
    r: float
    p_value: float
    ci_low: float = float("nan")  # 95% Fisher z interval (needs >= 4 points)
    ci_high: float = float("nan")


@dataclass(frozen=True)
class RankAgreement:
    model_a: str
    model_b: str
    kendall_tau: float
    spearman_rho: float
    top_group_match: bool


@dataclass(frozen=True)
class RankVsFairness:
    metric: str
    spearman_rho: float
    p_value: float
    n_models: int
    note: str


def pearson(a: np.ndarray, b: np.ndarray) -> Correlation:
    from scipy import stats

    result = stats.pearsonr(a, b)
    r = float(result.statistic)
    if a.size < 4 or not np.isfinite(r):
        return Correlation(r, float(result.pvalue))
    if abs(r) == 1.0:  # Fisher's z is infinite: the interval is the point
        return Correlation(r, float(result.pvalue), r, r)
    interval = result.confidence_interval(confidence_level=CONFIDENCE)
    return Correlation(r, float(result.pvalue), float(interval.low), float(interval.high))


def correlation_matrix(vectors: dict[str, np.ndarray], method: str) -> np.ndarray:
    """Square matrix of Pearson or Spearman correlations between group-mean vectors."""
    from scipy import stats

    names = list(vectors)
    matrix = np.eye(len(names))
    for i, j in combinations(range(len(names)), 2):
        a, b = vectors[names[i]], vectors[names[j]]
        if method == "pearson":
            value = stats.pearsonr(a, b).statistic
        elif method == "spearman":
            value = stats.spearmanr(a, b).statistic
        else:
            raise ValueError(method)
        matrix[i, j] = matrix[j, i] = float(value)
    return matrix


def rank_agreement(vectors: dict[str, np.ndarray]) -> list[RankAgreement]:
    from scipy import stats

    rows = []
    for a, b in combinations(list(vectors), 2):
        x, y = vectors[a], vectors[b]
        rows.append(
            RankAgreement(
                model_a=a,
                model_b=b,
                kendall_tau=float(stats.kendalltau(x, y).statistic),
                spearman_rho=float(stats.spearmanr(x, y).statistic),
                top_group_match=bool(int(np.argmax(x)) == int(np.argmax(y))),
            )
        )
    return rows


def ranks_missing_note(n_ranked: int) -> str:
    """Why the rank correlation was not computed, with `n_ranked` (< 3) models ranked."""
    have = ("no model of this run has" if n_ranked == 0 else
            f"only {n_ranked} model{'s' if n_ranked > 1 else ''} of this run {'have' if n_ranked > 1 else 'has'}")
    return f"{have} a published RewardBench rank (`rewardbench_rank` in the registry); Spearman needs at least 3"


def rank_vs_fairness(metric: str, ranks: dict[str, int | None], values: dict[str, float]) -> RankVsFairness:
    """Spearman's rho between RewardBench rank (1 = best) and a gap metric.

    A positive rho means worse-ranked models have larger gaps, i.e. better models are fairer.
    """
    from scipy import stats

    ranked = [m for m in values if ranks.get(m) is not None and np.isfinite(values[m])]
    n = len(ranked)
    nan = float("nan")
    if n < 3:
        return RankVsFairness(metric, nan, nan, n, ranks_missing_note(n))
    x = np.array([ranks[m] for m in ranked], dtype=np.float64)
    y = np.array([values[m] for m in ranked], dtype=np.float64)
    if np.ptp(x) == 0.0 or np.ptp(y) == 0.0:
        return RankVsFairness(metric, nan, nan, n, "ranks or metric values are all equal; correlation undefined")
    result = stats.spearmanr(x, y)
    return RankVsFairness(metric, float(result.statistic), float(result.pvalue), n, "")
