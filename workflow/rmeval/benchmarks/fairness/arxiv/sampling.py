"""Bounded seeded sampling and the compact log of every eligible paper.

`HashSampler` keeps the `capacity` papers with the smallest seeded keys: memory is bounded by the sample,
not by the input, and the result does not depend on input order. `EligibleLog` streams two 64-bit hashes
(seeded id key, title) per eligible paper to disk so the select step can de-duplicate ids and find titles shared
between groups exactly, without holding any text.
"""

from __future__ import annotations

import heapq
import sys
from array import array
from pathlib import Path

from rmeval.benchmarks.fairness.arxiv.records import Paper, normalized_title_hash, sample_key
from rmeval.io.atomic import temporary_path


class HashSampler:
    """The `capacity` papers with the smallest keys; of two records with one id, the latest version wins
    (the higher `version`, as counted by `records.version_number`); on a tie the first record is kept."""

    def __init__(self, capacity: int, seed: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self.seed = seed
        self._heap: list[tuple[int, str]] = []  # (-key, id): a max-heap on key
        self._papers: dict[str, tuple[int, Paper, int]] = {}  # id -> (key, paper, version)
        self.duplicates_seen = 0  # duplicates detected while both copies were in the sample

    def admits(self, paper_id: str, key: int, version: int = 0) -> bool:
        """Whether the paper (with its `sample_key`) enters the sample now; if not it need not be built."""
        held = self._papers.get(paper_id)
        if held is not None:
            self.duplicates_seen += 1
            return version > held[2]  # a later version replaces the copy held
        # A duplicate of an evicted id has the same key, so it can never come back in here.
        return len(self._heap) < self.capacity or key < -self._heap[0][0]

    def add(self, key: int, paper: Paper, version: int = 0) -> None:
        """Insert a paper `admits` accepted, evicting the largest key when full (or replace its older version)."""
        if paper.id in self._papers:
            self._papers[paper.id] = (key, paper, version)  # same id, same key: the heap is unchanged
            return
        if len(self._heap) < self.capacity:
            heapq.heappush(self._heap, (-key, paper.id))
        else:
            _, evicted = heapq.heapreplace(self._heap, (-key, paper.id))
            del self._papers[evicted]
        self._papers[paper.id] = (key, paper, version)

    def offer(self, paper: Paper, version: int = 0) -> None:
        key = sample_key(paper.id, self.seed)
        if self.admits(paper.id, key, version):
            self.add(key, paper, version)

    def __len__(self) -> int:
        return len(self._papers)

    def sorted_items(self) -> list[tuple[int, Paper]]:
        """(key, paper) by increasing key: the order in which the select step takes papers."""
        return sorted(((key, paper) for key, paper, _ in self._papers.values()), key=lambda item: (item[0], item[1].id))


class EligibleLog:
    """Append-only file of little-endian uint64 pairs (sample_key, title_hash), written in chunks.

    The seeded sample key doubles as the id's fingerprint: it is a 64-bit hash of (seed, id).
    """

    def __init__(self, path: str | Path, flush_every: int = 1 << 16) -> None:
        self.path = Path(path)
        # Streamed in chunks through an open handle, so not `replacing`: close() moves the finished file.
        self._tmp = temporary_path(self.path)
        self._tmp.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self._tmp, "wb")
        self._buffer = array("Q")
        self._flush_every = flush_every
        self.rows = 0

    def add(self, key: int, normalized_title: str) -> None:
        self._buffer.append(key)
        self._buffer.append(normalized_title_hash(normalized_title))
        self.rows += 1
        if len(self._buffer) >= 2 * self._flush_every:
            self._flush()

    def _flush(self) -> None:
        if sys.byteorder != "little":
            self._buffer.byteswap()
        self._buffer.tofile(self._handle)
        self._buffer = array("Q")

    def close(self) -> None:
        """Finish the file (atomically renamed into place)."""
        import os

        self._flush()
        self._handle.close()
        os.replace(self._tmp, self.path)

    def discard(self) -> None:
        self._handle.close()
        self._tmp.unlink(missing_ok=True)


def read_eligible_log(path: str | Path):  # -> numpy array of shape (n, 2), dtype uint64
    import numpy as np

    data = np.fromfile(path, dtype="<u8")
    if data.size % 2:
        from rmeval.errors import RmevalError

        raise RmevalError(
            f"{path}: truncated eligible-paper log (odd number of 64-bit words); re-run arxiv-fetch"
        )
    return data.reshape(-1, 2)
