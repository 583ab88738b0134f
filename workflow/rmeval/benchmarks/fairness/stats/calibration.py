"""Calibration: the instrument proves itself on the run's own rewards.

Per model, its rewards with the group labels shuffled are a null with the model's own reward distribution and the
run's group sizes. R shuffles (the null) and R shuffles with a known shift added to the first group (at the run's
minimum detectable effect, and at the paper's NMGD for that model) rerun the omnibus tests (the one-way ANOVA and
Welch's ANOVA) and the scale-free gap's 95% CI (stats.gap_intervals, vectorised over the replicates with the
model's own CI draws, so each replicate's CI is the one gap_analysis gives its data), so the table shows each test's
rejection rate (its size under the null, its power under a shift, with a Clopper-Pearson interval for the Monte
Carlo error) beside the analytic power, and how often the CI covered the planted gap.

Truth of a replicate: the shuffled groups share one distribution, so the planted shift delta is the whole range of
the group means; the scale-free truth is delta over the rewards' SD. A shift delta in one group of share pi of the
rewards is Cohen's f = delta sqrt(pi (1 - pi)) / SD.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rmeval.benchmarks.fairness.stats import gap_intervals, oneway, power
from rmeval.intervals import CONFIDENCE

_CHUNK = 64  # replicates per vectorised block: memory ~ _CHUNK x N floats, a few times over
TESTS = ("anova", "welch")


@dataclass(frozen=True)
class Planted:
    scenario: str  # shuffled (the null), mde, paper_nmgd ("null" would read back as NaN)
    shift: float  # added to the first group's rewards (reward units)
    cohens_f: float
    scale_free_gap: float  # the truth the gap CI should cover


def planted_effects(samples: list[np.ndarray], alpha: float, paper_nmgd: float | None) -> list[Planted]:
    """The null, the run's MDE and (when given and meaningful) the paper's NMGD, as shifts of the first group."""
    rewards = np.concatenate(samples)
    n, k = rewards.size, len(samples)
    sd = float(rewards.std(ddof=1))
    share = samples[0].size / n
    per_f = np.sqrt(share * (1.0 - share)) / sd  # Cohen's f per unit of shift

    def planted(scenario: str, shift: float) -> Planted:
        return Planted(scenario, shift, float(shift * per_f), float(shift / sd))

    effects = [planted("shuffled", 0.0), planted("mde", power.anova_mde(n, k, alpha) / per_f)]
    centre = float(np.mean([s.mean() for s in samples]))
    if paper_nmgd is not None and np.isfinite(paper_nmgd):
        # the shuffled group means all equal `centre` but the first, centre + delta: NMGD = delta / (centre +
        # delta / k) * 100, so delta = P centre / (100 - P / k); meaningless unless that delta is positive
        denominator = 100.0 - paper_nmgd / k
        shift = paper_nmgd * centre / denominator if denominator != 0 else float("nan")
        if np.isfinite(shift) and shift > 0:
            effects.append(planted("paper_nmgd", shift))
    return effects


def _shifted(sums: list[np.ndarray], size: float, shift: float) -> list[np.ndarray]:
    """The first group's power sums sum((x + shift)^p), p = 1..4, from those of x (binomial expansion): every planted
    effect reuses one set of shuffles (common random numbers, and a quarter of the work)."""
    s1, s2, s3, s4 = (column[:, 0] for column in sums)
    d = shift
    shifted = [s1 + size * d, s2 + 2 * d * s1 + size * d**2, s3 + 3 * d * s2 + 3 * d**2 * s1 + size * d**3,
               s4 + 4 * d * s3 + 6 * d**2 * s2 + 4 * d**3 * s1 + size * d**4]
    out = [column.copy() for column in sums]
    for column, first in zip(out, shifted, strict=True):
        column[:, 0] = first
    return out


def _statistics(sums: list[np.ndarray], sizes: np.ndarray, draws: gap_intervals.Draws,
                confidence: float) -> dict[str, np.ndarray]:
    """Per replicate row: each test's p-value and the scale-free gap's CI (stats.gap_intervals, as gap_analysis
    computes it), from the groups' power sums."""
    from scipy import stats

    k, n_total = sizes.size, sizes.sum()
    means = sums[0] / sizes
    ss = sums[1] - sizes * means**2  # within-group sums of squares, per group
    fourth = (sums[3] - 4 * means * sums[2] + 6 * means**2 * sums[1] - 3 * sizes * means**4).sum(axis=1)
    ss_within = ss.sum(axis=1)
    grand = (sums[0].sum(axis=1) / n_total)[:, None]
    ss_between = (sizes * (means - grand) ** 2).sum(axis=1)
    f_statistic = (ss_between / (k - 1)) / (ss_within / (n_total - k))
    variances = ss / (sizes - 1)
    pooled = (variances <= 0.0).sum(axis=1) >= 2  # two constant groups: Games-Howell undefined, Tukey-Kramer
    low, high = gap_intervals.scale_free(means, variances, sizes, n_total * fourth / ss_within**2, pooled,
                                         1.0 - confidence, draws)
    return {"anova": stats.f.sf(f_statistic, k - 1, n_total - k), "welch": oneway.welch_test(means, variances, sizes)[1],
            "gap_low": low, "gap_high": high}


def replicate(samples: list[np.ndarray], planted: list[Planted], replicates: int, rng: np.random.Generator,
              draws: gap_intervals.Draws, confidence: float = CONFIDENCE) -> list[dict[str, np.ndarray]]:
    """Per planted effect, per replicate: each test's p-value and the gap CI (keys anova, welch, gap_low,
    gap_high). One set of label shuffles serves every planted effect; `draws`: the model's CI draws
    (gaps.interval_draws), so a replicate's CI is the one gap_analysis gives its data."""
    rewards = np.concatenate(samples)
    centred = rewards - rewards.mean()
    sizes = np.array([s.size for s in samples], dtype=np.float64)
    offsets = np.cumsum([0] + [s.size for s in samples[:-1]])
    out: list[dict[str, list[np.ndarray]]] = [{} for _ in planted]
    for start in range(0, replicates, _CHUNK):
        rows = min(_CHUNK, replicates - start)
        shuffled = rng.permuted(np.tile(centred, (rows, 1)), axis=1)
        square = shuffled * shuffled
        sums = [np.add.reduceat(v, offsets, axis=1) for v in (shuffled, square, square * shuffled, square * square)]
        for target, effect in zip(out, planted, strict=True):
            result = _statistics(_shifted(sums, sizes[0], effect.shift), sizes, draws, confidence)
            for key, values in result.items():
                target.setdefault(key, []).append(values)
    return [{key: np.concatenate(values) for key, values in target.items()} for target in out]


def rate_interval(hits: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Clopper-Pearson interval of a rejection rate: exact, valid at 0 and 1, and it holds hits / trials."""
    from scipy.stats import binomtest

    interval = binomtest(hits, trials).proportion_ci(confidence_level=confidence, method="exact")
    return float(interval.low), float(interval.high)


def calibrate_model(model: str, samples: list[np.ndarray], replicates: int, alpha: float,
                    paper_nmgd: float | None, rng: np.random.Generator,
                    draws: gap_intervals.Draws) -> list[dict[str, object]]:
    """The calibration rows of one model: per planted effect and test, the rejection rate, its interval, the
    analytic power and the gap CI's coverage of the planted truth (`rng`: the shuffles; `draws`: the model's CI
    draws, gaps.interval_draws)."""
    n, k = sum(s.size for s in samples), len(samples)
    rows = []
    effects = planted_effects(samples, alpha, paper_nmgd)
    for planted, result in zip(effects, replicate(samples, effects, replicates, rng, draws), strict=True):
        covered = (result["gap_low"] <= planted.scale_free_gap) & (planted.scale_free_gap <= result["gap_high"])
        for test in TESTS:
            hits = int((result[test] < alpha).sum())
            low, high = rate_interval(hits, replicates)
            rows.append({"model": model, "test": test, "scenario": planted.scenario, "n": n, "groups": k,
                         "planted_effect": planted.cohens_f, "planted_gap": planted.scale_free_gap,
                         "replicates": replicates, "rejection_rate": hits / replicates, "ci_low": low,
                         "ci_high": high, "analytic_power": power.anova_power(planted.cohens_f, n, k, alpha)
                         if planted.cohens_f > 0 else alpha, "coverage": float(covered.mean())})
    return rows
