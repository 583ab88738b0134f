"""Rows that carry one model input: scored once, one reward for all.

A reward must not depend on where the batcher puts a row: two copies of one text in batches padded to
different widths can differ in the last bits (allenai/reward-bench issue 137), and then a tie the benchmark's
rules count (a RewardBench 2 prompt whose chosen text repeats among its rejected ones) is lost. The engine
therefore scores the first row of each key (`Prepared.keys`: a digest of the exact ids the model sees) and
copies its outputs to every other row with that key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Distinct:
    """first[i]: the row whose outputs row i takes (i itself for the first row of each key)."""

    first: np.ndarray  # int64, one per row

    @property
    def representatives(self) -> np.ndarray:
        return np.flatnonzero(self.first == np.arange(len(self.first)))

    @property
    def copies(self) -> np.ndarray:
        return np.flatnonzero(self.first != np.arange(len(self.first)))

    @property
    def count(self) -> int:
        """Distinct model inputs."""
        return int(len(self.first) - len(self.copies))


def distinct_rows(keys: np.ndarray | None, count: int) -> Distinct:
    """Group rows by key; without keys every row stands alone."""
    if keys is None or count == 0:
        return Distinct(first=np.arange(count, dtype=np.int64))
    if len(keys) != count:
        raise AssertionError(f"adapter gave {len(keys)} keys for {count} rows")
    _, first_of_key, key_of_row = np.unique(keys, return_index=True, return_inverse=True)
    return Distinct(first=first_of_key[key_of_row.reshape(-1)].astype(np.int64))
