"""Turning a PRM's per-step scores into one solution score, at metric time.

The five aggregations of RewardMATH (Kim et al. 2024, sec. 4): the product of the step scores, their
geometric mean, minimum, arithmetic mean, and the last step's score. They are computed with plain float
arithmetic in step order, as the official evaluation does, so that ties (which count as failures) come
out exactly as in the paper.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rmeval.errors import RmevalError


def _prod(steps: Sequence[float]) -> float:
    product = 1.0
    for value in steps:
        product *= value
    return product


def _geo(steps: Sequence[float]) -> float:
    product = _prod(steps)
    if product < 0:
        raise ValueError("the geometric mean needs non-negative step scores (probabilities)")
    return product ** (1 / len(steps))


AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "prod": _prod,
    "geo": _geo,
    "min": min,
    "mean": lambda steps: sum(steps) / len(steps),
    "last": lambda steps: steps[-1],
}
STEP_AGGREGATIONS: tuple[str, ...] = tuple(AGGREGATIONS)


def check_step_scores(value: object, where: str) -> list[float]:
    """A non-empty list of finite numbers; a length-1 list is valid (every aggregation then returns its value)."""
    if not isinstance(value, (list, tuple)) or isinstance(value, str):
        raise RmevalError(f"{where}: expected a list of step scores, got {type(value).__name__}")
    if len(value) == 0:
        raise RmevalError(f"{where}: empty list of step scores (a PRM must score at least one step)")
    steps: list[float] = []
    for index, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
            raise RmevalError(f"{where}: step {index} score {item!r} is not a finite number")
        steps.append(float(item))
    return steps


def aggregate(steps: Sequence[float], aggregation: str, where: str) -> float:
    if aggregation not in AGGREGATIONS:
        raise RmevalError(f"unknown step aggregation {aggregation!r}; known: {list(STEP_AGGREGATIONS)}")
    try:
        return float(AGGREGATIONS[aggregation](steps))
    except ValueError as error:
        raise RmevalError(f"{where}: {aggregation}: {error}") from error
