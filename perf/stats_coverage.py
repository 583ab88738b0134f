"""Coverage, size and power of the fairness statistics by seeded simulation with a known truth.

Each data set draws k groups with known means (shifts in noise SDs), sizes, SDs and noise (normal or t3, scaled so
that every group's SD is as stated) and runs `rmeval.benchmarks.fairness.stats.gaps.gap_analysis` (the scale-free
gap's and NMGD's 95% CIs: simultaneous Games-Howell intervals) and the one-way ANOVA and Welch tests at 0.05. It
reports the share of data sets whose CI holds the true value (coverage), how many CIs miss their own estimate, and
each test's rejection rate (its size when the groups are equal). tests/test_stats_gaps.py runs `simulate` on a few
small scenarios; this script runs the full table (CONTRIBUTING.md).

Usage: python perf/stats_coverage.py [--data-sets 400] [--seed 0]    The last line of stdout is one JSON object.
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
    noise: str = "normal"  # normal or t3
    sds: tuple[float, ...] | None = None  # group SDs (default 1)


SCENARIOS = (
    Scenario("equal, 3 x 40", (0.0,) * 3, (40,) * 3),
    Scenario("equal, 3 x 15", (0.0,) * 3, (15,) * 3),
    Scenario("equal, 8 x 20-60", (0.0,) * 8, (20, 25, 30, 35, 40, 45, 50, 60)),
    Scenario("equal, 6, unequal n and SDs", (0.0,) * 6, (12, 80, 30, 45, 20, 60), sds=(0.5, 2.0, 1.0, 1.5, 0.7, 1.0)),
    Scenario("equal, 5 x 50, t3", (0.0,) * 5, (50,) * 5, "t3"),
    Scenario("near-equal, 4, 0 / 0.05 / 0.1 / 0.1", (0.0, 0.05, 0.1, 0.1), (60,) * 4),
    Scenario("shifts 0 / 0.25 / 0.5, 3 x 40", (0.0, 0.25, 0.5), (40,) * 3),
    Scenario("shifts 0 / 0 / 0.2 / 0.6, 4 x 60, t3", (0.0, 0.0, 0.2, 0.6), (60,) * 4, "t3"),
    Scenario("shifts up to 0.3, 8 x 150", tuple(np.linspace(0.0, 0.3, 8)), (150,) * 8),
    Scenario("shifts 0 / 0.4 / 0.1 / 0.8 / 0.2, unequal n and SDs", (0.0, 0.4, 0.1, 0.8, 0.2), (25, 90, 40, 15, 60),
             sds=(1.0, 2.0, 0.5, 1.0, 1.5)),
)
LOCATION = 3.0  # the rewards' common location: NMGD divides by the mean of the group means


def simulate(scenario: Scenario, data_sets: int, seed: int) -> dict[str, float]:
    """Coverage of the gap and NMGD CIs, CIs missing their estimate, and the tests' rejection rates at 0.05."""
    from rmeval.benchmarks.fairness.stats import gaps, oneway

    rng = np.random.default_rng(seed)
    sds = np.array(scenario.sds or (1.0,) * len(scenario.means))
    sizes = np.array(scenario.sizes)
    means = np.array(scenario.means)
    true_sd = np.sqrt(((sizes - 1) * sds**2).sum() / (sizes.sum() - sizes.size))  # the pooled SD's target
    true_gap = np.ptp(means) / true_sd
    true_nmgd = np.ptp(means) / (LOCATION + means.mean()) * 100.0
    t3_scale = 1.0 / np.sqrt(3.0)  # a t3 variable has SD sqrt(3)
    groups = [f"g{i}" for i in range(means.size)]
    counts = {"gap": 0, "nmgd": 0, "outside": 0, "anova": 0, "welch": 0}
    for index in range(data_sets):
        samples = [LOCATION + m + s * (rng.standard_t(3, n) * t3_scale if scenario.noise == "t3" else
                                       rng.normal(0.0, 1.0, n)) for m, n, s in zip(means, sizes, sds, strict=True)]
        result = gaps.gap_analysis("m", groups, samples, n_permutations=1, seed=index)  # the CIs permute nothing
        counts["gap"] += result.gap_ci_low <= true_gap <= result.gap_ci_high
        counts["nmgd"] += result.nmgd_ci_low <= true_nmgd <= result.nmgd_ci_high
        counts["outside"] += not result.gap_ci_low <= result.scale_free_gap <= result.gap_ci_high
        counts["outside"] += not result.nmgd_ci_low <= result.nmgd_percent <= result.nmgd_ci_high
        counts["anova"] += oneway.classic_anova(samples).p_value < 0.05
        counts["welch"] += oneway.welch_anova(samples).p_value < 0.05
    return {"gap_coverage": counts["gap"] / data_sets, "nmgd_coverage": counts["nmgd"] / data_sets,
            "estimate_outside": counts["outside"], "anova_rejects": counts["anova"] / data_sets,
            "welch_rejects": counts["welch"] / data_sets}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-sets", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = {}
    print("| scenario | gap CI coverage | NMGD CI coverage | CIs missing their estimate | ANOVA rejects | "
          "Welch rejects |\n|---|---:|---:|---:|---:|---:|")
    for index, scenario in enumerate(SCENARIOS):
        row = simulate(scenario, args.data_sets, args.seed + index)
        rows[scenario.name] = row
        print(f"| {scenario.name} | {100 * row['gap_coverage']:.1f}% | {100 * row['nmgd_coverage']:.1f}% | "
              f"{row['estimate_outside']} | {100 * row['anova_rejects']:.1f}% | {100 * row['welch_rejects']:.1f}% |",
              flush=True)
    print(json.dumps({"data_sets": args.data_sets, "seed": args.seed, "seconds": round(time.perf_counter() - start, 1),
                      "scenarios": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
