"""Polite spacing of API calls across processes: one lock file per cache directory.

Snakemake runs one fetch job per group, possibly in parallel; arXiv's terms ask for at most one request
every 3 seconds from a client, not per job. Every job holds an exclusive `flock` while it waits out the
spacing and sends its request, and records the time of its last response in the lock file.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType


class SharedRateLimiter:
    def __init__(self, lock_path: str | Path, delay_seconds: float) -> None:
        self.lock_path = Path(lock_path)
        self.delay_seconds = delay_seconds
        self._fd: int | None = None
        self.last_response_at: float | None = None  # set by the caller when a response arrives

    def __enter__(self) -> SharedRateLimiter:
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        previous = self._read_last()
        if previous is not None:
            wait = previous + self.delay_seconds - time.time()
            if wait > 0:
                time.sleep(wait)
        self.last_response_at = None
        return self

    def _read_last(self) -> float | None:
        assert self._fd is not None
        os.lseek(self._fd, 0, os.SEEK_SET)
        text = os.read(self._fd, 64).decode("ascii", "replace").strip()
        try:
            return float(text)
        except ValueError:
            return None

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._fd is not None
        try:
            if self.last_response_at is not None:
                os.lseek(self._fd, 0, os.SEEK_SET)
                os.ftruncate(self._fd, 0)
                os.write(self._fd, f"{self.last_response_at:.6f}\n".encode("ascii"))
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
