"""Every model's RM-Bench scores from its score file and the prepared table (the official rules: scoring.py).

The prepared table is laid out once (`Layout`: per domain, each prompt's six rows); a model's rewards are read in
the prepared order, every row scored exactly once (rmeval.score_alignment). A direct LLM judge is scored on its
ratings, an unparsable one as -1 (below every valid rating), as the RewardBench stage reads them; a trivial
baseline (known from the score file's sidecar) by the same rules, its mode naming it (`length baseline`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rmeval.benchmarks.rmbench.official import DIFFICULTIES, DOMAINS
from rmeval.benchmarks.rmbench.scoring import DomainScore, Overall, domain_score, item_shares, overall, wins

if TYPE_CHECKING:
    import pandas as pd

AVERAGE = "average"


@dataclass(frozen=True)
class Layout:
    """Where each prompt's responses are in the prepared table: per domain (official order) a (prompts, 6) matrix of
    row positions, chosen 0-2 then rejected 0-2, and the prompts' item keys, in file order."""

    positions: dict[str, np.ndarray]
    items: dict[str, list[str]]

    @classmethod
    def of(cls, data: pd.DataFrame) -> Layout:
        import pandas as pd

        frame = pd.DataFrame({"item": data["item"].astype(str).to_numpy(), "domain": data["domain"].to_numpy(),
                              "slot": np.where(data["is_chosen"].to_numpy(), 0, 3) + data["style"].to_numpy(),
                              "position": np.arange(len(data))})
        frame["order"] = pd.factorize(frame["item"])[0]
        positions, items = {}, {}
        for domain in DOMAINS:
            rows = frame[frame["domain"] == domain]
            table = rows.pivot(index="order", columns="slot", values="position").sort_index()
            positions[domain] = table.reindex(columns=range(6)).to_numpy(dtype=np.int64)
            items[domain] = rows.drop_duplicates("order").sort_values("order")["item"].tolist()
        return cls(positions, items)

    def matrices(self, rewards: np.ndarray) -> dict[str, np.ndarray]:
        """Per domain its prompts' won-cell matrices (n, 3, 3)."""
        return {domain: wins(rewards[where[:, :3]], rewards[where[:, 3:]]) for domain, where in self.positions.items()}


@dataclass(frozen=True)
class ModelScores:
    """One model's results: its mode, per domain its score and its prompts' cell shares, and the overall scores."""

    model: str
    mode: str
    domains: dict[str, DomainScore]
    shares: dict[str, dict[str, np.ndarray]]  # domain -> difficulty (and `average`) -> per-prompt share won
    overall: Overall
    baseline: Any = None  # a trivial baseline's rule (rmeval.models.baseline.BaselineRule)


def model_rewards(data: pd.DataFrame, scores: pd.DataFrame, path: Path) -> tuple[np.ndarray, str]:
    """The model's reward of every prepared row, checked, and its mode (classifier, judge (direct))."""
    from rmeval.benchmarks.rewardbench.metrics import DIRECT_JUDGE, score_mode
    from rmeval.benchmarks.rewardbench.scoring import INVALID_RATING
    from rmeval.score_alignment import aligned_rewards

    mode = score_mode(scores, path)
    if mode == DIRECT_JUDGE:
        return aligned_rewards(data["id"], scores, path, "rating", INVALID_RATING), mode
    return aligned_rewards(data["id"], scores, path), mode


def score_model(layout: Layout, rewards: np.ndarray, model: str, mode: str, baseline: Any = None) -> ModelScores:
    matrices = layout.matrices(rewards)
    domains = {domain: domain_score(matrices[domain]) for domain in DOMAINS}
    shares = {domain: item_shares(matrices[domain]) for domain in DOMAINS}
    return ModelScores(model, baseline.label if baseline else mode, domains, shares, overall(domains), baseline)


def read_model(layout: Layout, data: pd.DataFrame, path: Path, model: str) -> ModelScores:
    import pandas as pd

    from rmeval.models.baseline import sidecar_baseline

    rewards, mode = model_rewards(data, pd.read_parquet(path), path)
    return score_model(layout, rewards, model, mode, sidecar_baseline(path))


def main_row(scores: ModelScores) -> dict[str, Any]:
    """model, chat, math, code, safety, easy, normal, hard, average (percent) and its mode (kept out of the CSV)."""
    return {"model": scores.model, **{domain: 100 * scores.domains[domain].average for domain in DOMAINS},
            **{difficulty: 100 * scores.overall.get(difficulty) for difficulty in DIFFICULTIES},
            AVERAGE: 100 * scores.overall.average, "mode": scores.mode}


def subset_rows(scores: ModelScores) -> list[dict[str, Any]]:
    """Per domain and difficulty (and the domain's average): the score in percent, its prompts and the Wilson
    interval of the mean of the per-prompt shares (rmeval.intervals: conservative for shares in [0, 1])."""
    from rmeval.intervals import bounded_mean_interval

    rows = []
    for domain in DOMAINS:
        for difficulty in (*DIFFICULTIES, AVERAGE):
            shares = scores.shares[domain][difficulty]
            low, high = bounded_mean_interval(shares.tolist(), 0.0, 1.0)
            rows.append({"model": scores.model, "mode": scores.mode, "domain": domain, "difficulty": difficulty,
                         "score": 100 * scores.domains[domain].get(difficulty), "n": len(shares),
                         "ci_low": 100 * low, "ci_high": 100 * high})
    return rows
