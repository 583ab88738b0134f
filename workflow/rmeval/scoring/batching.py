"""Length-sorted batches built to a token budget.

Rows are sorted by cost, longest first (so an out-of-memory shows up on the first batch, not
after an hour), ties broken by row index so the plan is deterministic. Each batch takes as many
rows as fit `rows x longest <= budget` (padded tokens), capped at `max_rows`; a row longer than
the budget runs alone. Planning the remaining rows after a resume reproduces exactly the batches
an uninterrupted run would have used, so a resumed run gives identical rewards.
"""

from __future__ import annotations

import numpy as np


def plan_batches(costs: np.ndarray, rows: np.ndarray, budget: int, max_rows: int) -> list[np.ndarray]:
    """Split `rows` (indices into `costs`) into batches, longest rows first."""
    if budget < 1 or max_rows < 1:
        raise ValueError("budget and max_rows must be >= 1")
    rows = np.asarray(rows, dtype=np.int64)
    order = rows[np.lexsort((rows, -costs[rows]))]
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        longest = max(int(costs[order[start]]), 1)
        size = max(1, min(max_rows, budget // longest))
        batches.append(order[start : start + size])
        start += size
    return batches
