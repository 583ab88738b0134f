"""RMB's rules on one item's rewards (the chosen / best response first), vectorised over items.

- Pairwise: correct when the chosen response's reward is strictly higher than the rejected one's, a tie a loss
  (eval/scripts/my_run_rm.py: `1 if chosen > rejected else 0`).
- Best-of-N: correct only when the best response's reward is strictly higher than every loser's (the paper's BoN
  accuracy, Zhou et al. 2025, arXiv:2410.09893; the repository publishes no BoN script, so this follows the paper, not code).
"""

from __future__ import annotations

import numpy as np


def item_correct(rewards: np.ndarray) -> np.ndarray:
    """Rows of rewards (column 0 the chosen / best, then the others; NaN pads a shorter row) -> 1.0 when column 0
    beats every other strictly, else 0.0. A pairwise item is the two-column case."""
    others = np.where(np.isnan(rewards[:, 1:]), -np.inf, rewards[:, 1:])
    return (rewards[:, 0] > others.max(axis=1)).astype(float)


def pair_correct(chosen: float, rejected: float) -> bool:
    return chosen > rejected


def bon_correct(best: float, losers: list[float]) -> bool:
    return all(best > loser for loser in losers)
