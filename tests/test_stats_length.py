"""Length-controlled ANCOVA against statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.stats.length import ancova
from rmeval.errors import RmevalError


def _data(offset: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(9)
    sizes = [20, 35, 14]
    labels = np.concatenate([np.full(n, g) for g, n in enumerate(sizes)])
    # group 1 writes longer abstracts; reward rises with log length, plus a small true group effect
    tokens = np.concatenate([rng.integers(80, 200, 20), rng.integers(200, 500, 35), rng.integers(60, 300, 14)])
    rewards = offset + 0.8 * np.log(tokens) + np.array([0.0, 0.1, -0.2])[labels] + rng.normal(0, 0.3, labels.size)
    return rewards, labels, tokens.astype(float)


@pytest.mark.parametrize("offset", [0.0, -6.0])
def test_ancova_matches_statsmodels_type2(offset: float) -> None:
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    rewards, labels, tokens = _data(offset)
    result = ancova("m", rewards, labels, tokens, k=3)
    frame = pd.DataFrame({"reward": rewards, "group": labels.astype(str), "log_len": np.log(tokens)})
    fit = smf.ols("reward ~ C(group) + log_len", data=frame).fit()
    table = sm.stats.anova_lm(fit, typ=2)
    assert result.group_f == pytest.approx(table.loc["C(group)", "F"], rel=1e-9)
    assert result.group_p == pytest.approx(table.loc["C(group)", "PR(>F)"], rel=1e-7)
    assert result.length_coef == pytest.approx(fit.params["log_len"], rel=1e-9)
    assert result.length_p == pytest.approx(fit.pvalues["log_len"], rel=1e-7)
    # adjusted means = model predictions for each group at the overall mean log length
    grid = pd.DataFrame({"group": ["0", "1", "2"], "log_len": frame["log_len"].mean()})
    assert result.adjusted_means == pytest.approx(tuple(fit.predict(grid)), rel=1e-9, abs=1e-12)
    raw = frame.groupby("group")["reward"].mean()
    assert result.raw_means == pytest.approx(tuple(raw), rel=1e-12)
    assert result.raw_gap == pytest.approx(raw.max() - raw.min())
    adjusted = np.array(result.adjusted_means)
    assert result.gap_retained_percent == pytest.approx((adjusted.max() - adjusted.min()) / result.raw_gap * 100)


def test_length_explains_a_gap_that_is_only_length() -> None:
    rewards, labels, tokens = _data()
    rewards = 0.8 * np.log(tokens) + np.random.default_rng(0).normal(0, 0.05, labels.size)  # no group effect
    result = ancova("m", rewards, labels, tokens, k=3)
    assert result.gap_retained_percent < 25
    assert result.length_p < 1e-10


def test_constant_length_is_reported() -> None:
    rewards, labels, _ = _data()
    with pytest.raises(RmevalError, match="same n_tokens"):
        ancova("m", rewards, labels, np.full(labels.size, 100.0), k=3)


def test_length_collinear_with_group_is_reported() -> None:
    rewards, labels, _ = _data()
    tokens = np.array([100.0, 200.0, 300.0])[labels]
    with pytest.raises(RmevalError, match="collinear"):
        ancova("m", rewards, labels, tokens, k=3)
