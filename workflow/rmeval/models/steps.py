"""What the process-reward adapters share: a row's steps, and the check that every step kept its reading token."""

from __future__ import annotations

import numpy as np

from rmeval.errors import RmevalError
from rmeval.tasks import Pairs


def step_lists(pairs: Pairs) -> list[list[str]]:
    """Each row's steps; a row without steps is one step, its response."""
    steps = pairs.steps or [[] for _ in pairs.ids]
    return [list(row) if len(row) else [response] for row, response in zip(steps, pairs.responses, strict=True)]


def check_step_counts(ids: list[str], found: np.ndarray, expected: np.ndarray, truncated: np.ndarray,
                      max_length: int, marker: str) -> None:
    """Every step has its reading token, unless truncation cut trailing steps; else name the row."""
    for index in np.flatnonzero(found != expected):
        if found[index] == 0:
            raise RmevalError(f"row id={ids[index]!r}: no step survives truncation to max_length={max_length}")
        if not truncated[index]:
            raise RmevalError(f"row id={ids[index]!r}: found {found[index]} step markers for {expected[index]} "
                              f"steps; the text itself contains the marker {marker!r}")
