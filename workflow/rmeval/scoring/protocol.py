"""What a scoring job and the model server share, and nothing else: the protocol's version, the server's state
file and its lock. The job's side (rmeval.scoring.client) and the server (rmeval.scoring.server) both import this
module and never each other, so the imports run one way: job -> client -> protocol <- server -> request."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from rmeval.scoring.address import ServerAddress

PROTOCOL = 1  # the handshake's version: a job and a server of different versions refuse each other
DEFAULT_IDLE_S = 300.0  # a server exits after this long without a job (RMEVAL_SERVER_IDLE_S); the run's end, or a
# job waiting for its GPUs, ends it sooner


def hold_lock(path: Path) -> int | None:
    """An fd with an exclusive flock on `path` (held until the process dies), or None if taken."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def read_state(address: ServerAddress) -> dict[str, Any]:
    try:
        return json.loads(address.state.read_text())
    except (OSError, ValueError):
        return {}
