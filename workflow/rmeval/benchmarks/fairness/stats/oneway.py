"""One-way tests across groups: descriptives with t CIs, classic and Welch ANOVA,
Kruskal-Wallis, and the effect sizes eta^2, omega^2 and Cohen's f.

Formulas are written out (not delegated) so each can be checked against an
independent implementation in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rmeval.intervals import CONFIDENCE


@dataclass(frozen=True)
class GroupSummary:
    group: str
    n: int
    mean: float
    std: float  # sample SD (ddof=1)
    sem: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class ClassicAnova:
    f_statistic: float
    p_value: float
    df_between: int
    df_within: int
    ss_between: float
    ss_within: float
    eta_sq: float
    omega_sq: float
    cohens_f: float

    @property
    def ms_within(self) -> float:
        return self.ss_within / self.df_within


@dataclass(frozen=True)
class WelchAnova:
    f_statistic: float
    p_value: float
    df_between: float
    df_within: float


@dataclass(frozen=True)
class KruskalWallis:
    h_statistic: float
    p_value: float


def describe(group: str, values: np.ndarray, confidence: float = CONFIDENCE) -> GroupSummary:
    from scipy import stats

    n = values.size
    mean = float(values.mean())
    if n < 2:  # a group of one: no SD and no interval (NaN), not an error
        return GroupSummary(group, n, mean, float("nan"), float("nan"), float("nan"), float("nan"))
    std = float(values.std(ddof=1))
    sem = std / np.sqrt(n)
    half = float(stats.t.ppf(0.5 + confidence / 2, df=n - 1)) * sem
    return GroupSummary(group, n, mean, std, sem, mean - half, mean + half)


def classic_anova(samples: list[np.ndarray]) -> ClassicAnova:
    from scipy import stats

    k = len(samples)
    n_total = sum(s.size for s in samples)
    grand = np.concatenate(samples).mean()
    ss_between = float(sum(s.size * (s.mean() - grand) ** 2 for s in samples))
    ss_within = float(sum(((s - s.mean()) ** 2).sum() for s in samples))
    df_between, df_within = k - 1, n_total - k
    nan = float("nan")
    ss_total = ss_between + ss_within
    if df_within == 0 or ss_within == 0.0:  # no within-group variance: F, p and the effect sizes are undefined
        return ClassicAnova(nan, nan, df_between, df_within, ss_between, ss_within, nan, nan, nan)
    ms_between, ms_within = ss_between / df_between, ss_within / df_within
    f_statistic = ms_between / ms_within
    p_value = float(stats.f.sf(f_statistic, df_between, df_within))
    eta_sq = ss_between / ss_total
    omega_sq = (ss_between - df_between * ms_within) / (ss_total + ms_within)
    cohens_f = float(np.sqrt(eta_sq / (1.0 - eta_sq)))
    return ClassicAnova(
        f_statistic=float(f_statistic),
        p_value=p_value,
        df_between=df_between,
        df_within=df_within,
        ss_between=ss_between,
        ss_within=ss_within,
        eta_sq=float(eta_sq),
        omega_sq=float(omega_sq),
        cohens_f=cohens_f,
    )


def welch_anova(samples: list[np.ndarray]) -> WelchAnova:
    """Welch (1951) heteroscedastic one-way ANOVA."""
    k = len(samples)
    n = np.array([s.size for s in samples], dtype=np.float64)
    if (n < 2).any() or any(np.ptp(s) == 0.0 for s in samples):  # weights n / s^2 need every variance > 0
        return WelchAnova(float("nan"), float("nan"), float(k - 1), float("nan"))
    means = np.array([s.mean() for s in samples])
    variances = np.array([s.var(ddof=1) for s in samples])
    f_statistic, p_value, df_within = welch_test(means, variances, n)
    return WelchAnova(float(f_statistic), float(p_value), float(k - 1), float(df_within))


def welch_test(means: np.ndarray, variances: np.ndarray, sizes: np.ndarray) -> tuple[Any, Any, Any]:
    """Welch's F, p and denominator df from group means, variances (ddof=1) and sizes: the last axis is the groups,
    leading axes (replicates) broadcast."""
    from scipy import stats

    k = sizes.shape[-1]
    weights = sizes / variances
    weighted_mean = (weights * means).sum(axis=-1, keepdims=True) / weights.sum(axis=-1, keepdims=True)
    between = (weights * (means - weighted_mean) ** 2).sum(axis=-1) / (k - 1)
    lam = ((1.0 - weights / weights.sum(axis=-1, keepdims=True)) ** 2 / (sizes - 1)).sum(axis=-1)
    f_statistic = between / (1.0 + 2.0 * (k - 2) / (k**2 - 1) * lam)
    df_within = (k**2 - 1) / (3.0 * lam)
    return f_statistic, stats.f.sf(f_statistic, k - 1, df_within), df_within


def kruskal_wallis(samples: list[np.ndarray]) -> KruskalWallis:
    from scipy import stats

    if np.ptp(np.concatenate(samples)) == 0.0:  # every reward equal: no ranks to compare
        return KruskalWallis(float("nan"), float("nan"))
    result = stats.kruskal(*samples)
    return KruskalWallis(float(result.statistic), float(result.pvalue))


def undefined_note(groups: list[str], samples: list[np.ndarray]) -> str:
    """What a model's degenerate but legal rewards leave undefined, and why ("" when nothing is): a group of one
    has no variance; a constant group has a zero one (Welch's weights n / s^2 divide by it)."""
    small = [f"{g} (n = {s.size})" for g, s in zip(groups, samples, strict=True) if s.size < 2]
    constant = [g for g, s in zip(groups, samples, strict=True) if s.size >= 2 and np.ptp(s) == 0.0]
    every = np.concatenate(samples)
    if np.ptp(every) == 0.0:
        return (f"every reward equals {every[0]:g}: no variance at all, so every test, effect size and interval "
                "is undefined")
    parts = []
    if small:
        parts.append(f"fewer than 2 rewards in {', '.join(small)}: Welch's ANOVA and Games-Howell pairs with it "
                     "are undefined (the gap's CIs use Tukey-Kramer)")
    if constant and len(constant) + len(small) == len(samples):
        parts.append("rewards are constant within every group: no within-group variance, so ANOVA, Welch, Tukey, "
                     "Games-Howell, the effect sizes and the gap are undefined")
    elif constant:
        parts.append(f"rewards constant in {', '.join(constant)}: Welch's ANOVA is undefined (zero variance), and "
                     "so are Games-Howell pairs of two constant groups (the gap's CIs then use Tukey-Kramer)")
    return "; ".join(parts)
