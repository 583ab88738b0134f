"""RMB's part of `rmeval compare` (its catalogue's `compare`): two models on the same items.

Each model's score file is joined to the prepared items as the metrics stage joins it, every item scored 0/1 by the
rules (scoring.py; items keyed by pair_uid / bon_uid, the same for every model). The four headline cells: Tango's
score interval for paired proportions and McNemar's asymptotic test, the test it inverts (rmeval.paired_difference);
a cell averaged over scenarios and overall (the mean of the four cells): MOVER sums and the p-value that inverts
them. Values are percentages, differences percentage points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rmeval.benchmarks.rmb.layout import CELLS, ITEMS, OVERALL
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
          "item only when the best reward beats every loser's strictly). Cells averaged over items: Tango's (1998) "
          "score interval for paired proportions and McNemar's asymptotic test on the discordant items, the test it "
          "inverts (a 95 % interval leaves out 0 exactly when p < 0.05). Cells averaged over scenarios "
          "(rmb.average: scenarios) and Overall (the mean of the four cells): MOVER sums of the parts' intervals "
          "(Zou & Donner 2008) and the p-value that inverts them.")


class Engine:
    """Per model, each cell's 0/1 item results in parts (the same items for every model): one part holding all its
    items (`rmb.average: items`), or one per scenario, each weighing 1/S (`scenarios`)."""

    def __init__(self, results: dict[str, dict[str, list[np.ndarray]]]) -> None:
        self.results = results
        first = next(iter(results.values()), {})
        self.cells = [cell.column for cell in CELLS if cell.column in first]
        self.complete = len(self.cells) == len(CELLS)

    def _weights(self, model: str, cell: str) -> list[float]:
        parts = self.results[model][cell]
        return [1 / len(parts)] * len(parts)

    def estimates(self, model: str) -> dict[str, Interval]:
        parts = {cell: [wilson_mean(items.tolist()) for items in self.results[model][cell]] for cell in self.cells}
        out = {cell: (intervals[0] if len(intervals) == 1 else weighted_sum(intervals, self._weights(model, cell))
                      ).scaled(PERCENT) for cell, intervals in parts.items()}
        if self.complete:
            out[OVERALL] = weighted_sum([i for cell in self.cells for i in parts[cell]],
                                        [w / len(self.cells) for cell in self.cells
                                         for w in self._weights(model, cell)]).scaled(PERCENT)
        return out

    def compare(self, a: str, b: str) -> dict[str, Difference]:
        parts = {cell: [paired_bounded(x.tolist(), y.tolist())
                        for x, y in zip(self.results[a][cell], self.results[b][cell], strict=True)]
                 for cell in self.cells}
        out = {cell: (diffs[0] if len(diffs) == 1 else combined_difference(diffs, self._weights(a, cell))
                      ).scaled(PERCENT) for cell, diffs in parts.items()}
        if self.complete:
            out[OVERALL] = combined_difference([d for cell in self.cells for d in parts[cell]],
                                               [w / len(self.cells) for cell in self.cells
                                                for w in self._weights(a, cell)]).scaled(PERCENT)
        return out


def cell_results(frame: pd.DataFrame, average: str) -> dict[str, list[np.ndarray]]:
    """A cell's 0/1 item results (`metrics.Layout.frame`: one row per item) in parts: all its items, or one part per
    scenario (sorted), for each cell that has items."""
    out = {}
    for cell in CELLS:
        chosen = frame[(frame["kind"] == cell.kind) & (frame["goal"] == cell.goal)]
        if chosen.empty:
            continue
        out[cell.column] = ([chosen["correct"].to_numpy()] if average == ITEMS else
                            [group["correct"].to_numpy() for _, group in chosen.groupby("scenario", sort=True)])
    return out


def common_items(frames: dict[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame], str]:
    """Every model's items restricted to those all of them hold (a published model's file may hold fewer), in the
    prepared order, and a note saying so (empty when nothing was left out)."""
    if not frames:
        return frames, ""
    keys = {model: list(zip(frame["kind"], frame["item_id"].astype(str), strict=True)) for model, frame in frames.items()}
    shared = set.intersection(*(set(found) for found in keys.values()))
    most = max(len(found) for found in keys.values())
    if len(shared) == most and all(len(found) == most for found in keys.values()):
        return frames, ""
    fewer = [f"{model} ({len(found)})" for model, found in keys.items() if len(found) < most]
    kept = {model: frame[[key in shared for key in keys[model]]].reset_index(drop=True)
            for model, frame in frames.items()}
    return kept, (f"compared on the {len(shared)} of {most} items every model holds (published results matched "
                  f"fewer: {', '.join(fewer)} items).")


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
    average = context.options.get("average") or ITEMS
    layout = Layout.of(texts, items)
    paths, notes = context.score_files(TABLE)
    frames = {}
    for model, path in paths.items():
        rewards, _ = rewards_of(texts, pd.read_parquet(path), path)
        frames[model] = layout.frame(rewards)
    frames, note = common_items(frames)
    notes += [note] if note else []
    results = {model: cell_results(frame, average) for model, frame in frames.items()}
    engine = Engine(results)
    if results and not engine.complete:
        notes.append("not every one of the four cells ran: no overall score, and no leaderboard row.")
    labels = {**{cell.column: cell.label for cell in CELLS}, OVERALL: "RMB overall"}
    metrics = tuple(Metric(name, labels[name], True, name == OVERALL, 2, "%")
                    for name in [*engine.cells, *([OVERALL] if engine.complete else [])])
    models = tuple(results)
    estimates = {(name, model): interval for model in models for name, interval in engine.estimates(model).items()}
    return ComparisonPart(metrics, models, estimates, engine.compare, METHOD, tuple(notes))
