"""The official JudgeBench rules (ScalerLab/JudgeBench), restated.

- A judge gives a decision per order: `A>B`, `B>A`, or None (no parsable verdict). The second order shows
  (response_B, response_A), so its decision is flipped back before it is compared with the label
  (`utils/metrics.py` flip_judgment).
- A reward model's decision (`utils/judges.py`, every reward-model judge): `A>B` if score_A > score_B, else `B>A`.
  Equal rewards therefore give `B>A` in both orders, which flip to opposite decisions: the pair nets 0.
- A pair is correct when, over its two decisions, (+1 per decision equal to the label, -1 per decision equal to its
  flip) is above 0 (`compute_final_metrics` with reverse_order); a category's score is 100 * correct / pairs.
"""

from __future__ import annotations

from rmeval.benchmarks.judgebench.official import LABELS


def flip(decision: str | None) -> str | None:
    """`A>B` <-> `B>A`; anything else unchanged (utils/metrics.py flip_judgment)."""
    return {"A>B": "B>A", "B>A": "A>B"}.get(decision, decision) if decision is not None else None


def reward_decision(score_a: float, score_b: float) -> str:
    """A reward model's decision on (A, B) as shown (utils/judges.py: 'A>B' if score_A > score_B else 'B>A')."""
    return "A>B" if score_a > score_b else "B>A"


def verdict_decision(verdict: str | None) -> str | None:
    """An rmeval pairwise judge's verdict letter on the order shown -> its decision (None stays None)."""
    return {"A": "A>B", "B": "B>A"}.get(verdict) if isinstance(verdict, str) else None


def net(label: str, decision_1: str | None, decision_2: str | None) -> int:
    """The pair's sum over both orders; `decision_2` already flipped back to the original order."""
    if label not in LABELS:
        raise ValueError(f"label {label!r} is not one of {LABELS}")
    return sum(1 if decision == label else -1 if decision == flip(label) else 0
               for decision in (decision_1, decision_2))


def reward_pair(label: str, score_a: float, score_b: float) -> tuple[str, str, int]:
    """A reward model's two decisions (original orientation) and the pair's net: the response texts are scored once,
    the second order reuses the two rewards swapped."""
    first = reward_decision(score_a, score_b)
    second = flip(reward_decision(score_b, score_a))
    assert second is not None
    return first, second, net(label, first, second)
