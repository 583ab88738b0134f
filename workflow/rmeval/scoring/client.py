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
from rmeval.scoring import slurm_launcher
from rmeval.scoring.address import RUN_ENV, ServerAddress, server_address, socket_name
from rmeval.scoring.protocol import DEFAULT_IDLE_S, PROTOCOL, hold_lock, read_state
from rmeval.scoring.replicas import STARTING_LOAD, Replica, decide, least_loaded, replica_limit
from rmeval.scoring.slurm_launcher import LAUNCHER_ENV

if TYPE_CHECKING:
    import numpy as np

    from rmeval.devices import HeldGpus
    from rmeval.models.base import BatchScores
    from rmeval.scoring.request import JobRequest
    from rmeval.tasks import Pairs

HANG_ENV = "RMEVAL_SERVER_HANG_S"
IDLE_ENV = "RMEVAL_SERVER_IDLE_S"
DEFAULT_HANG_S = 60.0
POLL_S = 0.05
LOCK_HANDOVER_S = 30.0  # a server the Slurm launcher starts waits this long for the starting job's .lock
# A job that wants a further replica while every GPU is held stands as a GPU waiter this long (idle servers check
# for waiters every 0.25 s), then gives the ones that exit this long to let go of their GPU locks.
NUDGE_S = 0.6
SETTLE_S = 1.5


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
            if status == "lost":
                raise ModelServerError(value)
            raise self._fault(f"failed during {what or op}:\n{value}")

    def close(self) -> None:
        try:
            self.conn.send(("close", None))
        except OSError:
            pass
        _close(self.conn)


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
    gpus: int = 0  # GPUs each replica claims
    max_replicas: int | None = None  # scoring.max_replicas (None: as many as the GPUs hold)


def requested_gpus(spec_gpu: int, device: str) -> int:
    """GPUs a job (or its server) claims: none on `--device cpu`, at least one on `--device cuda`."""
    if device == "cpu":
        return 0
    return max(1, spec_gpu) if device == "cuda" else spec_gpu


def launch_for(request: JobRequest, run_id: str | None = None) -> ServerLaunch:
    spec = request.spec
    run_id = run_id or os.environ.get(RUN_ENV) or "manual"
    gpus = requested_gpus(spec.resources.gpu, request.device)
    # Under Slurm the run id is the jobstep's process (pid and start time) on its node: the allocation's job id
    # keeps two allocations apart even where those coincide on two nodes sharing the working directory.
    settings = [spec.to_json(), request.device, str(request.padding_side), str(request.compile),
                str(request.threads), str(gpus), os.environ.get("SLURM_JOB_ID", "")]
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
    return ServerLaunch(address, command, run_id, gpus, request.max_replicas)


def _hello(address: ServerAddress, model: str, hang_s: float, what: str,
           **extra: Any) -> tuple[Channel, dict[str, Any]] | None:
    """A new channel to the server at `address` and its answer to `hello` (`extra` added to the request), or None:
    no socket, nobody listening, or it closed on us (it was exiting as we connected)."""
    from multiprocessing.connection import Client

    fd = None
    try:
        name, fd = socket_name(address.socket)
        conn = Client(name, family="AF_UNIX")
    except (FileNotFoundError, ConnectionRefusedError):
        return None
    finally:
        if fd is not None:
            os.close(fd)

    channel = Channel(conn, address, model, hang_s)
    channel.pid = read_state(address).get("pid", "?")  # a hang in the handshake can then be named and killed
    try:
        reply = channel.call("hello", {"key": address.key, "protocol": PROTOCOL, **extra}, what=what)
    except ModelServerError as error:
        _close(conn)
        if "died" in str(error):
            return None
        raise
    return channel, reply


def _close(conn: Any) -> None:
    try:
        conn.close()
    except OSError:
        pass


def _try_connect(launch: ServerLaunch, model: str, hang_s: float) -> tuple[Channel, dict[str, Any]] | None:
    """A channel to a live, ready server, or None (no socket, nobody listening, or it closed on us: start
    another)."""
    connected = _hello(launch.address, model, hang_s, "the handshake")
    if connected is not None:
        connected[0].pid = connected[1]["pid"]
    return connected


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


def _probe(address: ServerAddress, model: str, hang_s: float) -> int | None:
    """A ready replica's load (jobs it serves), or None when it does not answer (still loading, or exiting)."""
    answered = _hello(address, model, hang_s, "a probe", probe=True)
    if answered is None:
        return None
    channel, reply = answered
    _close(channel.conn)
    return int(reply["active"])


def _pending_jobs(address: ServerAddress) -> int:
    """Live jobs waiting for this replica to load (a dead job's marker is removed)."""
    count = 0
    for pid in address.pending_pids():
        if _process_running(pid):
            count += 1
        else:
            address.pending(pid).unlink(missing_ok=True)
    return count


def survey(address: ServerAddress, model: str, hang_s: float, limit: int) -> list[Replica]:
    """Each replica index below `limit`, and every live one above it (a smaller cap set by a later job)."""

    seen: list[Replica] = []
    index = 0
    while True:
        replica = address.of_replica(index)
        if lock_is_free(replica.lock):
            if index >= limit and not replica.socket.exists():
                return seen
            seen.append(Replica(index, "free"))
        else:
            try:
                load = _probe(replica, model, hang_s)
            except ModelServerError as error:  # hung (and killed by the probe): not this job's fault; skip it
                print(f"rmeval score: skipped replica {index}: {str(error).split('. Rerun')[0]}", file=sys.stderr,
                      flush=True)
                seen.append(Replica(index, "gone"))
                index += 1
                continue
            pending = _pending_jobs(replica)
            if load is not None:
                seen.append(Replica(index, "ready", load + pending))
            elif read_state(replica).get("phase") == "exiting":
                seen.append(Replica(index, "gone"))
            else:
                seen.append(Replica(index, "starting", max(STARTING_LOAD, pending)))
        index += 1


def _without_lock_fd(command: list[str]) -> list[str]:
    if "--lock-fd" not in command:
        return list(command)
    index = command.index("--lock-fd")
    return command[:index] + command[index + 2:]


def replica_launch(launch: ServerLaunch, index: int, held: HeldGpus | None, lock_fd: int | None = None) -> ServerLaunch:
    command = [*launch.command, "--replica", str(index)]
    if lock_fd is not None:
        command += ["--lock-fd", str(lock_fd)]
    if held is not None:
        command += ["--held-gpus", ",".join(held.devices), "--held-fds", ",".join(map(str, held.fds))]
    return ServerLaunch(launch.address.of_replica(index), command, launch.run_id, launch.gpus, launch.max_replicas)


def _spawn(launch: ServerLaunch, model: str, held: HeldGpus | None, lock_fd: int) -> subprocess.Popen[bytes]:
    address = launch.address
    launcher = os.environ.get(LAUNCHER_ENV)
    if launcher and held is None:
        # Inside a model's Slurm allocation: the allocation's launcher starts the server in the batch step, which
        # outlives this job's step. It cannot inherit our lock fd: it takes the `.lock` once we let go of it, right
        # after this call, still under the model's pool lock (rmeval.scoring.slurm_launcher).
        command = _without_lock_fd(launch.command) + ["--wait-lock-s", str(LOCK_HANDOVER_S)]
        process = slurm_launcher.launch(Path(launcher), command, address.log)
        print(f"rmeval score: started model server for {model!r} in this allocation's batch step (pid "
              f"{process.pid}; log {address.log})", file=sys.stderr, flush=True)
        return process  # type: ignore[return-value]  # poll(), returncode and pid, as Popen's
    with address.log.open("ab") as log:
        # Its own session: Snakemake ending this job's process group must not take the server along. The server
        # inherits its `.lock` and the GPU locks this job took for it (pass_fds): both held from the decision on,
        # so the next job under the pool lock sees this replica as starting. The job then drops its own copies.
        process = subprocess.Popen(launch.command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   start_new_session=True, close_fds=True,
                                   pass_fds=(lock_fd, *(held.fds if held else ())))
    gpus = f" on GPU(s) {','.join(held.devices)}" if held else ""
    print(f"rmeval score: started model server for {model!r} (replica {address.replica}{gpus}; pid {process.pid}; "
          f"log {address.log})", file=sys.stderr, flush=True)
    return process


def connect(launch: ServerLaunch, model: str) -> tuple[Channel, dict[str, Any], bool]:
    """(channel, server info, started_here): a warm replica of the run's server for this model, the least
    loaded, or a further one started on free GPUs (rmeval.scoring.replicas), or the first one."""
    from rmeval.devices import available_gpu_ids, claim_after_nudge, claim_free_now, under_slurm

    hang_s = hang_seconds()
    address = launch.address
    address.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    pool = 0 if under_slurm() or launch.gpus < 1 else len(available_gpu_ids())
    limit = replica_limit(launch.max_replicas, launch.gpus, pool)
    spawn_fd = os.open(address.spawn_lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        while True:
            fcntl.flock(spawn_fd, fcntl.LOCK_EX)  # the pool lock: one job decides at a time
            replicas = survey(address, model, hang_s, limit)
            decision = decide(replicas, limit)
            held = None
            if decision.action == "start" and launch.gpus > 0 and pool:
                # Locked here, under the pool lock, and handed to the server: no window for another claimant.
                held = claim_free_now(launch.gpus)
                further = any(r.status in ("ready", "starting") for r in replicas)
                if held is None and further:
                    # Every GPU is held: servers of other models left idle hand theirs over to a waiting job.
                    held = claim_after_nudge(launch.gpus, NUDGE_S, SETTLE_S)
                if held is None and further:
                    decision = least_loaded(replicas)  # a further replica only on GPUs that are free right now
            if decision.action == "retry":  # every replica is exiting: look again once they are gone
                fcntl.flock(spawn_fd, fcntl.LOCK_UN)
                time.sleep(POLL_S)
                continue
            lock_fd = None
            if decision.action == "start":
                lock_fd = hold_lock(address.of_replica(decision.index).lock)  # free: the survey saw it so
                if lock_fd is None:  # taken by a process outside the pool lock (a server started by hand)
                    if held is not None:
                        held.release()
                    fcntl.flock(spawn_fd, fcntl.LOCK_UN)
                    time.sleep(POLL_S)
                    continue
            target = replica_launch(launch, decision.index, held, lock_fd)
            if decision.action == "join":
                connected = _try_connect(target, model, hang_s)  # the handshake counts this job, under the lock
                if connected is None:  # it exited between probe and join
                    fcntl.flock(spawn_fd, fcntl.LOCK_UN)
                    continue
                return (*connected, False)
            process = None
            if decision.action == "start":
                try:
                    process = _spawn(target, model, held, lock_fd)
                finally:
                    os.close(lock_fd)
                    if held is not None:
                        held.release()
            marker = target.address.pending(os.getpid())
            marker.touch()  # this job's share of the replica's load while it loads
            fcntl.flock(spawn_fd, fcntl.LOCK_UN)  # loading takes a while: let other jobs start other replicas
            try:
                return (*_wait_ready(target, model, hang_s, process), process is not None)
            finally:
                marker.unlink(missing_ok=True)
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
        # Which replica scored this job: its index, key.r<index> and GPUs (rewards do not depend on it).
        "replica": info["replica"],
        "server": info["server"],
        "started_by_this_job": started_here,
        "jobs_before": int(info["sessions_served"]) - 1,
        "server_load_s": info["load_s"],
        "connect_s": round(connect_s, 3),
        "gpu_devices": info["gpu_devices"],
        "log": info["log"],
    }
    return RemoteScorer(channel, info), runtime, connect_s, meta
