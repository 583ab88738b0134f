"""What a benchmark's comparison provider is given (`CompareContext`) and returns (`ComparisonPart`), and what its
claims provider is given (`ClaimsContext`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from rmeval.benchmarks.catalogue import Benchmark
from rmeval.errors import RmevalError
from rmeval.paired_difference import Difference, Interval

Read = TypeVar("Read")


@dataclass(frozen=True)
class CompareContext:
    """benchmark: the one compared. root: the run directory (its catalogued files are relative to it). scores: its
    score folder, `{model}/{table}.parquet|csv`. data: its prepared items when not the run's own (a file or a
    folder, the benchmark says which; None: the run's). models: the models to compare, in table order (empty: every
    model folder under `scores`). options: its `ModelComparison.run_settings` values. bootstrap / seed: for a
    statistic it resamples (the run's `stats.bootstrap` / `stats.seed`)."""

    benchmark: Benchmark
    root: Path
    scores: Path
    data: Path | None = None
    models: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    bootstrap: int = 2000
    seed: int = 0

    def path(self, key: str) -> Path:
        return self.root / self.benchmark.get(key).path

    def model_folders(self) -> list[str]:
        """`models`, else every folder under `scores` that holds a score file, sorted."""
        if self.models:
            return list(self.models)
        if not self.scores.is_dir():
            return []
        return sorted(path.name for path in self.scores.iterdir() if path.is_dir()
                      and (any(path.glob("*.parquet")) or any(path.glob("*.csv"))))

    def read_models(self, read: Callable[[str], Read]) -> tuple[dict[str, Read], list[str]]:
        """Each model folder (`model_folders`) read by `read`, and a note `<model> left out: <why>` for each it
        could not read (its RmevalError): a comparison of the others, not a stop."""
        found: dict[str, Read] = {}
        notes: list[str] = []
        for model in self.model_folders():
            try:
                found[model] = read(model)
            except RmevalError as error:
                notes.append(f"{model} left out: {error}")
        return found, notes

    def score_files(self, table: str) -> tuple[dict[str, Path], list[str]]:
        """model -> its score file `<scores>/<model>/<table>.parquet` (model folders without one are left out, with
        a note); reading them is the caller's, whose errors stop the comparison."""
        def score_file(model: str) -> Path:
            path = self.scores / model / f"{table}.parquet"
            if not path.is_file():
                raise RmevalError(f"no score file {path}.")
            return path

        return self.read_models(score_file)


@dataclass(frozen=True)
class Metric:
    """One compared metric. name: its machine name in the tables (`subset:Focus`, `section:Chat`, `overall`,
    `scale_free_gap`); label: in words; higher_is_better: which way a model is better (false for a gap);
    headline: a leaderboard row per model; decimals: shown in the Markdown and LaTeX tables; unit: of its values
    ("%" for percentages, "" otherwise); note: why its values are not the official ones (a partial run: starts
    with "†", which marks the value wherever it is shown), "" when they are."""

    name: str
    label: str
    higher_is_better: bool = True
    headline: bool = False
    decimals: int = 2
    unit: str = ""
    note: str = ""


@dataclass(frozen=True)
class ComparisonPart:
    """A benchmark's part of the comparisons and the leaderboard.

    metrics: in table order. models: the models it has values of, in table order. estimates: (metric, model) -> the
    model's value with its interval at any level (headline metrics at least). compare(a, b): metric -> the paired
    comparison of a with b (difference a - b) on the items both scored. method: the tables' note on how (tests,
    intervals, citations). notes: what was left out and why (a model without scores, a metric undefined)."""

    metrics: tuple[Metric, ...]
    models: tuple[str, ...]
    estimates: Mapping[tuple[str, str], Interval]
    compare: Callable[[str, str], Mapping[str, Difference]]
    method: str
    notes: tuple[str, ...] = ()

    def metric(self, name: str) -> Metric:
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(f"no metric {name!r}")


@dataclass(frozen=True)
class ClaimsContext:
    """What a benchmark's claims provider reads: its rows of comparisons.csv and leaderboard.csv (dicts of the
    CSV's columns, numbers as floats), its own outputs (`path(key)`, the keys of `ModelComparison.claims_inputs`),
    the run's alpha and baselines (model -> kind)."""

    benchmark: Benchmark
    root: Path
    alpha: float
    comparisons: Sequence[Mapping[str, Any]]
    leaderboard: Sequence[Mapping[str, Any]]
    baselines: Mapping[str, str] = field(default_factory=dict)

    def path(self, key: str) -> Path:
        return self.root / self.benchmark.get(key).path


COMPARISON_COLUMNS = ["benchmark", "metric", "model_a", "model_b", "n", "value_a", "value_b", "difference", "ci_low",
                      "ci_high", "p_value", "p_adjusted", "q_value", "test", "note"]
LEADERBOARD_COLUMNS = ["benchmark", "metric", "model", "value", "ci_low", "ci_high", "rank", "rank_low", "rank_high",
                       "tied_with", "baseline", "published", "note"]
TIED_SEPARATOR = "; "


@dataclass
class Results:
    """Everything the tables, the figure and the summary are made of."""

    comparisons: list[dict[str, Any]] = field(default_factory=list)
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    methods: dict[str, str] = field(default_factory=dict)  # benchmark -> its method note
    notes: list[str] = field(default_factory=list)
    decimals: dict[tuple[str, str], int] = field(default_factory=dict)  # (benchmark, metric) -> shown decimals
    labels: dict[tuple[str, str], str] = field(default_factory=dict)  # (benchmark, metric) -> label in words
    titles: dict[str, str] = field(default_factory=dict)  # benchmark -> its title
    baselines: dict[str, str] = field(default_factory=dict)  # trivial baselines among the models -> their kind
    published: dict[str, str] = field(default_factory=dict)  # published results among the models -> their origin
