"""One model's RMB results: its score file joined to the prepared items, every item scored by the rules
(scoring.py), then accuracies per scenario, the four headline cells and the overall mean.

A headline cell (e.g. Helpfulness Pairwise) is by default the mean over its items (`rmb.average: items`): what the
official script computes when run on the cell's folder (my_run_rm.py line 420, `sum(results) / len(results)` over
every pair it loaded: one file, or every *.json below `--dataset_dir`, lines 232-235); the repository has no code that
averages scenarios or cells, and RM-R1's re-implementation takes the same item mean per cell (run_rm.py line 379,
run_rm_bestofn.py line 445). `scenarios` takes the mean of its scenarios' (files') accuracies instead. Overall is the
mean of the four cells (the paper's Table 3; RM-R1 process_final_result.py line 39), empty when one did not run.
A trivial baseline (known from its score file's sidecar) is scored by the same rules, its mode naming it (`length
baseline`). A published model (adapter `published`: the authors' per-pair rewards, rmeval.models.published) has mode
`published`; its score file holds the texts of the items its file matched, and it is scored on the items whose texts
it all holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rmeval.benchmarks.rmb.layout import CELLS, ITEMS, KINDS, OVERALL, Cell
from rmeval.benchmarks.rmb.scoring import item_correct
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd

CLASSIFIER = "classifier"
DIRECT_JUDGE = "judge (direct)"
PUBLISHED = "published"  # a model's published per-pair rewards, read from its authors' file, not run here
MODEL_MODES = (CLASSIFIER, DIRECT_JUDGE, PUBLISHED)


@dataclass(frozen=True)
class Layout:
    """Where each item's responses are among the texts, computed once for every model: per kind, the items (kind,
    item_id, goal, scenario) in the prepared order and a matrix of text positions (column 0 the chosen / best, -1
    padding)."""

    items: dict[str, pd.DataFrame]
    positions: dict[str, np.ndarray]

    @classmethod
    def of(cls, texts: pd.DataFrame, items: pd.DataFrame) -> Layout:
        import pandas as pd

        index = pd.Series(np.arange(len(texts)), index=texts["id"].astype(str).to_numpy())
        missing = items.loc[~items["text_id"].isin(index.index), "text_id"]
        if len(missing):
            raise RmevalError(f"the RMB items name text {missing.iloc[0]!r}, which is not in the texts table")
        frames, positions = {}, {}
        for kind in KINDS:
            rows = items[items["kind"] == kind]
            if rows.empty:
                continue
            order = pd.factorize(rows["item_id"].astype(str))[0]
            width = int(rows["k"].max()) + 1
            matrix = np.full((order.max() + 1, width), -1, dtype=np.int64)
            matrix[order, rows["k"].to_numpy()] = index.reindex(rows["text_id"].astype(str).to_numpy()).to_numpy()
            frames[kind] = rows.drop_duplicates("item_id")[["kind", "item_id", "goal", "scenario"]].reset_index(drop=True)
            positions[kind] = matrix
        return cls(frames, positions)

    def results(self, rewards: np.ndarray) -> dict[str, np.ndarray]:
        """kind -> each item's 0/1 result, in the prepared order."""
        out = {}
        for kind, matrix in self.positions.items():
            values = np.where(matrix >= 0, rewards[np.maximum(matrix, 0)], np.nan)
            out[kind] = item_correct(values)
        return out

    def frame(self, rewards: np.ndarray) -> pd.DataFrame:
        """One row per item: kind, item_id, goal, scenario, correct; an item with a text without a reward (NaN: a
        published model's file lacks it) is left out."""
        import pandas as pd

        results = self.results(rewards)
        held = {kind: ~((matrix >= 0) & np.isnan(rewards[np.maximum(matrix, 0)])).any(axis=1)
                for kind, matrix in self.positions.items()}
        return pd.concat([self.items[kind].assign(correct=results[kind])[held[kind]] for kind in self.items],
                         ignore_index=True)


def score_mode(scores: pd.DataFrame, path: Path) -> str:
    if "verdict" in scores.columns:
        raise RmevalError(f"{path}: a pairwise judge's verdicts; RMB rewards each response on its own (use a judge in "
                          "direct mode)")
    return DIRECT_JUDGE if "rating" in scores.columns else CLASSIFIER


def rewards_of(texts: pd.DataFrame, scores: pd.DataFrame, path: Path) -> tuple[np.ndarray, str]:
    """The model's reward of every text, in the texts' order (checked: each scored once, finite), and its mode (a
    baseline's label when the sidecar names one)."""
    from rmeval.models.baseline import sidecar_baseline
    from rmeval.models.published import sidecar_published
    from rmeval.score_alignment import aligned_rewards

    mode = score_mode(scores, path)
    if sidecar_published(path) is not None:  # the texts of the items its file matched; the others NaN
        held = texts["id"].astype(str).isin(set(scores["id"].astype(str))).to_numpy()
        rewards = np.full(len(texts), np.nan)
        rewards[held] = aligned_rewards(texts["id"][held], scores, path)
        return rewards, PUBLISHED
    baseline = sidecar_baseline(path)
    return aligned_rewards(texts["id"], scores, path), (baseline.label if baseline else mode)


def cell_of(kind: str, goal: str) -> Cell:
    return next(cell for cell in CELLS if cell.kind == kind and cell.goal == goal)


def model_rows(model: str, mode: str, items: pd.DataFrame, average: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(its row of rmb.csv in percent, its per-scenario rows). `average`: a cell is the mean over its items, or
    over its scenarios' accuracies."""
    main: dict[str, Any] = {"model": model, "mode": mode}
    for cell in CELLS:
        chosen = items[(items["kind"] == cell.kind) & (items["goal"] == cell.goal)]
        if chosen.empty:
            main[cell.column] = np.nan
        elif average == ITEMS:
            main[cell.column] = 100 * float(chosen["correct"].mean())
        else:
            main[cell.column] = float(np.mean([100 * float(group["correct"].mean())
                                               for _, group in chosen.groupby("scenario", sort=True)]))
        main[f"n_{cell.column}"] = len(chosen)
    cells = [main[cell.column] for cell in CELLS]
    main[OVERALL] = float(np.mean(cells)) if not any(np.isnan(cells)) else np.nan
    scenarios = [{"model": model, "mode": mode, "set": "BoN" if kind == "bon" else "Pairwise", "goal": goal,
                  "scenario": scenario, "accuracy": 100 * float(group["correct"].mean()), "n": len(group)}
                 for (kind, goal, scenario), group in items.groupby(["kind", "goal", "scenario"], sort=True)]
    return main, scenarios
