"""`python fault_runner.py <rmeval command> ...`: runs the real `rmeval` CLI with faults injected from the
environment, for drills that need a separate process (so it can be SIGKILLed) or a failing disk.

- RMEVAL_DRILL_SLOW_S: seconds slept before each scored batch, in this process or sent to the run's model server
  (gives a kill something to interrupt).
- RMEVAL_DRILL_SURVEY_PAUSE_S: seconds slept after a job surveys its model's replicas, inside the pool lock's
  critical section (widens the window between looking and acting, so a missing lock would show as a duplicate
  server).
- RMEVAL_DRILL_ENOSPC: fnmatch pattern of file names; writing a matching file writes half of its bytes and
  then fails with OSError(ENOSPC), as a full disk does.
"""

from __future__ import annotations

import errno
import fnmatch
import io
import os
import sys
import time
from pathlib import Path


def _install_slow_batches(seconds: float) -> None:
    # Both ways a job scores a batch: in this process (HFScorer), or through the run's model server (RemoteScorer).
    from rmeval.models.hf import HFScorer
    from rmeval.scoring.client import RemoteScorer

    for scorer_class in (HFScorer, RemoteScorer):
        real_score = scorer_class.score

        def slow_score(self, indices, real_score=real_score):
            time.sleep(seconds)
            return real_score(self, indices)

        scorer_class.score = slow_score


def _install_slow_survey(seconds: float) -> None:
    from rmeval.scoring import client

    real_survey = client.survey

    def slow_survey(*args, **kwargs):
        seen = real_survey(*args, **kwargs)
        time.sleep(seconds)
        return seen

    client.survey = slow_survey


def _disk_full(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data[: len(data) // 2])
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def enospc_patches(pattern: str) -> list[tuple[object, str, object]]:
    """(owner, attribute, replacement) triples that make writes of files matching `pattern` hit a full disk."""
    import pandas as pd

    real_to_parquet = pd.DataFrame.to_parquet
    real_write_text = Path.write_text

    def to_parquet(self, path=None, *args, **kwargs):
        if path is not None and fnmatch.fnmatch(Path(path).name, pattern):
            buffer = io.BytesIO()
            real_to_parquet(self, buffer, *args, **kwargs)
            _disk_full(Path(path), buffer.getvalue())
        return real_to_parquet(self, path, *args, **kwargs)

    def write_text(self, data, *args, **kwargs):
        if fnmatch.fnmatch(self.name, pattern):
            _disk_full(self, data.encode(kwargs.get("encoding") or "utf-8"))
        return real_write_text(self, data, *args, **kwargs)

    return [(pd.DataFrame, "to_parquet", to_parquet), (Path, "write_text", write_text)]


def main() -> int:
    if os.environ.get("RMEVAL_DRILL_SLOW_S"):
        _install_slow_batches(float(os.environ["RMEVAL_DRILL_SLOW_S"]))
    if os.environ.get("RMEVAL_DRILL_SURVEY_PAUSE_S"):
        _install_slow_survey(float(os.environ["RMEVAL_DRILL_SURVEY_PAUSE_S"]))
    if os.environ.get("RMEVAL_DRILL_ENOSPC"):
        for owner, attribute, replacement in enospc_patches(os.environ["RMEVAL_DRILL_ENOSPC"]):
            setattr(owner, attribute, replacement)
    from rmeval.cli import main as rmeval_main

    return rmeval_main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
