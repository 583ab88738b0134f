"""The paired (counterfactual) design: rows sharing a pair id are the same content once per group.

Per model, the complete pairs (every group present) form an n x k matrix of rewards; pairs missing a group are
left out and counted. Tests: Friedman's chi-square (k >= 3; average ranks within a pair, tie-corrected, effect
Kendall's W = Q / (n (k - 1)) with the CI of Q's noncentrality over n (k - 1)), or for k = 2 the paired t test (effect: mean difference
first - second group, t interval) and the Wilcoxon signed-rank test (scipy's, zero differences dropped as
scipy's default "wilcox"; effect: median difference, pair-bootstrap CI). Per group: the mean within-pair
difference against the pair mean (t interval) and the share of pairs in which the group scores highest (ties
split evenly). Post hoc: a paired t test for every two groups, Holm-corrected over the k (k - 1) / 2 tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

from rmeval.intervals import CONFIDENCE, percentile_bounds

BOOTSTRAP_CHUNK = 200  # bootstrap replicates per vectorised step (memory: chunk x n x k floats)


@dataclass(frozen=True)
class PairedData:
    model: str
    groups: list[str]
    pair_ids: list[str]
    values: Any  # n x k float array, columns in `groups` order
    incomplete: int  # pairs seen in some group but not in every one


def paired_matrix(model: str, rewards: dict[str, dict[str, float]], pairs: dict[str, dict[str, str]],
                  groups: list[str]) -> PairedData:
    """rewards: group -> id -> reward; pairs: group -> id -> pair id."""
    import numpy as np

    by_pair: list[dict[str, float]] = [{} for _ in groups]
    for index, group in enumerate(groups):
        for row_id, pair in pairs[group].items():
            if row_id in rewards[group]:
                by_pair[index][pair] = rewards[group][row_id]
    every = set().union(*(set(d) for d in by_pair))
    complete = sorted(set.intersection(*(set(d) for d in by_pair)))
    values = np.array([[by_pair[j][p] for j in range(len(groups))] for p in complete], dtype=float)
    return PairedData(model, groups, complete, values.reshape(len(complete), len(groups)), len(every) - len(complete))


def _tie_term(ranks_row: Any) -> float:
    import numpy as np

    _, counts = np.unique(ranks_row, return_counts=True)
    return float((counts ** 3 - counts).sum())


def friedman_from_ranks(rank_sums: Any, n: int, k: int, ties: float) -> Any:
    """Q for rank sums (works on a vector of k, or a B x k array), tie-corrected as Conover (1999, 5.8)."""
    q = 12.0 / (n * k * (k + 1)) * (rank_sums ** 2).sum(axis=-1) - 3.0 * n * (k + 1)
    return q / (1.0 - ties / (n * (k ** 3 - k)))


def within_ranks(values: Any) -> Any:
    from scipy.stats import rankdata

    return rankdata(values, axis=1)


def friedman(values: Any) -> tuple[float, float, float]:
    """(Q, p, Kendall's W)."""
    from scipy.stats import chi2

    n, k = values.shape
    ranks = within_ranks(values)
    ties = sum(_tie_term(row) for row in ranks)
    q = float(friedman_from_ranks(ranks.sum(axis=0), n, k, ties))
    return q, float(chi2.sf(q, k - 1)), q / (n * (k - 1))


def mean_ci(values: Any, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    import numpy as np
    from scipy.stats import t

    n = len(values)
    mean = float(np.mean(values))
    if n < 2:
        return mean, float("nan"), float("nan")
    half = float(t.ppf(0.5 + confidence / 2, n - 1) * np.std(values, ddof=1) / np.sqrt(n))
    return mean, mean - half, mean + half


def paired_t(first: Any, second: Any) -> tuple[float, float]:
    """(t, two-sided p) of the paired t test on first - second."""
    import numpy as np
    from scipy.stats import t as t_dist

    d = np.asarray(first, dtype=float) - np.asarray(second, dtype=float)
    n = len(d)
    sd = float(np.std(d, ddof=1)) if n > 1 else float("nan")
    if n < 2 or sd == 0.0:
        return float("nan"), float("nan")
    t = float(np.mean(d) / (sd / np.sqrt(n)))
    return t, float(2 * t_dist.sf(abs(t), n - 1))


def wilcoxon(d: Any) -> tuple[float, float]:
    from scipy.stats import wilcoxon as scipy_wilcoxon

    if len(d) == 0 or not (d != 0).any():
        return float("nan"), float("nan")
    result = scipy_wilcoxon(d)
    return float(result.statistic), float(result.pvalue)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (monotone, capped at 1); NaN stays NaN and counts no test."""
    import math

    order = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(order)
    adjusted = [float("nan")] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


def _bootstrap(statistic: Any, n: int, bootstrap: int, seed: int) -> tuple[float, float]:
    """Percentile interval (at CONFIDENCE) of `statistic(indices)` (B x n resampled pair indices -> B values)."""
    import numpy as np

    if n < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    values = []
    for start in range(0, bootstrap, BOOTSTRAP_CHUNK):
        size = min(BOOTSTRAP_CHUNK, bootstrap - start)
        values.append(statistic(rng.integers(0, n, size=(size, n))))
    drawn = np.concatenate(values)
    low, high = np.nanpercentile(drawn, percentile_bounds())
    return float(low), float(high)


def repeated_measures_f(values: Any) -> float:
    """Cohen's f of the group effect on n x k paired rewards: the SD of the group effects (column mean - grand
    mean) over the within-pair residual SD (two-way residual, (n - 1)(k - 1) df); NaN without residual variance."""
    import numpy as np

    n, k = values.shape
    if n < 2:
        return float("nan")
    effects = values.mean(axis=0) - values.mean()
    residual = values - values.mean(axis=1, keepdims=True) - values.mean(axis=0, keepdims=True) + values.mean()
    variance = float((residual**2).sum()) / ((n - 1) * (k - 1))
    return float(np.sqrt((effects**2).mean() / variance)) if variance > 0.0 else float("nan")


def noncentrality_interval(q: float, df: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Interval for the noncentrality lambda of a chi-square statistic q, by inverting the noncentral chi-square
    (Steiger & Fouladi 1997): lambda_low = 0 when q is below the central quantile. Unlike a bootstrap of a statistic
    bounded at 0, it keeps its coverage at lambda = 0 and always contains lambda = q."""
    from scipy import optimize
    from scipy.stats import chi2, ncx2

    tail = (1.0 - confidence) / 2.0

    def solve(target: Any, level: float) -> float:
        if target(1e-12) <= level:
            return 0.0
        high = max(1.0, 2.0 * q)
        while target(high) > level:
            high *= 2.0
        return float(optimize.brentq(lambda lam: target(lam) - level, 1e-12, high, xtol=1e-10))

    low = 0.0 if chi2.sf(q, df) >= tail else solve(lambda lam: -ncx2.sf(q, df, lam), -tail)
    high = solve(lambda lam: ncx2.cdf(q, df, lam), tail)
    return low, max(high, q)


def tests(data: PairedData, bootstrap: int, seed: int, alpha: float) -> list[dict[str, Any]]:
    """The rows of table_paired for one model, each with the run's power: the smallest Cohen's f the
    repeated-measures F test on these pairs detects with power 0.8 (`mde_cohens_f`) and the observed f."""
    from rmeval.benchmarks.fairness.stats.power import paired_mde

    n, k = data.values.shape
    extra = {"mde_cohens_f": paired_mde(n, k, alpha) if n >= 2 else float("nan"),
             "cohens_f": repeated_measures_f(data.values)}
    return [{**row, **extra} for row in _tests(data, bootstrap, seed)]


def _tests(data: PairedData, bootstrap: int, seed: int) -> list[dict[str, Any]]:
    import numpy as np

    n, k = data.values.shape
    base = {"model": data.model, "n_pairs": n, "incomplete_pairs": data.incomplete}
    if n < 2:
        return [{**base, "test": "friedman" if k >= 3 else "paired_t", "statistic": float("nan"),
                 "p_value": float("nan"), "effect": "", "estimate": float("nan"), "ci_low": float("nan"),
                 "ci_high": float("nan")}]
    if k >= 3:
        q, p, w = friedman(data.values)
        # W = Q / (n (k - 1)), so its interval is the noncentrality interval of Q over n (k - 1)
        low, high = (bound / (n * (k - 1)) for bound in noncentrality_interval(q, k - 1))
        return [{**base, "test": "friedman", "statistic": q, "p_value": p, "effect": "Kendall's W",
                 "estimate": w, "ci_low": low, "ci_high": high}]
    d = data.values[:, 0] - data.values[:, 1]
    t, p_t = paired_t(data.values[:, 0], data.values[:, 1])
    mean, low, high = mean_ci(d)
    w_stat, p_w = wilcoxon(d)
    m_low, m_high = _bootstrap(lambda idx: np.median(d[idx], axis=1), n, bootstrap, seed)
    label = f"{data.groups[0]} - {data.groups[1]}"
    return [
        {**base, "test": "paired_t", "statistic": t, "p_value": p_t, "effect": f"mean difference ({label})",
         "estimate": mean, "ci_low": low, "ci_high": high},
        {**base, "test": "wilcoxon", "statistic": w_stat, "p_value": p_w, "effect": f"median difference ({label})",
         "estimate": float(np.median(d)), "ci_low": m_low, "ci_high": m_high},
    ]


def win_shares(values: Any) -> Any:
    """Share of pairs in which each group scores highest; a tie for the top splits the pair evenly."""
    top = values == values.max(axis=1, keepdims=True)
    return (top / top.sum(axis=1, keepdims=True)).mean(axis=0)


def group_rows(data: PairedData) -> list[dict[str, Any]]:
    n = data.values.shape[0]
    if n == 0:
        return [{"model": data.model, "group": g, "n_pairs": 0, "mean_difference": float("nan"),
                 "ci_low": float("nan"), "ci_high": float("nan"), "win_share": float("nan")} for g in data.groups]
    differences = data.values - data.values.mean(axis=1, keepdims=True)
    shares = win_shares(data.values)
    rows = []
    for j, group in enumerate(data.groups):
        mean, low, high = mean_ci(differences[:, j])
        rows.append({"model": data.model, "group": group, "n_pairs": n, "mean_difference": mean, "ci_low": low,
                     "ci_high": high, "win_share": float(shares[j])})
    return rows


def posthoc_rows(data: PairedData, alpha: float) -> list[dict[str, Any]]:
    rows = []
    for a, b in combinations(range(len(data.groups)), 2):
        first, second = data.values[:, a], data.values[:, b]
        t, p = paired_t(first, second)
        mean, low, high = mean_ci(first - second) if len(first) else (float("nan"),) * 3
        rows.append({"model": data.model, "group_a": data.groups[a], "group_b": data.groups[b],
                     "n_pairs": len(first), "mean_diff": mean, "ci_low": low, "ci_high": high, "t_statistic": t,
                     "p_value": p})
    for row, adjusted in zip(rows, holm([row["p_value"] for row in rows]), strict=True):
        row["p_holm"] = adjusted
        row["reject"] = bool(adjusted < alpha) if adjusted == adjusted else False
    return rows


def differences(data: PairedData) -> list[dict[str, Any]]:
    """Long form of each pair's within-pair differences (the figure's points)."""
    rows = []
    if data.values.shape[0] == 0:
        return rows
    centred = data.values - data.values.mean(axis=1, keepdims=True)
    for i, pair in enumerate(data.pair_ids):
        for j, group in enumerate(data.groups):
            rows.append({"model": data.model, "group": group, "pair": pair, "difference": float(centred[i, j])})
    return rows
