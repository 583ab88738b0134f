"""RM-Bench's part of `rmeval compare` (its catalogue's `compare`): two models on the same prompts.

Each model's score file is read as the metrics stage reads it (metrics.Layout, the official 3 x 3 rule); the item
is a prompt, (domain, id), and its result the share of its cells won: of all nine for a domain's score, of the
three hard / normal / easy cells for a difficulty. A domain's score is the mean of its prompts' nine-cell shares
(= the mean of its hard, normal and easy), so:

- chat, math, code, safety: Tango's (1998) score interval and its test on the discordant masses (each prompt's
  positive and negative differences of shares; McNemar's asymptotic test when every share is 0 or 1), the test
  the interval inverts (rmeval.paired_difference);
- easy, normal, hard (the mean over the four domains) and the average (the mean of the four domain scores,
  the headline): MOVER sums over the domains, which hold disjoint prompts (Zou & Donner 2008), and the p-value
  that inverts them.
Values are percentages, differences percentage points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rmeval.benchmarks.rmbench.official import DIFFICULTIES, DOMAINS
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
    from rmeval.benchmarks.rmbench.metrics import ModelScores
    from rmeval.run_outputs.compare.parts import CompareContext, ComparisonPart

PERCENT = 100.0
AVERAGE = "average"
WEIGHTS = [1 / len(DOMAINS)] * len(DOMAINS)
METHOD = ("Two models on the same prompts; a prompt's result is its share of the 3 x 3 style cells won (chosen "
          "reward strictly higher). Domains (all nine cells): Tango's (1998) score interval and its test on the "
          "discordant masses (McNemar's asymptotic test when every share is 0 or 1), the test it inverts (a 95 % "
          "interval leaves out 0 exactly when p < 0.05). Easy, normal, hard (their three cells) and the average: "
          "means over the four domains, MOVER sums of the domains' intervals (Zou & Donner 2008) and the p-value "
          "that inverts them.")


def domain_metric(domain: str) -> str:
    return f"domain:{domain}"


def difficulty_metric(difficulty: str) -> str:
    return f"difficulty:{difficulty}"


class Engine:
    """Estimates and paired comparisons from the models' per-prompt shares."""

    def __init__(self, scored: list[ModelScores]) -> None:
        self.shares = {item.model: item.shares for item in scored}

    def _one(self, model: str, domain: str, part: str) -> Interval:
        return wilson_mean(self.shares[model][domain][part].tolist())

    def estimates(self, model: str) -> dict[str, Interval]:
        out = {domain_metric(d): self._one(model, d, AVERAGE).scaled(PERCENT) for d in DOMAINS}
        for difficulty in DIFFICULTIES:
            out[difficulty_metric(difficulty)] = weighted_sum([self._one(model, d, difficulty) for d in DOMAINS],
                                                              WEIGHTS).scaled(PERCENT)
        out[AVERAGE] = weighted_sum([self._one(model, d, AVERAGE) for d in DOMAINS], WEIGHTS).scaled(PERCENT)
        return out

    def _pair(self, a: str, b: str, domain: str, part: str) -> Difference:
        return paired_bounded(self.shares[a][domain][part].tolist(), self.shares[b][domain][part].tolist())

    def compare(self, a: str, b: str) -> dict[str, Difference]:
        domains = {d: self._pair(a, b, d, AVERAGE) for d in DOMAINS}
        out = {domain_metric(d): diff.scaled(PERCENT) for d, diff in domains.items()}
        for difficulty in DIFFICULTIES:
            out[difficulty_metric(difficulty)] = combined_difference(
                [self._pair(a, b, d, difficulty) for d in DOMAINS], WEIGHTS).scaled(PERCENT)
        out[AVERAGE] = combined_difference(list(domains.values()), WEIGHTS).scaled(PERCENT)
        return out


def comparison_part(context: CompareContext) -> ComparisonPart:
    import pandas as pd

    from rmeval.benchmarks.rmbench.metrics import Layout, read_model
    from rmeval.benchmarks.rmbench.paths import DATA, TABLE
    from rmeval.run_outputs.compare.parts import ComparisonPart, Metric

    data_path = context.data or context.root / DATA
    if not data_path.is_file():
        raise RmevalError(f"{data_path}: the prepared RM-Bench table is missing (run `rmeval rmbench-prepare`, or "
                          "pass --data)")
    data = pd.read_parquet(data_path)
    layout = Layout.of(data)
    paths, notes = context.score_files(TABLE)
    scored = [read_model(layout, data, path, model) for model, path in paths.items()]
    engine = Engine(scored)
    metrics = (*(Metric(domain_metric(d), d, True, False, 2, "%") for d in DOMAINS),
               *(Metric(difficulty_metric(d), d, True, False, 2, "%") for d in DIFFICULTIES),
               Metric(AVERAGE, "RM-Bench average", True, True, 2, "%"))
    models = tuple(item.model for item in scored)
    estimates = {(name, model): interval for model in models for name, interval in engine.estimates(model).items()}
    return ComparisonPart(metrics, models, estimates, engine.compare, METHOD, tuple(notes))
