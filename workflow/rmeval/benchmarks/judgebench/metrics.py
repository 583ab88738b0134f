"""One model's JudgeBench results on one split: its score file joined to the prepared table, every pair decided in
both orders by the official rules (scoring.py).

- A reward model, a direct LLM judge (its rating, an unparsable one at its adapter's `null_rating`) or a trivial
  baseline scored each response once (`data/<split>.parquet`): decisions from the two rewards, as utils/judges.py.
- A pairwise LLM judge (`pairwise/<split>.parquet`, score columns `verdict`, `chosen_position`): its verdict on
  `<pair_id>#order1` (the pair as published) and on `<pair_id>#order2` (swapped, flipped back); no verdict is a
  decision of None, which counts 0, as in compute_final_metrics.
Every prepared row must be scored exactly once (rmeval.score_alignment's checks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.judgebench.official import CATEGORIES, OVERALL
from rmeval.benchmarks.judgebench.scoring import flip, net, reward_pair, verdict_decision
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd

CLASSIFIER = "classifier"
DIRECT_JUDGE = "judge (direct)"
PAIRWISE_JUDGE = "judge (pairwise)"
MODEL_MODES = (CLASSIFIER, DIRECT_JUDGE, PAIRWISE_JUDGE)  # a trivial baseline's mode is its rule's label
PAIR_COLUMNS = ("pair_id", "source", "category", "label", "score_A", "score_B", "decision_1", "decision_2", "net",
                "correct")
PERCENT = 100.0


@dataclass(frozen=True)
class Outcomes:
    """One model's pairs on one split, in the prepared table's order (PAIR_COLUMNS per pair)."""

    model: str
    split: str
    mode: str
    pairs: list[dict[str, Any]]

    @property
    def is_baseline(self) -> bool:
        return self.mode not in MODEL_MODES

    def correct(self) -> dict[str, float]:
        """pair_id -> 1.0 / 0.0."""
        return {pair["pair_id"]: float(pair["correct"]) for pair in self.pairs}

    def members(self, category: str) -> list[dict[str, Any]]:
        return self.pairs if category == OVERALL else [p for p in self.pairs if p["category"] == category]


def score_mode(scores: pd.DataFrame) -> str:
    if "verdict" in scores.columns:
        return PAIRWISE_JUDGE
    return DIRECT_JUDGE if "rating" in scores.columns else CLASSIFIER


def _reward_pairs(data: pd.DataFrame, scores: pd.DataFrame, path: Path) -> list[dict[str, Any]]:
    from rmeval.score_alignment import aligned_rewards

    rewards = dict(zip(data["id"].astype(str), aligned_rewards(data["id"].astype(str), scores, path), strict=True))
    out = []
    for row in data[data["position"] == "A"].to_dict("records"):
        pair_id = str(row["pair_id"])
        score_a, score_b = float(rewards[f"{pair_id}#A"]), float(rewards[f"{pair_id}#B"])
        first, second, total = reward_pair(row["label"], score_a, score_b)
        out.append({"pair_id": pair_id, "source": row["source"], "category": row["category"], "label": row["label"],
                    "score_A": score_a, "score_B": score_b, "decision_1": first, "decision_2": second,
                    "net": total, "correct": total > 0})
    return out


def _verdict_pairs(data: pd.DataFrame, scores: pd.DataFrame, path: Path) -> list[dict[str, Any]]:
    from rmeval.score_alignment import aligned_rewards

    aligned_rewards(data["id"].astype(str), scores, path)  # every row scored once, nothing else
    by_id = {str(row["id"]): row for row in scores.to_dict("records")}
    prepared_by_id = {str(row["id"]): row for row in data.to_dict("records")}
    out = []
    for row in data[data["role"] == "chosen"].to_dict("records"):
        pair_id = str(row["pair_id"])
        decisions = []
        for order in (1, 2):
            key = f"{pair_id}#order{order}"
            scored, prepared = by_id[key], prepared_by_id[key]
            if scored.get("chosen_position") != prepared["chosen_position"]:
                raise RmevalError(f"{path}: id {key!r}: the judge showed the winner at "
                                  f"{scored.get('chosen_position')!r}, the table at {prepared['chosen_position']!r}; "
                                  "JudgeBench judges both recorded orders (set the judge's options.positions: "
                                  "recorded)")
            verdict = scored.get("verdict")
            decisions.append(verdict_decision(verdict if isinstance(verdict, str) else None))
        first, second = decisions[0], flip(decisions[1])
        total = net(row["label"], first, second)
        out.append({"pair_id": pair_id, "source": row["source"], "category": row["category"], "label": row["label"],
                    "score_A": math.nan, "score_B": math.nan, "decision_1": first, "decision_2": second,
                    "net": total, "correct": total > 0})
    return out


def outcomes(model: str, split: str, data: pd.DataFrame, scores: pd.DataFrame, path: Path) -> Outcomes:
    """The model's pairs; `data` is the table its score job read (data/ or pairwise/)."""
    from rmeval.models.baseline import sidecar_baseline

    mode = score_mode(scores)
    if mode == PAIRWISE_JUDGE:
        if "role" not in data.columns:
            raise RmevalError(f"{path}: a pairwise judge's verdicts, but its table is not the pairwise one")
        pairs = _verdict_pairs(data, scores, path)
    else:
        if "position" not in data.columns:
            raise RmevalError(f"{path}: rewards per response, but its table is the pairwise one")
        pairs = _reward_pairs(data, scores, path)
    baseline = sidecar_baseline(path)
    return Outcomes(model, split, baseline.label if baseline else mode, pairs)


def accuracy(pairs: list[dict[str, Any]]) -> float:
    """100 * correct / pairs (compute_final_metrics); NaN where the category has no pair in the run (the official
    script would divide by zero)."""
    return PERCENT * sum(bool(p["correct"]) for p in pairs) / len(pairs) if pairs else math.nan


def table_row(item: Outcomes) -> dict[str, Any]:
    """A row of results/tables/judgebench.csv."""
    return {"model": item.model, "split": item.split,
            **{name: accuracy(item.members(name)) for name in (*CATEGORIES, OVERALL)}}


def subset_rows(item: Outcomes) -> list[dict[str, Any]]:
    """Rows of the per-subset table: each category (subset `all`) and each of its sources, then overall."""
    rows = []
    for category in CATEGORIES:
        members = item.members(category)
        rows.append({"model": item.model, "mode": item.mode, "split": item.split, "category": category,
                     "subset": "all", "accuracy": accuracy(members), "n": len(members)})
        for source in sorted({p["source"] for p in members}):
            chosen = [p for p in members if p["source"] == source]
            rows.append({"model": item.model, "mode": item.mode, "split": item.split, "category": category,
                         "subset": source, "accuracy": accuracy(chosen), "n": len(chosen)})
    others = [p for p in item.pairs if p["category"] is None]
    for source in sorted({p["source"] for p in others}):
        chosen = [p for p in others if p["source"] == source]
        rows.append({"model": item.model, "mode": item.mode, "split": item.split, "category": "other",
                     "subset": source, "accuracy": accuracy(chosen), "n": len(chosen)})
    rows.append({"model": item.model, "mode": item.mode, "split": item.split, "category": OVERALL, "subset": "all",
                 "accuracy": accuracy(item.pairs), "n": len(item.pairs)})
    return rows


def pair_records(item: Outcomes) -> list[dict[str, Any]]:
    """The per-pair file's rows (model, mode, split, then PAIR_COLUMNS), keyed by the official pair_id."""
    return [{"model": item.model, "mode": item.mode, "split": item.split, **pair} for pair in item.pairs]
