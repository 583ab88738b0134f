"""One model's RewardBench scores from its score file and the prepared table (the official rules: scoring.py).

Rows are joined by the score contract's ids; every prepared completion must be scored exactly once. LLM judges in
direct mode (`rating` column) are scored on their reward (the rating; the lowest one when unparsable), so tied
ratings at the top share the point by the same 1/k rule; pairwise judges rate no single completion and are refused.
A trivial baseline (adapter `baseline`, known from the score file's sidecar) is scored by the same rules, its mode
naming it (`length baseline`); the chance rows (model `Random (chance)`) keep mode `baseline`. A published model
(adapter `published`: the authors' per-prompt results, read from their file, rmeval.models.published) has mode
`published`; its score file holds the prompts its file matched, and it is scored on those (whole prompts only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rewardbench.official import SECTIONS, TIES, V2_SUBSETS
from rmeval.benchmarks.rewardbench.scoring import (
    INVALID_RATING,
    TiesRow,
    best_of_n,
    finite,
    pair_won,
    rated_best_of_n,
    section_scores,
    ties_bootstrap,
    ties_components,
    v2_overall,
)
from rmeval.errors import RmevalError
from rmeval.intervals import bounded_mean_interval, percentile_bounds

if TYPE_CHECKING:
    import pandas as pd

    from rmeval.models.baseline import BaselineRule

CLASSIFIER = "classifier"
DIRECT_JUDGE = "judge (direct)"
CHANCE = "baseline"  # the mode of the chance rows (a random reward model's expected score), not a scored model
PUBLISHED = "published"  # a model's published per-item results, read from its authors' file, not run here
MODEL_MODES = (CLASSIFIER, DIRECT_JUDGE, PUBLISHED)  # reward models; a baseline model's mode is its rule's label
OVERALL = "Overall"


@dataclass(frozen=True)
class Scored:
    """A model's rewards joined to the prepared rows: per dataset row, its subset and rewards in `chosen + rejected`
    order (v1: [chosen, rejected]) and how many of them are correct."""

    model: str
    mode: str
    rows: dict[str, tuple[str, list[float], int]]  # row_id -> (subset, rewards, n_correct)
    baseline: BaselineRule | None = None  # a trivial baseline's rule (its mode is `rule.label`)
    published: dict[str, Any] | None = None  # a published model's record (rmeval.models.published.sidecar_published)

    @property
    def note(self) -> str | None:
        """A published model's line of a table note: where its results come from, how many items matched."""
        if self.published is None:
            return None
        sha = str(self.published.get("sha256") or "")[:12]
        what = "an earlier run's scores" if self.published.get("source") == "run" else "published per-item results"
        return (f"{self.model}: {what}, not run here: {self.published.get('model')} from "
                f"{self.published.get('origin')}{f' (sha256 {sha})' if sha else ''}; "
                f"{self.published.get('alignment_words')}."
                + "".join(f" {note[0].upper()}{note[1:]}." for note in self.published.get("notes") or []))

    @property
    def tag(self) -> dict[str, Any]:
        """What its table rows carry besides the columns: a published model's note, and the headline its authors'
        leaderboard page shows (with where it was read, and the share of items matched: why they may differ)."""
        if not self.note:
            return {}
        published = self.published or {}
        page = ({"leaderboard": published["leaderboard"], "leaderboard_source": published.get("leaderboard_source"),
                 "alignment": published.get("alignment") or {}} if published.get("leaderboard") is not None else {})
        return {"note": self.note, **page}


def score_mode(scores: pd.DataFrame, path: Path) -> str:
    if "verdict" in scores.columns:
        raise RmevalError(f"{path}: a pairwise judge's verdicts; RewardBench rates each completion (use a judge in "
                          "direct mode)")
    return DIRECT_JUDGE if "rating" in scores.columns else CLASSIFIER


def join(data: pd.DataFrame, scores: pd.DataFrame, model: str, path: Path) -> Scored:
    import pandas as pd

    from rmeval.models.baseline import sidecar_baseline
    from rmeval.models.published import sidecar_published

    if "id" not in scores.columns or "reward" not in scores.columns:
        raise RmevalError(f"{path}: needs columns 'id' and 'reward'; found {list(scores.columns)}")
    ids = scores["id"].astype(str)
    duplicated = ids[ids.duplicated()]
    if len(duplicated):
        raise RmevalError(f"{path}: id {duplicated.iloc[0]!r} is scored twice")
    mode = score_mode(scores, path)
    if mode == DIRECT_JUDGE:  # the ratings themselves, an unparsable one (null) as run_generative_v2.py's -1
        rewards = pd.Series(scores["rating"].astype(float).fillna(INVALID_RATING).to_numpy(), index=ids)
    else:
        rewards = pd.Series(scores["reward"].to_numpy(), index=ids)
    published = sidecar_published(path)
    if published is not None:  # the prompts its file matched (whole prompts), as its sidecar counts them
        data = _published_rows(data, rewards, path)
    missing = data.loc[~data["id"].isin(rewards.index), "id"]
    if len(missing):
        raise RmevalError(f"{path}: no score for id {missing.iloc[0]!r} ({len(missing)} missing)")
    extra = rewards.index.difference(data["id"])
    if len(extra):
        raise RmevalError(f"{path}: id {extra[0]!r} is not in the prepared table")
    rows: dict[str, tuple[str, list[float], int]] = {}
    for record in data.to_dict("records"):
        value = finite(rewards[record["id"]], f"{path}: id {record['id']!r}: column 'reward'")
        subset, values, n_correct = rows.setdefault(record["row_id"], (record["subset"], [], record["n_correct"]))
        values.append(value)
    if published is not None:
        return Scored(model, PUBLISHED, rows, None, published)
    baseline = sidecar_baseline(path)
    return Scored(model, baseline.label if baseline else mode, rows, baseline)


def _published_rows(data: pd.DataFrame, rewards: pd.Series, path: Path) -> pd.DataFrame:
    """The prepared rows of the prompts a published score file holds; a prompt held in part is an error."""
    held = data["id"].isin(rewards.index)
    partial = sorted(set(data.loc[held, "row_id"]) & set(data.loc[~held, "row_id"]))
    if partial:
        raise RmevalError(f"{path}: prompt {partial[0]!r} is scored in part ({len(partial)} such prompts)")
    return data[held]


# Subsets in the official order (v2's six, then v1's by section); any other subset after them, by name.
SUBSET_ORDER = {name: index for index, name in enumerate([*V2_SUBSETS, *(s for ss in SECTIONS.values() for s in ss)])}


def subset_key(subset: str) -> tuple[int, str]:
    return SUBSET_ORDER.get(subset, len(SUBSET_ORDER)), subset


def _subsets(scored: Scored) -> dict[str, list[tuple[str, list[float], int]]]:
    by_subset: dict[str, list[tuple[str, list[float], int]]] = {}
    for row_id, (subset, values, n_correct) in scored.rows.items():
        by_subset.setdefault(subset, []).append((row_id, values, n_correct))
    return {subset: by_subset[subset] for subset in sorted(by_subset, key=subset_key)}


def _groups(data: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    rows = data.drop_duplicates("row_id")
    groups = dict(tuple(rows.groupby("subset")))
    return [(subset, groups[subset]) for subset in sorted(groups, key=subset_key)]


def _ci(replicates: list[float]) -> tuple[float, float]:
    import numpy as np

    values = np.asarray([value for value in replicates if not math.isnan(value)], dtype=float)
    if len(values) == 0:
        return math.nan, math.nan
    low, high = np.percentile(values, percentile_bounds())
    return float(low), float(high)


def v1_rows(scored: Scored) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(subset rows: accuracy in %, n), (section rows: score in %, with Overall)."""
    subsets = {}
    subset_rows = []
    for subset, rows in _subsets(scored).items():
        wins = [pair_won(values[0], values[1]) for _, values, _ in rows]
        subsets[subset] = sum(wins) / len(wins)
        subset_rows.append({**scored.tag, "model": scored.model, "mode": scored.mode, "subset": subset,
                            "accuracy": 100 * subsets[subset], "n": len(wins)})
    section_rows = [{**scored.tag, "model": scored.model, "mode": scored.mode, "section": section, "score": 100 * value}
                    for section, value in section_scores(subsets).items()]
    return subset_rows, section_rows


def v2_rows(scored: Scored, n_bootstrap: int, seed: int) -> list[dict[str, Any]]:
    """Subset rows (score in %, n prompts, 95 % interval) and an Overall row (the mean of the six subsets).

    A best-of-N subset's score is the mean of per-prompt results in [0, 1] (1/k for a k-way tie at the top): its
    interval is the Wilson score interval (`rmeval.intervals`; conservative for non-binary results), which a
    percentile bootstrap is not: that collapsed to zero width when every prompt was won (or none) and covered 62 %
    at 0.99 on 100 items (issue 33). Ties (a weighted score) and Overall keep percentile bootstrap intervals; the
    Overall replicate resamples every subset's prompts in the same replicate."""
    import numpy as np

    rng = np.random.default_rng(seed)
    scores: dict[str, float] = {}
    replicates: dict[str, list[float]] = {}
    out = []
    for subset, rows in _subsets(scored).items():
        if subset == TIES:
            ties = [TiesRow(row_id, tuple(values), n_correct) for row_id, values, n_correct in rows]
            scores[subset] = ties_components(ties)["score"]
            replicates[subset] = ties_bootstrap(ties, n_bootstrap, rng)
        else:
            rule = rated_best_of_n if scored.mode == DIRECT_JUDGE else best_of_n
            results = np.array([rule(values, f"{scored.model}: {row_id}") for row_id, values, _ in rows])
            scores[subset] = float(results.mean())
            replicates[subset] = [float(results[rng.integers(0, len(results), len(results))].mean())
                                  for _ in range(n_bootstrap)]  # for Overall's interval
        low, high = (_ci(replicates[subset]) if subset == TIES
                     else bounded_mean_interval(results.tolist(), 0.0, 1.0))
        out.append({**scored.tag, "model": scored.model, "mode": scored.mode, "subset": subset,
                    "score": 100 * scores[subset],
                    "n": len(rows), "ci_low": 100 * low, "ci_high": 100 * high})
    overall = v2_overall(scores)
    overall_replicates = ([float(np.mean([replicates[s][b] for s in V2_SUBSETS])) for b in range(n_bootstrap)]
                          if not math.isnan(overall) else [])
    low, high = _ci(overall_replicates)
    out.append({**scored.tag, "model": scored.model, "mode": scored.mode, "subset": OVERALL, "score": 100 * overall,
                "n": sum(len(rows) for rows in _subsets(scored).values()), "ci_low": 100 * low, "ci_high": 100 * high})
    return out


def chance_v2(data: pd.DataFrame) -> list[dict[str, Any]]:
    """A random scorer's expected best-of-N score per non-Ties subset (the mean of 1/N; 25 % for best-of-4).
    Ties has no closed form: left empty, and so is its Overall."""
    out = []
    for subset, group in _groups(data):
        value = math.nan if subset == TIES else 100 * float((1 / group["n_completions"]).mean())
        out.append({"model": "Random (chance)", "mode": CHANCE, "subset": subset, "score": value,
                    "n": len(group)})
    scores = {row["subset"]: row["score"] / 100 for row in out}
    out.append({"model": "Random (chance)", "mode": CHANCE, "subset": OVERALL, "score": 100 * v2_overall(scores),
                "n": sum(row["n"] for row in out)})
    return out


def chance_v1(data: pd.DataFrame) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    subsets = [{"model": "Random (chance)", "mode": CHANCE, "subset": subset, "accuracy": 50.0, "n": len(group)}
               for subset, group in _groups(data)]
    sections = [{"model": "Random (chance)", "mode": CHANCE, "section": section, "score": 100 * value}
                for section, value in section_scores({row["subset"]: 0.5 for row in subsets}).items()]
    return subsets, sections

