"""A model server's memory of the inputs it scored: one reward per distinct model input across its jobs.

A job scores each distinct input once (rmeval.scoring.distinct); a text that two jobs carry (a corpus holding
it in two groups) would still be scored twice, in batches of other shapes, and the copies could differ in the
last bits. The server keeps each input's outputs by key (`Prepared.keys`) and answers a later job's copy from
memory, so within one server copies tie across jobs too. Replicas are separate processes: each has its own memo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rmeval.models.base import BatchScores

MAX_ENTRIES = 4_000_000  # ~0.5 GB at most; past it new inputs are scored but not remembered


class RewardMemo:
    """key -> (reward, n_tokens, step rewards) of every input the server scored; used under its compute lock."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self.entries: dict[bytes, tuple[float, int | None, list[float] | None]] = {}

    def score(self, keys: np.ndarray | None, indices: np.ndarray,
              score: Callable[[np.ndarray], BatchScores]) -> tuple[BatchScores, int]:
        """Outputs for rows `indices` (keys: the job's, all rows), scoring only those not remembered; returns them
        and how many came from memory. Adapters with further output columns (judges) are not remembered."""
        if keys is None:
            return score(indices), 0
        wanted = [bytes(keys[i]) for i in indices.tolist()]
        known = np.array([key in self.entries for key in wanted], dtype=bool)
        fresh = indices[~known]
        scored = score(fresh) if len(fresh) else None
        if scored is not None and scored.extra:
            if known.any():  # never reached: extra columns come from API adapters, which have no keys
                raise AssertionError("a remembered row of an adapter with extra columns")
            return scored, 0
        rewards = np.empty(len(indices), dtype=np.float64)
        tokens: list[int | None] = [None] * len(indices)
        steps: list[list[float] | None] = [None] * len(indices)
        fresh_at = np.flatnonzero(~known)
        if scored is not None:
            rewards[fresh_at] = scored.rewards
            for position, order in enumerate(fresh_at.tolist()):
                tokens[order] = None if scored.n_tokens is None else int(scored.n_tokens[position])
                steps[order] = None if scored.step_rewards is None else list(scored.step_rewards[position])
                if len(self.entries) < self.max_entries:
                    self.entries.setdefault(wanted[order], (float(rewards[order]), tokens[order], steps[order]))
        for order in np.flatnonzero(known).tolist():
            reward, tokens[order], remembered = self.entries[wanted[order]]
            rewards[order] = reward
            steps[order] = None if remembered is None else list(remembered)
        has_steps = any(step is not None for step in steps)
        has_tokens = all(token is not None for token in tokens)
        return BatchScores(rewards=rewards, step_rewards=steps if has_steps else None,  # type: ignore[arg-type]
                           n_tokens=np.array(tokens, dtype=np.int64) if has_tokens else None), int(known.sum())

    def describe(self) -> dict[str, Any]:
        return {"remembered_inputs": len(self.entries)}
