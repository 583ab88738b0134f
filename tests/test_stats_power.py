"""Power, minimum detectable effects and Benjamini-Hochberg q-values against statsmodels; Cohen's f and eta^2 by the
textbook formulas (Cohen 1988)."""

from __future__ import annotations

import numpy as np
import pytest
from rmeval.benchmarks.fairness.corpus.paired import repeated_measures_f
from rmeval.benchmarks.fairness.stats import oneway, power
from rmeval.multiplicity import bh_q_values
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import FTestAnovaPower, TTestPower


@pytest.mark.parametrize(("nobs", "k", "alpha"), [(90, 3, 0.05), (16000, 8, 0.05), (240, 8, 0.01), (60, 2, 0.05),
                                                   (24, 4, 0.1)])
def test_mde_and_power_equal_statsmodels_ftestanovapower(nobs: int, k: int, alpha: float) -> None:
    reference = FTestAnovaPower()
    mde = power.anova_mde(nobs, k, alpha)
    assert mde == pytest.approx(reference.solve_power(effect_size=None, nobs=nobs, alpha=alpha, power=0.8,
                                                      k_groups=k), rel=1e-6)
    for f in (0.05, 0.2, 0.5):
        assert power.anova_power(f, nobs, k, alpha) == pytest.approx(reference.power(f, nobs, alpha, k_groups=k),
                                                                     abs=1e-9)
    assert power.anova_power(mde, nobs, k, alpha) == pytest.approx(0.8, abs=1e-6)


@pytest.mark.parametrize(("d_z", "n"), [(0.3, 40), (0.5, 20), (0.1, 400)])
def test_paired_power_with_two_groups_is_the_paired_t_tests(d_z: float, n: int) -> None:
    # two groups: effects +-delta/2 over the residual SD sd_d / sqrt(2) give f = d_z / sqrt(2), lambda = d_z^2 n
    assert power.paired_power(d_z / np.sqrt(2), n, 2, 0.05) == pytest.approx(
        TTestPower().power(d_z, n, 0.05, alternative="two-sided"), abs=1e-4)


def test_repeated_measures_f_is_the_textbook_one() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=(30, 3)) + np.array([0.0, 0.3, 0.6]) + rng.normal(size=(30, 1))
    effects = values.mean(axis=0) - values.mean()
    residual = values - values.mean(axis=1, keepdims=True) - values.mean(axis=0, keepdims=True) + values.mean()
    assert repeated_measures_f(values) == pytest.approx(np.sqrt((effects**2).mean() / (residual**2).sum() * 58))


def test_cohens_f_and_eta_squared_by_the_textbook_formulas() -> None:
    rng = np.random.default_rng(1)
    samples = [rng.normal(m, 1.0, n) for m, n in ((0.0, 20), (0.4, 35), (0.1, 15))]
    anova = oneway.classic_anova(samples)
    values = np.concatenate(samples)
    ss_total = ((values - values.mean()) ** 2).sum()
    ss_between = sum(s.size * (s.mean() - values.mean()) ** 2 for s in samples)
    eta_sq = ss_between / ss_total
    assert anova.eta_sq == pytest.approx(eta_sq)
    assert anova.cohens_f == pytest.approx(np.sqrt(eta_sq / (1 - eta_sq)))
    # f from a reported F and its dfs (the paper's Table 1): eta^2 = F df1 / (F df1 + df2)
    assert power.cohens_f_from_anova(anova.f_statistic, anova.df_between, anova.df_within) == pytest.approx(
        anova.cohens_f)


def test_the_papers_effects_come_from_table_1() -> None:
    from rmeval.benchmarks.fairness.catalogue import BENCHMARK
    from rmeval.benchmarks.fairness.reproduction import paper_effects
    from rmeval.run_outputs.context import REPOSITORY

    effects = paper_effects([REPOSITORY / path for path in BENCHMARK.published])
    assert effects["ArmoRM-Llama3-8B-v0.1"] == pytest.approx(np.sqrt(70.44 * 7 / 15992))
    assert len(effects) == 8


@pytest.mark.parametrize("seed", range(4))
def test_bh_q_values_equal_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.3, 12)
    p[3] = p[5]  # a tie
    assert bh_q_values(p) == pytest.approx(multipletests(p, method="fdr_bh")[1])


def test_bh_leaves_undefined_p_values_out() -> None:
    q = bh_q_values([0.01, float("nan"), 0.04])
    assert np.isnan(q[1]) and q[0] == pytest.approx(multipletests([0.01, 0.04], method="fdr_bh")[1][0])
