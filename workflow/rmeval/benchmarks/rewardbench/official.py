"""Facts of the official RewardBench leaderboards (allenai/reward-bench), as numbers only.

v1 (`rewardbench/constants.py` EXAMPLE_COUNTS / SUBSET_MAPPING): a section's score is the mean of its subsets'
accuracies weighted by these counts (math-prm's 447 pairs count as 984, to weigh as much as the six HumanEvalPack
subsets together); the overall score is the mean of the four sections.
v2 (`scripts/run_v2.py`): six subsets, the overall score is their mean; Ties is scored by its own rule.
"""

from __future__ import annotations

from collections.abc import Iterable

EXAMPLE_COUNTS: dict[str, int] = {
    "alpacaeval-easy": 100, "alpacaeval-length": 95, "alpacaeval-hard": 95,
    "mt-bench-easy": 28, "mt-bench-med": 40, "mt-bench-hard": 37,
    "math-prm": 984,  # 447 pairs, upweighted to equal code (official)
    "refusals-dangerous": 100, "refusals-offensive": 100,
    "llmbar-natural": 100, "llmbar-adver-neighbor": 134, "llmbar-adver-GPTInst": 92, "llmbar-adver-GPTOut": 47,
    "llmbar-adver-manual": 46,
    "xstest-should-refuse": 154, "xstest-should-respond": 250, "donotanswer": 136,
    "hep-cpp": 164, "hep-go": 164, "hep-java": 164, "hep-js": 164, "hep-python": 164, "hep-rust": 164,
}

SECTIONS: dict[str, tuple[str, ...]] = {
    "Chat": ("alpacaeval-easy", "alpacaeval-length", "alpacaeval-hard", "mt-bench-easy", "mt-bench-med"),
    "Chat Hard": ("mt-bench-hard", "llmbar-natural", "llmbar-adver-neighbor", "llmbar-adver-GPTInst",
                  "llmbar-adver-GPTOut", "llmbar-adver-manual"),
    "Safety": ("refusals-dangerous", "refusals-offensive", "xstest-should-refuse", "xstest-should-respond",
               "donotanswer"),
    "Reasoning": ("math-prm", "hep-cpp", "hep-go", "hep-java", "hep-js", "hep-python", "hep-rust"),
}

V1_PAIRS = 2985  # the `filtered` split
V2_PROMPTS = 1865  # the `test` split
V2_SUBSETS: tuple[str, ...] = ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")
TIES = "Ties"

# Official Ties weights (rewardbench/utils.py process_single_model).
TIES_WEIGHTS = {"tied_accuracy": 0.30, "ref_accuracy": 0.30, "correctness_preferred": 0.20,
                "correctness_preferred_hard": 0.20, "margin": 0.01}

HF_IDS = {"rewardbench": "allenai/reward-bench", "rewardbench2": "allenai/reward-bench-2"}
HF_SPLITS = {"rewardbench": "filtered", "rewardbench2": "test"}


DAGGER = "†"  # a partial run's Overall, as RewardMATH marks its partial runs


def official_subsets(version: str) -> tuple[str, ...]:
    """The subsets of a version's official Overall."""
    return tuple(EXAMPLE_COUNTS) if version == "rewardbench" else V2_SUBSETS


def partial_note(version: str, present: Iterable[str]) -> str:
    """"" when every official subset ran; else what a partial Overall is, in words (`†` marks it)."""
    official = official_subsets(version)
    ran = [subset for subset in official if subset in set(present)]
    if len(ran) == len(official):
        return ""
    overall = "its Overall is not the official one and cannot be compared with published scores" \
        if version == "rewardbench" else "it has no Overall (the official one needs all six)"
    return f"{DAGGER} partial run: {len(ran)} of {len(official)} subsets; {overall}"
