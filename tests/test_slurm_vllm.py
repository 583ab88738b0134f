"""`engine: vllm` inside Slurm allocations on CI's real single-node cluster (.ci/slurm/start.sh: two count-only
GPUs): the `slurm_vllm` scenario of .test/ (one set of tiny weights registered as `tiny-vllm`, engine vllm, and as
`tiny-hf`, the transformers engine) through profiles/slurm, once, to the statistics.

Checked on that one run: every scoring job of `tiny-vllm` ran in its model's Slurm allocation through the
allocation's model server (started in the batch step by the allocation's launcher), which started one `vllm serve`
for all of them (one pid, `starts` 1) from the vLLM environment, its log under the run's `.snakemake/rmeval-vllm/`;
`.meta.json` says honestly where it ran (the CPU, tensor parallel 1: the count-only GPUs compute nothing); every
reward within 1e-4 of the transformers engine's on the same weights, and the tables the same; every Slurm job of the
run COMPLETED; and no vLLM process left once the run is over.

Skips, saying why, without a cluster (tests/slurm_helpers.py) or without the vLLM environment (tests/vllm_helpers.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scenarios import Scenario, prepare
from slurm_helpers import CI_CLUSTER_FLAGS, SLURM_PROFILE, cluster_problem, kill_processes_in, workflow_env
from test_score_invariance import assert_same_tables
from vllm_helpers import group_members, requires_vllm
from workflow_helpers import REPO_ROOT, rmeval_in_process, run_snakemake_process, workflow_argv

pytestmark = [pytest.mark.vllm, pytest.mark.slurm, pytest.mark.workflow, pytest.mark.e2e, requires_vllm]

SCENARIO = Scenario("slurm_vllm")
VLLM_MODEL, REFERENCE_MODEL = "tiny-vllm", "tiny-hf"
GROUPS = tuple(SCENARIO.config()["groups"])
REWARD_ATOL = 1e-4  # the parity bound, CPU fp32 (tests/test_vllm_parity.py)
STOP_WAIT_S = 60.0  # the allocation's end -> its model server exits -> vLLM's graceful stop (20 s) or SIGKILL
VLLM_SERVER_MODULE = "vllm.entrypoints.openai.api_server"


@dataclass
class SlurmVllmRun:
    workdir: Path
    output: str
    wall_s: float
    run_ids: list[str]

    @property
    def results(self) -> Path:
        return self.workdir / "results"

    def meta(self, model: str, group: str) -> dict:
        return json.loads((self.results / "scores" / "fairness" / model / f"{group}.meta.json").read_text())

    def scores(self, model: str, group: str) -> pd.DataFrame:
        return pd.read_parquet(self.results / "scores" / "fairness" / model / f"{group}.parquet")

    def job_log(self, model: str, group: str) -> str:
        return (self.workdir / "logs" / "fairness" / "score" / model / f"{group}.log").read_text()


@pytest.fixture(scope="module")
def slurm_cluster() -> None:
    problem = cluster_problem()
    if problem is not None:
        pytest.skip(problem)


@pytest.fixture(scope="module")
def slurm_vllm_run(slurm_cluster: None, shared_data: Path,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmVllmRun]:
    workdir = tmp_path_factory.mktemp("slurm-vllm")
    prepare(SCENARIO, workdir, shared_data)
    args = ["--workflow-profile", str(SLURM_PROFILE), *CI_CLUSTER_FLAGS, "--jobs", "4", "--local-cores", "2"]
    started = time.monotonic()
    try:
        result = run_snakemake_process(workflow_argv(workdir, SCENARIO.configfile, *args, "fairness_stats"),
                                       env=workflow_env(workdir), timeout=1200)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-8000:]
        yield SlurmVllmRun(workdir, output, time.monotonic() - started, re.findall(r"SLURM run ID: (\S+)", output))
    finally:
        kill_processes_in(workdir.resolve())


def _engine(run: SlurmVllmRun, group: str) -> dict:
    return run.meta(VLLM_MODEL, group)["adapter_details"]["engine"]


def test_vllm_jobs_score_through_one_vllm_server_per_allocation(slurm_vllm_run: SlurmVllmRun) -> None:
    from rmeval.vllm_engine.environment import environment_path

    run = slurm_vllm_run
    allocations, servers = set(), set()
    for group in GROUPS:
        log = run.job_log(VLLM_MODEL, group)
        found = re.search(r"Slurm job (\d+): scoring through this allocation's model server", log)
        assert found, f"{VLLM_MODEL}/{group} did not score through its allocation's model server:\n{log[-2000:]}"
        allocations.add(found.group(1))
        meta = run.meta(VLLM_MODEL, group)
        server, engine = meta["model_server"], meta["adapter_details"]["engine"]
        assert server is not None, meta
        servers.add((server["pid"], server["key"]))
        # The allocation's model server started vLLM: once for all of its jobs, from the environment, with its log
        # where the user finds it (the run's .snakemake/rmeval-vllm/).
        assert engine["name"] == "vllm" and engine["started_by_rmeval"], engine
        assert engine["starts"] == 1 and engine["environment"] == str(environment_path()), engine
        log_path = Path(engine["log"])
        assert log_path.parent == run.workdir.resolve() / ".snakemake" / "rmeval-vllm", engine
        assert "rmeval: starting " in log_path.read_text() and VLLM_SERVER_MODULE in log_path.read_text()
        assert engine["tokens_sent"] > 0, engine
        # Said honestly: the count-only GPUs of this cluster compute nothing, so vLLM (its CPU build) ran on the CPU,
        # tensor parallel 1, and the allocation's GPU is named as unused.
        assert meta["device"] == "vllm (cpu)" and meta["adapter_details"]["n_gpus"] == 0, meta
        assert (engine["device"], engine["build"], engine["tensor_parallel_size"]) == ("cpu", "cpu", 1), engine
        assert engine["where"] == ("the CPU, tensor parallel 1, 1 thread(s); the 1 GPU(s) asked for stay unused: torch "
                                   f"sees no CUDA device (CUDA_VISIBLE_DEVICES={meta['gpu_devices'][0]})"), engine
    assert len(allocations) == 1, f"{VLLM_MODEL}'s jobs ran in {sorted(allocations)}: one allocation per model"
    assert len(servers) == 1, servers
    vllm_servers = {(_engine(run, group)["pid"], _engine(run, group)["log"]) for group in GROUPS}
    assert len(vllm_servers) == 1, vllm_servers
    ((vllm_pid, _),) = vllm_servers
    starters = [group for group in GROUPS if run.meta(VLLM_MODEL, group)["model_server"]["started_by_this_job"]]
    assert len(starters) == 1, starters  # in the batch step, by the allocation's launcher: it outlives job steps
    assert "in this allocation's batch step" in run.job_log(VLLM_MODEL, starters[0])
    (server_log,) = (run.workdir / ".snakemake" / "rmeval-servers").glob(f"{VLLM_MODEL}-*.log")
    # Stopped by the model server when the allocation's Snakemake process ended (not left to the parent-death
    # signal), within moments of the allocation's end.
    stopped = re.compile(rf"exiting: the run that started it .* has ended.*\n.*stopped the vLLM server for "
                         rf"'{VLLM_MODEL}' \(pid {vllm_pid}")
    deadline = time.monotonic() + STOP_WAIT_S
    while not stopped.search(server_log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.5)
    text = server_log.read_text()
    assert stopped.search(text), text[-3000:]
    assert len(re.findall(rf"started vLLM server for '{VLLM_MODEL}'", text)) == 1, text[-3000:]
    assert f"vLLM for '{VLLM_MODEL}': the CPU, tensor parallel 1" in text, text[-3000:]
    print(f"\nSlurm + vLLM run: {run.wall_s:.0f} s; vLLM ready in {_engine(run, GROUPS[0])['ready_s']} s "
          f"(allocation {allocations.pop()})")


def test_vllm_rewards_and_tables_equal_the_transformers_engine(slurm_vllm_run: SlurmVllmRun, tmp_path: Path) -> None:
    run = slurm_vllm_run
    worst = 0.0
    for group in GROUPS:
        vllm, reference = run.scores(VLLM_MODEL, group), run.scores(REFERENCE_MODEL, group)
        assert vllm["id"].tolist() == reference["id"].tolist(), group
        for column in ("n_tokens", "truncated"):
            assert vllm[column].tolist() == reference[column].tolist(), f"{group}: {column}"
        gap = np.abs(vllm["reward"].to_numpy() - reference["reward"].to_numpy())
        assert gap.max() <= REWARD_ATOL, f"{group}: |transformers - vllm| = {gap.max():.2e}"
        worst = max(worst, float(gap.max()))
    # The run's tables, and the same statistics with the two engines' score files swapped between the model names
    # (a model's bootstrap and permutation draws are seeded by its name, so each row keeps its draws): equal.
    swapped = tmp_path / "scores"
    scores = run.results / "scores" / "fairness"
    shutil.copytree(scores / VLLM_MODEL, swapped / REFERENCE_MODEL)
    shutil.copytree(scores / REFERENCE_MODEL, swapped / VLLM_MODEL)
    _fairness_stats(run.workdir, swapped, tmp_path / "tables")
    ran = tmp_path / "run-tables"
    shutil.copytree(run.results / "tables", ran)
    for tables in (ran, tmp_path / "tables"):  # the record names the score folder it read: a path, not a result
        record = tables / "fairness_stats.json"
        record.write_text(json.dumps({**json.loads(record.read_text()), "scores": "<scores>"}))
    assert_same_tables(ran, tmp_path / "tables")
    print(f"\nmax |transformers - vllm| = {worst:.2e}; tables equal with the engines swapped")


def _fairness_stats(workdir: Path, scores: Path, out: Path) -> None:
    """`rmeval fairness-stats` as the run's rule calls it (its settings from the run's plan, rmeval.run_plan)."""
    from rmeval import run_plan
    from rmeval.config_check import config_schema, fill_defaults
    from rmeval.io import paths

    config = SCENARIO.config()
    fill_defaults(config, config_schema())
    with contextlib.chdir(workdir):  # the plan and the data manifests are relative to the run directory
        plan = run_plan.plan_run(config, lambda value: paths.config_path(value, REPO_ROOT, workdir))
        settings = plan.settings("fairness", "fairness_stats")
        assert rmeval_in_process(["fairness-stats", "--scores", str(scores), "--out", str(out),
                                  "--settings", settings]) == 0


def test_slurm_jobs_completed_and_no_vllm_process_is_left(slurm_vllm_run: SlurmVllmRun) -> None:
    run = slurm_vllm_run
    assert run.run_ids, run.output[-3000:]
    states = subprocess.run(["squeue", "-h", "-t", "all", f"--name={run.run_ids[0]}", "-o", "%i %T %k"],
                            capture_output=True, text=True, check=True).stdout.split("\n")
    jobs = [line.split() for line in states if line.strip()]
    assert len(jobs) == 2, jobs  # one allocation per model
    assert all(state == "COMPLETED" for _, state, _ in jobs), jobs
    pid = _engine(run, GROUPS[0])["pid"]
    deadline = time.monotonic() + STOP_WAIT_S
    while (left := group_members(pid) + _vllm_servers_of(run.workdir)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"vLLM processes left after the run: {left} (server group {pid})"


def _vllm_servers_of(workdir: Path) -> list[int]:
    """Live `vllm serve` processes of this run: the server module, working in the run directory."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = Path(os.readlink(entry / "cwd").removesuffix(" (deleted)"))
        except OSError:
            continue
        if VLLM_SERVER_MODULE in command and cwd.is_relative_to(workdir.resolve()):
            found.append(int(entry.name))
    return found
