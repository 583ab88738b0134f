"""Where a run's model server lives, and which run owns it (no torch, no pandas: imported by every job).

A server is keyed by sha256(run id, working directory, resolved spec, device, dtype flags, padding side,
compile, threads, GPU count): two runs, two working directories or two settings that could give other
rewards never reach the same server. Its files live in `<workdir>/.snakemake/rmeval-servers/<model>-<key>.*`:

- `.sock`  the Unix socket (mode 0600 via the umask of the directory, 0700)
- `.lock`  an flock the server holds for its whole life: free lock = no live server, whatever files remain
- `.spawn` the model's pool lock: a job holds this flock while it picks a replica (or starts one), so two jobs
           never both start the same replica or claim the same free GPUs for two new ones

A model may have several warm replicas in one run, each on its own GPU set (rmeval.scoring.replicas): replica 0
uses the names above, replica i > 0 `<model>-<key>.r<i>.{sock,lock,state,log}` (one `.spawn` for all).
- `.state` JSON the server rewrites every second (pid, phase); a stale one means a hung server
- `.log`   the server's stdout and stderr
- `.pending-<pid>` a job waiting for this server to finish loading (part of its load for the next job's choice)

The run id comes from `RMEVAL_RUN`, which the Snakefile sets in the Snakemake process (`run_environment`),
so every local job of one run shares it: `<pid>:<start time of that pid>`, the Snakemake process itself.
The server watches that process and exits when the run is over.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from rmeval.io.hashing import sha256_text

RUN_ENV = "RMEVAL_RUN"
SERVER_DIR = Path(".snakemake") / "rmeval-servers"
AF_UNIX_PATH_MAX = 107  # sun_path is 108 bytes with the trailing NUL


def process_start_ticks(pid: int) -> str | None:
    """The start time of `pid` in clock ticks since boot (field 22 of /proc/pid/stat), or None if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its closing ')'.
    return text[text.rindex(")") + 2 :].split()[19]


def run_environment() -> dict[str, str]:
    """Set in the Snakemake process (common.smk): identifies this run to its jobs and their servers."""
    pid = os.getpid()
    return {RUN_ENV: f"{pid}:{process_start_ticks(pid) or 0}"}


def owner_alive(run_id: str) -> bool:
    """Whether the process named by a `<pid>:<ticks>` run id still runs (a reused pid does not count)."""
    pid_text, _, ticks = run_id.partition(":")
    if not pid_text.isdigit():
        return True  # not a process id (e.g. set by hand): only the idle timeout ends the server
    return process_start_ticks(int(pid_text)) == ticks


@dataclass(frozen=True)
class ServerAddress:
    model: str
    key: str
    directory: Path
    replica: int = 0

    def _file(self, suffix: str) -> Path:
        tag = f".r{self.replica}" if self.replica else ""
        return self.directory / f"{self.model}-{self.key}{tag}{suffix}"

    def of_replica(self, index: int) -> ServerAddress:
        return ServerAddress(self.model, self.key, self.directory, index)

    @property
    def server_id(self) -> str:
        """The key and replica, as a `.meta.json` names the server that scored a job."""
        return f"{self.key}.r{self.replica}"

    @property
    def socket(self) -> Path:
        return self._file(".sock")

    @property
    def lock(self) -> Path:
        return self._file(".lock")

    @property
    def spawn_lock(self) -> Path:
        return self.directory / f"{self.model}-{self.key}.spawn"  # one per model and key, whatever the replica

    def pending(self, pid: int) -> Path:
        """A job that waits for this replica to finish loading (counted in its load until it connects)."""
        return self._file(f".pending-{pid}")

    def pending_pids(self) -> list[int]:
        prefix = self._file(".pending-").name
        return [int(path.name[len(prefix):]) for path in self.directory.glob(f"{prefix}*")
                if path.name[len(prefix):].isdigit()]

    @property
    def state(self) -> Path:
        return self._file(".state")

    @property
    def log(self) -> Path:
        return self._file(".log")

    def authkey(self) -> bytes:
        return self.key.encode()


def server_key(run_id: str, workdir: Path, settings: list[str]) -> str:
    return sha256_text("\n".join([run_id, str(workdir.resolve()), *settings]))[:16]


def server_address(model: str, run_id: str, settings: list[str], workdir: Path | None = None) -> ServerAddress:
    workdir = Path.cwd() if workdir is None else workdir
    safe_model = re.sub(r"[^A-Za-z0-9._-]", "_", model)[:40]
    return ServerAddress(safe_model, server_key(run_id, workdir, settings), (workdir / SERVER_DIR).resolve())


def socket_name(path: Path) -> tuple[str, int | None]:
    """A name `bind`/`connect` accept for `path`: the path itself when short enough, else
    `/proc/self/fd/<dir fd>/<name>` through an O_PATH handle on its folder (the caller closes the fd)."""
    text = str(path)
    if len(text.encode()) <= AF_UNIX_PATH_MAX:
        return text, None
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{path.name}", fd
