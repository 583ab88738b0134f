"""Starts a model's server in the batch step of its Slurm allocation, so that it outlives the job steps.

Inside a model's allocation (rmeval.scoring.slurm_group) the Slurm jobstep executor runs every scoring job as its
own `srun` step, and Slurm ends a step's processes with the step (cgroup process tracking), a server started by
the first job included. So the allocation's first Snakemake process (the jobstep, in the batch step, alive for
the whole allocation) runs this launcher in a daemon thread: a job that needs a server writes a request (the
command and its environment) into the launcher's folder, the launcher starts it in its own session and reports
its pid, then its exit status. The server then lives as long as the allocation, and the job waits for it exactly
as for a server it started itself (rmeval.scoring.client).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from pathlib import Path

from rmeval.errors import RmevalError
from rmeval.io.atomic import write_text_atomic

LAUNCHER_ENV = "RMEVAL_SLURM_LAUNCHER"
POLL_S = 0.05
PID_TIMEOUT_S = 60.0
# The allocation's own variables (its GPUs, its job id) come from the launcher; the rest from the job.
ALLOCATION_PREFIXES = ("SLURM_", "SRUN_", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES")


def launcher_folder(directory: Path, slurm_job_id: str) -> Path:
    return directory / f"launcher-{slurm_job_id}"


def start_launcher(folder: Path) -> dict[str, str]:
    """Start the launcher thread in this process; returns the environment that points jobs at it."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    allocation = {key: value for key, value in os.environ.items() if key.startswith(ALLOCATION_PREFIXES)}
    thread = threading.Thread(target=_serve, args=(folder, allocation), name="rmeval-slurm-launcher", daemon=True)
    thread.start()
    return {LAUNCHER_ENV: str(folder.resolve())}


def _serve(folder: Path, allocation: dict[str, str]) -> None:
    while True:
        for request in sorted(folder.glob("*.request.json")):
            taken = request.with_suffix(".taken")
            try:
                request.rename(taken)
            except OSError:
                continue
            _launch(folder, taken, allocation)
        time.sleep(POLL_S)


def _launch(folder: Path, taken: Path, allocation: dict[str, str]) -> None:
    name = taken.name.removesuffix(".request.taken")
    try:
        wanted = json.loads(taken.read_text())
        env = {key: value for key, value in wanted["env"].items() if not key.startswith(ALLOCATION_PREFIXES)}
        env.update(allocation)
        with open(wanted["log"], "ab") as log:
            process = subprocess.Popen(wanted["command"], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       env=env, cwd=wanted["cwd"], start_new_session=True, close_fds=True)
    except (OSError, ValueError, KeyError) as error:
        write_text_atomic(json.dumps({"returncode": 127, "error": str(error)}), folder / f"{name}.rc", unique=True)
        return
    write_text_atomic(str(process.pid), folder / f"{name}.pid", unique=True)
    threading.Thread(target=_reap, args=(folder, name, process), daemon=True).start()


def _reap(folder: Path, name: str, process: subprocess.Popen[bytes]) -> None:
    write_text_atomic(json.dumps({"returncode": process.wait()}), folder / f"{name}.rc", unique=True)


class LaunchedServer:
    """What a job keeps of a server the launcher started: its pid, and its exit status once it exits
    (the subset of subprocess.Popen that rmeval.scoring.client reads)."""

    def __init__(self, folder: Path, name: str, pid: int) -> None:
        self.folder, self.name, self.pid = folder, name, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        status = self.folder / f"{self.name}.rc"
        if self.returncode is None and status.exists():
            self.returncode = int(json.loads(status.read_text())["returncode"])
        return self.returncode


def launch(folder: Path, command: list[str], log: Path) -> LaunchedServer:
    """Ask the allocation's launcher to start `command` (output appended to `log`); wait for its pid."""
    name = uuid.uuid4().hex
    request = {"command": command, "log": str(log), "cwd": os.getcwd(), "env": dict(os.environ)}
    write_text_atomic(json.dumps(request), folder / f"{name}.request.json", unique=True)
    deadline = time.monotonic() + PID_TIMEOUT_S
    while time.monotonic() < deadline:
        pid_file = folder / f"{name}.pid"
        if pid_file.exists():
            return LaunchedServer(folder, name, int(pid_file.read_text()))
        status = folder / f"{name}.rc"
        if status.exists():
            raise RmevalError(f"the allocation's server launcher ({folder}) could not start the model server: "
                              f"{json.loads(status.read_text()).get('error')}")
        time.sleep(POLL_S)
    raise RmevalError(f"the allocation's server launcher ({folder}) did not start the model server within "
                      f"{PID_TIMEOUT_S:.0f} s: is this allocation's Snakemake process still running?")
