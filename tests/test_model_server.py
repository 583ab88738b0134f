"""The run's model server (rmeval.scoring.server / client): real `rmeval score` processes, a real server process
over a Unix socket, real SIGKILL / SIGSTOP. Rewards must match the in-process path exactly, and a job whose
server dies or hangs fails with one line and resumes from its checkpoint on the rerun."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.registry import spec_from_mapping
from rmeval.scoring.address import RUN_ENV, owner_alive, run_environment, server_address
from rmeval.scoring.cli import wants_server
from workflow_helpers import RunOwner, torch_threads_kept

# Real `rmeval score` jobs and model-server processes (loads, kills, hangs): out of the fast tier (conftest.py).
pytestmark = pytest.mark.workflow

WORDS = ("we study reward models group fairness across scientific disciplines tensor networks volatility "
         "auctions protein folding beamforming stochastic gradient").split()


def _papers(path: Path, count: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    pd.DataFrame({
        "id": [f"2401.{i:05d}" for i in range(count)],
        "title": [" ".join(rng.choice(WORDS, 5)).title() for _ in range(count)],
        "abstract": [" ".join(rng.choice(WORDS, int(rng.integers(4, 120)))) + "." for _ in range(count)],
        "categories": "cs.LG",
        "group": "computer_science",
    }).to_parquet(path)
    return path


def alive(pid: int) -> bool:
    """Running (a killed server may stay a zombie until something reaps it: that is not running)."""
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _spec(model_dir: Path) -> str:
    return spec_from_mapping({"name": "tiny", "path": str(model_dir), "resources": {"gpu": 0}}, where="test").to_json()


class Run:
    """A working directory and a run id owned by a `sleep` process that stands in for Snakemake."""

    def __init__(self, workdir: Path, model_dir: Path, hang_s: float = 60.0) -> None:
        self.workdir = workdir
        self.spec = _spec(model_dir)
        self.owner = RunOwner(600)
        self.run_id = self.owner.run_id
        self.env = {**os.environ, RUN_ENV: self.run_id, "HF_HUB_OFFLINE": "1", "RMEVAL_SERVER_HANG_S": str(hang_s),
                    "RMEVAL_SERVER_IDLE_S": "120"}

    def command(self, data: Path, output: Path, *extra: str, runner: tuple[str, ...] = ("-m", "rmeval")) -> list[str]:
        return [sys.executable, *runner, "score", "--spec", self.spec, "--task", "fairness", "--input",
                str(data), "--output", str(output), "--threads", "1", "--progress-every", "0", *extra]

    def score(self, data: Path, output: Path, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(data, output, *extra), cwd=self.workdir, env=self.env,
                              capture_output=True, text=True, timeout=300)

    def server_dir(self) -> Path:
        return self.workdir / ".snakemake" / "rmeval-servers"

    def server_pids(self) -> list[int]:
        pids = []
        for state in self.server_dir().glob("*.state"):
            document = json.loads(state.read_text())
            if document.get("phase") != "exiting" and alive(document["pid"]):
                pids.append(document["pid"])
        return pids

    def end(self) -> None:
        self.owner.end()


@pytest.fixture
def run(tmp_path: Path, tiny_model_dir: Path):
    started = Run(tmp_path, tiny_model_dir)
    yield started
    started.end()
    deadline = time.monotonic() + 10
    while started.server_pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    leftover = started.server_pids()
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert not leftover, f"model servers outlived their run: {leftover}"


def _in_process(spec: str, data: Path, output: Path, **settings) -> None:
    """The cold path (model loaded in this process, torch already imported here): the reference."""
    from rmeval.registry import ModelSpec
    from rmeval.scoring.job import JobRequest, run_job

    with torch_threads_kept():
        run_job(JobRequest(spec=ModelSpec.from_json(spec), task="fairness", input=data, output=output,
                           meta=output.with_name(output.stem + ".meta.json"), threads=1, progress_every_s=0,
                           **settings))


def _meta(output: Path) -> dict:
    return json.loads(output.with_name(output.name.removesuffix(".parquet") + ".meta.json").read_text())


def test_jobs_after_the_first_reuse_the_warm_model_with_identical_rewards(run: Run, tmp_path: Path,
                                                                        tiny_model_dir: Path) -> None:
    """Three jobs of one run share its server; a second run in the same directory gets its own, and each server
    ends with its own run."""
    inputs = [_papers(tmp_path / f"g{i}.parquet", 40, seed=i) for i in range(3)]
    for index, data in enumerate(inputs):
        result = run.score(data, tmp_path / "warm" / f"g{index}.parquet")
        assert result.returncode == 0, result.stderr
    metas = [_meta(tmp_path / "warm" / f"g{i}.parquet") for i in range(3)]
    servers = [meta["model_server"] for meta in metas]
    assert servers[0]["started_by_this_job"] and not any(s["started_by_this_job"] for s in servers[1:])
    assert len({s["pid"] for s in servers}) == 1 and [s["jobs_before"] for s in servers] == [0, 1, 2]
    assert all(meta["load_s"] < 1.0 for meta in metas[1:]), [meta["load_s"] for meta in metas]

    other = Run(tmp_path, tiny_model_dir)
    try:
        result = other.score(inputs[0], tmp_path / "other-run" / "g0.parquet")
        assert result.returncode == 0, result.stderr
        other_server = _meta(tmp_path / "other-run" / "g0.parquet")["model_server"]
        assert other_server["started_by_this_job"] and other_server["pid"] != servers[0]["pid"], \
            "two runs in one working directory shared a model server"
        run.end()
        deadline = time.monotonic() + 10
        while alive(servers[0]["pid"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(servers[0]["pid"]), "the server outlived the run that started it"
        assert alive(other_server["pid"]), "the other run's server must keep running"
    finally:
        other.end()
        for pid in other.server_pids():
            os.kill(pid, signal.SIGKILL)
    # The cold path (model loaded in the job) gives the very same rewards, bit for bit.
    for index, data in enumerate(inputs):
        cold = tmp_path / "cold" / f"g{index}.parquet"
        _in_process(run.spec, data, cold)
        assert _meta(cold)["model_server"] is None
        pd.testing.assert_frame_equal(pd.read_parquet(cold), pd.read_parquet(tmp_path / "warm" / f"g{index}.parquet"),
                                      check_exact=True)


def test_copies_tie_within_a_job_and_across_the_server_s_jobs_whatever_the_budget(run: Run, tmp_path: Path) -> None:
    """Group a holds one paper twice, group b holds one of a's papers: scored through one server at budgets 256 and
    65536, every copy has one reward, bit for bit; in-process (no server memory) the rewards agree within the
    engine's tolerance and the copies inside a job still tie."""
    first = pd.read_parquet(_papers(tmp_path / "a.parquet", 30, seed=1))
    first.loc[7, ["title", "abstract"]] = first.loc[3, ["title", "abstract"]].to_numpy()
    first.to_parquet(tmp_path / "a.parquet")
    second = pd.read_parquet(_papers(tmp_path / "b.parquet", 30, seed=2))
    second.loc[0, ["title", "abstract"]] = first.loc[12, ["title", "abstract"]].to_numpy()
    second.to_parquet(tmp_path / "b.parquet")
    for name, budget in (("a", "256"), ("b", "65536")):
        result = run.score(tmp_path / f"{name}.parquet", tmp_path / "warm" / f"{name}.parquet", "--token-budget", budget)
        assert result.returncode == 0, result.stderr
    warm_a, warm_b = (pd.read_parquet(tmp_path / "warm" / f"{n}.parquet").set_index("id")["reward"] for n in "ab")
    ids_a, ids_b = first["id"].tolist(), second["id"].tolist()
    assert warm_a[ids_a[3]] == warm_a[ids_a[7]] and warm_b[ids_b[0]] == warm_a[ids_a[12]]
    meta_a, meta_b = _meta(tmp_path / "warm" / "a.parquet"), _meta(tmp_path / "warm" / "b.parquet")
    assert (meta_a["rows"], meta_a["distinct_sequences"], meta_b["distinct_sequences"]) == (30, 29, 30)
    assert meta_b["adapter_details"]["rows_from_server_memory"] == 1
    for name, warm in (("a", warm_a), ("b", warm_b)):
        cold = tmp_path / "cold" / f"{name}.parquet"
        _in_process(run.spec, tmp_path / f"{name}.parquet", cold, token_budget=65536)
        rewards = pd.read_parquet(cold).set_index("id")["reward"]
        np.testing.assert_allclose(rewards.to_numpy(), warm.loc[rewards.index].to_numpy(), rtol=0,
                                   atol=2e-6 * max(1.0, float(np.abs(warm).max())))
        if name == "a":
            assert rewards[ids_a[3]] == rewards[ids_a[7]]


# The real CLI with a pause before each batch it sends to the server (RMEVAL_DRILL_SLOW_S): still running when
# its server is hit, however fast the machine.
FAULT_RUNNER = Path(__file__).resolve().parent / "drills" / "fault_runner.py"
SLOW_JOB_ROWS = 80


def _start_slow_job(run: Run, data: Path, output: Path, parts: int) -> subprocess.Popen:
    """A job of one-row batches (0.05 s apart) with a checkpoint every 10 rows, hit once `parts` parts exist."""
    command = run.command(data, output, "--max-batch-rows", "1", "--checkpoint-every", "10",
                          runner=(str(FAULT_RUNNER),))
    job = subprocess.Popen(command, cwd=run.workdir, env={**run.env, "RMEVAL_DRILL_SLOW_S": "0.05"},
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    partial = output.with_name(output.name + ".partial")
    deadline = time.monotonic() + 120
    while len(list(partial.glob("part-*.parquet"))) < parts:
        assert job.poll() is None, f"job ended before checkpoint part {parts}: {job.stderr.read()}"
        assert time.monotonic() < deadline, f"no checkpoint part {parts} within 120 s"
        time.sleep(0.005)
    return job


@pytest.fixture(scope="module")
def slow_job_reference(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> tuple[Path, Path]:
    """The slow job's papers and their rewards scored in this process, one row per batch as the faulty job
    scores them: (papers, reference scores)."""
    folder = tmp_path_factory.mktemp("slow-job")
    data = _papers(folder / "physics.parquet", SLOW_JOB_ROWS, seed=7)
    reference = folder / "reference" / "physics.parquet"
    _in_process(_spec(tiny_model_dir), data, reference, max_batch_rows=1)
    return data, reference


def test_a_dead_then_a_hung_server_fails_its_job_with_one_line_and_each_rerun_resumes(
    tmp_path: Path, tiny_model_dir: Path, slow_job_reference: tuple[Path, Path]
) -> None:
    """One job, its server SIGKILLed after 3 checkpoint parts; the rerun's new server SIGSTOPped after 5; the
    third run finishes from the checkpoint, with the rewards of an uninterrupted run."""
    run = Run(tmp_path, tiny_model_dir, hang_s=3.0)
    try:
        data, reference = slow_job_reference
        output = tmp_path / "faulty" / "physics.parquet"
        partial = output.with_name("physics.parquet.partial")
        servers = []
        for fault, parts in (("SIGKILL", 3), ("SIGSTOP", 5)):
            job = _start_slow_job(run, data, output, parts)
            (server,) = run.server_pids()  # a new one each time: the last one was killed by its fault
            assert server not in servers
            servers.append(server)
            os.kill(server, getattr(signal, fault))
            _, stderr = job.communicate(timeout=60)
            assert job.returncode == 2, stderr
            errors = [line for line in stderr.splitlines() if "error:" in line]
            assert len(errors) == 1 and "Traceback" not in stderr, stderr
            # A killed server is found when the job next sends (the job pauses between batches) or waits for it.
            expected = ("died before a batch", "died during a batch") if fault == "SIGKILL" else ("sent nothing for 3 s",)
            assert any(f"model server for 'tiny' (pid {server}) {words}" in errors[0] for words in expected), errors[0]
            assert "Rerun the workflow: this job resumes from its checkpoint" in errors[0]
            if parts > 3:
                assert "resuming from checkpoint" in stderr
            # A hung server is killed by the job that found it, so the rerun does not wait on it.
            deadline = time.monotonic() + 10
            while alive(server) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive(server), f"the {fault} server was left running"
            assert len(list(partial.glob("part-*.parquet"))) >= parts, "the checkpoint must survive a server fault"
            assert not output.exists()

        result = run.score(data, output, "--max-batch-rows", "1", "--checkpoint-every", "10")
        assert result.returncode == 0, result.stderr
        assert "resuming from checkpoint" in result.stderr and "started model server" in result.stderr
        meta = _meta(output)
        assert meta["resumed_rows"] >= 50 and meta["model_server"]["pid"] not in servers
        pd.testing.assert_frame_equal(pd.read_parquet(output), pd.read_parquet(reference), check_exact=True)
    finally:
        run.end()
        for pid in run.server_pids():
            os.kill(pid, signal.SIGKILL)


def test_a_server_that_cannot_load_fails_the_job_with_its_log(run: Run, tmp_path: Path) -> None:
    broken = tmp_path / "no-such-model"
    run.spec = spec_from_mapping({"name": "broken", "path": str(broken), "resources": {"gpu": 0}}, where="t").to_json()
    result = run.score(_papers(tmp_path / "a.parquet", 5), tmp_path / "out" / "a.parquet")
    assert result.returncode == 2
    (line,) = [line for line in result.stderr.splitlines() if "error:" in line]
    assert "model server for 'broken' exited with status 2 while starting" in line
    assert "is not a model directory" in line, line  # the server log's last lines name the cause
    assert not (tmp_path / "out" / "a.parquet").exists()


def test_server_keys_separate_runs_directories_and_settings(tmp_path: Path) -> None:
    base = server_address("m", "1:2", ["spec", "cpu"], workdir=tmp_path)
    assert base == server_address("m", "1:2", ["spec", "cpu"], workdir=tmp_path)
    others = [server_address("m", "1:3", ["spec", "cpu"], workdir=tmp_path),
              server_address("m", "1:2", ["spec", "cpu"], workdir=tmp_path / "other"),
              server_address("m", "1:2", ["spec2", "cpu"], workdir=tmp_path)]
    assert len({base.key, *(other.key for other in others)}) == 4
    assert base.socket.parent == (tmp_path / ".snakemake" / "rmeval-servers").resolve()
    assert owner_alive(run_environment()[RUN_ENV]) and not owner_alive(f"{os.getpid()}:1")


def test_api_models_and_slurm_jobs_need_no_server(tmp_path: Path) -> None:
    local = spec_from_mapping({"name": "m", "path": str(tmp_path)}, where="t")
    api = spec_from_mapping({"name": "n", "path": "nvidia/x", "adapter": "nemotron-api",
                             "options": {"base_url": "http://127.0.0.1:1/v1"}}, where="t")
    in_run = {RUN_ENV: "1:2"}
    assert wants_server(local, None, in_run) and not wants_server(local, None, {})
    # A per-job allocation loads the model in the job; a model's allocation (slurm_grouping: model) serves it.
    assert not wants_server(local, None, {**in_run, "SLURM_JOB_ID": "7"})
    assert wants_server(local, None, {**in_run, "SLURM_JOB_ID": "7", "RMEVAL_SLURM_SERVER": "1"})
    assert not wants_server(local, None, {"SLURM_JOB_ID": "7", "RMEVAL_SLURM_SERVER": "1"})
    assert not wants_server(api, None, in_run) and not wants_server(api, True, in_run)
    assert not wants_server(local, False, in_run) and wants_server(local, True, {})


def test_gpu_waiters_are_counted_and_stale_ones_removed(tmp_path: Path) -> None:
    from rmeval.devices import _try_lock, _waiter_path, gpu_waiters

    fd = _try_lock(_waiter_path(tmp_path))
    assert fd is not None and gpu_waiters(tmp_path) == 1
    os.close(fd)  # as if the waiter had died: its lock is free
    assert gpu_waiters(tmp_path) == 0 and not list(tmp_path.glob("waiting-*"))


def test_a_dead_servers_state_file_is_not_taken_for_a_hung_successor(tmp_path: Path) -> None:
    """The race CI met: a server died (SIGKILL, or killed as hung) and left its state file; the rerun's new server
    has taken the lock but not yet written its own state. The waiting job must not call the newcomer hung (and kill
    the dead pid); a state that goes stale while its own live server holds the lock still is a hang."""
    import threading

    from rmeval.scoring.client import ModelServerError, ServerLaunch, _wait_ready
    from rmeval.scoring.protocol import hold_lock

    address = server_address("m", "1:2", ["spec"], workdir=tmp_path)
    address.directory.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    long_ago = time.time() - 60
    address.state.write_text(json.dumps({"pid": dead.pid, "phase": "ready"}))
    os.utime(address.state, (long_ago, long_ago))
    successor = subprocess.Popen(["sleep", "60"])  # stands in for the new server process
    lock_fd = hold_lock(address.lock)  # ... which holds the lock, its state not written yet
    assert lock_fd is not None
    outcome: dict[str, str] = {}

    def wait() -> None:
        try:
            _wait_ready(ServerLaunch(address, [], "1:2"), "m", 0.2, successor)
        except ModelServerError as error:
            outcome["error"] = str(error)

    waiter = threading.Thread(target=wait, daemon=True)
    try:
        waiter.start()
        waiter.join(1.5)
        assert waiter.is_alive() and not outcome, outcome  # still waiting: the leftover state is no sign of a hang
        address.state.write_text(json.dumps({"pid": successor.pid, "phase": "starting"}))
        os.utime(address.state, (long_ago, long_ago))  # the successor's own state, gone stale: a real hang
        waiter.join(10)
        assert f"(pid {successor.pid}) gave no sign of life" in outcome.get("error", ""), outcome
        assert successor.wait(timeout=10) == -signal.SIGKILL  # the hung one is killed
    finally:
        os.close(lock_fd)
        if successor.poll() is None:
            successor.kill()
