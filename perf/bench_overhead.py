"""Fixed costs users pay before any reward is computed.

1. `rmeval` CLI start-up for the non-scoring commands Snakemake calls many times (goal < 1 s), and
   which heavy modules (torch, transformers, pandas, ...) each one imports just to print --help,
   found with `python -X importtime`;
2. the fixed cost of one scoring job with the tiny model (`rmeval tiny-model`): process start to the
   end of the job minus the forward passes, split into model load, tokenisation and the rest;
3. `snakemake -n` on the full paper config (8 models x 8 groups), and again with RewardMATH enabled
   (goal < 5 s).

Every timing reports wall seconds and the CPU seconds of the child process: on a shared machine the
CPU seconds show the cost itself, the wall seconds what it was like under that load.
The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _models  # noqa: E402 - the benchmark helpers live beside this script

REPO_ROOT = Path(__file__).resolve().parents[1]
NON_SCORING_COMMANDS = ("fairness-stats", "fairness-summary", "fairness-figures", "arxiv-fetch", "arxiv-select",
                        "rewardmath-prepare", "rewardmath-metrics", "rewardmath-figures", "rewardmath-summary", "download-model",
                        "tiny-model", "run-reproduction", "run-summary")
HEAVY_MODULES = ("torch", "transformers", "pandas", "matplotlib", "scipy", "statsmodels", "pyarrow", "datasets",
                 "tokenizers", "numpy", "snakemake", "requests", "arxiv", "yaml", "jsonschema")
STARTUP_GOAL_S = 1.0
DRY_RUN_GOAL_S = 5.0


@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float  # user + system CPU seconds of the child
    returncode: int
    stdout: str
    stderr: str


def run_timed(command: list[str], env: dict[str, str] | None = None, cwd: Path = REPO_ROOT,
              timeout: float = 600) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu, completed.returncode, completed.stdout, completed.stderr)


def rmeval_command() -> list[str]:
    """The console script users run, else `python -m rmeval`."""
    script = shutil.which("rmeval")
    return [script] if script else [sys.executable, "-m", "rmeval"]


def cpu_pressure() -> float | None:
    try:
        first = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except OSError:
        return None
    return float(dict(part.split("=") for part in first.split()[1:])["avg10"])


# --- 1. CLI start-up ---------------------------------------------------------------------------------
def parse_importtime(stderr: str) -> dict[str, float]:
    """Top-level package -> cumulative import seconds, from `python -X importtime` output."""
    cumulative: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = [part.strip() for part in line.removeprefix("import time:").split("|")]
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        name = parts[2]
        if "." in name:
            continue  # a package's own entry (imported before any submodule) carries its cumulative time
        cumulative[name] = max(cumulative.get(name, 0.0), int(parts[1]) / 1e6)
    return cumulative


def interpreter_baseline() -> set[str]:
    """Packages a bare interpreter already imports (site, .pth hooks of this environment): not rmeval's doing."""
    return set(parse_importtime(run_timed([sys.executable, "-X", "importtime", "-c", "pass"]).stderr))


def startup(command: list[str], repeats: int, baseline: set[str]) -> dict[str, Any]:
    timings = [run_timed(command) for _ in range(repeats)]
    failed = [t for t in timings if t.returncode != 0]
    probe = run_timed([sys.executable, "-X", "importtime", "-m", "rmeval", *command[len(rmeval_command()):]])
    imported = {name: seconds for name, seconds in parse_importtime(probe.stderr).items() if name not in baseline}
    heavy = {name: round(imported[name], 3) for name in HEAVY_MODULES if name in imported}
    offenders = sorted(((seconds, name) for name, seconds in imported.items()
                        if name not in ("rmeval", "runpy") and seconds >= 0.01), reverse=True)
    return {
        "command": " ".join(["rmeval", *command[len(rmeval_command()):]]),
        "ok": not failed,
        "error": failed[0].stderr[-500:] if failed else None,
        "wall_s_min": round(min(t.wall_s for t in timings), 3),
        "wall_s_median": round(statistics.median(t.wall_s for t in timings), 3),
        "cpu_s_min": round(min(t.cpu_s for t in timings), 3),
        "heavy_imports": heavy,
        "forbidden_imports": sorted(name for name in ("torch", "transformers", "pandas") if name in imported),
        "slowest_imports": [{"module": name, "s": round(seconds, 3)} for seconds, name in offenders[:6]],
    }


# --- 2. fixed cost of one scoring job ---------------------------------------------------------------
def write_inputs(path: Path, rows: int) -> None:
    data = _models.default_abstracts_path()
    if data is None:
        raise SystemExit("bench_overhead: abstracts not found; set RMEVAL_SHARED_DATA")
    papers = _models.sample_papers(_models.read_papers(data), rows)
    with path.open("w", encoding="utf-8") as handle:
        for paper in papers:
            handle.write(json.dumps({"id": paper.id, "title": paper.title, "abstract": paper.abstract}) + "\n")


def scoring_fixed_cost(workdir: Path, rows: int, threads: int) -> dict[str, Any]:
    cli = rmeval_command()
    model_dir = workdir / "tiny-model"
    build = run_timed([*cli, "tiny-model", str(model_dir)])
    if build.returncode != 0:
        return {"ok": False, "error": build.stderr[-800:]}
    inputs = workdir / "papers.jsonl"
    write_inputs(inputs, rows)
    spec = json.dumps({"name": "tiny", "path": str(model_dir), "resources": {"gpu": 0}})
    output = workdir / "scores" / "tiny.parquet"
    job = run_timed([*cli, "score", "--spec", spec, "--task", "fairness", "--input", str(inputs),
                     "--output", str(output), "--device", "cpu", "--threads", str(threads),
                     "--checkpoint-every", "0"])
    if job.returncode != 0:
        return {"ok": False, "error": job.stderr[-800:]}
    meta = json.loads(output.with_name("tiny.meta.json").read_text())
    inside_job = float(meta["wall_s"])
    return {
        "ok": True,
        "rows": meta["rows"],
        "tokens": meta["tokens"],
        "batches": meta.get("batches"),
        "tiny_model_build_wall_s": round(build.wall_s, 3),
        "process_wall_s": round(job.wall_s, 3),
        "process_cpu_s": round(job.cpu_s, 3),
        # Everything but the forward passes: interpreter, imports, model load, tokenisation, writing.
        "fixed_cost_wall_s": round(job.wall_s - float(meta["score_s"]), 3),
        "load_s": meta.get("load_s"),
        "prepare_s": meta.get("prepare_s"),
        "score_s": meta.get("score_s"),
        "outside_run_job_s": round(job.wall_s - inside_job, 3),  # start-up, CLI imports, exit
    }


# --- 3. snakemake -n on the paper config -------------------------------------------------------------
def dry_run(configfile: Path, label: str) -> dict[str, Any]:
    # Run in the repository like a user; Snakemake's .snakemake/ metadata folder is gitignored there.
    timing = run_timed([sys.executable, "-m", "snakemake", "-n", "--quiet", "rules", "--cores", "1",
                        "--configfile", str(configfile)])
    jobs = None
    for line in timing.stdout.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == "total" and fields[1].isdigit():
            jobs = int(fields[1])
    return {
        "config": label,
        "ok": timing.returncode == 0,
        "error": (timing.stderr + timing.stdout)[-800:] if timing.returncode else None,
        "jobs": jobs,
        "wall_s": round(timing.wall_s, 3),
        "cpu_s": round(timing.cpu_s, 3),
        "goal_s": DRY_RUN_GOAL_S,
    }


def rewardmath_config(workdir: Path) -> Path:
    import yaml

    config = yaml.safe_load((REPO_ROOT / "config" / "config.yaml").read_text())
    # The paper's models scored on RewardMATH too: 8 models x (7 subjects + RewardBench math-prm) more jobs.
    config["rewardmath"] = {**(config.get("rewardmath") or {}), "enabled": True, "models": list(config["models"])}
    path = workdir / "config_with_rewardmath.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="start-up timings per command (min and median)")
    parser.add_argument("--rows", type=int, default=8, help="rows in the scoring job (one batch by default)")
    parser.add_argument("--threads", type=int, default=1, help="--threads of the scoring job")
    parser.add_argument("--skip-dry-run", action="store_true", help="skip the snakemake -n timings")
    args = parser.parse_args(argv)

    cli = rmeval_command()
    pressure = cpu_pressure()
    commands = [[*cli, "--help"]] + [[*cli, name, "--help"] for name in NON_SCORING_COMMANDS]
    baseline = interpreter_baseline()
    startups = [startup(command, args.repeats, baseline) for command in commands]
    with tempfile.TemporaryDirectory(prefix="rmeval-overhead-") as scratch:
        workdir = Path(scratch)
        fixed = scoring_fixed_cost(workdir, args.rows, args.threads)
        dry_runs = [] if args.skip_dry_run else [
            dry_run(REPO_ROOT / "config" / "config.yaml", "config/config.yaml"),
            dry_run(rewardmath_config(workdir), "config/config.yaml + rewardmath (same 8 models)"),
        ]

    print(f"{'command':<42}{'wall min s':>11}{'cpu s':>8}  heavy imports")
    for row in startups:
        heavy = ", ".join(f"{k} {v:.2f}s" for k, v in row["heavy_imports"].items() if k in
                          ("torch", "transformers", "pandas", "matplotlib", "scipy", "statsmodels")) or "-"
        print(f"{row['command']:<42}{row['wall_s_min']:>11.3f}{row['cpu_s_min']:>8.3f}  {heavy}")
    print(f"scoring job fixed cost: {fixed}")
    for row in dry_runs:
        print(f"snakemake -n ({row['config']}): {row['jobs']} jobs, {row['wall_s']} s wall, {row['cpu_s']} s CPU")

    worst_startup = max(row["cpu_s_min"] for row in startups)
    goals = {
        "cli_startup_under_1s": {
            "target_s": STARTUP_GOAL_S,
            "measured_cpu_s_worst": worst_startup,
            "measured_wall_s_worst": max(row["wall_s_min"] for row in startups),
            "met": bool(worst_startup < STARTUP_GOAL_S and all(not row["forbidden_imports"] for row in startups)
                        and all(row["ok"] for row in startups)),
            "commands_importing_torch_transformers_pandas": [row["command"] for row in startups
                                                              if row["forbidden_imports"]],
        },
    }
    if dry_runs:
        goals["snakemake_dry_run_under_5s"] = {
            "target_s": DRY_RUN_GOAL_S,
            "measured_cpu_s": [row["cpu_s"] for row in dry_runs],
            "measured_wall_s": [row["wall_s"] for row in dry_runs],
            "met": all(row["ok"] and row["cpu_s"] < DRY_RUN_GOAL_S for row in dry_runs),
        }
    summary = {
        "benchmark": "bench_overhead",
        "cpu_count": os.cpu_count(),
        "cpu_pressure_avg10_at_start": pressure,
        "load_avg_1m": os.getloadavg()[0],
        "note": "goals are judged on child CPU seconds (wall seconds depend on other tenants of a shared machine)",
        "cli_startup": startups,
        "scoring_job": fixed,
        "snakemake_dry_run": dry_runs,
        "goals": goals,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
