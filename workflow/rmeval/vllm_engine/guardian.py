"""Stops a vLLM server's process group when the process that started it is gone, however it went.

Run as a script (`python -I -S guardian.py <group> <grace seconds>`), standard library only, in its own session, with
the read end of a pipe as stdin. Only the starting process (a job or a model server) holds the write end, so the
read ends when that process closes it or dies, SIGKILL included. A `STOPPED` byte first means the starter stopped
the server itself: nothing to do. Otherwise: SIGTERM to the group, then SIGKILL to what is left after the grace.

Why not the parent-death signal alone: vLLM's own shutdown on SIGTERM can hang while its engine core starts (seen
on a loaded 2-core host: a server SIGTERMed 6 s into its start was still running 90 s later), and nothing would
escalate to SIGKILL.
"""

from __future__ import annotations

import os
import signal
import sys
import time

STOPPED = b"s"  # written by the starter just before it closes the pipe after stopping the server itself
POLL_S = 0.2


def group_alive(group: int) -> bool:
    """Whether a live (not zombie) process is left in the group: an orphaned zombie may never be reaped in a
    container whose PID 1 reaps nothing."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue
        fields = text[text.rindex(b")") + 2:].split()  # state, ppid, pgrp, ...
        if fields[0] != b"Z" and int(fields[2]) == group:
            return True
    return False


def stop_group(group: int, grace_s: float) -> str:
    """SIGTERM to the group, SIGKILL after `grace_s` if anything is left; what happened, in words."""
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        return "it had already stopped"
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not group_alive(group):
            return "stopped it (SIGTERM)"
        time.sleep(POLL_S)
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        return "stopped it (SIGTERM)"
    return f"stopped it (SIGKILL, {grace_s:.0f} s after SIGTERM)"


def wait_for_starter() -> bytes:
    """Block until the starter closes the pipe or dies; what it wrote before that."""
    received = b""
    while True:
        chunk = os.read(0, 64)
        if not chunk:
            return received
        received += chunk


def main(arguments: list[str]) -> int:
    group, grace_s = int(arguments[0]), float(arguments[1])
    for ignored in (signal.SIGINT, signal.SIGHUP):  # a terminal's Ctrl-C or hang-up must not end the last line
        signal.signal(ignored, signal.SIG_IGN)
    if STOPPED in wait_for_starter():
        return 0
    outcome = stop_group(group, grace_s)
    print(f"rmeval guardian: the process that started this vLLM server (group {group}) is gone; {outcome}",
          file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
