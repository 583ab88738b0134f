"""Summarise what each workflow stage cost, from the `benchmark:` files Snakemake writes.

Usage: python perf/stage_costs.py [RESULTS_DIR] [--run ID]   (default: results, the latest run)

Benchmark files live in one folder per run, `RESULTS_DIR/perf/<run>/<stage>/...tsv` (the Snakefile's
`benchmark_file`), so a partial rerun is summed on its own and never mixed with an older run's files.
Prints a Markdown table (stage, jobs, total and max wall seconds, total CPU seconds, max RSS) and one JSON
line last.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path


def _number(value: str | None) -> float | None:
    if value in (None, "", "-", "NA"):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def runs(results: Path) -> list[str]:
    """Run folders under RESULTS_DIR/perf, oldest first (their names are UTC time stamps)."""
    root = results / "perf"
    return sorted(path.name for path in root.iterdir() if path.is_dir() and any(path.rglob("*.tsv"))) if root.is_dir() else []


def stage_costs(results: Path, run: str | None = None) -> tuple[str | None, dict[str, dict[str, float]]]:
    """(run, stage -> jobs, total_s, max_s, cpu_s, max_rss_mb) for one run folder (default: the latest)."""
    known = runs(results)
    run = run or (known[-1] if known else None)
    costs: dict[str, dict[str, float]] = defaultdict(
        lambda: {"jobs": 0, "total_s": 0.0, "max_s": 0.0, "cpu_s": 0.0, "max_rss_mb": 0.0}
    )
    if run is None:
        return None, {}
    root = results / "perf" / run
    for path in sorted(root.rglob("*.tsv")):
        stage = path.relative_to(root).parts[0].removesuffix(".tsv")
        with path.open() as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                seconds = float(row["s"])
                entry = costs[stage]
                entry["jobs"] += 1
                entry["total_s"] += seconds
                entry["max_s"] = max(entry["max_s"], seconds)
                entry["cpu_s"] += _number(row.get("cpu_time")) or 0.0
                rss = _number(row.get("max_rss"))
                if rss is not None:
                    entry["max_rss_mb"] = max(entry["max_rss_mb"], rss)
    return run, dict(costs)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", default="results", type=Path)
    parser.add_argument("--run", help="run folder under RESULTS/perf (default: the latest)")
    args = parser.parse_args(argv)
    run, costs = stage_costs(args.results, args.run)
    if not costs:
        print(f"no benchmark files under {args.results / 'perf'}", file=sys.stderr)
        return 1
    print(f"run {run} (of {len(runs(args.results))} under {args.results / 'perf'})\n")
    print("| stage | jobs | total s | max s | CPU s | max RSS MB |\n|---|---|---|---|---|---|")
    for stage, entry in costs.items():
        print(f"| {stage} | {entry['jobs']} | {entry['total_s']:.1f} | {entry['max_s']:.1f} | {entry['cpu_s']:.1f} "
              f"| {entry['max_rss_mb']:.0f} |")
    print(json.dumps({"run": run, "stages": costs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
