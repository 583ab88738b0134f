"""What `rmeval compare` (issue 40) adds to the statistics stages at the paper's size, for 8 models on every
benchmark: fairness 8 groups x 2000 papers (as perf/bench_calibration.py), RewardBench 2,985 pairs in its 23 subsets
(the official counts, math-prm 447), RewardBench 2 1,865 prompts (best-of-4 in five subsets, Ties' ref and tied
rows), RewardMATH 483 problems x 10 solutions. Synthetic data in the datasets' own layouts, prepared by the real
prepare commands; rewards normal with model- and item-level effects (models agree on items, as real ones do).

The statistics stages are the commands the rules run (`fairness-stats`, `fairness-calibrate`, `rewardbench-metrics`
for both versions, `rewardmath-metrics`) with the schema's defaults; `compare` is `rmeval compare` on all four
benchmarks, every pair of the 8 models (28 pairs). Rounds are interleaved (each stage, then compare, ...) so that the
load of a shared machine hits both alike; the ratio uses the CPU seconds (user + sys) of each child, wall beside it.

Usage: python perf/bench_compare.py [--rounds 2] [--models 8]
The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from _runs import cpu_name, print_stage_table, stage_medians
from bench_calibration import timed, write_scores

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

V2_SIZES = {"Factuality": 475, "Precise IF": 160, "Math": 183, "Safety": 450, "Focus": 495}
TIES_PROMPTS = 51  # each with a ref and a tied row: 102 rows, as the official Ties subset
REWARDMATH_PROBLEMS = 483


def _model_effects(rng, models: int, items: int, spread: float):
    """Each model's rewards: a shared item effect (models agree) plus the model's own noise, shape (models, items)."""
    import numpy as np

    shared = rng.standard_normal(items)
    return np.array([0.7 * shared + 0.7 * rng.standard_normal(items) + spread * m / models for m in range(models)])


def write_rewardbench(root: Path, models: int) -> None:
    import numpy as np
    import pandas as pd
    from rmeval.benchmarks.rewardbench.official import EXAMPLE_COUNTS
    from rmeval.cli import main as rmeval

    rng = np.random.default_rng(1)
    v1 = [{"id": f"{subset}-{i}", "prompt": f"prompt {subset} {i}", "chosen": "good answer", "chosen_model": "m",
           "rejected": "bad answer", "rejected_model": "m", "subset": subset}
          for subset, count in EXAMPLE_COUNTS.items() for i in range(447 if subset == "math-prm" else count)]
    v2 = [{"id": f"{subset}-{i}", "prompt": f"prompt {subset} {i}", "chosen": ["good"], "rejected": ["a", "b", "c"],
           "num_correct": 1, "num_rejected": 3, "total_completions": 4, "models": ["m"] * 4, "subset": subset}
          for subset, count in V2_SIZES.items() for i in range(count)]
    for n in range(TIES_PROMPTS):
        v2.append({"id": f"ref:{n}", "prompt": f"tie {n}", "chosen": ["2"], "rejected": ["4", "9"], "num_correct": 1,
                   "num_rejected": 2, "total_completions": 3, "models": ["m"] * 3, "subset": "Ties"})
        v2.append({"id": f"tied:{n}", "prompt": f"tie {n}", "chosen": ["2", "3", "5"], "rejected": ["4", "9"],
                   "num_correct": 3, "num_rejected": 2, "total_completions": 5, "models": ["m"] * 5, "subset": "Ties"})
    for version, rows in (("rewardbench", v1), ("rewardbench2", v2)):
        source = root / f"{version}.jsonl"
        source.write_text("".join(json.dumps(row) + "\n" for row in rows))
        data = root / f"results/{version}/data/{version}.parquet"
        assert rmeval(["rewardbench-prepare", "--version", version, "--source", "local", "--path", str(source),
                       "--out", str(data)]) == 0
        prepared = pd.read_parquet(data)
        chosen = prepared["is_chosen"].to_numpy()
        rewards = _model_effects(rng, models, len(prepared), 0.3) + 0.8 * chosen
        for model in range(models):
            folder = root / f"results/scores/{version}/rm{model}"
            folder.mkdir(parents=True)
            pd.DataFrame({"id": prepared["id"], "reward": rewards[model]}).to_parquet(folder / f"{version}.parquet")


def write_rewardmath(root: Path, models: int) -> None:
    import numpy as np
    import pandas as pd
    from rmeval.cli import main as rmeval

    rng = np.random.default_rng(2)
    records = [{"problem": f"Problem {p}", "answer": "1", "eval_solution": [f"step {k}", "end"],
                "solution_reference": "human" if k == 0 else f"m{k}",
                "solution_type": "chosen" if k == 0 else "rejected", "subject": "Algebra", "level": 1 + p % 5,
                "problem_id": str(p), "id": f"{p}-{k}"} for p in range(REWARDMATH_PROBLEMS) for k in range(10)]
    source = root / "rewardmath.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert rmeval(["rewardmath-prepare", "--source", "local", "--path", str(source), "--rewardbench-source", "none",
                   "--out", str(root / "results/rewardmath/data")]) == 0
    chosen = np.array([r["solution_type"] == "chosen" for r in records], dtype=float)
    rewards = _model_effects(rng, models, len(records), 0.3) + 1.5 * chosen
    for model in range(models):
        folder = root / f"results/scores/rewardmath/rm{model}"
        folder.mkdir(parents=True)
        pd.DataFrame({"id": [r["id"] for r in records], "reward": rewards[model]}).to_parquet(folder / "algebra.parquet")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--rows", type=int, default=2000, help="fairness papers per group")
    args = parser.parse_args()
    rmeval = [sys.executable, "-m", "rmeval"]
    names = [f"rm{m}" for m in range(args.models)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_scores(root / "results/scores/fairness", args.models, args.rows)
        write_rewardbench(root, args.models)
        write_rewardmath(root, args.models)
        tables = root / "results/tables"
        stages = {
            "fairness_stats": [*rmeval, "fairness-stats", "--scores", str(root / "results/scores/fairness"),
                               "--out", str(tables), "--corpus"],
            "fairness_calibrate": [*rmeval, "fairness-calibrate", "--scores", str(root / "results/scores/fairness"),
                                   "--out", str(tables), "--corpus"],
            **{f"{v}_metrics": [*rmeval, "rewardbench-metrics", "--version", v, "--data",
                                str(root / f"results/{v}/data/{v}.parquet"), "--scores",
                                str(root / f"results/scores/{v}"), "--models", *names, "--out", str(tables)]
               for v in ("rewardbench", "rewardbench2")},
            "rewardmath_metrics": [*rmeval, "rewardmath-metrics", "--data", str(root / "results/rewardmath/data"),
                                   "--scores", str(root / "results/scores/rewardmath"), "--models", *names,
                                   "--subjects", "algebra", "--out", str(tables)],
        }
        compare = [*rmeval, "compare", "--benchmarks", "fairness", "rewardmath", "rewardbench", "rewardbench2",
                   "--root", str(root), "--models", json.dumps({b: names for b in ("fairness", "rewardmath",
                                                                                  "rewardbench", "rewardbench2")})]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in [*stages, "compare"]}
        for _ in range(args.rounds):
            for name, command in stages.items():
                times[name].append(timed(command))
            times["compare"].append(timed(compare))
    median = stage_medians(times)
    stats_wall = sum(median[name][0] for name in stages)
    stats_cpu = sum(median[name][1] for name in stages)
    result = {
        "cpu": cpu_name(), "cores": os.cpu_count(), "load": [round(x, 1) for x in os.getloadavg()],
        "models": args.models, "rounds": args.rounds,
        **{f"{name}_wall_s": round(wall, 2) for name, (wall, _) in median.items()},
        **{f"{name}_cpu_s": round(cpu, 2) for name, (_, cpu) in median.items()},
        "statistics_stages_cpu_s": round(stats_cpu, 2), "statistics_stages_wall_s": round(stats_wall, 2),
        "added_percent_cpu": round(100 * median["compare"][1] / stats_cpu, 1),
        "added_percent_wall": round(100 * median["compare"][0] / stats_wall, 1),
    }
    print_stage_table(median, args.rounds)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
