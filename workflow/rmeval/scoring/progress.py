"""A progress line that works in Slurm logs as well as on a terminal.

On a TTY it redraws one line (carriage return) at most a few times a second; otherwise it prints
a full line every `every_s` seconds, so a log file gets a readable history instead of thousands of
carriage returns.

The ETA is estimated from work (the batch-budget units: tokens for local models, requests for API models),
not rows: batches run longest first, so the first rows are the slowest and a rows-based ETA overshoots.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:d}:{secs:02d}"


class Progress:
    def __init__(self, label: str, total_rows: int, done_rows: int = 0, every_s: float | None = None,
                 stream: TextIO | None = None, total_work: float | None = None, done_work: float = 0.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every_s = every_s if every_s is not None else (0.5 if self.tty else 15.0)
        self.label = label
        self.total_rows = total_rows
        self.done_rows = done_rows
        self.rows = 0
        self.tokens = 0
        self.total_work = total_work  # None: estimate by rows
        self.done_work = done_work
        self.work = 0.0
        self.started = time.monotonic()
        self.last_print = 0.0

    def update(self, rows: int, tokens: int, note: str = "", work: float | None = None) -> None:
        self.rows += rows
        self.tokens += tokens
        self.work += tokens if work is None else work
        now = time.monotonic()
        finished = self.done_rows + self.rows >= self.total_rows
        if finished or now - self.last_print >= self.every_s:
            self.last_print = now
            self._print(now, note)

    def line(self, now: float | None = None, note: str = "") -> str:
        elapsed = max((now or time.monotonic()) - self.started, 1e-9)
        done = self.done_rows + self.rows
        rows_per_s = self.rows / elapsed
        left = self.total_rows - done
        if self.total_work:
            work_per_s = self.work / elapsed
            work_left = max(self.total_work - self.done_work - self.work, 0.0)
            eta = work_left / work_per_s if work_per_s > 0 else float("inf")
        else:
            eta = left / rows_per_s if rows_per_s > 0 else float("inf")
        percent = 100.0 * done / max(self.total_rows, 1)
        eta_text = _duration(eta) if eta != float("inf") else "?"
        text = (f"{self.label}: {done}/{self.total_rows} rows ({percent:5.1f}%) | {rows_per_s:.1f} rows/s | "
                f"{self.tokens / elapsed:.0f} tok/s | elapsed {_duration(elapsed)} | eta {eta_text}")
        return f"{text} | {note}" if note else text

    def _print(self, now: float, note: str) -> None:
        text = self.line(now, note)
        if self.tty:
            end = "\n" if self.done_rows + self.rows >= self.total_rows else ""
            self.stream.write("\r" + text + end)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        """A log line that does not fight with the progress line."""
        self.stream.write(("\n" if self.tty else "") + text + "\n")
        self.stream.flush()
