"""Summarise what each workflow stage cost, from the `benchmark:` files Snakemake writes.

Usage: python benchmarks/stage_costs.py [RESULTS_DIR]   (default: results)
Prints a Markdown table (stage, jobs, total and max wall seconds, max RSS) and one JSON line last.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path


def stage_costs(results: Path) -> dict[str, dict[str, float]]:
    costs: dict[str, dict[str, float]] = defaultdict(lambda: {"jobs": 0, "total_s": 0.0, "max_s": 0.0, "max_rss_mb": 0.0})
    root = results / "benchmarks"
    for path in sorted(root.rglob("*.tsv")):
        stage = path.relative_to(root).parts[0].removesuffix(".tsv")
        with path.open() as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                seconds = float(row["s"])
                entry = costs[stage]
                entry["jobs"] += 1
                entry["total_s"] += seconds
                entry["max_s"] = max(entry["max_s"], seconds)
                rss = row.get("max_rss", "-")
                if rss not in ("-", "NA", ""):
                    entry["max_rss_mb"] = max(entry["max_rss_mb"], float(rss))
    return dict(costs)


def main(argv: list[str]) -> int:
    results = Path(argv[0] if argv else "results")
    costs = stage_costs(results)
    if not costs:
        print(f"no benchmark files under {results / 'benchmarks'}", file=sys.stderr)
        return 1
    print("| stage | jobs | total s | max s | max RSS MB |\n|---|---|---|---|---|")
    for stage, entry in costs.items():
        print(f"| {stage} | {entry['jobs']} | {entry['total_s']:.1f} | {entry['max_s']:.1f} | {entry['max_rss_mb']:.0f} |")
    print(json.dumps({"stages": costs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
