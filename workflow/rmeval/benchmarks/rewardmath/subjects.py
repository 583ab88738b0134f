"""The seven MATH subjects and their wildcard-safe slugs."""

from __future__ import annotations

import re

# MATH's subjects as they are spelled in the dataset (RewardMATH, MATH500, RewardBench math-prm).
MATH_SUBJECTS: tuple[str, ...] = (
    "Algebra",
    "Counting & Probability",
    "Geometry",
    "Intermediate Algebra",
    "Number Theory",
    "Prealgebra",
    "Precalculus",
)


def slugify_subject(subject: str) -> str:
    """'Counting & Probability' -> 'counting_and_probability' (a Snakemake wildcard value)."""
    text = subject.strip().lower().replace("&", " and ")
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


SUBJECT_SLUGS: tuple[str, ...] = tuple(slugify_subject(subject) for subject in MATH_SUBJECTS)
SLUG_TO_SUBJECT: dict[str, str] = dict(zip(SUBJECT_SLUGS, MATH_SUBJECTS, strict=True))

# The prepared RewardBench math-prm table sits beside the subject tables under this stem.
REWARDBENCH_STEM = "rewardbench_math_prm"

# The full benchmarks: a run on fewer is flagged in the tables and left out of cross-benchmark correlations.
REWARDMATH_PROBLEMS = 483
REWARDBENCH_MATH_PRM_PAIRS = 447
