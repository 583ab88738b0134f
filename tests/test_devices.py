"""GPU claiming through per-device lock files, under real contention between processes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from rmeval import devices
from rmeval.devices import available_gpu_ids, claim_gpus, detect_gpu_count, local_gpu_cap
from rmeval.errors import RmevalError
from workflow_helpers import run_snakemake_process

# One job: claim, mark each device busy with an O_EXCL file (a second holder would fail to create
# it), hold, record what CUDA_VISIBLE_DEVICES said, unmark, release.
WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from rmeval.devices import claim_gpus

    name, count, lock_dir, busy_dir, hold = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
    with claim_gpus(count, lock_dir, poll_seconds=0.02) as claim:
        start = time.time()
        visible = os.environ["CUDA_VISIBLE_DEVICES"]
        clashes = []
        for device in claim.devices:
            try:
                os.close(os.open(os.path.join(busy_dir, device), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                clashes.append(device)
        time.sleep(hold)
        for device in claim.devices:
            if device not in clashes:
                os.remove(os.path.join(busy_dir, device))
        end = time.time()
    print(json.dumps({"name": name, "devices": list(claim.devices), "visible": visible,
                      "start": start, "end": end, "clashes": clashes}), flush=True)
    """
)

HOLDER = textwrap.dedent(
    """
    import sys, time
    from rmeval.devices import claim_gpus

    with claim_gpus(int(sys.argv[1]), sys.argv[2]) as claim:
        print("claimed", ",".join(claim.devices), flush=True)
        time.sleep(600)
    """
)


@pytest.fixture
def fake_gpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """Two fake devices, a private lock dir, and no Slurm or pre-set device list in the way."""
    monkeypatch.setenv("RMEVAL_GPU_COUNT", "2")
    monkeypatch.setenv("RMEVAL_GPU_LOCK_DIR", str(tmp_path / "locks"))
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "SLURM_JOB_ID"):
        monkeypatch.delenv(name, raising=False)
    return dict(os.environ)


def test_detects_gpu_count_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    assert detect_gpu_count({"RMEVAL_GPU_COUNT": "3"}) == 3
    with pytest.raises(RmevalError, match="RMEVAL_GPU_COUNT"):
        detect_gpu_count({"RMEVAL_GPU_COUNT": "two"})
    # Real probe on this machine: must agree with the driver's own listing, and never load torch.
    monkeypatch.delenv("RMEVAL_GPU_COUNT", raising=False)
    code = "import sys; from rmeval.devices import detect_gpu_count as d; print(d()); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    expected = devices._nvidia_smi_count()
    if expected is None:
        expected = devices._proc_driver_count() or 0
    assert out == [str(expected), "False"]


def test_pool_follows_user_visible_devices() -> None:
    assert available_gpu_ids({"RMEVAL_GPU_COUNT": "4"}) == ("0", "1", "2", "3")
    assert available_gpu_ids({"RMEVAL_GPU_COUNT": "4", "CUDA_VISIBLE_DEVICES": "2,3"}) == ("2", "3")
    assert available_gpu_ids({"RMEVAL_GPU_COUNT": "4", "CUDA_VISIBLE_DEVICES": ""}) == ()
    # CUDA stops at the first invalid id.
    assert available_gpu_ids({"CUDA_VISIBLE_DEVICES": "1,-1,0"}) == ("1",)
    assert local_gpu_cap({"RMEVAL_GPU_COUNT": "0"}) == 0


def test_claim_sets_and_restores_environment(fake_gpus: dict[str, str], tmp_path: Path) -> None:
    with claim_gpus(1) as claim:
        assert claim.mode == "locked"
        assert os.environ["CUDA_VISIBLE_DEVICES"] == claim.devices[0] == "0"
        assert os.environ["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
        assert (tmp_path / "locks" / "gpu0.lock").read_text().startswith(f"pid={os.getpid()} ")
    assert "CUDA_VISIBLE_DEVICES" not in os.environ
    assert "CUDA_DEVICE_ORDER" not in os.environ
    # Leaving the block released the lock: both devices are free at once.
    with claim_gpus(2, timeout_seconds=1, poll_seconds=0.02) as both:
        assert both.devices == ("0", "1")


def test_count_zero_hides_gpus_and_cpu_machine_is_untouched(
    fake_gpus: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with claim_gpus(0) as claim:
        assert claim == devices.GpuClaim(devices=(), mode="cpu")
        assert os.environ["CUDA_VISIBLE_DEVICES"] == ""
    monkeypatch.setenv("RMEVAL_GPU_COUNT", "0")
    with claim_gpus(1) as claim:
        assert claim.mode == "cpu"
        assert "CUDA_VISIBLE_DEVICES" not in os.environ


def test_slurm_owns_visible_devices(fake_gpus: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    with claim_gpus(1) as claim:
        assert claim == devices.GpuClaim(devices=("1",), mode="slurm")
        assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
    assert not Path(fake_gpus["RMEVAL_GPU_LOCK_DIR"]).exists()


def test_asking_for_more_than_the_machine_has_is_an_error(fake_gpus: dict[str, str]) -> None:
    with pytest.raises(RmevalError, match="asks for 3 GPUs but only 2"):
        with claim_gpus(3):
            pass


def test_waiting_logs_who_holds_the_devices(fake_gpus: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    with claim_gpus(2):
        with pytest.raises(RmevalError, match="no 1 free GPU"):
            with claim_gpus(1, poll_seconds=0.02, timeout_seconds=0.1):
                pass
    err = capsys.readouterr().err
    assert "waiting for 1 free GPU(s) among ['0', '1']" in err
    assert f"gpu 0: pid={os.getpid()}" in err


def test_six_jobs_on_two_devices_never_share(fake_gpus: dict[str, str], tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    lock_dir = fake_gpus["RMEVAL_GPU_LOCK_DIR"]
    wanted = {"a": 1, "b": 1, "c": 2, "d": 1, "e": 1, "f": 1}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, name, str(count), lock_dir, str(busy), "0.3"],
            stdout=subprocess.PIPE, text=True, env=fake_gpus,
        )
        for name, count in wanted.items()
    ]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        results.append(json.loads(out))
    by_name = {r["name"]: r for r in results}
    assert all(not r["clashes"] for r in results)
    assert sorted(by_name["c"]["devices"]) == ["0", "1"]
    for r in results:
        assert len(r["devices"]) == wanted[r["name"]]
        assert r["visible"] == ",".join(r["devices"])
    # Independent of the busy markers: no two jobs' holding intervals overlap on one device.
    for device in ("0", "1"):
        spans = sorted((r["start"], r["end"]) for r in results if device in r["devices"])
        assert all(prev_end <= next_start for (_, prev_end), (next_start, _) in zip(spans, spans[1:], strict=False))
    # Both devices were used while the pool was contended.
    assert {d for r in results for d in r["devices"]} == {"0", "1"}


def test_kill_9_frees_the_lock(fake_gpus: dict[str, str]) -> None:
    lock_dir = fake_gpus["RMEVAL_GPU_LOCK_DIR"]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, "2", lock_dir], stdout=subprocess.PIPE, text=True, env=fake_gpus
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "claimed 0,1"
        with pytest.raises(RmevalError, match="no 1 free GPU"):
            with claim_gpus(1, lock_dir, poll_seconds=0.02, timeout_seconds=0.2):
                pass
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        started = time.monotonic()
        with claim_gpus(2, lock_dir, poll_seconds=0.02, timeout_seconds=10) as claim:
            assert claim.devices == ("0", "1")
        assert time.monotonic() - started < 5
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_snakemake_gpu_limit_only_for_local_runs_with_gpus() -> None:
    from rmeval.devices import snakemake_gpu_limit

    assert snakemake_gpu_limit(None, False, {"RMEVAL_GPU_COUNT": "4"}) == 4
    assert snakemake_gpu_limit(None, False, {"RMEVAL_GPU_COUNT": "4", "CUDA_VISIBLE_DEVICES": "1"}) == 1
    assert snakemake_gpu_limit(None, False, {"RMEVAL_GPU_COUNT": "0"}) is None  # CPU box: no limit of 0
    assert snakemake_gpu_limit(100, False, {"RMEVAL_GPU_COUNT": "4"}) is None  # cluster executor
    assert snakemake_gpu_limit(None, True, {"RMEVAL_GPU_COUNT": "4"}) is None  # user's --resources gpu=N
    assert snakemake_gpu_limit(None, False, {"RMEVAL_GPU_COUNT": "4", "SLURM_JOB_ID": "7"}) is None


# The lines common.smk uses to cap local GPU jobs, and jobs that claim their GPU like `rmeval score`.
LOCAL_SNAKEFILE = textwrap.dedent(
    """
    from rmeval.devices import snakemake_gpu_limit

    _gpu_limit = snakemake_gpu_limit(workflow.global_resources["_nodes"].value, "gpu" in workflow.global_resources)
    if _gpu_limit is not None:
        workflow.register_resource("gpu", _gpu_limit)


    rule all:
        input:
            expand("out/{i}.json", i=range(5)),


    rule gpu_job:
        output:
            "out/{i}.json",
        log:
            "logs/{i}.log",
        resources:
            gpu=1,
        shell:
            "{PYTHON} job.py {output} > {log} 2>&1"
    """
).replace("{PYTHON}", sys.executable)

LOCAL_JOB = textwrap.dedent(
    """
    import json, os, sys, time
    from rmeval.devices import claim_gpus

    asked = time.time()
    with claim_gpus(1, poll_seconds=0.05) as claim:
        start = time.time()
        time.sleep(1.0)
        end = time.time()
    json.dump({"devices": list(claim.devices), "asked": asked, "start": start, "end": end}, open(sys.argv[1], "w"))
    """
)


def test_local_profile_caps_gpu_jobs_at_detected_count(fake_gpus: dict[str, str], tmp_path: Path) -> None:
    workdir = tmp_path / "wf"
    workdir.mkdir()
    (workdir / "Snakefile").write_text(LOCAL_SNAKEFILE)
    (workdir / "job.py").write_text(LOCAL_JOB)
    profile = Path(__file__).resolve().parents[1] / "profiles" / "local"
    result = run_snakemake_process(["--workflow-profile", str(profile), "--cores", "5"], cwd=workdir, env=fake_gpus,
                                   timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert re.search(r"Provided resources: .*gpu\D+2\b", result.stderr)  # the limit Snakemake was given
    records = [json.loads((workdir / "out" / f"{i}.json").read_text()) for i in range(5)]
    for record in records:
        assert record["devices"] in (["0"], ["1"])
        # Snakemake never started a third GPU job, so no job sat waiting for a lock.
        assert record["start"] - record["asked"] < 0.5
    events = sorted([(r["start"], 1) for r in records] + [(r["end"], -1) for r in records])
    running, peak = 0, 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert peak <= 2
