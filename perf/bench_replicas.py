"""One model server vs warm replicas (`scoring.max_replicas: 1` vs the default, as many as the GPUs hold), side by
side in one invocation: one model scoring the fairness groups of the end-to-end scenario, the scoring stage alone
timed (`snakemake <every score file>` after the data stage), the same run twice.

On a GPU box (`--device cuda`, perf/bench_gpu.sh replicas) every job asks for one GPU and Snakemake admits as many
at once as there are GPUs. On CPU (`--fake-gpus N`, the default) the same choices and GPU locks run on N fake
devices (RMEVAL_GPU_COUNT, a private lock folder) while the forward passes share the CPU cores: replicas then buy
parallel start-up and tokenisation, not compute, so the CPU numbers show the mechanism's overhead and the GPU ones
its gain.

Reported per mode: the scoring stage's wall time, each job's start-up (`startup_s` in its .meta.json: process start
to the first forward pass, model load or server connect included), which jobs each replica served (its index, GPU
ids, pid) and whether the rewards match the single-server run bit for bit. The last line of stdout is one JSON
object.

    python perf/bench_replicas.py --smoke           # a few seconds of scoring: checks the script (2 fake GPUs)
    python perf/bench_replicas.py                   # CPU, 4 fake GPUs, 8 groups x 30 papers, the ~28M model
    python perf/bench_replicas.py --device cuda     # a GPU box (perf/bench_gpu.sh replicas)
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
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import _models  # noqa: E402
from _runs import cpu_name, prepare_snapshot, snakemake, write_config  # noqa: E402
from workflow_helpers import PAPER_GROUPS, tiny_model_entry  # noqa: E402

MODES = {"one-server": 1, "replicas": None}  # scoring.max_replicas


def model_entry(root: Path, abstracts: Path, device: str, smoke: bool) -> dict[str, Any]:
    if smoke:
        from rmeval.testing.tiny_model import build_tiny_model

        build_tiny_model(root / "tiny-model", seed=0)
        entry = tiny_model_entry("tiny", root / "tiny-model")
    else:
        entry = tiny_model_entry("bench-28m", _models.ensure_model(abstracts))
    entry["resources"] = {"gpu": 1, "mem_mb": 8000 if device == "cuda" else 2000, "runtime": 30}
    if device == "cuda":
        entry["dtype"] = "bfloat16"
    return entry


def collect(workdir: Path, model: str, groups: list[str]) -> list[dict[str, Any]]:
    jobs = []
    for group in groups:
        meta = json.loads((workdir / "results" / "scores" / "fairness" / model / f"{group}.meta.json").read_text())
        server = meta["model_server"] or {}
        jobs.append({"group": group, "startup_s": meta["startup_s"], "score_s": meta["score_s"],
                     "replica": server.get("replica"), "server": server.get("server"), "pid": server.get("pid"),
                     "gpu_devices": server.get("gpu_devices"), "started_replica": server.get("started_by_this_job"),
                     "jobs_before": server.get("jobs_before")})
    return jobs


def summarise(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    startups = [job["startup_s"] for job in jobs]
    served: dict[str, dict[str, Any]] = {}
    for job in sorted(jobs, key=lambda job: (job["replica"], job["jobs_before"])):
        entry = served.setdefault(str(job["replica"]), {"gpu_devices": job["gpu_devices"], "pid": job["pid"],
                                                        "groups": []})
        entry["groups"].append(job["group"])
    return {"jobs": len(jobs), "startup_median_s": round(statistics.median(startups), 3),
            "startup_max_s": round(max(startups), 3), "score_total_s": round(sum(j["score_s"] for j in jobs), 2),
            "replicas": served}


def identical_rewards(a: Path, b: Path, model: str, groups: list[str]) -> bool:
    import pandas as pd

    return all(pd.read_parquet(a / "results" / "scores" / "fairness" / model / f"{g}.parquet").equals(
        pd.read_parquet(b / "results" / "scores" / "fairness" / model / f"{g}.parquet")) for g in groups)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="One model server vs warm replicas, side by side.")
    parser.add_argument("--papers", type=int, default=30, help="papers per group")
    parser.add_argument("--groups", type=int, default=len(PAPER_GROUPS), help="how many of the 8 groups to score")
    parser.add_argument("--fake-gpus", type=int, default=4, help="fake devices on CPU (ignored with --device cuda)")
    parser.add_argument("--cores", type=int, help="snakemake --cores (default: the GPU count x threads, at least 2)")
    parser.add_argument("--threads", type=int, default=1, help="scoring.threads")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--smoke", action="store_true", help="tiny model, 2 fake GPUs, 3 groups x 4 papers")
    parser.add_argument("--abstracts", type=Path, help="arxiv_balanced_by_archive_max500.jsonl (default: shared data)")
    parser.add_argument("--workdir", type=Path, help="keep the runs here (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.papers, args.groups, args.fake_gpus = 4, 3, 2

    abstracts = args.abstracts or _models.default_abstracts_path()
    if abstracts is None or not abstracts.is_file():
        raise SystemExit("bench_replicas: no abstracts; set RMEVAL_SHARED_DATA or pass --abstracts")
    root = args.workdir or Path(tempfile.mkdtemp(prefix="bench-replicas-"))
    snapshot = prepare_snapshot(root, abstracts, args.papers)
    if args.device == "cpu":  # fake devices for Snakemake's gpu cap, the jobs and their servers alike
        os.environ.update({"RMEVAL_GPU_COUNT": str(args.fake_gpus), "RMEVAL_GPU_LOCK_DIR": str(root / "gpu-locks")})
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    from rmeval.devices import local_gpu_cap

    gpus = local_gpu_cap()
    cores = args.cores or max(2, gpus * args.threads)
    entry = model_entry(root, abstracts, args.device, args.smoke)
    model = entry["name"]
    groups = list(PAPER_GROUPS)[: args.groups]
    score_targets = [f"results/scores/fairness/{model}/{g}.parquet" for g in groups]
    prep_targets = [f"results/data/{g}.parquet" for g in groups] + [f"results/models/{model}.downloaded.json"]

    load = os.getloadavg()
    walls: dict[str, float] = {}
    for mode, cap in MODES.items():
        workdir = root / mode
        workdir.mkdir(parents=True, exist_ok=True)
        configfile = workdir / "config.yaml"
        write_config(configfile, snapshot, [entry], papers_per_group=args.papers,
                     extra={"scoring": {"threads": args.threads, "max_replicas": cap}})
        snakemake(workdir, configfile, prep_targets, cores)
        walls[mode] = round(snakemake(workdir, configfile, score_targets, cores), 2)
        print(f"{mode}: scoring stage {walls[mode]} s", file=sys.stderr, flush=True)

    results: dict[str, Any] = {
        "benchmark": "bench_replicas", "cpu": cpu_name(), "device": args.device, "gpus": gpus,
        "fake_gpus": args.device == "cpu", "model": model, "groups": len(groups), "papers_per_group": args.papers,
        "cores": cores, "threads": args.threads, "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()], "scoring_stage_wall_s": walls,
        "modes": {mode: summarise(collect(root / mode, model, groups)) for mode in MODES},
        "rewards_identical": identical_rewards(root / "one-server", root / "replicas", model, groups),
    }
    print(f"CPU: {results['cpu']}; {gpus} {'fake ' if results['fake_gpus'] else ''}GPU(s); --cores {cores}; "
          f"load average before {results['load_average_before']}, after {results['load_average_after']}\n")
    print("| mode | scoring stage wall s | job start-up median / max s | forward passes total s | replicas "
          "| rewards identical |")
    print("|---|---|---|---|---|---|")
    for mode in MODES:
        s = results["modes"][mode]
        print(f"| {mode} | {walls[mode]} | {s['startup_median_s']} / {s['startup_max_s']} | {s['score_total_s']} "
              f"| {len(s['replicas'])} | {results['rewards_identical']} |")
    print("\njobs each replica served (replicas mode):")
    for index, served in results["modes"]["replicas"]["replicas"].items():
        print(f"- replica {index} (GPU {','.join(served['gpu_devices'] or ['-'])}, pid {served['pid']}): "
              f"{', '.join(served['groups'])}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
