"""rmeval fairness-calibrate's statistics: the vectorised replicates equal the one-at-a-time functions, the planted
effects are what they claim, and the rejection rates' intervals are Clopper-Pearson's."""

from __future__ import annotations

import numpy as np
import pytest
from rmeval.benchmarks.fairness.stats import calibration, gaps, oneway
from statsmodels.stats.proportion import proportion_confint


def _samples() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [1.0 + 0.1 * i + rng.normal(0, 1 + 0.2 * i, n) for i, n in enumerate((40, 55, 30, 70))]


def test_vectorised_replicates_equal_the_statistics_one_at_a_time() -> None:
    samples = _samples()
    sizes = [s.size for s in samples]
    planted = [calibration.Planted("x", 0.0, 0.0, 0.0), calibration.Planted("y", 0.7, 0.0, 0.0)]
    results = calibration.replicate(samples, planted, 3, np.random.default_rng(5), gaps.interval_draws(0, "m", 4))
    rewards = np.concatenate(samples)
    shuffled = np.random.default_rng(5).permuted(np.tile(rewards - rewards.mean(), (3, 1)), axis=1)
    for effect, result in zip(planted, results, strict=True):
        for row in range(3):
            values = shuffled[row].copy()
            values[: sizes[0]] += effect.shift
            groups = np.split(values, np.cumsum(sizes)[:-1])
            gap = gaps.gap_analysis("m", list("abcd"), groups, n_permutations=1, seed=0)
            assert result["gap_low"][row] == pytest.approx(gap.gap_ci_low, rel=1e-6)
            assert result["gap_high"][row] == pytest.approx(gap.gap_ci_high, rel=1e-6)
            assert result["anova"][row] == pytest.approx(oneway.classic_anova(groups).p_value, rel=1e-6)
            assert result["welch"][row] == pytest.approx(oneway.welch_anova(groups).p_value, rel=1e-6)


def test_planted_effects_have_the_cohens_f_and_nmgd_they_claim() -> None:
    samples = _samples()
    effects = {e.scenario: e for e in calibration.planted_effects(samples, 0.05, 40.0)}
    assert effects["shuffled"].shift == 0.0
    rewards = np.concatenate(samples)
    sd, share = rewards.std(ddof=1), samples[0].size / rewards.size
    mde = effects["mde"]
    # one group shifted by delta: group-mean SD delta sqrt(pi (1 - pi)) over the SD
    assert mde.cohens_f == pytest.approx(mde.shift * np.sqrt(share * (1 - share)) / sd)
    from rmeval.benchmarks.fairness.stats.power import anova_mde

    assert mde.cohens_f == pytest.approx(anova_mde(rewards.size, 4, 0.05))
    paper = effects["paper_nmgd"]  # group means all at the centre but the first: NMGD = delta / mean of means
    centre = np.mean([s.mean() for s in samples])
    assert paper.shift / (centre + paper.shift / 4) * 100 == pytest.approx(40.0)


def test_rate_interval_is_clopper_pearson_and_holds_the_rate() -> None:
    for hits, trials in ((0, 200), (11, 200), (200, 200)):
        low, high = calibration.rate_interval(hits, trials)
        assert (low, high) == pytest.approx(proportion_confint(hits, trials, method="beta"))
        assert low <= hits / trials <= high


def test_a_calibrated_model_holds_its_level_and_reaches_its_power() -> None:
    rows = calibration.calibrate_model("m", _samples(), 1000, 0.05, None, np.random.default_rng(2),
                                       gaps.interval_draws(0, "m", 4))
    anova = {row["scenario"]: row for row in rows if row["test"] == "anova"}
    assert set(anova) == {"shuffled", "mde"}
    se = np.sqrt(0.05 * 0.95 / 1000)  # within 3 Monte Carlo SEs of the level and of the analytic power
    assert abs(anova["shuffled"]["rejection_rate"] - 0.05) <= 3 * se
    assert abs(anova["mde"]["rejection_rate"] - anova["mde"]["analytic_power"]) <= 3 * np.sqrt(0.8 * 0.2 / 1000)
    assert anova["shuffled"]["coverage"] >= 0.9 and anova["mde"]["coverage"] >= 0.9
