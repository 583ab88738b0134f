"""Facts of the official JudgeBench release (ScalerLab/JudgeBench, MIT), as data only.

- Files: `data/dataset=judgebench,response_model=<model>.jsonl` on GitHub; on the Hub (`ScalerLab/JudgeBench`,
  splits `gpt` and `claude`) the same rows as `data/<split>-00000-of-00001.jsonl`.
- Fields of a pair: `pair_id`, `original_id`, `source`, `question`, `response_model`, `response_A`, `response_B`,
  `label` (`A>B` or `B>A`).
- Categories by source prefix, as `run_judge.py` prints them (`source.startswith(prefix)`; "" is Overall).
- Sizes: 350 pairs (GPT-4o responses; 154 mmlu-pro, 98 livebench-reasoning, 56 livebench-math, 42 livecodebench)
  and 270 (Claude-3.5-Sonnet; 154, 51, 34, 31).
"""

from __future__ import annotations

from dataclasses import dataclass

HF_ID = "ScalerLab/JudgeBench"
LABELS = ("A>B", "B>A")
FIELDS = ("pair_id", "source", "question", "response_A", "response_B", "label")

# Category (a column of results/tables/judgebench.csv) -> its source prefix (run_judge.py main()).
CATEGORIES: dict[str, str] = {"knowledge": "mmlu-pro", "reasoning": "livebench-reasoning",
                              "math": "livebench-math", "coding": "livecodebench"}
OVERALL = "overall"


@dataclass(frozen=True)
class Split:
    """One response model's pairs. name: the config's and the Hub's split name (also the score table's)."""

    name: str
    response_model: str
    pairs: int  # in the official release
    release_sha256: str  # of the GitHub file (ScalerLab/JudgeBench@e2c52c2 data/): the published bytes

    @property
    def github_file(self) -> str:
        return f"dataset=judgebench,response_model={self.response_model}.jsonl"

    @property
    def hub_file(self) -> str:
        return f"data/{self.name}-00000-of-00001.jsonl"


SPLITS: dict[str, Split] = {
    "gpt": Split("gpt", "gpt-4o-2024-05-13", 350,
                 "d5106306b38dead1b2e964ecf5534a3e7b2fc4b8d3b8da327599edfcebd76042"),
    "claude": Split("claude", "claude-3-5-sonnet-20240620", 270,
                    "3b70504588e400613bf5744a20a345da8701b7150be9a30c9db0e6f3d7b70a62"),
}


def category_of(source: str) -> str | None:
    """The category whose prefix `source` starts with (None: none of the four; such a pair counts in Overall only)."""
    for category, prefix in CATEGORIES.items():
        if source.startswith(prefix):
            return category
    return None
