"""GPU claiming on a workstation: one lock file per device index, held for the job's lifetime.

Snakemake's `--resources gpu=N` only caps how many GPU jobs run at once; it never says which
GPU a job gets. Each scoring job therefore claims free device indices itself, through an
exclusive `fcntl.flock` on `<lock_dir>/gpu<index>.lock`, and sets `CUDA_VISIBLE_DEVICES`
before torch is imported. The kernel drops a flock when its process dies, so a job killed
by a crash or `kill -9` frees its devices without any cleanup.

Nothing here imports torch: devices are found with `nvidia-smi -L` (or /proc/driver/nvidia).

Environment variables:
- `RMEVAL_GPU_COUNT`: pretend the machine has this many GPUs (fake devices, for tests).
- `RMEVAL_GPU_LOCK_DIR`: where the lock files live (default: `<tmp>/rmeval-gpu-locks`, shared
  by every user of the machine).
- `CUDA_VISIBLE_DEVICES`, when set before the job starts, restricts the pool to those devices.
- `SLURM_JOB_ID`: under Slurm, Slurm owns `CUDA_VISIBLE_DEVICES` and claiming is a no-op.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rmeval.errors import RmevalError

GPU_COUNT_ENV = "RMEVAL_GPU_COUNT"
LOCK_DIR_ENV = "RMEVAL_GPU_LOCK_DIR"
POLL_SECONDS = 5.0
LOG_EVERY_SECONDS = 60.0


@dataclass(frozen=True)
class GpuClaim:
    """What a job got: the device ids it may use, and why."""

    devices: tuple[str, ...]  # the ids written to CUDA_VISIBLE_DEVICES (physical ids on this machine)
    mode: str  # "locked" (lock files held), "slurm" (Slurm assigned them), "cpu" (none requested or none present)

    @property
    def count(self) -> int:
        return len(self.devices)


def _log(message: str) -> None:
    # Plain stderr: Snakemake rule `log:` files capture it, and the CLI configures no logging.
    print(f"rmeval.devices: {message}", file=sys.stderr, flush=True)


def under_slurm(environ: Mapping[str, str] | None = None) -> bool:
    return bool((os.environ if environ is None else environ).get("SLURM_JOB_ID"))


def _parse_visible_devices(value: str) -> tuple[str, ...]:
    """CUDA's own parsing: comma-separated ids; the list stops at the first invalid entry (e.g. -1)."""
    devices: list[str] = []
    for item in value.split(","):
        item = item.strip()
        if not item or item.startswith("-"):
            break
        devices.append(item)
    return tuple(devices)


def _nvidia_smi_count() -> int | None:
    executable = shutil.which("nvidia-smi")
    if executable is None:
        return None
    try:
        result = subprocess.run([executable, "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    # MIG instances are listed as indented "MIG ..." lines under their GPU; count whole GPUs.
    return sum(1 for line in result.stdout.splitlines() if line.startswith("GPU "))


def _proc_driver_count() -> int | None:
    gpus = Path("/proc/driver/nvidia/gpus")
    if not gpus.is_dir():
        return None
    return sum(1 for _ in gpus.iterdir())


def detect_gpu_count(environ: Mapping[str, str] | None = None) -> int:
    """Number of physical GPUs on this machine, without importing torch (0 when none)."""
    environ = os.environ if environ is None else environ
    override = environ.get(GPU_COUNT_ENV)
    if override is not None and override.strip() != "":
        try:
            count = int(override)
        except ValueError:
            raise RmevalError(f"environment variable {GPU_COUNT_ENV}={override!r} is not an integer") from None
        if count < 0:
            raise RmevalError(f"environment variable {GPU_COUNT_ENV}={override!r} must be >= 0")
        return count
    for probe in (_nvidia_smi_count, _proc_driver_count):
        count = probe()
        if count is not None:
            return count
    return 0


def available_gpu_ids(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The device ids jobs on this machine may claim: `CUDA_VISIBLE_DEVICES` when the user set it,
    else 0..N-1 for the N detected GPUs."""
    environ = os.environ if environ is None else environ
    if "CUDA_VISIBLE_DEVICES" in environ:
        return _parse_visible_devices(environ["CUDA_VISIBLE_DEVICES"])
    return tuple(str(index) for index in range(detect_gpu_count(environ)))


def local_gpu_cap(environ: Mapping[str, str] | None = None) -> int:
    """How many GPUs local Snakemake jobs may use at once (the `--resources gpu=` value)."""
    return len(available_gpu_ids(environ))


def snakemake_gpu_limit(
    cluster_nodes: int | None, user_set_gpu: bool, environ: Mapping[str, str] | None = None
) -> int | None:
    """The `gpu` limit a local Snakemake run should register (`workflow.register_resource`), or None.

    None leaves Snakemake alone: on a cluster executor (`cluster_nodes` is set), inside a Slurm job,
    when the user passed `--resources gpu=N`, and on a machine without GPUs (GPU jobs then run on
    CPU, unthrottled by a limit of 0 that would block them forever).
    """
    if cluster_nodes is not None or user_set_gpu or under_slurm(environ):
        return None
    cap = local_gpu_cap(environ)
    return cap if cap > 0 else None


def default_lock_dir(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    configured = environ.get(LOCK_DIR_ENV)
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "rmeval-gpu-locks"


def _prepare_lock_dir(lock_dir: Path) -> None:
    lock_dir.mkdir(parents=True, exist_ok=True)
    try:
        # World-writable and sticky like /tmp, so two users' jobs share one set of locks.
        os.chmod(lock_dir, 0o1777)
    except PermissionError:
        pass  # someone else created it; their mode stands


def _lock_path(lock_dir: Path, device: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", device)
    return lock_dir / f"gpu{safe}.lock"


def _try_lock(path: Path) -> int | None:
    """An fd holding an exclusive flock on `path`, or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    try:
        os.fchmod(fd, 0o666)
    except PermissionError:
        pass
    # Who holds it, for the waiting jobs' log lines; the flock, not this text, is the lock.
    os.ftruncate(fd, 0)
    os.write(fd, f"pid={os.getpid()} host={socket.gethostname()} since={time.strftime('%Y-%m-%dT%H:%M:%S')}\n".encode())
    return fd


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def _waiter_path(lock_dir: Path) -> Path:
    return lock_dir / f"waiting-{socket.gethostname()}-{os.getpid()}.lock"


def gpu_waiters(lock_dir: Path) -> int:
    """How many live jobs wait for a GPU in `lock_dir` (an idle model server then hands its GPUs over).

    A waiter holds an flock on its `waiting-<host>-<pid>.lock` while it waits; a file whose lock is free
    belongs to a process that is gone and is removed.
    """
    count = 0
    for path in lock_dir.glob("waiting-*.lock"):
        fd = _try_lock(path) if path.exists() else None
        if fd is None:
            count += path.exists()
            continue
        os.close(fd)
        try:
            path.unlink()
        except OSError:
            pass
    return count


def _acquire(devices: tuple[str, ...], count: int, lock_dir: Path) -> dict[str, int] | None:
    """All-or-nothing: lock `count` free devices, or release what was taken and return None.

    Taking none while waiting (instead of holding some) means a 2-GPU job never blocks a
    1-GPU job on a device it cannot use yet, and two partial claimants never deadlock.
    """
    held: dict[str, int] = {}
    for device in devices:
        fd = _try_lock(_lock_path(lock_dir, device))
        if fd is not None:
            held[device] = fd
            if len(held) == count:
                return held
    for fd in held.values():
        os.close(fd)
    return None


@contextmanager
def claim_gpus(
    count: int,
    lock_dir: str | os.PathLike[str] | None = None,
    *,
    poll_seconds: float = POLL_SECONDS,
    timeout_seconds: float | None = None,
) -> Iterator[GpuClaim]:
    """Claim `count` free GPUs for the duration of the `with` block and expose only them.

    Call it before torch is imported (CUDA reads `CUDA_VISIBLE_DEVICES` once, at initialisation).
    - count == 0 on a GPU machine: hides every GPU (`CUDA_VISIBLE_DEVICES=""`), so a CPU job can't
      silently land on a device another job claimed.
    - no GPU on the machine: nothing changes; the job runs on CPU.
    - under Slurm (`SLURM_JOB_ID` set): Slurm already chose the devices; nothing changes.
    - otherwise: waits (polling, with a log line) until `count` devices are free, then holds their
      locks until the block exits or the process dies.
    """
    if count < 0:
        raise RmevalError(f"claim_gpus: a job cannot ask for {count} GPUs")
    if under_slurm():
        assigned = _parse_visible_devices(os.environ.get("CUDA_VISIBLE_DEVICES", ""))
        _log(f"Slurm job {os.environ['SLURM_JOB_ID']}: using the GPUs Slurm assigned: {list(assigned)}")
        yield GpuClaim(devices=assigned, mode="slurm")
        return
    pool = available_gpu_ids()
    if not pool:
        if count > 0:
            _log(f"asked for {count} GPU(s) but this machine has none: running on CPU")
        yield GpuClaim(devices=(), mode="cpu")
        return
    if count > len(pool):
        raise RmevalError(
            f"a job asks for {count} GPUs but only {len(pool)} are available here ({list(pool)}); "
            f"lower the model's resources.gpu in the registry or run on a bigger machine"
        )
    held: dict[str, int] = {}
    if count > 0:
        directory = Path(lock_dir) if lock_dir is not None else default_lock_dir()
        _prepare_lock_dir(directory)
        started = time.monotonic()
        last_log = -LOG_EVERY_SECONDS
        waiter: int | None = None
        while True:
            claimed = _acquire(pool, count, directory)
            if claimed is not None:
                held = claimed
                if waiter is not None:
                    os.close(waiter)
                    _waiter_path(directory).unlink(missing_ok=True)
                break
            if waiter is None:
                waiter = _try_lock(_waiter_path(directory))  # tells idle model servers to hand GPUs over
            waited = time.monotonic() - started
            if timeout_seconds is not None and waited >= timeout_seconds:
                if waiter is not None:
                    os.close(waiter)
                    _waiter_path(directory).unlink(missing_ok=True)
                raise RmevalError(
                    f"no {count} free GPU(s) among {list(pool)} after {waited:.0f} s (locks in {directory})"
                )
            if waited - last_log >= LOG_EVERY_SECONDS:
                holders = "; ".join(f"gpu {d}: {_holder(_lock_path(directory, d))}" for d in pool)
                _log(f"waiting for {count} free GPU(s) among {list(pool)} ({waited:.0f} s so far); held by {holders}")
                last_log = waited
            time.sleep(poll_seconds)
    try:
        with _exposed(tuple(held)) as claim:
            yield claim
    finally:
        for fd in held.values():
            os.close(fd)


@contextmanager
def _exposed(devices: tuple[str, ...]) -> Iterator[GpuClaim]:
    """Show this process only `devices` (CUDA_VISIBLE_DEVICES) for the block; restore the environment after."""
    previous = {name: os.environ.get(name) for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(devices)
    # CUDA's default order is fastest-first; nvidia-smi's indices (and our lock names) are PCI order.
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    if devices:
        _log(f"claimed GPU(s) {list(devices)} (pid {os.getpid()})")
    else:
        _log("no GPU requested: hiding all GPUs from this job")
    try:
        yield GpuClaim(devices=devices, mode="locked" if devices else "cpu")
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass(frozen=True)
class HeldGpus:
    """GPU locks taken at once for another process (a model-server replica): it inherits the fds."""

    devices: tuple[str, ...]
    fds: tuple[int, ...]

    def release(self) -> None:
        """Close this process's copies; the lock stays held while the process that inherited them lives."""
        for fd in self.fds:
            os.close(fd)


def claim_free_now(count: int, lock_dir: str | os.PathLike[str] | None = None) -> HeldGpus | None:
    """`count` GPUs that are free right now, locked all-or-nothing, or None: never waits, and takes nothing while
    another job waits for GPUs (a further replica of a model must not outrun another model's first server)."""
    if count < 1 or under_slurm():
        return None
    pool = available_gpu_ids()
    if count > len(pool):
        return None
    directory = Path(lock_dir) if lock_dir is not None else default_lock_dir()
    _prepare_lock_dir(directory)
    if gpu_waiters(directory):
        return None
    held = _acquire(pool, count, directory)
    if held is None:
        return None
    return HeldGpus(tuple(held), tuple(held.values()))


def claim_after_nudge(count: int, nudge_s: float, settle_s: float,
                      lock_dir: str | os.PathLike[str] | None = None) -> HeldGpus | None:
    """`claim_free_now` after standing as a GPU waiter for `nudge_s`: model servers idle for their grace period hand
    their GPUs over (they exit), as they do for any waiting job; then the freed GPUs are polled for `settle_s`.
    For a job that wants a further replica while every GPU is held, possibly by idle servers of other models."""
    if count < 1 or under_slurm() or count > len(available_gpu_ids()):
        return None
    directory = Path(lock_dir) if lock_dir is not None else default_lock_dir()
    _prepare_lock_dir(directory)
    if gpu_waiters(directory):
        return None  # someone else already waits: they come first
    waiter = _try_lock(_waiter_path(directory))
    if waiter is None:
        return None
    try:
        time.sleep(nudge_s)
    finally:
        os.close(waiter)
        _waiter_path(directory).unlink(missing_ok=True)
    deadline = time.monotonic() + settle_s
    while True:
        held = claim_free_now(count, directory)
        if held is not None or time.monotonic() >= deadline:
            return held
        time.sleep(0.1)


@contextmanager
def adopt_gpus(devices: tuple[str, ...], fds: tuple[int, ...]) -> Iterator[GpuClaim]:
    """Hold GPU locks inherited from the job that claimed them (`claim_free_now`), as `claim_gpus` holds its own."""
    for fd in fds:
        os.set_inheritable(fd, False)
        # Who holds it now, for waiting jobs' log lines (the flock itself passed with the fd).
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"pid={os.getpid()} host={socket.gethostname()} since={time.strftime('%Y-%m-%dT%H:%M:%S')}\n".encode())
    try:
        with _exposed(devices) as claim:
            yield claim
    finally:
        for fd in fds:
            os.close(fd)
