"""Coverage, width, size and power of the fairness statistics by seeded simulation with a known truth.

Each data set draws k groups with known means (shifts in noise SDs), sizes, SDs and noise (normal, t3 or skewed: a
centred exponential, skewness 2; scaled so that every group's SD is as stated) and runs
`rmeval.benchmarks.fairness.stats.gaps.gap_analysis` (the scale-free gap's and NMGD's 95% CIs, `gap_intervals`) and
the one-way ANOVA and Welch tests at 0.05. It reports the share of data sets whose CI holds the true value
(coverage), how many CIs miss their own estimate, the CIs' mean width over the spread of the estimate itself (its
2.5-97.5 % range over the data sets: about 1 for an interval as narrow as the estimate's own noise), and each test's
rejection rate (its size when the groups are equal). tests/test_stats_gaps.py runs `simulate` on a few small
scenarios; this script runs the full table (CONTRIBUTING.md).

`--grid` sweeps configurations instead, in search of the worst coverage: k 2, 3, 4, 6, 8 groups of n 12, 40, 150
(normal noise, SD 1), the range at 0 to 10 pair SEs (sqrt(2 / n)), the groups one off the others, in two clusters,
evenly spaced, the extremes around a middle cluster, or one low and a pair high; each configuration's data sets
through `gap_intervals.scale_free` at once (as the calibration runs it), from their sufficient statistics.

Usage: python perf/stats_coverage.py [--data-sets 1000] [--seed 0] [--grid]
The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scenario:
    name: str
    means: tuple[float, ...]  # group means, in noise SDs
    sizes: tuple[int, ...]
    noise: str = "normal"  # normal, t3 or skewed
    sds: tuple[float, ...] | None = None  # group SDs (default 1)


SIX_AT_HALF = (0.0, *(0.45,) * 6, 0.9)  # extremes 2 pair-SEs (n = 40) from a cluster of six: the upper bound's worst
SCENARIOS = (
    Scenario("equal, 3 x 40", (0.0,) * 3, (40,) * 3),
    Scenario("equal, 3 x 15", (0.0,) * 3, (15,) * 3),
    Scenario("equal, 6 x 12", (0.0,) * 6, (12,) * 6),
    Scenario("equal, 8 x 20-60", (0.0,) * 8, (20, 25, 30, 35, 40, 45, 50, 60)),
    Scenario("equal, 6, unequal n and SDs", (0.0,) * 6, (12, 80, 30, 45, 20, 60), sds=(0.5, 2.0, 1.0, 1.5, 0.7, 1.0)),
    Scenario("equal, 5 x 50, t3", (0.0,) * 5, (50,) * 5, "t3"),
    Scenario("equal, 6 x 12, skewed", (0.0,) * 6, (12,) * 6, "skewed"),
    Scenario("near-equal, 4, 0 / 0.05 / 0.1 / 0.1", (0.0, 0.05, 0.1, 0.1), (60,) * 4),
    Scenario("shifts 0 / 0.25 / 0.5, 3 x 40", (0.0, 0.25, 0.5), (40,) * 3),
    Scenario("shifts 0 / 0.25 / 0.5, 3 x 40, skewed", (0.0, 0.25, 0.5), (40,) * 3, "skewed"),
    Scenario("shifts 0 / 0 / 0.2 / 0.6, 4 x 60, t3", (0.0, 0.0, 0.2, 0.6), (60,) * 4, "t3"),
    Scenario("shifts up to 0.3, 8 x 150", tuple(np.linspace(0.0, 0.3, 8)), (150,) * 8),
    Scenario("shifts up to 0.3, 8 x 150, t3", tuple(np.linspace(0.0, 0.3, 8)), (150,) * 8, "t3"),
    Scenario("shifts up to 0.3, 8 x 150, skewed", tuple(np.linspace(0.0, 0.3, 8)), (150,) * 8, "skewed"),
    Scenario("shifts 0 / six at 0.45 / 0.9, 8 x 40", SIX_AT_HALF, (40,) * 8),
    Scenario("shifts 0 / 0.4 / 0.4 / 0.4 / 0.8, 5 x 40, skewed", (0.0, 0.4, 0.4, 0.4, 0.8), (40,) * 5, "skewed"),
    Scenario("two clusters 0 / 0.3, 8 x 40", (0.0,) * 4 + (0.3,) * 4, (40,) * 8),
    Scenario("shift 1.5, 2 x 12", (0.0, 1.5), (12,) * 2),
    Scenario("shifts 0 / 1 / 2, 3 x 12", (0.0, 1.0, 2.0), (12,) * 3),
    Scenario("shifts 0 / 0.4 / 0.1 / 0.8 / 0.2, unequal n and SDs", (0.0, 0.4, 0.1, 0.8, 0.2), (25, 90, 40, 15, 60),
             sds=(1.0, 2.0, 0.5, 1.0, 1.5)),
)
PAPER_LIKE = "shifts up to 0.3, 8 x 150"
LOCATION = 3.0  # the rewards' common location: NMGD divides by the mean of the group means


def noise(kind: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """Standardised noise (mean 0, SD 1): normal, t with 3 df, or a centred exponential (skewness 2)."""
    if kind == "t3":
        return rng.standard_t(3, size) / np.sqrt(3.0)  # a t3 variable has SD sqrt(3)
    if kind == "skewed":
        return rng.exponential(1.0, size) - 1.0
    return rng.normal(0.0, 1.0, size)


def simulate(scenario: Scenario, data_sets: int, seed: int) -> dict[str, float]:
    """Coverage and width of the gap and NMGD CIs, CIs missing their estimate, and the tests' rejection rates at
    0.05."""
    from rmeval.benchmarks.fairness.stats import gaps, oneway

    rng = np.random.default_rng(seed)
    sds = np.array(scenario.sds or (1.0,) * len(scenario.means))
    sizes = np.array(scenario.sizes)
    means = np.array(scenario.means)
    true_sd = np.sqrt(((sizes - 1) * sds**2).sum() / (sizes.sum() - sizes.size))  # the pooled SD's target
    true_gap = np.ptp(means) / true_sd
    true_nmgd = np.ptp(means) / (LOCATION + means.mean()) * 100.0
    groups = [f"g{i}" for i in range(means.size)]
    counts = {"gap": 0, "nmgd": 0, "outside": 0, "anova": 0, "welch": 0}
    estimates: dict[str, list[float]] = {"gap": [], "nmgd": [], "gap_width": [], "nmgd_width": []}
    for index in range(data_sets):
        samples = [LOCATION + m + s * noise(scenario.noise, n, rng) for m, n, s in zip(means, sizes, sds, strict=True)]
        result = gaps.gap_analysis("m", groups, samples, n_permutations=1, seed=index)  # the CIs permute nothing
        counts["gap"] += result.gap_ci_low <= true_gap <= result.gap_ci_high
        counts["nmgd"] += result.nmgd_ci_low <= true_nmgd <= result.nmgd_ci_high
        counts["outside"] += not result.gap_ci_low <= result.scale_free_gap <= result.gap_ci_high
        counts["outside"] += not result.nmgd_ci_low <= result.nmgd_percent <= result.nmgd_ci_high
        counts["anova"] += oneway.classic_anova(samples).p_value < 0.05
        counts["welch"] += oneway.welch_anova(samples).p_value < 0.05
        estimates["gap"].append(result.scale_free_gap)
        estimates["nmgd"].append(result.nmgd_percent)
        estimates["gap_width"].append(result.gap_ci_high - result.gap_ci_low)
        estimates["nmgd_width"].append(result.nmgd_ci_high - result.nmgd_ci_low)
    return {"gap_coverage": counts["gap"] / data_sets, "nmgd_coverage": counts["nmgd"] / data_sets,
            "estimate_outside": counts["outside"], "gap_width_ratio": width_ratio(estimates["gap_width"],
                                                                                 estimates["gap"]),
            "nmgd_width_ratio": width_ratio(estimates["nmgd_width"], estimates["nmgd"]),
            "anova_rejects": counts["anova"] / data_sets, "welch_rejects": counts["welch"] / data_sets}


def width_ratio(widths: list[float], estimates: list[float]) -> float:
    """Mean CI width over the 2.5-97.5 % range of the estimate across data sets."""
    low, high = np.percentile(estimates, [2.5, 97.5])
    return float(np.mean(widths) / (high - low))


def configurations(k: int, spread: float) -> list[tuple[str, tuple[float, ...]]]:
    """The grid's patterns of k group means with range `spread`."""
    found = [("one off", (0.0,) * (k - 1) + (spread,))]
    if k > 2:
        found += [("two clusters", (0.0,) * (k // 2) + (spread,) * (k - k // 2)),
                  ("even", tuple(np.linspace(0.0, spread, k)))]
    if k > 3:
        found += [("extremes around a cluster", (0.0, *(spread / 2,) * (k - 2), spread)),
                  ("one low, a pair high", (0.0, *(0.8 * spread,) * (k - 3), spread, spread))]
    return found


def grid(data_sets: int, seed: int) -> list[dict[str, object]]:
    """Coverage of the scale-free gap's CI over the configurations of `configurations`, worst first."""
    from rmeval.benchmarks.fairness.stats import gap_intervals

    rows = []
    rng = np.random.default_rng(seed)
    for k in (2, 3, 4, 6, 8):
        for n in (12, 40, 150):
            sizes = np.full(k, float(n))
            for multiple in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0):
                for name, means in configurations(k, multiple * np.sqrt(2.0 / n)):
                    if multiple == 0.0 and name != "one off":
                        continue
                    sample_means = np.array(means) + rng.normal(0.0, 1.0, (data_sets, k)) / np.sqrt(n)
                    variances = rng.chisquare(n - 1, (data_sets, k)) / (n - 1)
                    low, high = gap_intervals.scale_free(sample_means, variances, sizes, np.full(data_sets, 3.0),
                                                         np.zeros(data_sets, dtype=bool), 0.05,
                                                         gap_intervals.make_draws(rng, k))
                    truth = np.ptp(means)  # the pooled SD is 1
                    rows.append({"k": k, "n": n, "range_in_pair_ses": multiple, "pattern": name,
                                 "coverage": float(np.mean((low <= truth) & (truth <= high))),
                                 "lower_misses": float(np.mean(low > truth)),
                                 "upper_misses": float(np.mean(high < truth))})
    return sorted(rows, key=lambda row: row["coverage"])


def main(argv: list[str] | None = None) -> int:
    from _runs import cpu_name  # perf/ is on the path when run as a script (tests import only `simulate`)

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-sets", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grid", action="store_true", help="sweep configurations for the worst coverage")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.grid:
        rows = grid(args.data_sets, args.seed)
        print("| k | n | range (pair SEs) | pattern | coverage | lower misses | upper misses |\n|---:|---:|---:|---|"
              "---:|---:|---:|")
        for row in rows[:12]:
            print(f"| {row['k']} | {row['n']} | {row['range_in_pair_ses']:g} | {row['pattern']} | "
                  f"{100 * row['coverage']:.1f}% | {100 * row['lower_misses']:.1f}% | {100 * row['upper_misses']:.1f}% |")
        print(json.dumps({"data_sets": args.data_sets, "seed": args.seed, "cpu": cpu_name(), "configurations": len(rows),
                          "seconds": round(time.perf_counter() - start, 1), "worst": rows[:12]}))
        return 0
    rows = {}
    print("| scenario (k groups, n each) | gap CI coverage | NMGD CI coverage | CIs missing their estimate | "
          "gap CI width / spread | NMGD CI width / spread | ANOVA rejects | Welch rejects |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|")
    for index, scenario in enumerate(SCENARIOS):
        row = simulate(scenario, args.data_sets, args.seed + index)
        rows[scenario.name] = row
        print(f"| {scenario.name} | {100 * row['gap_coverage']:.1f}% | {100 * row['nmgd_coverage']:.1f}% | "
              f"{row['estimate_outside']} | {row['gap_width_ratio']:.2f} | {row['nmgd_width_ratio']:.2f} | "
              f"{100 * row['anova_rejects']:.1f}% | {100 * row['welch_rejects']:.1f}% |", flush=True)
    print(json.dumps({"data_sets": args.data_sets, "seed": args.seed, "cpu": cpu_name(),
                      "seconds": round(time.perf_counter() - start, 1), "scenarios": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
