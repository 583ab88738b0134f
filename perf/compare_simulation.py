"""The seeded simulation behind `rmeval compare`'s methods (issue 40; CONTRIBUTING "Which model is better"): size,
coverage and power of every paired comparison, with a known truth, on pairs of models that score the same items
with correlated errors; and the simultaneous coverage of the rank intervals.

- capability items (rmeval.paired_difference): 0/1 items (exact McNemar, Newcombe's interval) and best-of-4 results
  with ties (sign-flip test, MOVER) on 100 / 400 items, a weighted section of three subsets (MOVER sum, sign-flip);
  errors correlated through a Gaussian copula (0/1) or shared draws (best-of-4);
- the fairness gap (stats/gap_difference.py) and Cohen's f: 3 groups x 40 and x 500 papers shared by two models
  whose rewards correlate 0.5, in the three shapes of "equal gaps" (both fair; the same pattern 0 / 0.15 / 0.3 SD;
  mirrored), 8 groups x 30 (the demo) both fair, and the power at 3 x 500 with one model fair and the other's gap
  0.3 SD (groups 0 / 0.15 / 0.3, and 0 / 0 / 0.3);
- ranks (rmeval.ranks): five models, two of them tied, on 400 items.

Rates at 0.05 (the test's size where the truth is 0, its power elsewhere) and 95 % interval coverage; each with its
Monte Carlo standard error in the header. Usage: python perf/compare_simulation.py [--replicates 1000]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _runs import cpu_name
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from rmeval.benchmarks.fairness.stats.gap_difference import (  # noqa: E402
    f_difference,
    f_model,
    gap_difference,
    gap_model,
)
from rmeval.paired_difference import combined_difference, paired_bounded  # noqa: E402
from rmeval.ranks import rank_alpha, rank_intervals  # noqa: E402

Draw = Callable[[np.random.Generator], tuple[object, float]]


def binary(rng: np.random.Generator, n: int, p_a: float, p_b: float, rho: float) -> tuple[list, list]:
    shared = rng.standard_normal(n)
    other = rho * shared + math.sqrt(1 - rho * rho) * rng.standard_normal(n)
    return (shared < norm.ppf(p_a)).astype(float).tolist(), (other < norm.ppf(p_b)).astype(float).tolist()


BEST_OF_FOUR = np.array([0.0, 1 / 3, 0.5, 1.0])


def best_of_four(rng: np.random.Generator, n: int, probs_a, probs_b, share: float) -> tuple[list, list]:
    u = rng.uniform(size=n)
    w = np.where(rng.uniform(size=n) < share, u, rng.uniform(size=n))
    return (BEST_OF_FOUR[np.searchsorted(np.cumsum(probs_a), u)].tolist(),
            BEST_OF_FOUR[np.searchsorted(np.cumsum(probs_b), w)].tolist())


def capability_rows(replicates: int) -> list[tuple[str, float, float]]:
    """(scenario, rejection rate at 0.05, coverage of the true difference)."""
    rows = []
    cases = [("0/1, 100 items, 0.80 vs 0.80, rho 0.5", lambda r: binary(r, 100, 0.8, 0.8, 0.5), 0.0),
             ("0/1, 400 items, 0.80 vs 0.80, rho 0.9", lambda r: binary(r, 400, 0.8, 0.8, 0.9), 0.0),
             ("0/1, 400 items, 0.97 vs 0.97, rho 0.7", lambda r: binary(r, 400, 0.97, 0.97, 0.7), 0.0),
             ("0/1, 400 items, 0.80 vs 0.75, rho 0.7", lambda r: binary(r, 400, 0.8, 0.75, 0.7), 0.05)]
    probs = ([0.3, 0.05, 0.05, 0.6], [0.2, 0.05, 0.05, 0.7])
    mean = [float((BEST_OF_FOUR * np.diff(np.cumsum(p), prepend=0)).sum()) for p in probs]
    cases += [("best-of-4 with ties, 150 prompts, equal", lambda r: best_of_four(r, 150, probs[0], probs[0], 0.6), 0.0),
              ("best-of-4 with ties, 400 prompts, equal", lambda r: best_of_four(r, 400, probs[0], probs[0], 0.6), 0.0),
              ("best-of-4 with ties, 400 prompts, +" + f"{100 * (mean[1] - mean[0]):.1f} pts",
               lambda r: best_of_four(r, 400, probs[1], probs[0], 0.6), mean[1] - mean[0])]
    for name, draw, truth in cases:
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        rejected = covered = 0
        for index in range(replicates):
            a, b = draw(rng)
            diff = paired_bounded(a, b, seed=index)
            low, high = diff.interval.at()
            rejected += diff.p_value < 0.05
            covered += low <= truth <= high
        rows.append((name, rejected / replicates, covered / replicates))
    # a section: three subsets weighted 0.2 / 0.3 / 0.5, equal models
    rng = np.random.default_rng(7)
    rejected = covered = 0
    for index in range(replicates):
        parts = [paired_bounded(*binary(rng, n, p, p, 0.6)) for n, p in ((40, 0.6), (100, 0.85), (250, 0.75))]
        combined = combined_difference(parts, (0.2, 0.3, 0.5), seed=index)
        low, high = combined.interval.at()
        rejected += combined.p_value < 0.05
        covered += low <= 0.0 <= high
    rows.append(("section of 3 subsets (40/100/250 pairs), equal", rejected / replicates, covered / replicates))
    return rows


def fairness_data(rng: np.random.Generator, means_a, means_b, n: int, rho: float = 0.5):
    k = len(means_a)
    labels = np.repeat(np.arange(k), n)
    shared = rng.standard_normal(labels.size)
    other = rho * shared + math.sqrt(1 - rho * rho) * rng.standard_normal(labels.size)
    return np.asarray(means_a)[labels] + shared, np.asarray(means_b)[labels] + other, labels


def _gap(means) -> float:
    return float(max(means) - min(means))


def _f(means) -> float:
    centred = np.asarray(means) - np.mean(means)
    return float(math.sqrt((centred ** 2).mean()))


def fairness_rows(replicates: int) -> list[tuple[str, float, float, float, float]]:
    """(scenario, gap rejection, gap coverage, f rejection, f coverage); unit-variance groups, equal sizes."""
    pattern, mirrored, fair = (0, 0.15, 0.3), (0.3, 0.15, 0), (0, 0, 0)
    cases = [(f"{shape}, 3 x {n}", a, b, n) for n in (40, 500) for shape, a, b in (
        ("both fair", fair, fair), ("same pattern 0/0.15/0.3", pattern, pattern),
        ("mirrored 0/0.15/0.3 vs 0.3/0.15/0", pattern, mirrored))]
    cases += [("both fair, 8 x 30 (the demo's size)", (0,) * 8, (0,) * 8, 30),
              ("power: 0/0.15/0.3 vs fair, 3 x 500", pattern, fair, 500),
              ("power: 0/0/0.3 vs fair, 3 x 500", (0, 0, 0.3), fair, 500)]
    rows = []
    for name, means_a, means_b, n in cases:
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        counts = np.zeros(4)
        truth_gap, truth_f = _gap(means_a) - _gap(means_b), _f(means_a) - _f(means_b)
        for _ in range(replicates):
            a, b, labels = fairness_data(rng, means_a, means_b, n)
            k = len(means_a)
            interval, p_value = gap_difference(gap_model(a, labels, k), gap_model(b, labels, k))
            low, high = interval.at()
            f_interval, f_p = f_difference(f_model(a, labels, k), f_model(b, labels, k))
            f_low, f_high = f_interval.at()
            counts += (p_value < 0.05, low <= truth_gap <= high, f_p < 0.05, f_low <= truth_f <= f_high)
        rows.append((name, *(counts / replicates)))
    return rows


def rank_rows(replicates: int) -> list[tuple[str, float, float]]:
    truth = {"m1": 0.70, "m2": 0.72, "m3": 0.78, "m4": 0.85, "m5": 0.85}
    true_rank = {m: 1 + sum(v > truth[m] for v in truth.values()) for m in truth}
    rng = np.random.default_rng(9)
    held = width = 0.0
    for _ in range(replicates):
        shared = rng.standard_normal(400)
        items = {m: (0.7 * shared + math.sqrt(0.51) * rng.standard_normal(400) < norm.ppf(p)).astype(float).tolist()
                 for m, p in truth.items()}
        alpha = rank_alpha(0.05, len(truth))
        ranks = rank_intervals(list(truth), {m: float(np.mean(v)) for m, v in items.items()}, True,
                               lambda a, b, items=items, alpha=alpha:
                               paired_bounded(items[a], items[b]).interval.with_alpha(alpha))
        held += all(r.rank_low <= true_rank[r.model] <= r.rank_high for r in ranks)
        width += float(np.mean([r.rank_high - r.rank_low for r in ranks]))
    return [("5 models (0.70/0.72/0.78/0.85/0.85), 400 items", held / replicates, width / replicates)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    r = args.replicates
    print(f"Seeded, {r} data sets per scenario; CPU: {cpu_name()}. Monte Carlo SE: "
          f"{100 * math.sqrt(0.05 * 0.95 / r):.1f} points at a rate of 5 %, {100 * math.sqrt(0.05 * 0.95 / r):.1f} "
          "at a coverage of 95 %.\n")
    print("| capability items | rejects at 0.05 | 95 % interval covers |\n|---|---:|---:|")
    for name, rejected, covered in capability_rows(r):
        print(f"| {name} | {100 * rejected:.1f}% | {100 * covered:.1f}% |")
    print("\n| fairness (rewards correlate 0.5 between models) | gap: rejects | gap: covers | Cohen's f: rejects | "
          "f: covers |\n|---|---:|---:|---:|---:|")
    for name, gap_rejected, gap_covered, f_rejected, f_covered in fairness_rows(r):
        print(f"| {name} | {100 * gap_rejected:.1f}% | {100 * gap_covered:.1f}% | {100 * f_rejected:.1f}% | "
              f"{100 * f_covered:.1f}% |")
    print("\n| ranks | all true ranks held at once | mean rank-interval width |\n|---|---:|---:|")
    for name, held, width in rank_rows(max(100, r // 5)):
        print(f"| {name} | {100 * held:.1f}% | {width:.2f} |")
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
