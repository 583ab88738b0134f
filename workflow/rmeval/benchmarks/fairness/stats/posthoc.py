"""All-pairs post-hoc comparisons on the studentized range distribution.

Tukey-Kramer assumes equal variances (pooled MSE); Games-Howell does not (per-pair
Welch standard errors and Welch-Satterthwaite degrees of freedom).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from rmeval.intervals import CONFIDENCE, percentile_bounds


@dataclass(frozen=True)
class PairComparison:
    group_a: str
    group_b: str
    mean_diff: float  # mean(group_b) - mean(group_a), as statsmodels reports it
    std_error: float
    df: float
    q_statistic: float
    p_adj: float
    ci_low: float
    ci_high: float
    reject: bool


def critical_q(k: int, alpha: float, df: float) -> float:
    """Upper-alpha quantile of the studentized range with k means and df degrees of freedom."""
    return float(critical_q_many(k, alpha, np.array([df]))[0])


def critical_q_many(k: int, alpha: float, df: np.ndarray) -> np.ndarray:
    """critical_q over an array of df (stats.studentized_range: an interpolant valid for every df >= 1)."""
    from rmeval.benchmarks.fairness.stats.studentized_range import quantiles

    return quantiles(k, alpha, df)


def _pair(
    names: tuple[str, str],
    diff: float,
    std_error: float,
    df: float,
    k: int,
    alpha: float,
    p_values: bool,
) -> PairComparison:
    from scipy import stats

    if not (np.isfinite(std_error) and std_error > 0.0 and np.isfinite(df) and df > 0.0):
        # both groups constant (or a group of one): the pair's test and interval are undefined, not an error
        nan = float("nan")
        return PairComparison(names[0], names[1], float(diff), float(std_error), float(df), nan, nan, nan, nan,
                              False)
    # q is the studentized range of the pair: |diff| / (SE / sqrt(2)).
    q = abs(diff) / std_error * np.sqrt(2.0)
    # the adjusted p costs a numerical integral per pair: skipped when only the intervals are wanted
    p_adj = float(stats.studentized_range.sf(q, k, df)) if p_values else float("nan")
    half = critical_q(k, alpha, df) / np.sqrt(2.0) * std_error
    return PairComparison(
        group_a=names[0],
        group_b=names[1],
        mean_diff=float(diff),
        std_error=float(std_error),
        df=float(df),
        q_statistic=float(q),
        p_adj=min(max(p_adj, 0.0), 1.0),
        ci_low=float(diff - half),
        ci_high=float(diff + half),
        reject=bool(p_adj < alpha) if p_values else bool(diff - half > 0.0 or diff + half < 0.0),
    )


def tukey_hsd(groups: list[str], samples: list[np.ndarray], alpha: float,
              p_values: bool = True) -> list[PairComparison]:
    """Tukey-Kramer HSD (unequal n allowed) on the pooled within-group variance."""
    k = len(samples)
    n_total = sum(s.size for s in samples)
    df = n_total - k
    mse = sum(((s - s.mean()) ** 2).sum() for s in samples) / df if df > 0 else float("nan")
    pairs = []
    for i, j in combinations(range(k), 2):
        diff = samples[j].mean() - samples[i].mean()
        std_error = np.sqrt(mse * (1.0 / samples[i].size + 1.0 / samples[j].size))
        pairs.append(_pair((groups[i], groups[j]), diff, std_error, df, k, alpha, p_values))
    return pairs


def games_howell(groups: list[str], samples: list[np.ndarray], alpha: float,
                 p_values: bool = True) -> list[PairComparison]:
    """Games-Howell: Tukey's studentized range with Welch SEs and df per pair."""
    k = len(samples)
    pairs = []
    for i, j in combinations(range(k), 2):
        a, b = samples[i], samples[j]
        if min(a.size, b.size) < 2:  # a group of one has no variance: the pair is undefined (NaN)
            pairs.append(_pair((groups[i], groups[j]), b.mean() - a.mean(), np.nan, np.nan, k, alpha, p_values))
            continue
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        with np.errstate(divide="ignore", invalid="ignore"):  # two constant groups: SE 0, df 0/0, a NaN pair
            std_error = np.sqrt(va + vb)
            df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
        pairs.append(_pair((groups[i], groups[j]), b.mean() - a.mean(), std_error, df, k, alpha, p_values))
    return pairs


def tukey_count_interval(samples: list[np.ndarray], alpha: float, n_bootstrap: int, rng: np.random.Generator,
                         confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile interval of the number of Tukey-Kramer pairs significant at `alpha`, over a stratified bootstrap
    of the groups: how many pairs a rerun of this design would call different. Widened to hold the observed count
    (a count is discrete; its percentile interval can otherwise miss it)."""
    from rmeval.benchmarks.fairness.stats.resample import stratified_means

    k = len(samples)
    sizes = np.array([s.size for s in samples], dtype=np.float64)
    df = sizes.sum() - k
    observed = sum(p.reject for p in tukey_hsd([str(i) for i in range(k)], samples, alpha, p_values=False))
    if df <= 0 or all(np.ptp(s) == 0.0 for s in samples):  # no within-group variance: Tukey is undefined
        return float("nan"), float("nan")
    means, ss_within = stratified_means(samples, n_bootstrap, rng)
    threshold = critical_q(k, alpha, df) / np.sqrt(2.0)
    i, j = np.triu_indices(k, 1)
    se = np.sqrt(ss_within[:, None] / df * (1.0 / sizes[i] + 1.0 / sizes[j])[None, :])
    counts = (np.abs(means[:, j] - means[:, i]) > threshold * se).sum(axis=1)
    low, high = np.percentile(counts, percentile_bounds(confidence))
    return float(min(np.floor(low), observed)), float(max(np.ceil(high), observed))
