"""One-way tests and effect sizes against scipy / statsmodels / direct formulas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.stats import oneway
from scipy import stats


def _samples(kind: str) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    if kind == "unequal_sizes_and_variances":
        return [rng.normal(0.0, 1.0, 12), rng.normal(0.8, 3.0, 30), rng.normal(-0.4, 0.3, 7), rng.normal(0.2, 1.5, 19)]
    if kind == "negative_mean":
        return [rng.normal(-5.0, 1.0, 20), rng.normal(-5.6, 1.2, 25), rng.normal(-4.7, 0.8, 15)]
    if kind == "near_zero_mean":
        return [rng.normal(0.01, 0.5, 40), rng.normal(-0.02, 0.5, 35), rng.normal(0.005, 0.7, 28)]
    raise ValueError(kind)


KINDS = ["unequal_sizes_and_variances", "negative_mean", "near_zero_mean"]


def _long(samples: list[np.ndarray]) -> pd.DataFrame:
    return pd.DataFrame(
        {"y": np.concatenate(samples), "g": np.concatenate([[f"g{i}"] * s.size for i, s in enumerate(samples)])}
    )


@pytest.mark.parametrize("kind", KINDS)
def test_classic_anova_matches_scipy_and_statsmodels(kind: str) -> None:
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    samples = _samples(kind)
    result = oneway.classic_anova(samples)
    reference = stats.f_oneway(*samples)
    assert result.f_statistic == pytest.approx(reference.statistic, rel=1e-10)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-8)
    table = sm.stats.anova_lm(smf.ols("y ~ C(g)", data=_long(samples)).fit(), typ=1)
    ss_between, ss_within = table["sum_sq"].iloc[0], table["sum_sq"].iloc[1]
    ms_within = table["mean_sq"].iloc[1]
    assert result.ss_between == pytest.approx(ss_between, rel=1e-10)
    assert result.ss_within == pytest.approx(ss_within, rel=1e-10)
    eta_sq = ss_between / (ss_between + ss_within)
    assert result.eta_sq == pytest.approx(eta_sq, rel=1e-10)
    k = len(samples)
    assert result.omega_sq == pytest.approx(
        (ss_between - (k - 1) * ms_within) / (ss_between + ss_within + ms_within), rel=1e-10
    )
    assert result.cohens_f == pytest.approx(np.sqrt(eta_sq / (1 - eta_sq)), rel=1e-10)


def test_effect_sizes_on_hand_made_data() -> None:
    # groups {1,2,3}, {4,5,6}: grand mean 3.5, SSB = 3*(1.5^2)*2 = 13.5, SSW = 2 + 2 = 4
    result = oneway.classic_anova([np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])])
    assert result.ss_between == pytest.approx(13.5)
    assert result.ss_within == pytest.approx(4.0)
    assert result.f_statistic == pytest.approx(13.5 / (4.0 / 4))
    assert result.eta_sq == pytest.approx(13.5 / 17.5)
    assert result.omega_sq == pytest.approx((13.5 - 1.0) / (17.5 + 1.0))
    assert result.cohens_f == pytest.approx(np.sqrt(13.5 / 4.0))


@pytest.mark.parametrize("kind", KINDS)
def test_welch_anova_matches_statsmodels(kind: str) -> None:
    from statsmodels.stats.oneway import anova_oneway

    samples = _samples(kind)
    result = oneway.welch_anova(samples)
    reference = anova_oneway(samples, use_var="unequal", welch_correction=True)
    assert result.f_statistic == pytest.approx(reference.statistic, rel=1e-10)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-8)
    assert result.df_within == pytest.approx(reference.df[1], rel=1e-10)


def test_welch_anova_with_two_groups_is_the_welch_t_test() -> None:
    a, b = _samples("unequal_sizes_and_variances")[:2]
    result = oneway.welch_anova([a, b])
    t_test = stats.ttest_ind(a, b, equal_var=False)
    assert result.f_statistic == pytest.approx(t_test.statistic**2, rel=1e-10)
    assert result.p_value == pytest.approx(t_test.pvalue, rel=1e-8)


def test_kruskal_wallis_matches_the_tie_corrected_formula() -> None:
    samples = [np.array([1.0, 2.0, 2.0, 5.0]), np.array([3.0, 3.0, 6.0, 7.0, 8.0]), np.array([2.0, 4.0, 9.0])]
    pooled = np.concatenate(samples)
    ranks = stats.rankdata(pooled)
    n = pooled.size
    offsets = np.cumsum([0] + [s.size for s in samples])
    h = 12 / (n * (n + 1)) * sum(ranks[offsets[i] : offsets[i + 1]].sum() ** 2 / s.size
                                 for i, s in enumerate(samples)) - 3 * (n + 1)
    _, tie_counts = np.unique(pooled, return_counts=True)
    h /= 1 - (tie_counts**3 - tie_counts).sum() / (n**3 - n)
    result = oneway.kruskal_wallis(samples)
    assert result.h_statistic == pytest.approx(h, rel=1e-12)
    assert result.p_value == pytest.approx(stats.chi2.sf(h, len(samples) - 1), rel=1e-10)


@pytest.mark.parametrize("kind", KINDS)
def test_describe_gives_t_confidence_intervals(kind: str) -> None:
    for values in _samples(kind):
        summary = oneway.describe("g", values)
        low, high = stats.t.interval(0.95, df=values.size - 1, loc=values.mean(), scale=stats.sem(values))
        assert summary.n == values.size
        assert summary.mean == pytest.approx(values.mean())
        assert summary.std == pytest.approx(pd.Series(values).std())
        assert summary.sem == pytest.approx(stats.sem(values))
        assert (summary.ci_low, summary.ci_high) == pytest.approx((low, high), rel=1e-10)
