"""What a benchmark's reproduction provider returns: its comparisons of our numbers with published ones.

Published values live in `resources/published/*.yaml` (`paper:`, `tables:` statistic -> where the paper prints
it, `rows:` of {model: registry name, aggregation (optional), <statistic>: value}; a value may be "<number", an
upper bound such as the paper's "<1e-300"). Each benchmark declares its own files (`Benchmark.published`) and
statistics, and decides its verdicts; rmeval.run_outputs.reproduction orders the rows of every benchmark and
writes one table.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError

SAME, DIFFERS, NOT_COMPARABLE = "same conclusion", "differs", "not comparable"
INCONCLUSIVE = "inconclusive"  # the run could not have told (an interval holding both conclusions, or low power)
SCALAR = "scalar"  # the aggregation of a model with one reward per response


@dataclass(frozen=True)
class Published:
    value: float
    upper_bound: bool  # printed as "<value" (the paper's "<1e-300")


@dataclass(frozen=True)
class PublishedValues:
    values: dict[tuple[str, str, str], Published]  # (model, aggregation, statistic) -> value
    where_printed: dict[str, str]  # statistic -> "<first author> et al. (<year>), <table>"
    papers: tuple[str, ...]  # the papers cited, one per file

    @property
    def models(self) -> frozenset[str]:
        return frozenset(model for model, _, _ in self.values)


def _parse_value(raw: Any, where: str) -> Published:
    if isinstance(raw, bool):
        raise RmevalError(f"{where}: expected a number, got {raw!r}")
    if isinstance(raw, int | float):
        return Published(float(raw), False)
    if isinstance(raw, str):
        text = raw.strip().replace(" ", "")
        bound = text.startswith("<")
        try:
            return Published(float(text.lstrip("<")), bound)
        except ValueError:
            pass
    raise RmevalError(f"{where}: expected a number or '<number', got {raw!r}")


def load_published(paths: Sequence[Path], statistics: Collection[str]) -> PublishedValues:
    """The published values of `paths`, each row's keys one of `statistics` (the benchmark's)."""
    import yaml

    values: dict[tuple[str, str, str], Published] = {}
    where_printed: dict[str, str] = {}
    papers: list[str] = []
    for path in paths:
        try:
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            raise RmevalError(f"published values: cannot read {path} ({error})") from error
        if not isinstance(document, dict) or not isinstance(document.get("rows"), list):
            raise RmevalError(f"published values: {path} needs a `rows:` list of {{model, <statistic>: value}}")
        papers.append(str(document.get("paper", path.name)))
        for statistic, table in (document.get("tables") or {}).items():
            where_printed[statistic] = f"{document.get('paper', path.name).split(',')[0]}, {table}"
        for index, row in enumerate(document["rows"]):
            where = f"{path}: rows[{index}]"
            if not isinstance(row, dict) or not isinstance(row.get("model"), str):
                raise RmevalError(f"{where}: each row needs a `model:` (a registry name)")
            aggregation = str(row.get("aggregation") or SCALAR)
            for key, raw in row.items():
                if key in {"model", "aggregation"}:
                    continue
                if key not in statistics:
                    raise RmevalError(f"{where}: unknown statistic {key!r}; known: {sorted(statistics)}")
                values[(row["model"], aggregation, key)] = _parse_value(raw, f"{where}.{key}")
    return PublishedValues(values, where_printed, tuple(papers))


@dataclass(frozen=True)
class Statistic:
    """A compared statistic: its label in the tables, its verdict rule in words, and its precision (None: a
    p-value, shown as one and without a difference)."""

    key: str
    label: str
    rule: str
    decimals: int | None = None


@dataclass(frozen=True)
class Comparison:
    """One row of reproduction.csv: ours beside the paper's, with the benchmark's verdict."""

    model: str
    aggregation: str  # SCALAR, or a PRM's step aggregation
    statistic: Statistic
    ours: float
    paper: Published
    verdict: str
    source: str  # where the paper prints it
    ours_ci_low: float | None = None  # our 95% interval, when the verdict reads one
    ours_ci_high: float | None = None
    power: float | None = None  # our test's power to detect the paper's effect, when the verdict reads it

    @property
    def difference(self) -> float | None:
        return None if self.statistic.decimals is None else self.ours - self.paper.value

    def row(self) -> dict[str, Any]:
        return {
            "model": self.model, "aggregation": "" if self.aggregation == SCALAR else self.aggregation,
            "statistic": self.statistic.key, "source": self.source, "ours": self.ours,
            "ours_ci_low": self.ours_ci_low, "ours_ci_high": self.ours_ci_high, "paper": self.paper.value,
            "paper_upper_bound": self.paper.upper_bound, "difference": self.difference, "power": self.power,
            "verdict": self.verdict, "rule": self.statistic.rule,
        }


@dataclass(frozen=True)
class ReproductionPart:
    """A benchmark's part of the reproduction table.

    statistics: every statistic it compares, in table order. comparisons: those of its (model, aggregation,
    statistic) values that have a published value. models: every model it has values of, in its tables' order
    (the table lists models in the order the benchmarks give them; one without published values in any benchmark
    is named in a note). published_models: the models its files hold values of. papers: the papers cited.
    notes: its own notes, after the run-level ones.
    """

    statistics: tuple[Statistic, ...]
    comparisons: tuple[Comparison, ...]
    models: tuple[str, ...]
    published_models: frozenset[str]
    papers: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
