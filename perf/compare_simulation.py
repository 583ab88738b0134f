"""The seeded simulation behind `rmeval compare`'s methods (issue 40; CONTRIBUTING "Which model is better"): size,
coverage and power of every paired comparison, with a known truth, on pairs of models that score the same items
with correlated errors; and the simultaneous coverage of the rank intervals.

- capability items (rmeval.paired_difference): 0/1 items (Tango's interval, McNemar's test) and best-of-4 results
  with ties (Tango on the discordant masses) on 100 / 400 items, a weighted section of three subsets (MOVER sum,
  its inverted p); errors correlated through a Gaussian copula (0/1) or shared draws (best-of-4);
- near-identical checkpoints (issue 45): 0, 1, 2, 5 and 20 expected discordant items per 100, one way (the true
  difference is the discordant rate) or both ways (it is 0), on 50, 100 and 500 items, at 0.05 and at the rank
  intervals' level for five models (0.05 / 10 pairs): coverage, agreement of interval and test (the interval
  leaves out 0 exactly when p < alpha) and mean width; and the same sparsity for best-of-4 results and a section;
- the fairness gap (stats/gap_difference.py) and Cohen's f: 3 groups x 40 and x 500 papers shared by two models
  whose rewards correlate 0.5, in the three shapes of "equal gaps" (both fair; the same pattern 0 / 0.15 / 0.3 SD;
  mirrored), 8 groups x 30 (the demo) both fair, and the power at 3 x 500 with one model fair and the other's gap
  0.3 SD (groups 0 / 0.15 / 0.3, and 0 / 0 / 0.3);
- ranks (rmeval.ranks): five models, two of them tied, on 400 items.

Rates at 0.05 (the test's size where the truth is 0, its power elsewhere) and 95 % interval coverage; each with its
Monte Carlo standard error in the header. Usage: python perf/compare_simulation.py [--replicates 1000] [--only sparse]
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
from rmeval.paired_difference import combined_difference, paired_bounded, tango_interval  # noqa: E402
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
        for _ in range(replicates):
            a, b = draw(rng)
            diff = paired_bounded(a, b)
            low, high = diff.interval.at()
            rejected += diff.p_value < 0.05
            covered += low <= truth <= high
        rows.append((name, rejected / replicates, covered / replicates))
    # a section: three subsets weighted 0.2 / 0.3 / 0.5, equal models
    rng = np.random.default_rng(7)
    rejected = covered = 0
    for _ in range(replicates):
        parts = [paired_bounded(*binary(rng, n, p, p, 0.6)) for n, p in ((40, 0.6), (100, 0.85), (250, 0.75))]
        combined = combined_difference(parts, (0.2, 0.3, 0.5))
        low, high = combined.interval.at()
        rejected += combined.p_value < 0.05
        covered += low <= 0.0 <= high
    rows.append(("section of 3 subsets (40/100/250 pairs), equal", rejected / replicates, covered / replicates))
    return rows


SPARSE_ALPHAS = (0.05, rank_alpha(0.05, 5))  # a comparison's level, and the rank intervals' for five models


def checkpoints(rng: np.random.Generator, n: int, rate: float, one_way: bool, accuracy: float = 0.7):
    """Two checkpoints on n items: b right with probability `accuracy`; a discordant item (probability `rate`) has
    a right and b wrong (one way), or either with equal chance (both ways); elsewhere a equals b."""
    b = (rng.uniform(size=n) < accuracy).astype(float)
    a = b.copy()
    discordant = rng.uniform(size=n) < rate
    a_ahead = discordant & ((rng.uniform(size=n) < 0.5) | one_way)
    a[a_ahead], b[a_ahead] = 1.0, 0.0
    a[discordant & ~a_ahead], b[discordant & ~a_ahead] = 0.0, 1.0
    return a.tolist(), b.tolist()


SPARSE_PROBS = (0.3, 0.05, 0.05, 0.6)  # b's best-of-4 result: 0, 1/3, 1/2, 1


def sparse_checkpoints(rng: np.random.Generator, n: int, rate: float):
    """Best-of-4 results (ties at 1/3 and 1/2) of two checkpoints that differ on a prompt with probability `rate`,
    always in a's favour: there a's result is drawn evenly among those above b's (b's own, if it is 1, drawn evenly
    among the three below it instead)."""
    b = BEST_OF_FOUR[np.searchsorted(np.cumsum(SPARSE_PROBS), rng.uniform(size=n))]
    a = b.copy()
    for index in np.flatnonzero(rng.uniform(size=n) < rate):
        if b[index] == 1.0:
            b[index] = rng.choice(BEST_OF_FOUR[:3])
        else:
            a[index] = rng.choice(BEST_OF_FOUR[BEST_OF_FOUR > b[index]])
    return a.tolist(), b.tolist()


def sparse_gain() -> float:
    """E[a - b] on a prompt where `sparse_checkpoints` makes them differ (the truth is rate times this)."""
    gains = [float(BEST_OF_FOUR[BEST_OF_FOUR > value].mean() - value) if value < 1.0 else
             float(1.0 - BEST_OF_FOUR[:3].mean()) for value in BEST_OF_FOUR]
    return float(np.dot(SPARSE_PROBS, gains))


def exact_coverage(n: int, rate: float, one_way: bool, alpha: float) -> float:
    """The 0/1 interval's coverage summed over every discordant split (b, c) and its multinomial probability: the
    interval depends on (b, c, n) alone, so this is exact (no Monte Carlo error)."""
    from scipy.special import gammaln

    ahead_a, ahead_b = np.meshgrid(np.arange(n + 1), np.arange(n + 1) if not one_way else np.array([0]),
                                   indexing="ij")
    rest = n - ahead_a - ahead_b
    cells = (rate, 0.0) if one_way else (rate / 2, rate / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = (gammaln(n + 1) - gammaln(ahead_a + 1) - gammaln(ahead_b + 1) - gammaln(np.maximum(rest, 0) + 1)
                 + ahead_a * math.log(cells[0]) + np.where(ahead_b > 0, ahead_b * np.log(max(cells[1], 1e-300)), 0.0)
                 + rest * math.log(1 - rate))
    probability = np.where(rest >= 0, np.exp(log_p), 0.0)
    truth = cells[0] - cells[1]
    covered = 0.0
    for a, b in zip(*np.nonzero(probability > 1e-13), strict=True):
        low, high = tango_interval(int(ahead_a[a, b]), int(ahead_b[a, b]), n).with_alpha(alpha)
        covered += probability[a, b] * (low <= truth <= high)
    return covered


def sparse_rows(replicates: int) -> list[tuple[str, int, int, str, float, list[tuple[float, float, float]]]]:
    """(kind, n, per 100, direction, truth, [(coverage, agreement, mean width, exact coverage or nan) at each of
    SPARSE_ALPHAS])."""
    cases = [("0/1", n, k, one_way) for n in (50, 100, 500) for k in (0, 1, 2, 5, 20) for one_way in (True, False)]
    cases += [("best-of-4", n, k, True) for n in (100, 500) for k in (1, 2, 5)]
    cases += [("section", 0, k, one_way) for k in (1, 2, 5) for one_way in (True, False)]
    rows = []
    for kind, n, per_hundred, one_way in cases:
        rate = per_hundred / 100
        rng = np.random.default_rng(zlib.crc32(f"{kind} {n} {per_hundred} {one_way}".encode()))
        counts = np.zeros((len(SPARSE_ALPHAS), 3))
        truths = []
        for _ in range(replicates):
            if kind == "0/1":
                diff, truth = paired_bounded(*checkpoints(rng, n, rate, one_way)), rate if one_way else 0.0
            elif kind == "best-of-4":
                diff, truth = paired_bounded(*sparse_checkpoints(rng, n, rate)), rate * sparse_gain()
            else:  # three subsets weighted 0.2 / 0.3 / 0.5 (as a RewardBench section), the same sparsity in each
                parts = [paired_bounded(*checkpoints(rng, size, rate, one_way)) for size in (40, 100, 250)]
                diff, truth = combined_difference(parts, (0.2, 0.3, 0.5)), rate if one_way else 0.0
            truths.append(truth)
            for row, alpha in enumerate(SPARSE_ALPHAS):
                low, high = diff.interval.with_alpha(alpha)
                counts[row] += (low <= truth <= high, (not low <= 0.0 <= high) == (diff.p_value < alpha), high - low)
        exact = [exact_coverage(n, rate, one_way, alpha) if kind == "0/1" and rate > 0 else
                 (1.0 if kind == "0/1" else math.nan) for alpha in SPARSE_ALPHAS]
        rows.append((kind, n, per_hundred, "one way" if one_way else "both ways", truths[0],
                     [(*row, share) for row, share in zip((tuple(r) for r in counts / replicates), exact, strict=True)]))
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


def print_sparse(replicates: int) -> None:
    levels = [f"{1 - alpha:.1%}".replace(".0%", " %").replace("%", " %").replace("  ", " ") for alpha in SPARSE_ALPHAS]
    print("| near-identical checkpoints | items | discordant per 100 | true difference | "
          + " | ".join(f"{level}: covers | exact | agrees with p | mean width" for level in levels)
          + " |\n|---|---:|---:|---:|" + "---:|" * 4 * len(levels))
    for kind, n, per_hundred, direction, truth, rates in sparse_rows(replicates):
        items = "40 / 100 / 250" if kind == "section" else str(n)
        cells = " | ".join(f"{100 * covered:.1f}% | {'-' if math.isnan(exact) else f'{100 * exact:.1f}%'} | "
                           f"{100 * agrees:.1f}% | {100 * width:.2f}" for covered, agrees, width, exact in rates)
        print(f"| {kind}, {direction} | {items} | {per_hundred} | {100 * truth:.2f} | {cells} |")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--only", choices=("sparse",), help="only the near-identical checkpoints' table")
    args = parser.parse_args()
    started = time.perf_counter()
    r = args.replicates
    print(f"Seeded, {r} data sets per scenario; CPU: {cpu_name()}. Monte Carlo SE: "
          f"{100 * math.sqrt(0.05 * 0.95 / r):.1f} points at a rate of 5 %, {100 * math.sqrt(0.05 * 0.95 / r):.1f} "
          "at a coverage of 95 %.\n")
    print_sparse(r)
    if args.only == "sparse":
        print(f"\n{time.perf_counter() - started:.0f} s")
        return 0
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
