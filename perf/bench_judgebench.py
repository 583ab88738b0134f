"""What JudgeBench costs at its full size: synthetic splits in the official layout (350 GPT-4o pairs and 270
Claude-3.5-Sonnet pairs, the official sources per category, responses of the official files' mean length) scored
through the real workflow by a tiny model (rmeval.testing.tiny_model, random weights) and the length baseline.

Usage: python perf/bench_judgebench.py [--out DIR] [--cores 2] [--quick]
  --quick: 10 pairs per split (a smoke run, not a measurement).

Prints a Markdown table (per model: texts scored, score-job seconds, seconds per 1,000 texts; the other stages'
seconds) and one JSON line last, with the CPU named. Each response text is scored once per model; a text is one
(question, response) of the data table (2 per pair), whatever the orders that use it.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import uuid
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _runs import REPO_ROOT, cpu_name, snakemake  # noqa: E402

# Per split: (response model, pairs per source prefix as published, mean characters per response in the official
# files: 1,960,188 bytes / 350 pairs and 920,039 / 270, less the question, halved).
SPLITS = {
    "gpt": ("gpt-4o-2024-05-13", {"mmlu-pro-law": 154, "livebench-reasoning": 98, "livebench-math": 56,
                                  "livecodebench": 42}, 2400),
    "claude": ("claude-3-5-sonnet-20240620", {"mmlu-pro-law": 154, "livebench-reasoning": 51, "livebench-math": 34,
                                              "livecodebench": 31}, 1400),
}
WORDS = ("we", "check", "each", "option", "and", "the", "answer", "follows", "from", "step", "two", "so", "x", "is")


def text(seed: int, chars: int) -> str:
    words, out, index = [], 0, seed
    while out < chars:
        word = WORDS[(index * 7 + seed) % len(WORDS)]
        words.append(word)
        out += len(word) + 1
        index += 1
    return " ".join(words)


def write_split(folder: Path, split: str, scale: float) -> int:
    model, sources, chars = SPLITS[split]
    rows = []
    for source, count in sources.items():
        for _ in range(max(1, round(count * scale))):
            number = len(rows)
            rows.append({"pair_id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{split}/{number}")),
                         "original_id": number, "source": source,
                         "question": f"Question {number}: " + text(number, 300), "response_model": model,
                         "response_A": text(number + 1, chars + number % 200),
                         "response_B": text(number + 2, chars - number % 150),
                         "label": "A>B" if number % 2 else "B>A"})
    path = folder / f"dataset=judgebench,response_model={model}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return len(rows)


def job_seconds(results: Path) -> dict[str, dict[str, float]]:
    """stage or score-job model -> wall seconds summed over its jobs (the latest run's benchmark files)."""
    runs = sorted(path for path in (results / "perf").iterdir() if path.is_dir())
    out: dict[str, dict[str, float]] = {}
    for path in sorted(runs[-1].rglob("*.tsv")):
        parts = path.relative_to(runs[-1]).parts
        key = f"score {parts[1]}" if parts[0] == "judgebench_score" else parts[0].removesuffix(".tsv")
        with path.open() as handle:
            seconds = sum(float(row["s"]) for row in csv.DictReader(handle, delimiter="\t"))
        out.setdefault(key, {"s": 0.0, "jobs": 0})
        out[key]["s"] += seconds
        out[key]["jobs"] += 1
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="run folder (default: a temporary one)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="10 pairs per split: a smoke run")
    args = parser.parse_args(argv)
    from rmeval.testing.tiny_model import build_tiny_model

    workdir = args.out or Path(tempfile.mkdtemp(prefix="rmeval-bench-judgebench-"))
    data = workdir / "inputs" / "judgebench"
    data.mkdir(parents=True, exist_ok=True)
    pairs = {split: write_split(data, split, 10 / 350 if args.quick else 1.0) for split in SPLITS}
    build_tiny_model(workdir / "inputs" / "tiny-cls", seed=0)
    config = {
        "registry": str(REPO_ROOT / "config" / "models.yaml"),
        "models": [{"name": "tiny-cls", "path": str(workdir / "inputs" / "tiny-cls"),
                    "adapter": "sequence-classification", "dtype": "float32", "max_length": 1024,
                    "resources": {"gpu": 0, "mem_mb": 4000, "runtime": 60}}, "length-baseline"],
        "scoring": {"threads": 1},
        "judgebench": {"enabled": True, "source": "local", "path": str(data), "splits": list(SPLITS)},
    }
    configfile = workdir / "config.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False))
    wall = snakemake(workdir, configfile, ["results/tables/judgebench.csv"], args.cores)
    costs = job_seconds(workdir / "results")
    texts = 2 * sum(pairs.values())
    print(f"JudgeBench at {'quick' if args.quick else 'full'} size: {pairs} pairs, {texts} texts per model; "
          f"CPU {cpu_name()}, --cores {args.cores}; wall {wall:.1f} s\n")
    print("| stage | jobs | seconds | s per 1,000 texts |\n|---|---|---|---|")
    for key, entry in costs.items():
        per = f"{1000 * entry['s'] / texts:.1f}" if key.startswith("score ") else ""
        print(f"| {key} | {entry['jobs']} | {entry['s']:.1f} | {per} |")
    print(json.dumps({"cpu": cpu_name(), "pairs": pairs, "texts_per_model": texts, "wall_s": round(wall, 1),
                      "stages": costs, "workdir": str(workdir)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
