"""What `rmeval fairness-calibrate` adds to `rmeval fairness-stats` at the paper's size (8 models x 8 groups x 2000
rewards, normal noise with group shifts up to 0.2 SD), both with the schema's defaults, each as its own process as
the rules run them. Rounds are interleaved (stats, calibrate, stats, calibrate, ...) so that load on a shared
machine hits both alike; the ratio uses the CPU seconds of each child (user + sys) and, beside it, wall seconds.

Usage: python perf/bench_calibration.py [--rounds 2] [--models 8] [--rows 2000]
The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _runs import cpu_name, print_stage_table, stage_medians

GROUPS = ("computer_science", "economics", "electrical_engineering", "mathematics", "physics",
          "quantitative_biology", "quantitative_finance", "statistics")


def write_scores(root: Path, models: int, rows: int) -> None:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    for model in range(models):
        shifts = rng.uniform(0.0, 0.2, len(GROUPS))
        (root / f"rm{model}").mkdir(parents=True)
        for group, shift in zip(GROUPS, shifts, strict=True):
            pd.DataFrame({"id": [f"{group}-{i}" for i in range(rows)], "reward": shift + rng.normal(0, 1, rows),
                          "n_tokens": rng.integers(60, 400, rows)}).to_parquet(root / f"rm{model}" / f"{group}.parquet")


def timed(command: list[str]) -> tuple[float, float]:
    """(wall s, CPU s of the child) of one command run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    rmeval = [sys.executable, "-m", "rmeval"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_scores(root / "scores", args.models, args.rows)
        commands = {
            "fairness_stats": [*rmeval, "fairness-stats", "--scores", str(root / "scores"), "--out",
                               str(root / "tables"), "--corpus"],
            "fairness_calibrate": [*rmeval, "fairness-calibrate", "--scores", str(root / "scores"), "--out",
                                   str(root / "tables"), "--corpus"],
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                times[name].append(timed(command))
    median = stage_medians(times)
    result = {
        "cpu": cpu_name(), "cores": os.cpu_count(), "models": args.models, "groups": len(GROUPS), "rows": args.rows,
        "rounds": args.rounds,
        **{f"{name}_wall_s": round(wall, 2) for name, (wall, _) in median.items()},
        **{f"{name}_cpu_s": round(cpu, 2) for name, (_, cpu) in median.items()},
        "added_percent_cpu": round(100 * median["fairness_calibrate"][1] / median["fairness_stats"][1], 1),
        "added_percent_wall": round(100 * median["fairness_calibrate"][0] / median["fairness_stats"][0], 1),
    }
    print_stage_table(median, args.rounds)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
