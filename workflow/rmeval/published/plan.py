"""A run's published models, at Snakefile parse time and before any job (rmeval.run_plan calls `checks_for` on each
enabled benchmark's plan; `rmeval run --against` calls `problems` before it writes anything).

Parse time: each published entry's options, and that its benchmark is the one whose model list names it (else a
config error). Preflight (a `Check` of the benchmark's score rule): the file, where it is on this machine, is read by
the benchmark's reader (another benchmark's file, only aggregates, no per-item scores, another model's results:
each one line), and, where the benchmark's reader knows this run's rows before any job (a local data file), fewer
than 90 % of its items matched stops the run, naming both sides' data. A github / hub file not yet downloaded is
fetched by the download stage and checked by its score job (the same reader and rule).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.benchmarks.catalogue import Benchmark
    from rmeval.preflight import Check
    from rmeval.registry import ModelSpec


def published_specs(models: Mapping[str, ModelSpec]) -> dict[str, ModelSpec]:
    from rmeval.models.catalogue import is_published

    return {name: spec for name, spec in models.items() if is_published(spec)}


def entry_for(spec: ModelSpec, bench: Benchmark, key: str) -> Any:
    """The checked entry of a published model of `bench` (parse time); an RmevalError naming the key."""
    from rmeval.published.entry import PublishedEntry

    try:
        entry = PublishedEntry.from_spec(spec)
    except RmevalError as error:
        raise RmevalError(f"config: {key}: {error}") from None
    if entry.source != "run" and entry.benchmark != bench.name:
        raise RmevalError(f"config: {key}: model {spec.name!r} holds published {entry.benchmark} results; it cannot "
                          f"be scored on {bench.name} (name it in {entry.benchmark}'s models only)")
    if entry.source != "run" and not bench.published_reader:
        raise RmevalError(f"config: {key}: model {spec.name!r}: benchmark {bench.name!r} reads no published results "
                          "(its catalogue names no `published_reader`)")
    return entry


def problems(spec: ModelSpec, bench: Benchmark, section: Mapping[str, Any], locate: Callable[[str], str]) -> list[str]:
    """What is wrong with a published model's file, as far as this machine can tell before any job: one line each."""
    from rmeval.published.align import align, check, file_words, group_rows

    entry = entry_for(spec, bench, bench.models_key)
    if entry.source == "run":
        return _run_problems(entry)
    from rmeval.published.reader import reader_for

    reader = reader_for(bench.name)
    file = entry.cached() if entry.source != "local" else Path(locate(entry.path))
    if file is None:
        return []  # the download stage fetches it; its score job reads it with the same checks
    if not file.is_file():
        return [f"model {spec.name!r}: options.path: {file}: file not found"]
    try:
        scores = reader.read(file)
        entry.check_file(file, scores.model)
        data = reader.run_data(section, locate) if reader.run_data else None
        if data is not None and data.row_ids is not None:
            alignment = align(group_rows(data.row_ids, reader.item_of), scores.items)
            check(alignment, spec.name, f"{reader.fmt} {file} by {reader.id_name}", data.words,
                  file_words(entry.origin, scores.coverage, spec.description))
    except RmevalError as error:
        return [str(error)]
    return []


def _run_problems(entry: Any) -> list[str]:
    from rmeval.published.earlier import results_folder, score_files

    try:
        folder = results_folder(entry.path)
    except RmevalError as error:
        return [f"model {entry.name!r}: {error}"]
    if not score_files(folder, entry.model):
        models = sorted({name for _, name in score_files(folder)})
        return [f"model {entry.name!r}: {folder} has no score files of model {entry.model!r}; its models: "
                f"{', '.join(models) or 'none'}"]
    return []


def checks_for(models: Mapping[str, ModelSpec], model_keys: Mapping[str, str], bench: Benchmark,
               config: Mapping[str, Any], locate: Callable[[str], str]) -> tuple[Check, ...]:
    """A benchmark plan's published models checked now (parse time), and a preflight check of each one's file
    (rmeval.run_plan adds them to the plan's needs)."""
    from rmeval.preflight import Check, Problem

    specs = published_specs(models)
    if not specs:
        return ()
    section = dict(config.get(bench.enabled_by or "", None) or {})
    rules = frozenset(stage.rule for stage in bench.score_stages)
    checks = []
    for name, spec in specs.items():
        key = model_keys.get(name, bench.models_key)
        entry_for(spec, bench, key)

        def run(spec: ModelSpec = spec, key: str = key) -> Problem | None:
            lines = problems(spec, bench, section, locate)
            return Problem(key, "; ".join(lines), "fix the published model's entry or its file (`rmeval published`)",
                           rules, frozenset({spec.name})) if lines else None

        checks.append(Check(rules, run))
    return tuple(checks)
