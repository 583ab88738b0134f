"""RMB's part of `rmeval compare` (its catalogue's `compare`): two models on the same items.

Each model's score file is joined to the prepared items as the metrics stage joins it, every item scored 0/1 by the
rules (scoring.py; items keyed by pair_uid / bon_uid, the same for every model). The four headline cells: Newcombe's
interval for paired proportions (MOVER on Wilson intervals) and the exact McNemar test on the discordant items;
overall (the mean of the four cells): a MOVER sum and the paired sign-flip test of the weighted difference. Values
are percentages, differences percentage points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rmeval.benchmarks.rmb.layout import CELLS, OVERALL
from rmeval.errors import RmevalError
from rmeval.paired_difference import (
    Difference,
    Interval,
    combined_difference,
    paired_bounded,
    weighted_sum,
    wilson_mean,
)

if TYPE_CHECKING:
    import pandas as pd

    from rmeval.run_outputs.compare.parts import CompareContext, ComparisonPart

PERCENT = 100.0
METHOD = ("Two models on the same RMB items (a pair counts when the chosen reward is strictly higher; a best-of-N "
          "item only when the best reward beats every loser's strictly). Cells (items of one goal and set): "
          "Newcombe's (1998) hybrid score interval for paired proportions and the exact McNemar test on the "
          "discordant items. Overall (the mean of the four cells): a MOVER sum of the cells' intervals (Zou & Donner "
          "2008) and the paired randomization (sign-flip) test of the weighted difference.")


class Engine:
    """Per model, each cell's 0/1 item results in the prepared order (the same items for every model)."""

    def __init__(self, results: dict[str, dict[str, np.ndarray]]) -> None:
        self.results = results
        first = next(iter(results.values()), {})
        self.cells = [cell.column for cell in CELLS if cell.column in first]
        self.complete = len(self.cells) == len(CELLS)

    def estimates(self, model: str) -> dict[str, Interval]:
        parts = {cell: wilson_mean(self.results[model][cell].tolist()) for cell in self.cells}
        out = {cell: interval.scaled(PERCENT) for cell, interval in parts.items()}
        if self.complete:
            out[OVERALL] = weighted_sum(list(parts.values()), [1 / len(parts)] * len(parts)).scaled(PERCENT)
        return out

    def compare(self, a: str, b: str) -> dict[str, Difference]:
        parts = {cell: paired_bounded(self.results[a][cell].tolist(), self.results[b][cell].tolist())
                 for cell in self.cells}
        out = {cell: difference.scaled(PERCENT) for cell, difference in parts.items()}
        if self.complete:
            out[OVERALL] = combined_difference(list(parts.values()), [1 / len(parts)] * len(parts)).scaled(PERCENT)
        return out


def cell_results(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """A cell's 0/1 item results (`metrics.Layout.frame`: one row per item), for each cell that has items."""
    out = {}
    for cell in CELLS:
        chosen = (frame["kind"] == cell.kind) & (frame["goal"] == cell.goal)
        if chosen.any():
            out[cell.column] = frame.loc[chosen, "correct"].to_numpy()
    return out


def comparison_part(context: CompareContext) -> ComparisonPart:
    import pandas as pd

    from rmeval.benchmarks.rmb.metrics import Layout, rewards_of
    from rmeval.benchmarks.rmb.planner import DATA, TABLE
    from rmeval.run_outputs.compare.parts import ComparisonPart, Metric

    data = context.data or context.root / DATA
    if data.is_dir():
        data = data / "texts.parquet"
    if not data.is_file():
        raise RmevalError(f"{data}: the prepared RMB texts are missing (run `rmeval rmb-prepare`, or pass --data)")
    texts, items = pd.read_parquet(data), pd.read_parquet(data.with_name("items.parquet"))
    layout = Layout.of(texts, items)
    results, notes = {}, []
    for model in context.model_folders():
        path = context.scores / model / f"{TABLE}.parquet"
        if not path.is_file():
            notes.append(f"{model} left out: no score file {path}.")
            continue
        rewards, _ = rewards_of(texts, pd.read_parquet(path), path)
        results[model] = cell_results(layout.frame(rewards))
    engine = Engine(results)
    if results and not engine.complete:
        notes.append("not every one of the four cells ran: no overall score, and no leaderboard row.")
    labels = {**{cell.column: cell.label for cell in CELLS}, OVERALL: "RMB overall"}
    metrics = tuple(Metric(name, labels[name], True, name == OVERALL, 2, "%")
                    for name in [*engine.cells, *([OVERALL] if engine.complete else [])])
    models = tuple(results)
    estimates = {(name, model): interval for model in models for name, interval in engine.estimates(model).items()}
    return ComparisonPart(metrics, models, estimates, engine.compare, METHOD, tuple(notes))
