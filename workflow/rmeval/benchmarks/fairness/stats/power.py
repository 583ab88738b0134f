"""Power of the omnibus tests: the smallest effect a run could have detected, and its power for a given one.

The one-way ANOVA F test as statsmodels' `FTestAnovaPower` computes it (Cohen 1988, ch. 8): with k groups and N
rewards in all, F ~ noncentral F(k - 1, N - k, lambda = f^2 N) under Cohen's f. The paired design's repeated-measures
F test on n complete pairs of k groups has F ~ noncentral F(k - 1, (n - 1)(k - 1), lambda = f^2 n k), with f the SD
of the group effects over the within-pair residual SD (the parametric counterpart of Friedman's test; for k = 2 it
is the paired t test squared).
"""

from __future__ import annotations

import math

TARGET_POWER = 0.8  # the conventional power an MDE is stated at (Cohen 1988)


def _power(f: float, df_num: float, df_den: float, noncentrality_per_f2: float, alpha: float) -> float:
    from scipy import stats

    if not (df_num > 0 and df_den > 0) or math.isnan(f):
        return float("nan")
    critical = stats.f.isf(alpha, df_num, df_den)
    return float(stats.ncf.sf(critical, df_num, df_den, f * f * noncentrality_per_f2))


def _mde(df_num: float, df_den: float, noncentrality_per_f2: float, alpha: float, power: float) -> float:
    """The Cohen's f at which the test reaches `power` (power rises monotonically with f)."""
    from scipy import optimize

    if not (df_num > 0 and df_den > 0):
        return float("nan")

    def gap(f: float) -> float:
        return _power(f, df_num, df_den, noncentrality_per_f2, alpha) - power

    high = 1.0
    while gap(high) < 0:
        high *= 2.0
    return float(optimize.brentq(gap, 1e-9, high, xtol=1e-10))


def anova_power(f: float, nobs: int, k: int, alpha: float) -> float:
    """Power of the one-way ANOVA F test at Cohen's f (statsmodels FTestAnovaPower.power)."""
    return _power(f, k - 1, nobs - k, nobs, alpha)


def anova_mde(nobs: int, k: int, alpha: float, power: float = TARGET_POWER) -> float:
    """The smallest Cohen's f the one-way ANOVA detects with `power` (FTestAnovaPower.solve_power(effect_size=None,
    nobs=N, alpha, power, k_groups=k))."""
    return _mde(k - 1, nobs - k, nobs, alpha, power)


def paired_power(f: float, n_pairs: int, k: int, alpha: float) -> float:
    return _power(f, k - 1, (n_pairs - 1) * (k - 1), n_pairs * k, alpha)


def paired_mde(n_pairs: int, k: int, alpha: float, power: float = TARGET_POWER) -> float:
    return _mde(k - 1, (n_pairs - 1) * (k - 1), n_pairs * k, alpha, power)


def cohens_f_from_anova(f_statistic: float, df_between: float, df_within: float) -> float:
    """Cohen's f of a reported one-way ANOVA: eta^2 = F df1 / (F df1 + df2), f = sqrt(eta^2 / (1 - eta^2)) =
    sqrt(F df1 / df2)."""
    return math.sqrt(f_statistic * df_between / df_within)
