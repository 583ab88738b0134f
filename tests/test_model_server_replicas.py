"""Warm replicas of a model's server (rmeval.scoring.replicas) on fake GPUs (`RMEVAL_GPU_COUNT`, a private lock
folder: the machinery of test_devices.py). The servers claim fake devices and compute on CPU, so every choice a
job makes (join, wait, start a replica on free GPUs) and every GPU lock is real; only CUDA is absent."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from rmeval.devices import _lock_path, _try_lock, _waiter_path, claim_free_now
from rmeval.registry import spec_from_mapping
from rmeval.scoring.replicas import Decision, Replica, decide, least_loaded, replica_limit
from test_model_server import FAULT_RUNNER, Run, _in_process, _meta, _papers, alive

# Real `rmeval score` jobs and model-server processes (loads, kills, hangs): out of the fast tier (conftest.py).
pytestmark = pytest.mark.workflow

ROWS = 40
BATCH_ROWS = "4"


# ----------------------------------------------------------------------------- the choice, alone
def test_replica_limit_counts_whole_gpu_sets_and_follows_the_cap() -> None:
    assert replica_limit(None, 1, 8) == 8 and replica_limit(3, 1, 8) == 3 and replica_limit(1, 1, 8) == 1
    assert replica_limit(None, 2, 4) == 2 and replica_limit(None, 2, 5) == 2 and replica_limit(None, 2, 3) == 1
    assert replica_limit(None, 0, 8) == 1  # CPU servers share the cores: one per model
    assert replica_limit(None, 1, 0) == 1 and replica_limit(None, 4, 2) == 1  # no (or too few) GPUs: one server


def test_a_job_joins_an_idle_replica_starts_one_when_all_are_busy_else_joins_the_least_loaded() -> None:
    free = [Replica(i, "free") for i in range(4)]
    assert decide(free, 4) == Decision("start", 0)  # the model's first server
    busy = [Replica(0, "ready", 2), Replica(1, "ready", 0), *free[2:]]
    assert decide(busy, 4) == Decision("join", 1)  # an idle replica beats starting another
    all_busy = [Replica(0, "ready", 1), Replica(1, "starting", 1), *free[2:]]
    assert decide(all_busy, 4) == Decision("start", 2)
    assert decide(all_busy, 2) == Decision("join", 0)  # at the cap: least loaded, a ready one on a tie
    loaded = [Replica(0, "ready", 3), Replica(1, "starting", 1)]
    assert decide(loaded, 2) == Decision("wait", 1)
    assert decide([Replica(0, "gone"), Replica(1, "free")], 1) == Decision("retry", -1)  # exiting, then restart
    assert decide([Replica(0, "gone"), Replica(1, "free")], 2) == Decision("start", 1)
    assert least_loaded([Replica(0, "free")]) == Decision("retry", -1)


# ----------------------------------------------------------------------------- GPU sets for replicas
@pytest.fixture
def fake_gpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("RMEVAL_GPU_COUNT", "4")
    monkeypatch.setenv("RMEVAL_GPU_LOCK_DIR", str(tmp_path / "locks"))
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "SLURM_JOB_ID"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "locks"


HOLDER = "import sys, time; print('ready', flush=True); time.sleep(60)"


def test_replicas_take_whole_free_gpu_sets_that_the_server_keeps_and_the_kernel_frees(fake_gpus: Path) -> None:
    """Two-GPU replicas on four GPUs: two disjoint pairs, then nothing; locks handed to a child stay held after the
    job lets go of its copies, and are free again once that child is killed."""
    first, second = claim_free_now(2), claim_free_now(2)
    assert first is not None and second is not None and claim_free_now(2) is None and claim_free_now(1) is None
    assert set(first.devices) | set(second.devices) == {"0", "1", "2", "3"}
    child = subprocess.Popen([sys.executable, "-c", HOLDER], pass_fds=first.fds, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        first.release()
        second.release()
        for device in first.devices:
            assert _try_lock(_lock_path(fake_gpus, device)) is None, f"gpu {device} lost when the job let go"
    finally:
        child.kill()
        child.wait()
    held = claim_free_now(2)
    assert held is not None and set(held.devices) == {"0", "1"}, held  # the killed server's pair is free again
    held.release()
    waiter = _try_lock(_waiter_path(fake_gpus))  # another model's server waits for GPUs: no replica outruns it
    try:
        assert claim_free_now(1) is None
    finally:
        os.close(waiter)


# ----------------------------------------------------------------------------- real jobs, real servers
@pytest.fixture
def gpu_run(tmp_path: Path, tiny_model_dir: Path, fake_gpus: Path):
    started = Run(tmp_path, tiny_model_dir)
    started.spec = spec_from_mapping({"name": "tiny", "path": str(tiny_model_dir), "resources": {"gpu": 1}},
                                     where="test").to_json()
    started.env = {**os.environ, **started.env, "RMEVAL_GPU_COUNT": "2"}
    yield started
    started.end()
    deadline = time.monotonic() + 10
    while started.server_pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    leftover = started.server_pids()
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert not leftover, f"model servers outlived their run: {leftover}"


def _jobs_at_once(run: Run, inputs: list[Path], folder: Path, *extra: str) -> list[str]:
    """All jobs started together, each pausing inside the pool lock after its survey (a missing lock would let
    two of them start the same replica); returns their stderr."""
    env = {**run.env, "RMEVAL_DRILL_SURVEY_PAUSE_S": "0.3", "RMEVAL_DRILL_SLOW_S": "0.03"}
    jobs = [subprocess.Popen(run.command(data, folder / data.name, "--max-batch-rows", BATCH_ROWS, *extra,
                                         runner=(str(FAULT_RUNNER),)),
                             cwd=run.workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for data in inputs]
    errors = [job.communicate(timeout=300)[1] for job in jobs]
    for job, stderr in zip(jobs, errors, strict=True):
        assert job.returncode == 0, stderr
    return errors


def test_jobs_waiting_on_a_busy_server_start_replicas_on_free_gpus_with_identical_rewards(
    gpu_run: Run, tmp_path: Path, fake_gpus: Path
) -> None:
    """Two fake GPUs, one model, four tables at once: two replicas (one per GPU, each started once), the jobs
    spread over both, no GPU held by two servers, rewards bit for bit those of the model loaded in-process."""
    inputs = [_papers(tmp_path / f"g{i}.parquet", ROWS, seed=i) for i in range(4)]
    errors = _jobs_at_once(gpu_run, inputs, tmp_path / "replicas")
    starts = [line for stderr in errors for line in stderr.splitlines() if "started model server" in line]
    assert len(starts) == 2, starts
    servers = [_meta(tmp_path / "replicas" / data.name)["model_server"] for data in inputs]
    by_replica: dict[int, list[dict]] = {}
    for server in servers:
        by_replica.setdefault(server["replica"], []).append(server)
    assert sorted(by_replica) == [0, 1], servers  # both replicas served jobs
    assert len({server["key"] for server in servers}) == 1
    devices = {index: {tuple(s["gpu_devices"]) for s in group} for index, group in by_replica.items()}
    assert all(len(claimed) == 1 for claimed in devices.values()), devices  # a replica keeps its GPU
    assert sorted(next(iter(claimed)) for claimed in devices.values()) == [("0",), ("1",)], devices
    pids = {index: {s["pid"] for s in group} for index, group in by_replica.items()}
    assert all(len(found) == 1 for found in pids.values()) and pids[0] != pids[1], pids
    for index, group in by_replica.items():
        assert {s["server"] for s in group} == {f"{servers[0]['key']}.r{index}"}
        assert sorted(s["jobs_before"] for s in group) == list(range(len(group)))
        # The lock of the replica's GPU names the replica's process (it took over the lock the job claimed).
        (device,) = next(iter(devices[index]))
        holder = (fake_gpus / f"gpu{device}.lock").read_text()
        assert re.search(rf"\bpid={next(iter(pids[index]))}\b", holder), (index, holder)
    # Both replicas warm and idle, two jobs at once: each must see the other's handshake counted before it chooses
    # (the pool lock), so they take one replica each instead of both taking the first idle one.
    later = [_papers(tmp_path / f"h{i}.parquet", 8, seed=10 + i) for i in range(2)]
    errors = _jobs_at_once(gpu_run, later, tmp_path / "replicas")
    assert not any("started model server" in stderr for stderr in errors), errors
    assert sorted(_meta(tmp_path / "replicas" / d.name)["model_server"]["replica"] for d in later) == [0, 1]
    for data in inputs:
        reference = tmp_path / "cold" / data.name
        _in_process(gpu_run.spec, data, reference, max_batch_rows=int(BATCH_ROWS))
        pd.testing.assert_frame_equal(pd.read_parquet(reference), pd.read_parquet(tmp_path / "replicas" / data.name),
                                      check_exact=True)


def test_max_replicas_one_keeps_one_server_per_model(gpu_run: Run, tmp_path: Path) -> None:
    inputs = [_papers(tmp_path / f"g{i}.parquet", 16, seed=i) for i in range(2)]
    errors = _jobs_at_once(gpu_run, inputs, tmp_path / "one", "--max-replicas", "1")
    assert sum("started model server" in stderr for stderr in errors) == 1, errors
    servers = [_meta(tmp_path / "one" / data.name)["model_server"] for data in inputs]
    assert {s["replica"] for s in servers} == {0} and len({s["pid"] for s in servers}) == 1
    assert all(alive(s["pid"]) for s in servers)


def test_a_killed_replica_fails_only_its_own_job_and_the_rerun_resumes(gpu_run: Run, tmp_path: Path) -> None:
    """Two slow jobs on two replicas; SIGKILL replica 1 mid-job: its job ends with one line naming replica 1's log,
    the other job finishes on replica 0, and the rerun resumes from the checkpoint with unchanged rewards."""
    inputs = [_papers(tmp_path / f"g{i}.parquet", ROWS, seed=20 + i) for i in range(2)]
    outputs = [tmp_path / "faulty" / data.name for data in inputs]
    env = {**gpu_run.env, "RMEVAL_DRILL_SLOW_S": "0.1"}
    jobs = [subprocess.Popen(gpu_run.command(data, output, "--max-batch-rows", "1", "--checkpoint-every", "5",
                                             runner=(str(FAULT_RUNNER),)),
                             cwd=gpu_run.workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
            for data, output in zip(inputs, outputs, strict=True)]
    deadline = time.monotonic() + 120
    while not all(list(output.with_name(output.name + ".partial").glob("part-*")) for output in outputs):
        assert all(job.poll() is None for job in jobs), [job.stderr.read() for job in jobs]
        assert time.monotonic() < deadline, "no checkpoints within 120 s"
        time.sleep(0.01)
    (replica_one,) = gpu_run.server_dir().glob("*.r1.state")
    victim = json.loads(replica_one.read_text())["pid"]
    os.kill(victim, signal.SIGKILL)
    results = [(job.wait(timeout=120), job.stderr.read()) for job in jobs]
    failed = [stderr for code, stderr in results if code != 0]
    assert len(failed) == 1 and sorted(code for code, _ in results) == [0, 2], results
    errors = [line for line in failed[0].splitlines() if "error:" in line]
    assert len(errors) == 1 and f"(pid {victim})" in errors[0] and ".r1.log" in errors[0], errors
    survivor = next(output for output, (code, _) in zip(outputs, results, strict=True) if code == 0)
    assert _meta(survivor)["model_server"]["replica"] == 0
    lost = next(output for output, (code, _) in zip(outputs, results, strict=True) if code != 0)
    rerun = gpu_run.score(inputs[outputs.index(lost)], lost, "--max-batch-rows", "1", "--checkpoint-every", "5")
    assert rerun.returncode == 0 and "resuming from checkpoint" in rerun.stderr, rerun.stderr
    assert _meta(lost)["resumed_rows"] >= 5
    for data, output in zip(inputs, outputs, strict=True):
        reference = tmp_path / "cold" / data.name
        _in_process(gpu_run.spec, data, reference, max_batch_rows=1)
        pd.testing.assert_frame_equal(pd.read_parquet(reference), pd.read_parquet(output), check_exact=True)


def test_a_two_gpu_model_replicates_by_whole_gpu_sets(gpu_run: Run, tmp_path: Path, tiny_model_dir: Path) -> None:
    """`resources: {gpu: 2}` on four fake GPUs: two replicas, each holding a pair, the pairs disjoint."""
    gpu_run.spec = spec_from_mapping({"name": "tiny", "path": str(tiny_model_dir), "resources": {"gpu": 2}},
                                     where="test").to_json()
    gpu_run.env["RMEVAL_GPU_COUNT"] = "4"
    inputs = [_papers(tmp_path / f"g{i}.parquet", 12, seed=30 + i) for i in range(2)]
    _jobs_at_once(gpu_run, inputs, tmp_path / "pairs")
    servers = [_meta(tmp_path / "pairs" / data.name)["model_server"] for data in inputs]
    assert sorted(s["replica"] for s in servers) == [0, 1], servers
    pairs = [set(s["gpu_devices"]) for s in servers]
    assert all(len(pair) == 2 for pair in pairs) and pairs[0] | pairs[1] == {"0", "1", "2", "3"}, pairs


def test_a_job_that_finds_a_hung_idle_replica_kills_it_and_scores_on_another(gpu_run: Run, tmp_path: Path) -> None:
    """A hung replica is not the fault of a job that only probes it: the job kills it (as a job kills its own hung
    server), says so in one line and scores on a fresh replica."""
    gpu_run.env["RMEVAL_SERVER_HANG_S"] = "3"
    data = _papers(tmp_path / "g0.parquet", 8)
    first = gpu_run.score(data, tmp_path / "out" / "a.parquet")
    assert first.returncode == 0, first.stderr
    hung = _meta(tmp_path / "out" / "a.parquet")["model_server"]
    os.kill(hung["pid"], signal.SIGSTOP)
    second = gpu_run.score(data, tmp_path / "out" / "b.parquet")
    assert second.returncode == 0, second.stderr
    (line,) = [line for line in second.stderr.splitlines() if "skipped replica" in line]
    assert f"skipped replica 0: model server for 'tiny' (pid {hung['pid']}) sent nothing for 3 s" in line, line
    assert _meta(tmp_path / "out" / "b.parquet")["model_server"]["replica"] == 1
    deadline = time.monotonic() + 10
    while alive(hung["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(hung["pid"])
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out" / "a.parquet"),
                                  pd.read_parquet(tmp_path / "out" / "b.parquet"), check_exact=True)


def test_an_idle_server_of_a_finished_model_hands_its_gpu_to_the_next_models_replica(
    gpu_run: Run, tmp_path: Path, tiny_model_dir: Path
) -> None:
    """Model A's server sits idle on GPU 0; model B's first job takes the free GPU 1 (nobody waits, so A stays).
    B's second job finds B's server busy and no GPU free: it stands as a GPU waiter for a moment, the idle A server
    hands its GPU over (it exits), and B gets a second replica there: the box passes from model to model."""
    first = gpu_run.score(_papers(tmp_path / "a.parquet", 8, seed=40), tmp_path / "a" / "a.parquet")
    assert first.returncode == 0, first.stderr
    a_server = _meta(tmp_path / "a" / "a.parquet")["model_server"]["pid"]
    gpu_run.spec = spec_from_mapping({"name": "tiny-b", "path": str(tiny_model_dir), "resources": {"gpu": 1}},
                                     where="test").to_json()
    slow_output = tmp_path / "b" / "slow.parquet"
    slow = subprocess.Popen(gpu_run.command(_papers(tmp_path / "slow.parquet", ROWS, seed=50), slow_output,
                                            "--max-batch-rows", "1", "--checkpoint-every", "5",
                                            runner=(str(FAULT_RUNNER),)),
                            cwd=gpu_run.workdir, env={**gpu_run.env, "RMEVAL_DRILL_SLOW_S": "0.25"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(slow_output.with_name("slow.parquet.partial").glob("part-*")):
        assert slow.poll() is None, slow.stderr.read()
        assert time.monotonic() < deadline, "the slow job did not start scoring within 120 s"
        time.sleep(0.02)
    assert alive(a_server)
    second = gpu_run.score(_papers(tmp_path / "b.parquet", 8, seed=41), tmp_path / "b" / "b.parquet")
    assert second.returncode == 0, second.stderr
    assert "started model server for 'tiny-b' (replica 1" in second.stderr, second.stderr
    _, stderr = slow.communicate(timeout=120)
    assert slow.returncode == 0, stderr
    b_servers = [_meta(path)["model_server"] for path in (slow_output, tmp_path / "b" / "b.parquet")]
    assert [(s["replica"], s["gpu_devices"]) for s in b_servers] == [(0, ["1"]), (1, ["0"])], b_servers
    assert not alive(a_server), "model A's idle server kept its GPU"
