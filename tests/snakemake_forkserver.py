"""Snakemake runs for the tests, each in its own process, forked from one that has Snakemake imported already.

A `python -m snakemake` start costs about 3.5 CPU-s on the reference machine, 2.7 s of it importing Snakemake and
collecting its plugins (the Slurm executor plugin imports pandas and asks `scontrol` for a help text). The suite
starts Snakemake about 50 times, so each test worker keeps one warm server process (started on first use, single
threaded, so forking it is safe) that forks a child per run. The child is a fresh process with the test's argv,
working directory, environment and standard streams, running Snakemake's own `main()`: the same run as
`python -m snakemake ARGS` there, minus the imports. Nothing of a run outlives its child: the server itself never
runs Snakemake.

Runs that a test must kill or signal as a process tree (tests/drills/test_drill_kills.py, tests/test_slurm.py)
start `python -m snakemake` with Popen instead.

Protocol (JSON lines): the test sends {"argv", "cwd", "env", "stdout", "stderr"}; the server answers {"pid"} when
the child is forked and {"returncode"} when it has ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path


def _warm() -> None:
    import snakemake.cli  # noqa: F401 - the import is the point
    from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry
    from snakemake_interface_logger_plugins.registry import LoggerPluginRegistry
    from snakemake_interface_report_plugins.registry import ReportPluginRegistry
    from snakemake_interface_storage_plugins.registry import StoragePluginRegistry

    # Each registry collects its installed plugins once per process (importing them); children reuse the result.
    for registry in (ExecutorPluginRegistry, ReportPluginRegistry, StoragePluginRegistry, LoggerPluginRegistry):
        registry()


def _run_child(request: dict, replies_fd: int) -> None:
    """In the forked child: become the requested `python -m snakemake` process, run it, exit with its status."""
    import atexit
    import logging

    os.close(replies_fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    stdin = os.open(os.devnull, os.O_RDONLY)
    stdout = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    stderr = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for source, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(source, target)
        os.close(source)
    import snakemake.cli

    sys.argv = [snakemake.cli.__file__, *request["argv"]]
    code = 1
    try:
        snakemake.cli.main(request["argv"])
        code = 0
    except SystemExit as exit_request:
        code = exit_request.code if isinstance(exit_request.code, int) else (0 if exit_request.code is None else 1)
    except BaseException:  # noqa: BLE001 - as the interpreter would: the traceback on stderr, status 1
        import traceback

        traceback.print_exc()
    finally:
        # What interpreter shutdown would do, without unwinding into the server's loop.
        try:
            atexit._run_exitfuncs()
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve() -> int:
    """The server loop: one request at a time, on stdin; answers on (what was) stdout."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the warm-up prints must not reach the answers
    _warm()
    requests = sys.stdin.buffer
    while line := requests.readline():
        request = json.loads(line)
        sys.stdout.flush()  # nothing the server buffered may end up in a run's output
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _run_child(request, replies.fileno())
        replies.write(json.dumps({"pid": pid}).encode() + b"\n")
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
        replies.flush()
    return 0


class SnakemakeForkServer:
    """The test worker's side: one server process per worker, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None

    def _started(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE)
        return self._process

    def _reply(self, process: subprocess.Popen, timeout: float | None) -> dict:
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Snakemake fork server (pid {process.pid}) ended with status {process.wait()}")
        return json.loads(line)

    def run(self, argv: Sequence[str], cwd: Path | str, env: Mapping[str, str],
            timeout: float | None = None) -> subprocess.CompletedProcess:
        """Like `subprocess.run([python, -m, snakemake, *argv], cwd=, env=, capture_output=True, text=True)`."""
        command = [sys.executable, "-m", "snakemake", *argv]
        with self._lock, tempfile.TemporaryDirectory(prefix="snakemake-run-") as streams:
            out, err = Path(streams) / "stdout", Path(streams) / "stderr"
            request = {"argv": list(argv), "cwd": str(Path(cwd).resolve()), "env": dict(env),
                       "stdout": str(out), "stderr": str(err)}
            process = self._started()
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            pid = self._reply(process, 60)["pid"]
            try:
                returncode = self._reply(process, timeout)["returncode"]
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):  # it may have ended this instant
                    os.kill(pid, signal.SIGKILL)
                self._reply(process, 60)
                raise subprocess.TimeoutExpired(command, timeout, out.read_text(errors="replace"),
                                                err.read_text(errors="replace")) from None
            return subprocess.CompletedProcess(command, returncode, out.read_text(errors="replace"),
                                               err.read_text(errors="replace"))


_SERVER = SnakemakeForkServer()


def run_snakemake_process(argv: Sequence[str], cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
                          timeout: float | None = None) -> subprocess.CompletedProcess:
    """`python -m snakemake ARGV` in `cwd` (default: this process's) with `env` (default: this process's), its
    output captured as text."""
    return _SERVER.run(argv, cwd or os.getcwd(), dict(os.environ) if env is None else env, timeout)


if __name__ == "__main__":
    raise SystemExit(serve())
