"""The SLURM path on a real single-node cluster (started by .ci/slurm/start.sh: two count-only GPUs): the real
workflow (the `slurm` scenario of .test/) through profiles/slurm, its master killed mid-run and resumed, each
model's scoring jobs in one Slurm job per run (`scoring.slurm_grouping: model`, the default) that loads the model
once and asks for one job's GPUs and memory and the sum of its jobs' runtimes, the two models' allocations on
distinct GPUs, and the cluster's scores equal to this machine's, bit for bit. (The per-job mode is measured side
by side with this one, rewards compared, by perf/bench_slurm_grouping.py.)

The tests skip, with the reason, when no cluster answers `sinfo` or the executor plugin is missing.
(Killing a local master and resuming: tests/drills/test_drill_kills.py; local GPU claims: tests/test_devices.py.)
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from scenarios import Scenario, TinyModels, prepare
from slurm_helpers import (
    CI_CLUSTER_FLAGS,
    SLURM_PROFILE,
    cluster_problem,
    kill_processes_in,
    slurm_job,
    workflow_env,
)
from workflow_helpers import run_snakemake_process, workflow_argv

REPO = Path(__file__).resolve().parents[1]
@pytest.fixture(scope="module")
def slurm_cluster() -> None:
    problem = cluster_problem()
    if problem is not None:
        pytest.skip(problem)


# --- the real workflow: a tiny config through profiles/slurm, killed mid-run and resumed ---

# The `slurm` scenario of .test/: 3 one-GPU scoring jobs on 2 GPUs run in two waves, so a kill after the first
# leaves work.
SCENARIO = Scenario("slurm")
E2E_GROUPS = tuple(SCENARIO.config()["groups"])
E2E_MODELS = tuple(model["name"] for model in SCENARIO.config()["models"])


@dataclass
class ResumedRun:
    """A workflow run whose master was killed with SIGKILL after its first score file, then rerun."""

    workdir: Path
    completed_at_kill: dict[str, tuple[int, str]]  # meta path -> (mtime_ns, text) of pairs done before the kill
    first_output: str
    rerun_output: str
    wall_s: float
    slurm_run_ids: list[str]

    @property
    def results(self) -> Path:
        return self.workdir / "results"


def _incomplete_outputs(workdir: Path) -> set[str]:
    """Outputs Snakemake marked as started but not finished (`.snakemake/incomplete/<base64 path>`)."""
    markers = workdir / ".snakemake" / "incomplete"
    names = [p.name for p in markers.iterdir()] if markers.is_dir() else []
    return {base64.urlsafe_b64decode(name).decode(errors="replace") for name in names if not name.startswith("@")}


def _slurm_job_of(meta: Path, workdir: Path) -> str | None:
    """The Slurm job id a pair's scoring job logged (rmeval.devices writes it when the job starts)."""
    model, group = meta.parent.name, meta.name.removesuffix(".meta.json")
    log = workdir / "logs" / "fairness" / "score" / model / f"{group}.log"
    found = re.search(r"Slurm job (\d+):", log.read_text()) if log.exists() else None
    return found.group(1) if found else None


def _recorded_complete(workdir: Path) -> list[Path]:
    """Score metadata files of pairs whose job Snakemake recorded as finished. Inside a model's allocation the
    jobstep records each job as it ends (it clears the job's `.snakemake/incomplete` markers on the shared file
    system) while the allocation goes on with the model's next job."""
    incomplete = _incomplete_outputs(workdir)
    done = []
    for meta in (workdir / "results" / "scores").glob("*/*/*.meta.json"):
        relative = meta.relative_to(workdir).as_posix()
        if relative in incomplete or relative.replace(".meta.json", ".parquet") in incomplete:
            continue
        if _slurm_job_of(meta, workdir) is None:
            continue
        done.append(meta)
    return done


# What the Slurm runs build: every score file and the statistics over them (rule fairness_stats writes every
# table), the part a cluster changes. Figures, the summary and the report read those tables on the login node
# like any local run: the `fairness` scenario builds them.
RUN_TARGETS = ["fairness_stats"]


def _run_killed_then_resumed(workdir: Path, args: list[str], env: dict[str, str]) -> ResumedRun:
    arguments = workflow_argv(workdir, SCENARIO.configfile, *args, *RUN_TARGETS)
    started = time.monotonic()
    first_log = workdir / "first-run.log"
    with first_log.open("w") as log:
        # Own session: the kill takes the master and its local children at once, like a lost login shell.
        master = subprocess.Popen([sys.executable, "-m", "snakemake", *arguments], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + 600
    while not _recorded_complete(workdir):
        if master.poll() is not None:
            pytest.fail(f"the run ended before it could be killed:\n{first_log.read_text()[-6000:]}")
        if time.monotonic() > deadline:
            os.killpg(master.pid, signal.SIGKILL)
            pytest.fail(f"no score file after 600 s:\n{first_log.read_text()[-6000:]}")
        time.sleep(0.2)
    os.killpg(master.pid, signal.SIGKILL)
    master.wait()
    # Completed = Snakemake recorded the job as finished. A job that wrote its files in the instant
    # before the kill, before the master saw it end, is still marked incomplete and runs again.
    completed = {str(p): (p.stat().st_mtime_ns, p.read_text()) for p in _recorded_complete(workdir)}
    first_output = first_log.read_text()
    run_ids = re.findall(r"SLURM run ID: (\S+)", first_output)
    assert run_ids, first_output[-4000:]
    # The killed master cannot cancel its jobs: do what the README tells users to do.
    subprocess.run(["scancel", f"--name={run_ids[0]}"], check=True)
    for _ in range(150):
        live = subprocess.run(["squeue", "-h", f"--name={run_ids[0]}", "-t", "PENDING,RUNNING,COMPLETING"],
                              capture_output=True, text=True, check=True).stdout.strip()
        if not live:
            break
        time.sleep(0.2)
    unlock = run_snakemake_process([*arguments, "--unlock"], env=env, timeout=300)
    assert unlock.returncode == 0, unlock.stderr[-4000:]
    rerun = run_snakemake_process(arguments, env=env, timeout=900)
    rerun_output = rerun.stdout + rerun.stderr
    assert rerun.returncode == 0, rerun_output[-8000:]
    run_ids += re.findall(r"SLURM run ID: (\S+)", rerun_output)
    return ResumedRun(workdir, completed, first_output, rerun_output, time.monotonic() - started, run_ids)


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster: None, shared_data: Path, tiny_models: TinyModels,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[ResumedRun]:
    workdir = tmp_path_factory.mktemp("slurm-run")
    prepare(SCENARIO, workdir, shared_data, tiny_models.copy_to)
    args = ["--workflow-profile", str(SLURM_PROFILE), *CI_CLUSTER_FLAGS, "--jobs", "6", "--local-cores", "2"]
    try:
        yield _run_killed_then_resumed(workdir, args, workflow_env(workdir))
    finally:
        kill_processes_in(workdir.resolve())


def _assert_completed_pairs_not_rescored(run: ResumedRun) -> None:
    assert run.completed_at_kill, "the kill came before any pair was complete"
    for meta, (mtime_ns, text) in run.completed_at_kill.items():
        path = Path(meta)
        assert path.stat().st_mtime_ns == mtime_ns and path.read_text() == text, f"{meta} was re-scored"
        relative = path.relative_to(run.workdir).as_posix().replace(".meta.json", ".parquet")
        scheduled = re.search(rf"^\s*output: .*{re.escape(relative)}", run.rerun_output, flags=re.MULTILINE)
        assert scheduled is None, f"the rerun scheduled {relative} again"
    all_metas = set(map(str, run.results.glob("scores/*/*/*.meta.json")))
    assert len(all_metas) == len(E2E_MODELS) * len(E2E_GROUPS)
    assert all_metas - set(run.completed_at_kill), "nothing was left to score after the kill"


def _minutes(limit: str) -> int:
    """scontrol's TimeLimit ([days-]hours:minutes:seconds) in minutes."""
    days, _, clock = limit.rpartition("-")
    hours, minutes, _seconds = (int(part) for part in clock.split(":"))
    return (int(days) if days else 0) * 1440 + hours * 60 + minutes


@pytest.mark.slurm
@pytest.mark.e2e
def test_each_model_loads_once_per_allocation_that_asks_for_one_jobs_gpus(slurm_run: ResumedRun) -> None:
    from datetime import datetime

    config = SCENARIO.config()
    registry = {model["name"]: model["resources"] for model in config["models"]}
    allocations: dict[str, list[dict]] = {}
    for model in E2E_MODELS:
        for group in E2E_GROUPS:
            log = (slurm_run.workdir / "logs" / "fairness" / "score" / model / f"{group}.log").read_text()
            found = re.search(r"Slurm job (\d+): scoring through this allocation's model server", log)
            assert found, f"{model}/{group} did not score through its allocation's model server:\n{log[-2000:]}"
            meta = json.loads((slurm_run.results / "scores" / "fairness" / model / f"{group}.meta.json").read_text())
            server = meta["model_server"]
            assert server is not None and meta["gpu_devices"] == server["gpu_devices"], meta
            if server["started_by_this_job"]:  # in the batch step, by the allocation's launcher: it outlives steps
                assert "started model server for" in log and "in this allocation's batch step" in log, log[-2000:]
            allocations.setdefault(found.group(1), []).append(
                {"pair": f"{model}/{group}", "model": model, "server": server, "startup_s": meta["startup_s"]})
    rows = []
    for job_id, pairs in allocations.items():
        slurm = slurm_job(job_id)
        (model,) = {pair["model"] for pair in pairs}  # one model per allocation
        # One load: one server (pid and key) served every pair, started by exactly one of them.
        assert len({(pair["server"]["pid"], pair["server"]["key"]) for pair in pairs}) == 1, pairs
        assert sum(pair["server"]["started_by_this_job"] for pair in pairs) == 1, pairs
        assert sorted(pair["server"]["jobs_before"] for pair in pairs) == list(range(len(pairs))), pairs
        # Snakemake's group job: named after the model's group, asking for the registry entry's GPUs and memory
        # and the sum of its jobs' runtimes (the members that ran here; a killed allocation had more).
        assert slurm["JobName"] in slurm_run.slurm_run_ids
        assert slurm.get("Comment") == f"rule_rmeval-score-{model}_score_fairness", slurm
        assert slurm["TresPerJob"] in {f"gres/gpu:{registry[model]['gpu']}", f"gres:gpu:{registry[model]['gpu']}"}, slurm
        assert slurm["MinMemoryNode"] == f"{registry[model]['mem_mb']}M", slurm
        minutes = _minutes(slurm["TimeLimit"])
        assert minutes % registry[model]["runtime"] == 0 and minutes >= len(pairs) * registry[model]["runtime"], slurm
        if slurm["JobName"] != slurm_run.slurm_run_ids[0]:  # the rerun's allocations ran all their members
            assert minutes == len(pairs) * registry[model]["runtime"], (slurm, pairs)
        allowed = {"COMPLETED"} if slurm["JobName"] != slurm_run.slurm_run_ids[0] else {"COMPLETED", "CANCELLED"}
        assert slurm["JobState"] in allowed, slurm
        rows.append({"job": job_id, "model": model, "gpu": pairs[0]["server"]["gpu_devices"],
                     "start": datetime.fromisoformat(slurm["StartTime"]).timestamp(),
                     "end": datetime.fromisoformat(slurm["EndTime"]).timestamp(),
                     "pairs": [pair["pair"] for pair in pairs], "time_limit_min": minutes,
                     "startup_s": [pair["startup_s"] for pair in pairs]})
    print(f"\nSlurm end-to-end (kill + resume): {slurm_run.wall_s:.0f} s; "
          + "; ".join(f"Slurm job {r['job']} ({r['model']}, -t {r['time_limit_min']} min, GPU {r['gpu']}): "
                      f"{r['pairs']} start-up {r['startup_s']} s" for r in rows))
    # Per run, at most one allocation per model.
    per_run = [(slurm_job(row["job"])["JobName"], row["model"]) for row in rows]
    assert len(per_run) == len(set(per_run)), per_run
    # The two models' allocations ran at once (two GPUs) in one of the runs, never sharing a GPU.
    overlapping = [(first, second) for index, first in enumerate(rows) for second in rows[index + 1:]
                   if first["start"] < second["end"] and second["start"] < first["end"]]
    assert overlapping, rows
    for first, second in overlapping:
        assert first["gpu"] != second["gpu"], (first, second)


@pytest.mark.slurm
@pytest.mark.e2e
def test_only_scoring_jobs_go_to_the_cluster(slurm_run: ResumedRun) -> None:
    """Downloads and statistics (like figures and the report) are localrules: they run on the login node."""
    for run_id in slurm_run.slurm_run_ids:
        listing = subprocess.run(["squeue", "-h", "-t", "all", f"--name={run_id}", "-o", "%k"],
                                 capture_output=True, text=True, check=True).stdout.split()
        assert listing and all(comment.startswith("rule_rmeval-score-") for comment in listing), listing


@pytest.mark.slurm
@pytest.mark.e2e
def test_slurm_run_killed_then_resumed_keeps_completed_pairs(slurm_run: ResumedRun) -> None:
    _assert_completed_pairs_not_rescored(slurm_run)


def _scored_on_this_machine(run: ResumedRun, out: Path) -> Path:
    """The Slurm run's group data scored in this process, with the spec and settings the workflow gives a local job
    (rmeval.run_plan, as common.smk plans them): the reference the cluster's score files must equal."""
    from rmeval import run_plan
    from rmeval.config_check import config_schema, fill_defaults
    from rmeval.io import paths
    from workflow_helpers import rmeval_in_process

    config = SCENARIO.config()
    fill_defaults(config, config_schema())
    with contextlib.chdir(run.workdir):  # the config's model paths are relative to the run directory
        plan = run_plan.plan_run(config, lambda value: paths.config_path(value, REPO, run.workdir))
        (jobs,) = plan.score_jobs
        for model in E2E_MODELS:
            for group in E2E_GROUPS:
                args = ["score", "--spec", plan.all_specs[model].to_json(), "--input", jobs.data(model, group),
                        "--output", str(out / model / f"{group}.parquet"), "--threads", str(plan.scoring.threads),
                        "--settings", plan.score_settings(jobs, model)]
                assert rmeval_in_process(args) == 0, f"{model}/{group}"
    return out


@pytest.mark.slurm
@pytest.mark.e2e
def test_slurm_scores_equal_this_machines_and_feed_the_tables(slurm_run: ResumedRun, tmp_path: Path) -> None:
    import pandas as pd

    here = _scored_on_this_machine(slurm_run, tmp_path / "scores")
    for model in E2E_MODELS:
        for group in E2E_GROUPS:
            cluster = slurm_run.results / "scores" / "fairness" / model / f"{group}.parquet"
            pd.testing.assert_frame_equal(pd.read_parquet(cluster), pd.read_parquet(here / model / f"{group}.parquet"),
                                          check_exact=True, obj=f"{model}/{group}")
    names = {p.name for p in (slurm_run.results / "tables").glob("*.csv")}
    assert {"table1_anova.csv", "group_means.csv"} <= names, names
    means = pd.read_csv(slurm_run.results / "tables" / "group_means.csv")
    assert set(means["group"]) == set(E2E_GROUPS), means
