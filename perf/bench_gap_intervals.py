"""What issue 41's gap and NMGD intervals cost: `rmeval fairness-stats` and `rmeval fairness-calibrate` of this
checkout beside the same commands of a baseline revision (default: where this branch left main), at the paper's
size (8 models x 8 groups x 2000 rewards, bench_calibration's data), each as its own process as the rules run them.

The baseline's `workflow/` comes from `git archive` into a temporary folder and runs on PYTHONPATH; both use this
interpreter and its packages. Rounds are interleaved (old stats, new stats, old calibrate, new calibrate, ...) so
that load on a shared machine hits both alike; ratios use the CPU seconds of each child (user + sys), wall beside.

Usage: python perf/bench_gap_intervals.py [--baseline REF] [--rounds 3] [--models 8] [--rows 2000]
The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _runs import REPO_ROOT, cpu_name
from bench_calibration import timed, write_scores


def merge_base() -> str:
    return subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def export(ref: str, target: Path) -> Path:
    """The baseline's workflow/ under target (git archive | tar -x), with its own config/ and resources/ beside it:
    the package reads its registry and published values there, and a later registry may not fit an older schema."""
    archive = subprocess.run(["git", "archive", ref, "workflow", "config", "resources"], cwd=REPO_ROOT,
                             capture_output=True, check=True)
    target.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target / "workflow"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=None, help="git revision to compare with (default: merge-base with main)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    baseline = args.baseline or merge_base()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trees = {"old": export(baseline, root / "baseline"), "new": REPO_ROOT / "workflow"}
        write_scores(root / "scores", args.models, args.rows)
        times: dict[str, list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for stage in ("fairness-stats", "fairness-calibrate"):
                for version, tree in trees.items():
                    # each version with its own registry (fairness-stats reads ./config/models.yaml by default)
                    registry = ["--registry", str(tree.parent / "config" / "models.yaml")] \
                        if stage == "fairness-stats" else []
                    command = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tree)!r}); "
                               "from rmeval.cli import main; sys.exit(main())", stage, "--scores",
                               str(root / "scores"), "--out", str(root / f"tables-{version}"), "--corpus", *registry]
                    times.setdefault(f"{stage} {version}", []).append(timed(command))
        gap = {version: __import__("pandas").read_csv(root / f"tables-{version}" / "table7_gap.csv")
               for version in trees}
    median = {name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
              for name, runs in times.items()}
    widths = {version: float((frame["gap_ci_high"] - frame["gap_ci_low"]).mean()) for version, frame in gap.items()}
    result = {"cpu": cpu_name(), "cores": os.cpu_count(), "load_before": os.getloadavg()[0], "baseline": baseline,
              "models": args.models, "groups": 8, "rows": args.rows, "rounds": args.rounds,
              **{f"{name.replace(' ', '_').replace('-', '_')}_cpu_s": round(cpu, 2)
                 for name, (_, cpu) in median.items()},
              **{f"{name.replace(' ', '_').replace('-', '_')}_wall_s": round(wall, 2)
                 for name, (wall, _) in median.items()},
              "stats_added_percent_cpu": round(100 * (median["fairness-stats new"][1] /
                                                      median["fairness-stats old"][1] - 1), 1),
              "calibrate_added_percent_cpu": round(100 * (median["fairness-calibrate new"][1] /
                                                          median["fairness-calibrate old"][1] - 1), 1),
              "mean_gap_ci_width": {version: round(width, 4) for version, width in widths.items()}}
    print(f"| command | version | wall s (median of {args.rounds}) | CPU s |\n|---|---|---:|---:|")
    for name, (wall, cpu) in median.items():
        stage, version = name.split(" ")
        print(f"| {stage} | {version} | {wall:.2f} | {cpu:.2f} |")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
