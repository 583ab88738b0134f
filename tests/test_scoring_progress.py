"""Progress lines: the ETA follows the work left (tokens), not the rows left, since batches run longest first."""

from __future__ import annotations

import io

from rmeval.scoring.progress import Progress


def _eta(line: str) -> str:
    return line.split("eta ")[1].split(" ")[0]


def test_eta_is_estimated_by_tokens_when_the_longest_rows_come_first() -> None:
    # 10 rows, 1000 tokens; the first (longest) row holds half of them and took 10 s.
    progress = Progress("score m", 10, every_s=1e9, stream=io.StringIO(), total_work=1000)
    progress.started = 0.0
    progress.update(1, 500)
    assert _eta(progress.line(now=10.0)) == "0:10"  # 500 tokens left at 50 tok/s; by rows it would be 1:30
    rows_only = Progress("score m", 10, every_s=1e9, stream=io.StringIO())
    rows_only.started = 0.0
    rows_only.update(1, 500)
    assert _eta(rows_only.line(now=10.0)) == "1:30"


def test_resumed_work_is_not_counted_as_work_left() -> None:
    progress = Progress("score m", 10, done_rows=5, every_s=1e9, stream=io.StringIO(), total_work=1000, done_work=800)
    progress.started = 0.0
    progress.update(1, 100, work=100)
    assert _eta(progress.line(now=10.0)) == "0:10"  # 100 of 200 tokens scored in 10 s: 100 left
    assert "6/10 rows" in progress.line(now=10.0)
