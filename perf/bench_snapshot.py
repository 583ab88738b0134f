"""Snapshot streaming vs pandas.read_json(lines=True): throughput and peak memory, side by side.

Builds a synthetic Kaggle-format `arxiv-metadata-oai-snapshot` file from the shared arXiv papers (ids made
unique per repetition), then, each in a fresh subprocess so peak RSS is its own:
  * rmeval's streaming fetch (`fetch_candidates`, the real code path, for the largest group: physics)
    at 1/4 of the size and at the full size, to show memory is flat in file size;
  * pandas.read_json(lines=True) at both sizes.

    python perf/bench_snapshot.py                 # 0.2 GB: a few minutes on a shared 2-core box
    python perf/bench_snapshot.py --size-gb 1     # the issue's 1 GB (pandas then needs ~10 GB RAM)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
# The paper's physics group, read from the shipped config rather than repeated here.
PHYSICS = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["groups"]["physics"]
SOURCES = [
    "arxiv_browse_testdata_abs.jsonl",
    "unarxive_sample_2212_metadata.jsonl",
    "arxiv_balanced_by_archive_max500.jsonl",
]


def shared_dir() -> Path:
    for candidate in (os.environ.get("RMEVAL_SHARED_DATA"), REPO.parent / "shared" / "data"):
        if candidate and Path(candidate, "arxiv").is_dir():
            return Path(candidate)
    sys.exit("shared data not found: set RMEVAL_SHARED_DATA or place it at ../shared/data")


def base_records(shared: Path) -> list[dict]:
    records = []
    for name in SOURCES:
        for line in (shared / "arxiv" / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            categories = row.get("categories") or (
                [row["primary_category"]] if row.get("primary_category") else []
            )
            records.append(
                {
                    "id": row["id"],
                    "submitter": "A. Author",
                    "authors": row.get("authors") or "A. Author",
                    "title": row["title"],
                    "comments": None,
                    "journal-ref": None,
                    "doi": None,
                    "report-no": None,
                    "categories": " ".join(categories),
                    "license": None,
                    "abstract": "  " + row["abstract"] + "\n",
                    "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
                    "update_date": "2008-11-13",
                    "authors_parsed": [["Author", "A.", ""]],
                }
            )
    return records


def build_file(path: Path, size_bytes: int, records: list[dict]) -> int:
    """Repeat the shared papers with fresh ids until the file reaches size_bytes; returns the line count."""
    lines = 0
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        repetition = 0
        while written < size_bytes:
            for index, record in enumerate(records):
                record = dict(
                    record, id=f"{repetition % 10000:04d}.{index:05d}" if repetition else record["id"]
                )
                text = json.dumps(record) + "\n"
                out.write(text)
                written += len(text.encode("utf-8"))
                lines += 1
                if written >= size_bytes:
                    break
            repetition += 1
    return lines


_STREAM = """
import json, resource, sys, time
from pathlib import Path
from rmeval.benchmarks.fairness.arxiv.fetch import fetch_candidates
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
import pandas  # imported by the fetch anyway when it writes parquet; counted in the baseline
path, out, groups = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
settings = ArxivSettings.from_mapping({"source": "snapshot", "snapshot": path, "papers_per_group": 2000})
start = time.perf_counter()
summary = fetch_candidates("physics", groups, settings, Path(out))
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "peak_kb": peak, "baseline_kb": baseline, "rows": summary["counts"]["records_read"]}))
"""

_PANDAS = """
import json, resource, sys, time
import pandas as pd
path = sys.argv[1]
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
frame = pd.read_json(path, lines=True, dtype={"id": str})
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "peak_kb": peak, "baseline_kb": baseline, "rows": len(frame)}))
"""


def measure(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark subprocess failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--size-gb", type=float, default=0.2, help="size of the larger synthetic file (default 0.2)"
    )
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where the synthetic files go (default: a temp dir)"
    )
    parser.add_argument("--skip-pandas", action="store_true", help="measure only the streaming reader")
    args = parser.parse_args()

    records = base_records(shared_dir())
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        tmp_path = Path(tmp)
        sizes = {"quarter": int(args.size_gb * 1e9 / 4), "full": int(args.size_gb * 1e9)}
        rows = []
        for label, size in sizes.items():
            path = tmp_path / f"snapshot_{label}.jsonl"
            t0 = time.perf_counter()
            lines = build_file(path, size, records)
            print(
                f"built {path.name}: {size / 1e9:.3f} GB, {lines} lines in {time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
            stream = measure(_STREAM, str(path), str(tmp_path / f"out_{label}"), json.dumps(PHYSICS))
            rows.append(("rmeval stream", label, size, stream))
            if not args.skip_pandas:
                rows.append(("pandas.read_json", label, size, measure(_PANDAS, str(path))))
            path.unlink()

    print(
        f"{'method':<18} {'file':>8} {'GB':>6} {'rows':>9} {'wall s':>8} {'MB/s':>8} {'peak MB':>8} {'+MB over start':>14}"
    )
    results = {}
    for method, label, size, r in rows:
        mbps = size / 1e6 / r["wall_s"]
        grow = (r["peak_kb"] - r["baseline_kb"]) / 1024
        results[(method, label)] = (mbps, r["peak_kb"] / 1024, grow)
        print(
            f"{method:<18} {label:>8} {size / 1e9:>6.3f} {r['rows']:>9} {r['wall_s']:>8.2f} {mbps:>8.1f} "
            f"{r['peak_kb'] / 1024:>8.0f} {grow:>14.0f}"
        )
    if not args.skip_pandas:
        ratio = results[("rmeval stream", "full")][0] / results[("pandas.read_json", "full")][0]
        print(f"throughput ratio (stream / pandas) at full size: {ratio:.1f}x (goal >= 5x)")
    q, f = results[("rmeval stream", "quarter")], results[("rmeval stream", "full")]
    print(
        f"stream peak memory: {q[1]:.0f} MB at 1/4 size, {f[1]:.0f} MB at full size "
        f"(growth over start-up: {q[2]:.0f} MB -> {f[2]:.0f} MB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
