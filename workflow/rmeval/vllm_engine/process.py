"""One vLLM server process: started on a free port, ready within a stated timeout, stopped with its children.

The server runs in its own session (process group), so stopping it takes its engine-core processes along. When the
process that started it dies, however (a job or a model server killed by Snakemake, SIGKILL included), two things
stop it: the kernel's parent-death signal (SIGTERM at once) and a guardian process (`guardian.py`) that sees the
starter's pipe close and sends SIGTERM, then SIGKILL after STOP_GRACE_S, since vLLM's own shutdown can hang while
its engine core starts. Nothing is left running after the workflow.
"""

from __future__ import annotations

import ctypes
import functools
import os
import queue
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rmeval.errors import RmevalError
from rmeval.vllm_engine import guardian
from rmeval.vllm_engine.environment import SERVER_MODULE, Environment

READY_ENV = "RMEVAL_VLLM_READY_S"
DEFAULT_READY_S = 900.0  # a 70B model over 8 GPUs loads in minutes; a tiny one on a shared 2-core CPU in 15-150 s
PORT_ENV = "RMEVAL_VLLM_PORT"  # the port to try first; taken -> another
ARGS_ENV = "RMEVAL_VLLM_ARGS"  # further `vllm serve` arguments, shell-quoted (e.g. --max-num-seqs 64)
CPU_KV_CACHE_BYTES = 2 * 1024**3  # on the CPU vLLM would otherwise reserve 92 % of the RAM for its KV cache
POLL_S = 0.5
STOP_GRACE_S = 20.0
PORT_TRIES = 5


class VllmServerError(RmevalError):
    """The vLLM server died, or never became ready: not the job's data, so the job keeps its checkpoint."""

    keeps_checkpoint = True


@dataclass(frozen=True)
class ServerOptions:
    """What `vllm serve` is told: the model, and how to run it (never how to score: rmeval sends token ids)."""

    model: str  # a local folder or a hub id (the job's HF cache)
    revision: str | None
    dtype: str  # float32 / bfloat16 / float16, as the transformers engine resolves it
    tensor_parallel: int  # the registry entry's resources.gpu (1 on the CPU)
    device: str  # cpu | cuda
    threads: int | None = None  # CPU threads (the rule's threads:)
    trust_remote_code: bool = False

    def arguments(self, port: int) -> list[str]:
        arguments = ["--model", self.model, "--runner", "pooling", "--convert", "classify", "--host", "127.0.0.1",
                     "--port", str(port), "--dtype", self.dtype, "--enable-prefix-caching",
                     "--tensor-parallel-size", str(self.tensor_parallel), "--served-model-name", "rmeval"]
        if self.revision:
            arguments += ["--revision", self.revision]
        if self.trust_remote_code:
            arguments.append("--trust-remote-code")
        if self.device == "cpu" and not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
            arguments += ["--kv-cache-memory-bytes", str(CPU_KV_CACHE_BYTES)]
        return arguments + shlex.split(os.environ.get(ARGS_ENV, ""))

    def environment(self) -> dict[str, str]:
        environ = dict(os.environ)
        if self.device == "cpu":
            # Share the CPU like any scoring job: the rule's threads, unpinned (vLLM would pin cores and keep one back).
            environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
            if self.threads:
                environ["OMP_NUM_THREADS"] = str(self.threads)
        return environ


def ready_seconds() -> float:
    value = os.environ.get(READY_ENV, "")
    try:
        return float(value) if value.strip() else DEFAULT_READY_S
    except ValueError:
        raise RmevalError(f"environment variable {READY_ENV}={value!r} is not a number of seconds") from None


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def candidate_ports() -> list[int]:
    """$RMEVAL_VLLM_PORT first when it is free, then ports the kernel hands out as free."""
    ports: list[int] = []
    preferred = os.environ.get(PORT_ENV, "").strip()
    if preferred.isdigit() and port_free(int(preferred)):
        ports.append(int(preferred))
    while len(ports) < PORT_TRIES:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in ports:
            ports.append(port)
    return ports


@functools.lru_cache(maxsize=1)
def _prctl() -> Any:
    """libc's prctl, looked up in the parent: a child of a threaded process must not load libraries before exec."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None  # not Linux: stop() and the model server's exit still stop the server


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies (PR_SET_PDEATHSIG = 1)."""
    prctl = _prctl()
    if prctl is not None:
        prctl(1, int(signal.SIGTERM))


class _Spawner:
    """Starts every server from one long-lived thread. The parent-death signal fires when the *thread* that forked
    the child ends; a model server restarts a dead vLLM from a job's session thread, which ends with that job."""

    def __init__(self) -> None:
        self.requests: queue.Queue[tuple[dict[str, Any], queue.Queue[Any]]] = queue.Queue()
        threading.Thread(target=self._loop, name="vllm-spawner", daemon=True).start()

    def _loop(self) -> None:
        while True:
            arguments, reply = self.requests.get()
            try:
                reply.put(subprocess.Popen(**arguments))
            except BaseException as error:  # noqa: BLE001 - handed to the caller, which raises it
                reply.put(error)

    def popen(self, **arguments: Any) -> subprocess.Popen[bytes]:
        _prctl()  # resolved here, before any fork
        reply: queue.Queue[Any] = queue.Queue()
        self.requests.put((arguments, reply))
        result = reply.get()
        if isinstance(result, BaseException):
            raise result
        return result


@functools.lru_cache(maxsize=1)
def _spawner() -> _Spawner:
    return _Spawner()


class Guardian:
    """The guardian process of one server (`guardian.py`): it stops the server's group when this process dies
    without releasing it."""

    def __init__(self, process: subprocess.Popen[bytes], pipe: int) -> None:
        self.process = process
        self.pipe = pipe  # the write end; only this process holds it (os.pipe's ends are not inherited)

    @classmethod
    def start(cls, group: int, log: IO[bytes], grace_s: float = STOP_GRACE_S) -> Guardian:
        read_end, write_end = os.pipe()
        try:
            process = subprocess.Popen([sys.executable, "-I", "-S", str(Path(guardian.__file__)), str(group),
                                        str(grace_s)], stdin=read_end, stdout=log, stderr=log,
                                       start_new_session=True, close_fds=True)
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        return cls(process, write_end)

    def release(self) -> None:
        """The server is stopped: the guardian exits without touching its group (whose id may be reused later)."""
        try:
            os.write(self.pipe, guardian.STOPPED)
        except OSError:
            pass  # the guardian is gone already
        os.close(self.pipe)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


def log_tail(path: Path, lines: int = 3) -> str:
    try:
        text = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:])[-400:] or "(empty log)"


class VllmProcess:
    """A `vllm serve` this process started; `url` once ready."""

    def __init__(self, environment: Environment, options: ServerOptions, log: Path, name: str) -> None:
        self.environment = environment
        self.options = options
        self.log = log
        self.name = name
        self.process: subprocess.Popen[bytes] | None = None
        self.guardian: Guardian | None = None
        self.port: int | None = None
        self.ready_s = 0.0
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start it and wait until /health answers; a port taken meanwhile -> the next port."""
        timeout = ready_seconds()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        for port in candidate_ports():
            if self._start_on(port, timeout):
                return
        raise VllmServerError(f"engine vllm: no free port for the server of {self.name!r} after {PORT_TRIES} tries; "
                              f"its log {self.log}")

    def _start_on(self, port: int, timeout: float) -> bool:
        command = [str(self.environment.python), "-m", SERVER_MODULE, *self.options.arguments(port)]
        with self.log.open("ab") as log:
            log.write(f"\nrmeval: starting {shlex.join(command)}\n".encode())
            log.flush()
            self.process = _spawner().popen(args=command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            env=self.options.environment(), start_new_session=True,
                                            preexec_fn=_die_with_parent)
            self.guardian = Guardian.start(self.process.pid, log)
        self.port, self.starts = port, self.starts + 1
        print(f"rmeval score: started vLLM server for {self.name!r} (pid {self.process.pid}, port {port}, log "
              f"{self.log})", file=sys.stderr, flush=True)
        started = time.monotonic()
        size_before = self.log.stat().st_size
        while time.monotonic() - started < timeout:
            returncode = self.process.poll()
            if returncode is not None:
                with self.log.open("rb") as log:
                    log.seek(size_before)
                    port_taken = b"address already in use" in log.read().lower()
                self.stop()  # engine cores it may have left, and its guardian
                if port_taken:
                    return False  # another program took the port after we checked it: try the next
                raise VllmServerError(f"engine vllm: the server for {self.name!r} exited with status "
                                      f"{returncode} while starting; its log {self.log}: "
                                      f"{log_tail(self.log)}")
            if self._healthy():
                self.ready_s = time.monotonic() - started
                print(f"rmeval score: vLLM server for {self.name!r} ready in {self.ready_s:.1f} s at {self.url}",
                      file=sys.stderr, flush=True)
                return True
            time.sleep(POLL_S)
        self.stop()
        raise VllmServerError(f"engine vllm: the server for {self.name!r} was not ready within {timeout:.0f} s "
                              f"({READY_ENV}); stopped it; its log {self.log}")

    def _healthy(self) -> bool:
        import urllib.request

        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as reply:
                return reply.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM to its process group, SIGKILL to what is left after STOP_GRACE_S."""
        process = self.process
        if process is None:
            return
        self.process = None
        group = process.pid  # start_new_session: the group id is its pid, its engine cores are members
        for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue
            if sig is signal.SIGTERM:
                try:
                    os.killpg(group, signal.SIGKILL)  # engine cores that outlive the API server
                except ProcessLookupError:
                    pass
            break
        if self.guardian is not None:
            self.guardian.release()
            self.guardian = None
