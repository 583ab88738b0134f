"""Cold vs warm scoring stage: every job loads its model (`scoring.server: false`) against one model server per
model and run (the default), side by side in one invocation, on the end-to-end test's scenario.

The scenario is tests/test_workflow_e2e.py's: a Kaggle-format snapshot of real shared abstracts, the paper's
eight groups, 30 papers per group, `snakemake --cores 2`. Two models: the tiny test model
(rmeval.testing.tiny_model) and the ~28M-parameter benchmark model (perf/_models.py). For each mode the data
stage and model markers are built first, then the scoring stage alone is timed (`snakemake <every score file>`).

Reported per model and mode: the scoring stage's wall time (one Snakemake invocation, both models), each job's
start-up (`startup_s` in its .meta.json: process start to the first forward pass: interpreter, imports, model
load or server connect, tokenisation) and its fixed cost (Snakemake's benchmark wall minus the forward passes).
The goal: start-up <= 1 s for every job of a model after its first, and rewards identical to the cold path.
The last line of stdout is one JSON object.

    python perf/bench_warm_server.py                  # CPU (about 5-10 minutes on 2 busy cores)
    python perf/bench_warm_server.py --device cuda    # a GPU box (perf/bench_gpu.sh warm-server)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO_ROOT / "tests"))
import _models  # noqa: E402
from _runs import cpu_name, prepare_snapshot, snakemake, write_config  # noqa: E402
from workflow_helpers import PAPER_GROUPS, tiny_model_entry  # noqa: E402

STARTUP_GOAL_S = 1.0
MODES = ("cold", "warm")


def _benchmark_seconds(workdir: Path, model: str, group: str) -> float | None:
    files = sorted((workdir / "results" / "perf").glob(f"*/score_fairness/{model}/{group}.tsv"))
    if not files:
        return None
    lines = files[-1].read_text().splitlines()
    return float(lines[1].split("\t")[0])


def collect(workdir: Path, models: list[str], groups: list[str]) -> dict[str, list[dict[str, Any]]]:
    jobs: dict[str, list[dict[str, Any]]] = {}
    for model in models:
        rows = []
        for group in groups:
            meta = json.loads((workdir / "results" / "scores" / "fairness" / model / f"{group}.meta.json").read_text())
            wall = _benchmark_seconds(workdir, model, group)
            server = meta.get("model_server") or {}
            rows.append({
                "group": group,
                "startup_s": meta["startup_s"],
                "load_s": meta["load_s"],
                "score_s": meta["score_s"],
                "fixed_s": round(wall - meta["score_s"], 3) if wall is not None else None,
                "first": bool(server.get("started_by_this_job")) if server else None,
                "order": server.get("jobs_before", 0) if server else meta["started_at"],
            })
        rows.sort(key=lambda row: row["order"])
        if rows and rows[0]["first"] is None:  # cold: the first job to start stands for "first"
            rows[0]["first"] = True
        jobs[model] = rows
    return jobs


def summarise(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    first = [job for job in jobs if job["first"]]
    later = [job for job in jobs if not job["first"]]
    later_startups = [job["startup_s"] for job in later]
    return {
        "jobs": len(jobs),
        "first_startup_s": first[0]["startup_s"] if first else None,
        "later_startup_median_s": round(statistics.median(later_startups), 3) if later_startups else None,
        "later_startup_max_s": round(max(later_startups), 3) if later_startups else None,
        "second_to_last_startups_s": later_startups,
        "fixed_total_s": round(sum(job["fixed_s"] or 0.0 for job in jobs), 1),
        "score_total_s": round(sum(job["score_s"] for job in jobs), 1),
    }


def identical_rewards(cold: Path, warm: Path, model: str, groups: list[str]) -> bool:
    import pandas as pd

    for group in groups:
        a = pd.read_parquet(cold / "results" / "scores" / "fairness" / model / f"{group}.parquet")
        b = pd.read_parquet(warm / "results" / "scores" / "fairness" / model / f"{group}.parquet")
        if not a.equals(b):
            return False
    return True


def model_entries(root: Path, abstracts: Path, device: str) -> list[dict[str, Any]]:
    from rmeval.testing.tiny_model import build_tiny_model

    tiny_dir = root / "tiny-model"
    build_tiny_model(tiny_dir, seed=0)
    bench_dir = _models.ensure_model(abstracts)
    entries = [tiny_model_entry("tiny", tiny_dir), tiny_model_entry("bench-28m", bench_dir)]
    if device == "cuda":
        for entry in entries:
            entry.update(dtype="bfloat16", resources={"gpu": 1, "mem_mb": 8000, "runtime": 30})
    return entries


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Cold vs warm (model server) scoring stage, side by side.")
    parser.add_argument("--papers", type=int, default=30, help="papers per group (the e2e test's 30)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="scoring.threads (the e2e test's 1)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--abstracts", type=Path, help="arxiv_balanced_by_archive_max500.jsonl (default: shared data)")
    parser.add_argument("--workdir", type=Path, help="keep the runs here (default: a temporary folder)")
    args = parser.parse_args(argv)

    abstracts = args.abstracts or _models.default_abstracts_path()
    if abstracts is None or not abstracts.is_file():
        raise SystemExit("bench_warm_server: no abstracts; set RMEVAL_SHARED_DATA or pass --abstracts")
    root = args.workdir or Path(tempfile.mkdtemp(prefix="bench-warm-"))
    snapshot = prepare_snapshot(root, abstracts, args.papers)
    entries = model_entries(root, abstracts, args.device)
    models = [entry["name"] for entry in entries]
    groups = list(PAPER_GROUPS)
    score_targets = [f"results/scores/fairness/{m}/{g}.parquet" for m in models for g in groups]
    prep_targets = [f"results/data/{g}.parquet" for g in groups] + [f"results/models/{m}.downloaded.json" for m in models]

    load = os.getloadavg()
    walls: dict[str, float] = {}
    for mode in MODES:
        workdir = root / mode
        workdir.mkdir(parents=True, exist_ok=True)
        configfile = workdir / "config.yaml"
        write_config(configfile, snapshot, entries, papers_per_group=args.papers,
                     extra={"scoring": {"threads": args.threads, "server": mode == "warm"}})
        snakemake(workdir, configfile, prep_targets, args.cores)
        walls[mode] = round(snakemake(workdir, configfile, score_targets, args.cores), 2)
        print(f"{mode}: scoring stage {walls[mode]} s", file=sys.stderr, flush=True)

    results: dict[str, Any] = {"benchmark": "bench_warm_server", "cpu": cpu_name(), "device": args.device,
                               "load_average_before": [round(x, 2) for x in load],
                               "load_average_after": [round(x, 2) for x in os.getloadavg()],
                               "groups": len(groups), "papers_per_group": args.papers, "cores": args.cores,
                               "threads": args.threads, "scoring_stage_wall_s": walls, "models": {}}
    for mode in MODES:
        for model, jobs in collect(root / mode, models, groups).items():
            results["models"].setdefault(model, {})[mode] = summarise(jobs)
    for model in models:
        entry = results["models"][model]
        entry["rewards_identical"] = identical_rewards(root / "cold", root / "warm", model, groups)
        entry["startup_goal_met"] = (entry["warm"]["later_startup_max_s"] or 0.0) <= STARTUP_GOAL_S

    print(f"CPU: {results['cpu']}; load average before {results['load_average_before']}, "
          f"after {results['load_average_after']}\n")
    print(f"scoring stage wall (both models, {len(score_targets)} jobs, --cores {args.cores}): "
          f"cold {walls['cold']} s, warm {walls['warm']} s\n")
    print("| model | mode | first job start-up s | later jobs start-up median / max s | fixed cost total s "
          "| forward passes total s | rewards identical |")
    print("|---|---|---|---|---|---|---|")
    for model in models:
        for mode in MODES:
            s = results["models"][model][mode]
            print(f"| {model} | {mode} | {s['first_startup_s']} | {s['later_startup_median_s']} / "
                  f"{s['later_startup_max_s']} | {s['fixed_total_s']} | {s['score_total_s']} "
                  f"| {results['models'][model]['rewards_identical']} |")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
