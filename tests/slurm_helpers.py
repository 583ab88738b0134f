"""What the tests on CI's real Slurm cluster share (tests/test_slurm.py, tests/test_slurm_vllm.py): whether a cluster
answers (else they skip, saying why), the flags that cluster needs, the environment of a workflow run submitted to
it, a Slurm job's record, and the clean-up of processes a cancelled allocation can leave behind."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SLURM_PROFILE = REPO / "profiles" / "slurm"
# This CI cluster has no accounting: no account to charge, and finished jobs are seen through squeue
# (slurm.conf keeps them for MinJobAge=600 s). The first status check comes after 1 s, not 40.
CI_CLUSTER_FLAGS = [
    "--slurm-no-account",
    "--slurm-status-command", "squeue",
    "--slurm-init-seconds-before-status-checks", "1",
]


def cluster_problem() -> str | None:
    """Why no test can run on a cluster here (None: one takes jobs, with the two count-only GPUs)."""
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[slurm]')"
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return "no Slurm client on PATH (CI starts one with .ci/slurm/install.sh and .ci/slurm/start.sh)"
    if os.environ.get("RMEVAL_TEST_NO_SLURM_CONTROLLER"):  # tests/conftest.py found none at the start
        return f"{os.environ['RMEVAL_TEST_NO_SLURM_CONTROLLER']} (CI starts one with .ci/slurm/start.sh)"
    try:
        result = subprocess.run(["sinfo", "-h", "-o", "%T %G"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"sinfo failed: {error}"
    if result.returncode != 0:
        return f"no Slurm cluster answers sinfo: {result.stderr.strip() or result.stdout.strip()}"
    states = result.stdout.split()
    if not any(state.startswith(("idle", "mixed", "alloc", "completing")) for state in states):
        return f"no Slurm node accepts jobs (sinfo: {result.stdout.strip()!r})"
    if "gpu:2" not in result.stdout:
        return f"the Slurm node has no gres gpu:2 (sinfo: {result.stdout.strip()!r}); start it with .ci/slurm/start.sh"
    return None


def workflow_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "CUDA_VISIBLE"))}
    return {**env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RMEVAL_GPU_LOCK_DIR": str(tmp / "gpu-locks")}


def kill_processes_in(folder: Path) -> list[int]:
    """SIGKILL every process whose working directory is `folder` or below it. CI's cluster tracks a job's
    processes by parentage (proctrack/linuxproc), so the jobstep of an allocation the test cancelled survives as an
    orphan (seen: asleep for 30 min after the suite, in its deleted run folder); a cluster with cgroups kills it."""
    killed = []
    for cwd in Path("/proc").glob("[0-9]*/cwd"):
        try:
            target = os.readlink(cwd).removesuffix(" (deleted)")
        except OSError:
            continue
        if Path(target).is_relative_to(folder) and int(cwd.parent.name) != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(cwd.parent.name), signal.SIGKILL)
                killed.append(int(cwd.parent.name))
    return killed


def slurm_job(job_id: str) -> dict[str, str]:
    line = subprocess.run(["scontrol", "-o", "show", "job", job_id], capture_output=True, text=True,
                          check=True).stdout
    return dict(field.split("=", 1) for field in line.split() if "=" in field)
