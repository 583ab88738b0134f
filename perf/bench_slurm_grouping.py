"""Per-job against per-model Slurm allocations (`scoring.slurm_grouping: job | model`), side by side in one
invocation, on the `.test/slurm` scenario (two tiny models, three tables each) through profiles/slurm on a real
cluster (CI's single-node one: `bash .ci/slurm/start.sh`; two count-only GPUs).

For each mode a fresh run directory gets the scenario's inputs; the data stage runs first (`--omit-from` the score
rule), then the scoring stage and the statistics are timed (`snakemake fairness_stats`). Reported per mode: model
loads (a job without a model server loaded its model; a server is one load), each model's start-up of its jobs
after the first (`startup_s` in .meta.json: process start to the first forward pass), the stage's wall time, the
Slurm jobs submitted with their requests (squeue: comment, time limit, memory, GPUs), and whether the rewards of
the two modes are identical. The last line of stdout is one JSON object.

    python perf/bench_slurm_grouping.py     # a few minutes on CI's cluster (2 CPUs)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO_ROOT / "tests"))
from _runs import cpu_name  # noqa: E402
from scenarios import Scenario, TinyModels, prepare  # noqa: E402

SCENARIO = Scenario("slurm")
MODES = ("job", "model")
CLUSTER_FLAGS = ["--slurm-no-account", "--slurm-status-command", "squeue",
                 "--slurm-init-seconds-before-status-checks", "1", "--jobs", "6", "--local-cores", "2"]


def _shared_data() -> Path:
    folder = Path(os.environ.get("RMEVAL_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
    if not folder.is_dir():
        raise SystemExit(f"no shared data at {folder} (set RMEVAL_SHARED_DATA)")
    return folder


def _snakemake(workdir: Path, mode: str, *args: str) -> tuple[float, str]:
    overlay = workdir / f"grouping-{mode}.yaml"
    overlay.write_text(json.dumps({"scoring": {"slurm_grouping": mode}}))
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO_ROOT / "Snakefile"), "--directory", str(workdir),
               "--configfile", str(SCENARIO.configfile), str(overlay), "--workflow-profile",
               str(REPO_ROOT / "profiles" / "slurm"), *CLUSTER_FLAGS, *args]
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLURM_", "CUDA_VISIBLE"))}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RMEVAL_GPU_LOCK_DIR": str(workdir / "locks")})
    env.pop("RMEVAL_BENCH_RUN", None)
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise SystemExit(f"snakemake ({mode}) failed in {workdir}:\n{output[-8000:]}")
    return wall, output


def _slurm_requests(output: str) -> list[dict[str, str]]:
    """What each Slurm job of the run asked for (scontrol: comment, time limit, memory, GPUs) and its state."""
    (run_id, *_) = re.findall(r"SLURM run ID: (\S+)", output)
    ids = subprocess.run(["squeue", "-h", "-t", "all", f"--name={run_id}", "-o", "%i"], capture_output=True,
                         text=True, check=True).stdout.split()
    requests = []
    for job_id in sorted(ids, key=int):
        line = subprocess.run(["scontrol", "-o", "show", "job", job_id], capture_output=True, text=True,
                              check=True).stdout
        fields = dict(field.split("=", 1) for field in line.split() if "=" in field)
        requests.append({"job": job_id, "comment": fields.get("Comment", ""), "time_limit": fields["TimeLimit"],
                         "memory": fields.get("MinMemoryNode", ""), "gpus": fields.get("TresPerJob", ""),
                         "state": fields["JobState"]})
    return requests


def _jobs(workdir: Path) -> dict[str, list[dict[str, Any]]]:
    """Per model, its jobs' metadata in the order they finished (the parquet's mtime)."""
    jobs: dict[str, list[dict[str, Any]]] = {}
    for meta_path in sorted((workdir / "results" / "scores").glob("*/*/*.meta.json")):
        meta = json.loads(meta_path.read_text())
        scores = meta_path.with_name(meta_path.name.removesuffix(".meta.json") + ".parquet")
        jobs.setdefault(meta_path.parent.name, []).append(
            {"table": scores.stem, "startup_s": meta["startup_s"], "server": meta.get("model_server"),
             "finished": scores.stat().st_mtime})
    for model_jobs in jobs.values():
        model_jobs.sort(key=lambda job: job["finished"])
    return jobs


def _loads(jobs: list[dict[str, Any]]) -> int:
    return sum(1 for job in jobs if job["server"] is None or job["server"]["started_by_this_job"])


def _same_rewards(first: Path, second: Path) -> bool:
    import pandas as pd

    files = sorted(p.relative_to(first) for p in (first / "results" / "scores").glob("*/*/*.parquet"))
    return bool(files) and all(pd.read_parquet(first / f).equals(pd.read_parquet(second / f)) for f in files)


def main() -> int:
    shared = _shared_data()
    results: dict[str, Any] = {"cpu": cpu_name(), "scenario": ".test/slurm", "modes": {}}
    with tempfile.TemporaryDirectory(prefix="rmeval-bench-slurm-") as tmp:
        models = TinyModels(Path(tmp) / "models")
        for mode in MODES:
            workdir = Path(tmp) / mode
            prepare(SCENARIO, workdir, shared, models.copy_to)
            _snakemake(workdir, mode, "--omit-from", "score_fairness", "fairness_stats")
            wall, output = _snakemake(workdir, mode, "fairness_stats")
            jobs = _jobs(workdir)
            results["modes"][mode] = {
                "wall_s": round(wall, 1),
                "loads": {model: _loads(model_jobs) for model, model_jobs in jobs.items()},
                "startup_first_s": {model: model_jobs[0]["startup_s"] for model, model_jobs in jobs.items()},
                "startup_after_first_s": {model: [job["startup_s"] for job in model_jobs[1:]]
                                          for model, model_jobs in jobs.items()},
                "slurm_jobs": _slurm_requests(output),
            }
        results["rewards_identical"] = _same_rewards(Path(tmp) / "job", Path(tmp) / "model")
    print(f"CPU: {results['cpu']}; scenario {results['scenario']} (2 models x 3 tables, 1 GPU each)")
    print(f"{'mode':<6} {'wall s':>7} {'loads':>6}  start-up of jobs after a model's first (s)  Slurm jobs")
    for mode, row in results["modes"].items():
        after = "; ".join(f"{model}: {', '.join(f'{s:.2f}' for s in values)}"
                          for model, values in row["startup_after_first_s"].items())
        print(f"{mode:<6} {row['wall_s']:>7.1f} {sum(row['loads'].values()):>6}  {after:<42}  {len(row['slurm_jobs'])}")
        for job in row["slurm_jobs"]:
            print(f"         sbatch {job['job']}: {job['comment']} -t {job['time_limit']} --mem {job['memory']} "
                  f"{job['gpus']} ({job['state']})")
    print(f"rewards identical between the modes: {results['rewards_identical']}")
    print(json.dumps(results))
    return 0 if results["rewards_identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
