"""JudgeBench's part of `rmeval compare` (its catalogue's `compare`): two models on the same pairs.

Each model's score files are read as `rmeval judgebench-metrics` reads them (metrics.outcomes: the official rule,
both orders), and every pair is a 0/1 item, paired across models by its official `pair_id` within a split. Per split,
each category and overall (the headline: a leaderboard row per split): Tango's (1998) score interval for paired
proportions and McNemar's asymptotic test, the one it inverts; values in percent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rmeval.benchmarks.judgebench.official import CATEGORIES, OVERALL, SPLITS
from rmeval.errors import RmevalError
from rmeval.paired_difference import Difference, Interval, paired_bounded, wilson_mean

if TYPE_CHECKING:
    from pathlib import Path

    from rmeval.run_outputs.compare.parts import CompareContext, ComparisonPart

PERCENT = 100.0
METHOD = ("Two models on the pairs both judged (paired by pair_id within a split; a pair is correct by the official "
          "both-orders rule). Per split, each category and overall: Tango's (1998) score interval for paired "
          "proportions and McNemar's asymptotic test on the discordant pairs, the test it inverts.")


def metric_name(split: str, category: str) -> str:
    return f"{split}:{category}"


@dataclass(frozen=True)
class Correct:
    """One model's pairs: metric -> pair_id -> 1.0 / 0.0."""

    model: str
    items: dict[str, dict[str, float]]


def read_model(context: CompareContext, model: str, data_root: Path) -> Correct:
    import pandas as pd

    from rmeval.benchmarks.judgebench.metrics import PAIRWISE_JUDGE, outcomes, score_mode

    items: dict[str, dict[str, float]] = {}
    # The run's splits (by hand: `--options '{"judgebench": {"splits": [...]}}'`, default the schema's)
    for split in context.options.get("splits") or SPLITS:
        path = context.scores / model / f"{split}.parquet"
        if not path.is_file():
            continue
        scores = pd.read_parquet(path)
        kind = "pairwise" if score_mode(scores) == PAIRWISE_JUDGE else "data"
        table = data_root / kind / f"{split}.parquet"
        if not table.is_file():
            raise RmevalError(f"{table}: the prepared JudgeBench table is missing (run `rmeval judgebench-prepare`, "
                              "or pass --data with its folder)")
        result = outcomes(model, split, pd.read_parquet(table), scores, path)
        for category in (*CATEGORIES, OVERALL):
            members = result.members(category)
            if members:
                items[metric_name(split, category)] = {p["pair_id"]: float(p["correct"]) for p in members}
    if not items:
        raise RmevalError(f"no JudgeBench score file under {context.scores / model}")
    return Correct(model, items)


def comparison_part(context: CompareContext) -> ComparisonPart:
    from rmeval.benchmarks.judgebench.catalogue import ROOT
    from rmeval.run_outputs.compare.parts import ComparisonPart, Metric

    data_root = context.data or context.root / ROOT
    found, notes = context.read_models(lambda model: read_model(context, model, data_root))
    names = [metric_name(split, category) for split in SPLITS for category in (*CATEGORIES, OVERALL)
             if any(metric_name(split, category) in item.items for item in found.values())]
    estimates: dict[tuple[str, str], Interval] = {
        (name, model): wilson_mean(list(item.items[name].values())).scaled(PERCENT)
        for model, item in found.items() for name in names if name in item.items}

    def compare(a: str, b: str) -> dict[str, Difference]:
        out = {}
        for name in names:
            first, second = found[a].items.get(name, {}), found[b].items.get(name, {})
            shared = [pair for pair in first if pair in second]
            if not shared:
                continue
            alone = len(first) + len(second) - 2 * len(shared)
            diff = paired_bounded([first[p] for p in shared], [second[p] for p in shared]).scaled(PERCENT)
            out[name] = diff.with_note(f"{alone} pairs judged by one model alone left out") if alone else diff
        return out

    metrics = tuple(Metric(name, f"JudgeBench {name.replace(':', ' ')}", True, name.endswith(f":{OVERALL}"), 2, "%")
                    for name in names)
    return ComparisonPart(metrics, tuple(found), estimates, compare, METHOD, tuple(notes))
