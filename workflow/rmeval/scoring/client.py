"""The job side of the model server: find or start the run's server for a model, and score through it.

`RemoteScorer` is a `RewardScorer` whose `prepare` and `score` run in the server, so the engine
(batching, OOM back-off, checkpoints, metadata) is the same code as for a model loaded in-process,
and a job never imports torch or transformers: its start-up is Python, pandas and one round trip.

Faults end the job with one line (a `ModelServerError`) naming the model, the server's pid and its
log, and keep the job's checkpoint, so a rerun resumes with rewards identical to an uninterrupted run:
- the server dies (crash, SIGKILL, OOM killer): the socket closes mid-request;
- the server hangs (SIGSTOP, a wedged driver): no reply and no heartbeat for `RMEVAL_SERVER_HANG_S`
  seconds (default 60); the job then kills it so that the rerun starts a fresh one;
- the server fails while starting (bad weights, no GPU): its exit is seen and its log's tail quoted.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.errors import RmevalError
from rmeval.models.base import Prepared, RewardScorer, Runtime
from rmeval.scoring.address import RUN_ENV, ServerAddress, server_address, socket_name

if TYPE_CHECKING:
    import numpy as np

    from rmeval.models.base import BatchScores
    from rmeval.scoring.job import JobRequest
    from rmeval.tasks import Pairs

HANG_ENV = "RMEVAL_SERVER_HANG_S"
IDLE_ENV = "RMEVAL_SERVER_IDLE_S"
DEFAULT_HANG_S = 60.0
DEFAULT_IDLE_S = 300.0  # the run's end, or a job waiting for its GPUs, ends it sooner
POLL_S = 0.05


class ModelServerError(RmevalError):
    """The model server died, hung or failed to start. Not the job's data: keep its checkpoint."""

    keeps_checkpoint = True


class RemoteOutOfMemory(Exception):
    """The server ran out of device memory on a batch (and has already freed what it could)."""


def _seconds(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    try:
        return float(value) if value.strip() else default
    except ValueError:
        raise RmevalError(f"environment variable {name}={value!r} is not a number of seconds") from None


def hang_seconds() -> float:
    return _seconds(HANG_ENV, DEFAULT_HANG_S)


def _log_tail(path: Path, lines: int = 6) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:]) or "(empty log)"


def _set_send_timeout(fd: int, seconds: float) -> None:
    """SO_SNDTIMEO on a connection's socket, so a send into a stopped server's full buffer fails."""
    sock = socket.socket(fileno=fd)
    try:
        whole = int(seconds)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", whole, int((seconds - whole) * 1e6)))
    finally:
        sock.detach()


def lock_is_free(path: Path) -> bool:
    """True when no live server holds `path` (the kernel drops a dead process's flock)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


class Channel:
    """One job's connection to a server: requests with a hang timeout that heartbeats reset."""

    def __init__(self, conn: Any, address: ServerAddress, model: str, hang_s: float) -> None:
        self.conn = conn
        self.address = address
        self.model = model
        self.hang_s = hang_s
        self.pid: int | str = "?"
        _set_send_timeout(conn.fileno(), hang_s)

    def _fault(self, what: str) -> ModelServerError:
        return ModelServerError(
            f"model server for {self.model!r} (pid {self.pid}) {what}; its log {self.address.log}: "
            f"{_log_tail(self.address.log)}. Rerun the workflow: this job resumes from its checkpoint"
        )

    def _kill_hung(self) -> None:
        if isinstance(self.pid, int):
            try:
                os.kill(self.pid, signal.SIGKILL)  # frees its GPU lock; the rerun starts a fresh server
            except ProcessLookupError:
                pass

    def call(self, op: str, payload: Any = None, what: str = "") -> Any:
        try:
            self.conn.send((op, payload))
        except (BlockingIOError, TimeoutError):
            self._kill_hung()
            raise self._fault(f"did not take a request for {self.hang_s:.0f} s (hung? killed it)") from None
        except OSError:
            raise self._fault(f"died before {what or op}") from None
        while True:
            try:
                if not self.conn.poll(self.hang_s):
                    self._kill_hung()
                    raise self._fault(f"sent nothing for {self.hang_s:.0f} s during {what or op} (hung? killed it)")
                message = self.conn.recv()
            except (EOFError, OSError):
                raise self._fault(f"died during {what or op}") from None
            if message[0] == "beat":
                continue
            status, value = message
            if status == "ok":
                return value
            if status == "oom":
                raise RemoteOutOfMemory(value)
            if status == "rmeval":
                raise RmevalError(value)
            raise self._fault(f"failed during {what or op}:\n{value}")

    def close(self) -> None:
        try:
            self.conn.send(("close", None))
        except OSError:
            pass
        try:
            self.conn.close()
        except OSError:
            pass


class RemoteScorer(RewardScorer):
    """A `RewardScorer` backed by the run's model server (see module docstring)."""

    def __init__(self, channel: Channel, info: dict[str, Any]) -> None:
        self.channel = channel
        self.info = info
        self.has_steps = bool(info["has_steps"])
        self.budget_unit = str(info["budget_unit"])

    def prepare(self, pairs: Pairs) -> Prepared:
        reply = self.channel.call("prepare", pairs, what=f"tokenising {len(pairs)} rows")
        self.prepare_s = float(reply["prepare_s"])
        return reply["prepared"]

    def score(self, indices: np.ndarray) -> BatchScores:
        return self.channel.call("score", indices, what=f"a batch of {len(indices)} rows")

    def describe(self) -> dict[str, Any]:
        return self.channel.call("describe")

    def is_out_of_memory(self, error: BaseException) -> bool:
        return isinstance(error, RemoteOutOfMemory)

    def close(self) -> None:
        self.channel.close()


@dataclass(frozen=True)
class ServerLaunch:
    """How to start the server for a request, and what keys it."""

    address: ServerAddress
    command: list[str]
    run_id: str


def requested_gpus(spec_gpu: int, device: str) -> int:
    """GPUs a job (or its server) claims: none on `--device cpu`, at least one on `--device cuda`."""
    if device == "cpu":
        return 0
    return max(1, spec_gpu) if device == "cuda" else spec_gpu


def launch_for(request: JobRequest, run_id: str | None = None) -> ServerLaunch:
    spec = request.spec
    run_id = run_id or os.environ.get(RUN_ENV) or "manual"
    gpus = requested_gpus(spec.resources.gpu, request.device)
    settings = [spec.to_json(), request.device, str(request.padding_side), str(request.compile),
                str(request.threads), str(gpus)]
    address = server_address(spec.name, run_id, settings)
    command = [
        sys.executable, "-m", "rmeval", "model-server", "--spec", spec.to_json(),
        "--directory", str(address.directory), "--name", address.model, "--key", address.key, "--run", run_id,
        "--gpus", str(gpus), "--device", request.device,
        "--idle-s", str(_seconds(IDLE_ENV, DEFAULT_IDLE_S)),
    ]
    if request.threads:
        command += ["--threads", str(request.threads)]
    if request.padding_side:
        command += ["--padding-side", request.padding_side]
    if request.compile:
        command.append("--compile")
    return ServerLaunch(address, command, run_id)


def _try_connect(launch: ServerLaunch, model: str, hang_s: float) -> tuple[Channel, dict[str, Any]] | None:
    """A channel to a live, ready server, or None (no socket, nobody listening, or it closed on us)."""
    from multiprocessing.connection import Client

    from rmeval.scoring.server import PROTOCOL

    fd = None
    try:
        name, fd = socket_name(launch.address.socket)
        conn = Client(name, family="AF_UNIX")
    except (FileNotFoundError, ConnectionRefusedError):
        return None
    finally:
        if fd is not None:
            os.close(fd)
    channel = Channel(conn, launch.address, model, hang_s)
    try:
        info = channel.call("hello", {"key": launch.address.key, "protocol": PROTOCOL}, what="the handshake")
    except ModelServerError as error:
        if "died" in str(error):  # it was exiting as we connected: start another
            return None
        raise
    channel.pid = info["pid"]
    return channel, info


def _process_running(pid: int) -> bool:
    """Alive and not a zombie (a killed server stays one until something reaps it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # no /proc to ask: alive as far as signals tell


def _state_age(address: ServerAddress) -> float | None:
    try:
        return time.time() - address.state.stat().st_mtime
    except FileNotFoundError:
        return None


def _wait_ready(launch: ServerLaunch, model: str, hang_s: float,
                process: subprocess.Popen[bytes] | None) -> tuple[Channel, dict[str, Any]]:
    address = launch.address
    while True:
        connected = _try_connect(launch, model, hang_s)
        if connected is not None:
            return connected
        if process is not None and process.poll() is not None:
            raise ModelServerError(
                f"model server for {model!r} exited with status {process.returncode} while starting; "
                f"its log {address.log}: {_log_tail(address.log)}"
            )
        if process is None and lock_is_free(address.lock):
            raise ModelServerError(f"model server for {model!r} stopped while starting; its log {address.log}: "
                                   f"{_log_tail(address.log)}")
        age = _state_age(address)
        if age is not None and age > hang_s and not lock_is_free(address.lock):
            from rmeval.scoring.server import read_state

            pid = read_state(address).get("pid")
            if isinstance(pid, int) and not _process_running(pid):
                # The state file of a server that died (killed, or found hung by an earlier job): its successor
                # holds the lock and is about to write its own. Not a sign that the successor hangs.
                time.sleep(POLL_S)
                continue
            if isinstance(pid, int):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise ModelServerError(f"model server for {model!r} (pid {pid}) gave no sign of life for {age:.0f} s "
                                   f"while starting (hung? killed it); its log {address.log}: {_log_tail(address.log)}")
        time.sleep(POLL_S)


def connect(launch: ServerLaunch, model: str) -> tuple[Channel, dict[str, Any], bool]:
    """(channel, server info, started_here): the run's live server for this model, started if need be."""
    hang_s = hang_seconds()
    connected = _try_connect(launch, model, hang_s)
    if connected is not None:
        return (*connected, False)
    address = launch.address
    address.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    # One job starts the server; the others wait on this lock, then find it ready.
    spawn_fd = os.open(address.spawn_lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(spawn_fd, fcntl.LOCK_EX)
        connected = _try_connect(launch, model, hang_s)
        if connected is not None:
            return (*connected, False)
        process = None
        if lock_is_free(address.lock):
            with address.log.open("ab") as log:
                # Its own session: Snakemake ending this job's process group must not take the server along.
                process = subprocess.Popen(launch.command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                           start_new_session=True, close_fds=True)
            print(f"rmeval score: started model server for {model!r} (pid {process.pid}; log {address.log})",
                  file=sys.stderr, flush=True)
        return (*_wait_ready(launch, model, hang_s, process), process is not None)
    finally:
        os.close(spawn_fd)


def open_remote_scorer(request: JobRequest) -> tuple[RemoteScorer, Runtime, float, dict[str, Any]]:
    """(scorer, runtime, seconds to get a ready server, metadata for the sidecar)."""
    started = time.monotonic()
    launch = launch_for(request)
    channel, info, started_here = connect(launch, request.spec.name)
    connect_s = time.monotonic() - started
    runtime_fields = info["runtime"]
    runtime = Runtime(device=runtime_fields["device"], dtype=runtime_fields["dtype"], n_gpus=runtime_fields["n_gpus"],
                      padding_side=runtime_fields["padding_side"])
    meta = {
        "pid": info["pid"],
        "key": launch.address.key,
        "started_by_this_job": started_here,
        "jobs_before": int(info["sessions_served"]) - 1,
        "server_load_s": info["load_s"],
        "connect_s": round(connect_s, 3),
        "gpu_devices": info["gpu_devices"],
        "log": info["log"],
    }
    return RemoteScorer(channel, info), runtime, connect_s, meta
