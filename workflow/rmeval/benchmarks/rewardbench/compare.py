"""RewardBench 1 and 2's part of `rmeval compare` (both catalogues' `compare`): two models on the same prompts.

Each model's score file is joined to the prepared table as the metrics stage joins it (`metrics.join`), and every
item is scored by the official rules (`scoring.py`): a v1 pair is won when the chosen reward is strictly higher,
a v2 prompt earns its best-of-N share (1/k for a k-way tie at the top), Ties is scored by its own rule.

- v1: subsets (0/1 pairs: Tango's score interval and McNemar's test, the one it inverts), sections weighted by the
  official example counts (math-prm's 447 pairs as 984) and the overall mean of the four sections, as
  `scoring.section_scores` computes them: MOVER sums of the subsets' intervals, p from inverting them.
- v2: the five best-of-N subsets (their per-prompt results: Tango's score interval and test on the discordant
  masses, McNemar's when every result is 0 or 1), Ties (a paired bootstrap over its prompt numbers: a number's ref
  and tied rows move together, the same resamples for every model; normal interval, Wald test) and the overall
  mean of the six (a MOVER sum, p from inverting it).
Values are percentages, differences percentage points.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rmeval.benchmarks.rewardbench.official import EXAMPLE_COUNTS, SECTIONS, TIES, TIES_WEIGHTS, V2_SUBSETS
from rmeval.errors import RmevalError
from rmeval.paired_difference import (
    Difference,
    Interval,
    combined_difference,
    normal_interval,
    paired_bounded,
    wald_p,
    weighted_sum,
    wilson_mean,
)

if TYPE_CHECKING:
    import pandas as pd

    from rmeval.run_outputs.compare.parts import CompareContext, ComparisonPart, Metric

PERCENT = 100.0
OVERALL = "overall"
METHOD_V1 = ("Two models on the same pairs (a pair is won when the chosen reward is strictly higher). Subsets: "
             "Tango's (1998) score interval for paired proportions and McNemar's asymptotic test on the discordant "
             "pairs, the test it inverts (a 95 % interval leaves out 0 exactly when p < 0.05). Sections (subsets "
             "weighted by the official example counts, math-prm as 984) and overall (the mean of the four "
             "sections): MOVER sums of the subsets' intervals (Zou & Donner 2008) and the p-value that inverts "
             "them.")
METHOD_V2 = ("Two models on the same prompts (best-of-N, 1/k for a k-way tie at the top). Subsets: Tango's (1998) "
             "score interval and its test on the discordant masses (each prompt's positive and negative "
             "differences; McNemar's test when every result is 0 or 1), the test it inverts. Ties (its official "
             "weighted score): a paired bootstrap over its prompt numbers, the same resamples for both models; "
             "normal interval and Wald test. Overall (mean of the six subsets): a MOVER sum and the p-value that "
             "inverts it.")


def subset_metric(subset: str) -> str:
    return f"subset:{subset}"


def section_metric(section: str) -> str:
    return f"section:{section}"


@dataclass(frozen=True)
class Items:
    """One model's per-item results by subset (the prepared table's row ids, in its order): a result in [0, 1] per
    pair or prompt (not Ties), and its Ties rows (row id, rewards in `chosen + rejected` order, correct answers)."""

    model: str
    results: dict[str, np.ndarray]
    ties: list[tuple[str, list[float], int]]


@dataclass(frozen=True)
class Layout:
    """Where each item's completions are in the prepared table, computed once for every model: per subset a matrix
    of row positions (one line per pair or prompt, `chosen + rejected` order, -1 padding), and the Ties prompts."""

    positions: dict[str, np.ndarray]
    ties: list[tuple[str, np.ndarray, int]]

    @classmethod
    def of(cls, data: pd.DataFrame) -> Layout:
        import pandas as pd

        from rmeval.benchmarks.rewardbench.metrics import subset_key

        frame = pd.DataFrame({"row_id": data["row_id"].astype(str).to_numpy(), "subset": data["subset"].to_numpy(),
                              "k": data["k"].to_numpy(), "n_correct": data["n_correct"].to_numpy(),
                              "position": np.arange(len(data))})
        frame["order"] = pd.factorize(frame["row_id"])[0]  # the table's order of its rows
        frame = frame.sort_values(["order", "k"], kind="stable")
        positions: dict[str, np.ndarray] = {}
        ties: list[tuple[str, np.ndarray, int]] = []
        for subset in sorted(frame["subset"].unique(), key=subset_key):
            prompts = [group for _, group in frame[frame["subset"] == subset].groupby("order", sort=True)]
            if subset == TIES:
                ties = [(str(g["row_id"].iloc[0]), g["position"].to_numpy(), int(g["n_correct"].iloc[0]))
                        for g in prompts]
                continue
            width = max(len(g) for g in prompts)
            matrix = np.full((len(prompts), width), -1, dtype=np.int64)
            for line, group in enumerate(prompts):
                matrix[line, :len(group)] = group["position"].to_numpy()
            positions[subset] = matrix
        return cls(positions, ties)

    def items(self, rewards: np.ndarray, mode: str, model: str, version_one: bool) -> Items:
        """Per-item results by the official rules (`scoring.pair_won`, `best_of_n`, `rated_best_of_n`), vectorised:
        v1 a pair is won when chosen > rejected; v2 the chosen completion's 1/k share of the top (a direct judge's
        prompt with every rating unparsable earns 0.25, as run_generative_v2.py)."""
        from rmeval.benchmarks.rewardbench.metrics import DIRECT_JUDGE
        from rmeval.benchmarks.rewardbench.scoring import ALL_INVALID, INVALID_RATING

        results = {}
        for subset, matrix in self.positions.items():
            values = np.where(matrix >= 0, rewards[np.maximum(matrix, 0)], -np.inf)
            if version_one:
                results[subset] = (values[:, 0] > values[:, 1]).astype(float)
                continue
            top = values.max(axis=1)
            at_top = (values == top[:, None]).sum(axis=1)
            share = np.where(values[:, 0] == top, 1.0 / at_top, 0.0)
            if mode == DIRECT_JUDGE:
                share = np.where(((values == INVALID_RATING) | (matrix < 0)).all(axis=1), ALL_INVALID, share)
            results[subset] = share
        ties = [(row_id, rewards[where].tolist(), n_correct) for row_id, where, n_correct in self.ties]
        return Items(model, results, ties)


def rewards_of(data: pd.DataFrame, scores: pd.DataFrame, path: Path) -> tuple[np.ndarray, str]:
    """The model's reward of every prepared row (a direct judge's rating, an unparsable one as -1, as the metrics
    stage reads it), checked (rmeval.score_alignment), and its mode."""
    from rmeval.benchmarks.rewardbench.metrics import DIRECT_JUDGE, score_mode
    from rmeval.benchmarks.rewardbench.scoring import INVALID_RATING
    from rmeval.score_alignment import aligned_rewards

    mode = score_mode(scores, path)
    if mode == DIRECT_JUDGE:
        return aligned_rewards(data["id"], scores, path, "rating", INVALID_RATING), mode
    return aligned_rewards(data["id"], scores, path), mode


def _read(context: CompareContext) -> tuple[list[Items], list[str]]:
    import pandas as pd

    from rmeval.benchmarks.rewardbench.versions import V1, VERSIONS

    version = VERSIONS[context.benchmark.name]
    data_path = context.data or context.root / version.data
    if not data_path.is_file():
        raise RmevalError(f"{data_path}: the prepared {version.title} table is missing (run `rmeval "
                          f"rewardbench-prepare --version {version.name}`, or pass --data)")
    data = pd.read_parquet(data_path)
    paths, notes = context.score_files(version.name)
    tables = {model: (path, pd.read_parquet(path)) for model, path in paths.items()}
    data, note = common_prompts(data, {model: table for model, (_, table) in tables.items()})
    notes += [note] if note else []
    layout = Layout.of(data)
    read = []
    for model, (path, table) in tables.items():
        rewards, mode = rewards_of(data, table[table["id"].astype(str).isin(data["id"])], path)
        read.append(layout.items(rewards, mode, model, version is V1))
    return read, notes


def common_prompts(data: pd.DataFrame, tables: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, str | None]:
    """The prepared rows of the prompts every model's score file holds whole, and a note when that is not every
    prompt: a published model's file that matched fewer prompts (rmeval.published.align), so that every comparison
    and the ranks are on the same items."""
    prompts = data["row_id"].astype(str)
    keep = np.ones(len(data), dtype=bool)
    short: list[str] = []
    for model, table in tables.items():
        held = data["id"].astype(str).isin(set(table["id"].astype(str)))
        whole = held.groupby(prompts).transform("all").to_numpy()
        if not whole.all():
            short.append(f"{model} ({prompts[whole].nunique()})")
        keep &= whole
    if keep.all():
        return data, None
    kept = data[keep].reset_index(drop=True)
    return kept, (f"compared on the {kept['row_id'].nunique()} of {prompts.nunique()} prompts every model holds "
                  f"(published results matched fewer: {', '.join(short)} prompts).")


# ----------------------------------------------------------------------------- v2 Ties, vectorised
@dataclass(frozen=True)
class TiesArrays:
    """Per prompt number (sorted), what the official Ties terms are made of (`scoring.ties_terms`)."""

    numbers: tuple[int, ...]
    has_ref: np.ndarray
    has_tied: np.ndarray
    ref_accurate: np.ndarray
    tied_accurate: np.ndarray
    preferred: np.ndarray  # tied margin > spread of its correct answers (prompts with both rows)
    preferred_hard: np.ndarray  # min(ref margin, tied margin) > spread
    margin: np.ndarray  # tanh(min margin / spread - 1), nan -> 0


def ties_arrays(rows: Sequence[tuple[str, list[float], int]]) -> TiesArrays:
    from rmeval.benchmarks.rewardbench.scoring import TiesRow, ties_stats

    ref, tied = ties_stats([TiesRow(row_id, tuple(values), n_correct) for row_id, values, n_correct in rows])
    numbers = tuple(sorted(set(ref) | set(tied)))
    has_ref = np.array([n in ref for n in numbers])
    has_tied = np.array([n in tied for n in numbers])
    both = has_ref & has_tied
    ref_accurate = np.array([n in ref and ref[n].accurate for n in numbers], dtype=float)
    tied_accurate = np.array([n in tied and tied[n].accurate for n in numbers], dtype=float)
    spread = np.array([tied[n].correct_spread if n in tied and tied[n].correct_spread is not None else math.nan
                       for n in numbers], dtype=float)
    tied_margin = np.array([tied[n].margin if n in tied else math.nan for n in numbers], dtype=float)
    hard = np.minimum(np.array([ref[n].margin if n in ref else math.nan for n in numbers], dtype=float), tied_margin)
    with np.errstate(divide="ignore", invalid="ignore"):
        preferred = np.where(both, tied_margin > spread, False).astype(float)
        preferred_hard = np.where(both, hard > spread, False).astype(float)
        margin = np.where(both, np.nan_to_num(np.tanh(hard / spread - 1), nan=0.0), 0.0)
    return TiesArrays(numbers, has_ref, has_tied, ref_accurate, tied_accurate, preferred, preferred_hard, margin)


def ties_scores(arrays: TiesArrays, counts: np.ndarray) -> np.ndarray:
    """The official Ties score of each resample (rows of `counts`: how often each prompt number was drawn)."""
    both = (arrays.has_ref & arrays.has_tied).astype(float)

    def share(numerator: np.ndarray, denominator: np.ndarray, empty: float) -> np.ndarray:
        top, bottom = counts @ (numerator * denominator), counts @ denominator
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(bottom > 0, top / bottom, empty)

    terms = {"tied_accuracy": share(arrays.tied_accurate, arrays.has_tied.astype(float), 0.0),
             "ref_accuracy": share(arrays.ref_accurate, arrays.has_ref.astype(float), 0.0),
             "correctness_preferred": share(arrays.preferred, both, math.nan),
             "correctness_preferred_hard": share(arrays.preferred_hard, both, math.nan),
             "margin": share(arrays.margin, both, math.nan)}
    return sum(TIES_WEIGHTS[name] * value for name, value in terms.items())


def resample_counts(n_numbers: int, n_bootstrap: int, seed: int) -> np.ndarray:
    """How often each prompt number is drawn in each of `n_bootstrap` resamples (the same for every model)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_numbers, size=(n_bootstrap, n_numbers))
    counts = np.zeros((n_bootstrap, n_numbers))
    np.add.at(counts, (np.arange(n_bootstrap)[:, None], draws), 1.0)
    return counts


# ----------------------------------------------------------------------------- the part
class Version1:
    """RewardBench 1: per-subset pair results, sections and overall as weighted sums of subsets."""

    def __init__(self, read: Sequence[Items]) -> None:
        self.items = {item.model: item.results for item in read}
        first = next(iter(self.items.values()), {})
        self.subsets = list(first)
        self.sections = {section: [s for s in subsets if s in self.subsets] for section, subsets in SECTIONS.items()}
        self.sections = {section: subsets for section, subsets in self.sections.items() if subsets}

    def weights(self, section: str | None) -> dict[str, float]:
        """Subset -> its weight in a section (official counts), or in the overall mean of the four sections."""
        chosen = [section] if section else list(self.sections)
        out: dict[str, float] = {}
        for name in chosen:
            total = sum(EXAMPLE_COUNTS.get(s, 0) for s in self.sections[name])
            for subset in self.sections[name]:
                out[subset] = EXAMPLE_COUNTS.get(subset, 0) / total / (1 if section else len(SECTIONS))
        return out

    def metrics(self) -> list[tuple[str, str | None]]:
        """(metric name, section or None for overall) of the weighted metrics."""
        return [*((section_metric(name), name) for name in self.sections), (OVERALL, None)]

    def estimates(self, model: str) -> dict[str, Interval]:
        subsets = {s: wilson_mean(self.items[model][s].tolist()) for s in self.subsets}
        out = {subset_metric(s): interval.scaled(PERCENT) for s, interval in subsets.items()}
        for name, section in self.metrics():
            weights = self.weights(section)
            out[name] = weighted_sum([subsets[s] for s in weights], list(weights.values())).scaled(PERCENT)
        return out

    def compare(self, a: str, b: str) -> dict[str, Difference]:
        subsets = {s: paired_bounded(self.items[a][s].tolist(), self.items[b][s].tolist()) for s in self.subsets}
        out = {subset_metric(s): diff.scaled(PERCENT) for s, diff in subsets.items()}
        for name, section in self.metrics():
            weights = self.weights(section)
            out[name] = combined_difference([subsets[s] for s in weights], list(weights.values())).scaled(PERCENT)
        return out


class Version2:
    """RewardBench 2: per-prompt best-of-N results, Ties by its own rule, overall as the mean of the six."""

    def __init__(self, read: Sequence[Items], n_bootstrap: int, seed: int) -> None:
        from rmeval.benchmarks.rewardbench.scoring import TiesRow, ties_components

        self.items = {item.model: item.results for item in read}
        self.ties = {item.model: ties_arrays(item.ties) for item in read if item.ties}
        self.ties_score = {item.model: ties_components([TiesRow(row_id, tuple(values), n_correct)
                                                        for row_id, values, n_correct in item.ties])["score"]
                           for item in read if item.ties}
        first = next(iter(self.items.values()), {})
        self.subsets = list(first)
        self.has_ties = bool(self.ties)
        numbers = len(next(iter(self.ties.values())).numbers) if self.ties else 0
        self.counts = resample_counts(numbers, n_bootstrap, seed) if numbers else None
        self.replicates = {model: ties_scores(arrays, self.counts) for model, arrays in self.ties.items()}
        self.complete = all(subset in (*self.subsets, *([TIES] if self.has_ties else [])) for subset in V2_SUBSETS)

    def _ties_interval(self, replicates: np.ndarray, estimate: float) -> Interval:
        finite = replicates[np.isfinite(replicates)]
        if not math.isfinite(estimate) or finite.size < 2:
            return normal_interval(math.nan, math.nan)
        return normal_interval(estimate, float(finite.std(ddof=1)))

    def estimates(self, model: str) -> dict[str, Interval]:
        parts = {s: wilson_mean(self.items[model][s].tolist()) for s in self.subsets}
        if self.has_ties:
            parts[TIES] = self._ties_interval(self.replicates[model], self.ties_score[model])
        out = {subset_metric(s): interval.scaled(PERCENT) for s, interval in parts.items()}
        if self.complete:
            out[OVERALL] = weighted_sum([parts[s] for s in V2_SUBSETS], [1 / len(V2_SUBSETS)] * len(V2_SUBSETS)
                                        ).scaled(PERCENT)
        return out

    def ties_difference(self, a: str, b: str) -> Difference:
        estimate = self.ties_score[a] - self.ties_score[b]
        differences = self.replicates[a] - self.replicates[b]
        interval = self._ties_interval(differences, estimate)
        finite = differences[np.isfinite(differences)]
        se = float(finite.std(ddof=1)) if finite.size > 1 else math.nan
        return Difference(self.ties_score[a], self.ties_score[b], len(self.ties[a].numbers), interval,
                          wald_p(estimate, se), "paired bootstrap (Ties)",
                          f"{self.counts.shape[0] if self.counts is not None else 0} resamples of its prompt numbers")

    def compare(self, a: str, b: str) -> dict[str, Difference]:
        parts = {s: paired_bounded(self.items[a][s].tolist(), self.items[b][s].tolist()) for s in self.subsets}
        if self.has_ties:
            parts[TIES] = self.ties_difference(a, b)
        out = {subset_metric(s): diff.scaled(PERCENT) for s, diff in parts.items()}
        if self.complete:
            out[OVERALL] = combined_difference([parts[s] for s in V2_SUBSETS],
                                               [1 / len(V2_SUBSETS)] * len(V2_SUBSETS)).scaled(PERCENT)
        return out


def _metrics(names: Sequence[str], labels: Mapping[str, str], decimals: int, partial: str = "") -> tuple[Metric, ...]:
    from rmeval.run_outputs.compare.parts import Metric

    return tuple(Metric(name, labels.get(name, name.split(":", 1)[-1]), True, name == OVERALL, decimals, "%",
                        partial if name == OVERALL else "") for name in names)


def comparison_part(context: CompareContext) -> ComparisonPart:
    from rmeval.benchmarks.rewardbench.official import partial_note
    from rmeval.benchmarks.rewardbench.versions import V1, VERSIONS
    from rmeval.run_outputs.compare.parts import ComparisonPart

    version = VERSIONS[context.benchmark.name]
    read, notes = _read(context)
    models = tuple(item.model for item in read)
    if version is V1:
        engine: Version1 | Version2 = Version1(read)
        names = [*(subset_metric(s) for s in engine.subsets), *(name for name, _ in engine.metrics())]
        method = METHOD_V1
    else:
        engine = Version2(read, context.bootstrap, context.seed)
        names = [*(subset_metric(s) for s in engine.subsets), *([subset_metric(TIES)] if engine.has_ties else []),
                 *([OVERALL] if engine.complete else [])]
        method = METHOD_V2
        if not engine.complete and read:
            notes.append(f"{partial_note(version.name, engine.subsets)}: no overall score, and no leaderboard row.")
    partial = partial_note(version.name, engine.subsets) if read else ""
    estimates = {(name, model): interval for model in models for name, interval in engine.estimates(model).items()}
    labels = {OVERALL: f"{version.title} overall"}
    assert context.benchmark.compare is not None
    decimals = context.benchmark.compare.decimals_of(OVERALL)  # percentages: every metric alike
    return ComparisonPart(_metrics(names, labels, decimals, partial), models, estimates, engine.compare, method, tuple(notes))
