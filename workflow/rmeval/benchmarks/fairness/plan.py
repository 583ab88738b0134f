"""What the fairness rules pass their commands besides the catalogue's files: the published values our numbers
are compared with, and the optional RewardMATH parts. Import-free: the rule files call it at parse time."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

# The papers' own numbers, relative to the repository root (read by `rmeval fairness-reproduction`).
PUBLISHED_VALUES = ("resources/published/song2025_fairness.yaml", "resources/published/kim2024_rewardmath.yaml")


def optional_flag(flag: str, paths: Sequence[str]) -> str:
    """`--flag PATH` when a rule's optional input is there, else nothing (the input is [] when its branch is off)."""
    if len(paths) > 1:
        raise ValueError(f"{flag}: one path expected, got {list(paths)}")
    return f"{flag} {shlex.quote(paths[0])}" if paths else ""


def rewardmath_summary_step(tables: Sequence[str], summary: str, prm_aggregation: str) -> str:
    """` && rmeval rewardmath-summary ...` appending the RewardMATH section to the fairness summary, when the
    RewardMATH branch ran (`tables`: its side-by-side table, [] otherwise); nothing otherwise."""
    if not tables:
        return ""
    return (f" && rmeval rewardmath-summary {optional_flag('--table', tables)} --append-to {shlex.quote(summary)}"
            f" --prm-aggregation {shlex.quote(prm_aggregation)}")
