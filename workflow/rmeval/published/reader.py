"""The seam between the `published` adapter and a benchmark: how a file the benchmark's authors publish becomes
score rows of the benchmark's score contract, and which item each row belongs to (the benchmark's own id).

A benchmark's catalogue names its reader (`Benchmark.published_reader`, "module:attribute"); the shared layer
imports it from there and never names a benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError


@dataclass(frozen=True)
class PublishedScores:
    """What a results file holds, as rmeval reads it.

    rewards: score-table row id (the benchmark's score contract: `<id>#chosen`, `<id>#0`, ...) -> reward.
    items: item id (the benchmark's own id) -> its row ids, in the file's order.
    model: the model the file names (None when it names none).
    details: what else the file records of the run (model_type, chat_template), for the sidecar.
    coverage: what part of the benchmark the file holds, in words, when the reader can tell (`849 pairwise items of 1
        scenario (...), no best-of-N items`): said when too few of this run's items match.
    """

    rewards: Mapping[str, float]
    items: Mapping[str, tuple[str, ...]]
    model: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    coverage: str | None = None


@dataclass(frozen=True)
class PublishedReader:
    """A benchmark's reader of its authors' published per-item results.

    fmt: the format in words, for messages ("RewardBench eval-set-scores file (save_to_hub)").
    id_name: the id that aligns items, in words ("RewardBench prompt `id`").
    read: (path) -> PublishedScores; raises RmevalError naming the file and what is wrong (another benchmark's file,
        only aggregates, no per-item scores).
    item_of: a score row id -> its item id (`123#chosen` -> `123`).
    run_data: (the benchmark's config section, locate) -> RunData: this run's score row ids where they are known
        before any job (a local data file; None otherwise) and its data in words, for preflight's alignment check.
    input_words: (a score job's input table) -> the data it was prepared from, in words, for the job's messages.
    job_rows: for a benchmark whose score rows are not its items' (one row per distinct text, shared by items):
        (the file's scores, the score job's input table) -> (the scores keyed by the job's row ids, with each item's
        rows the job's; this run's items -> their job rows), both from what the prepare stage wrote beside the table.
        None: the job's rows are the file's, and an item's rows are `item_of` of them.
    """

    benchmark: str
    fmt: str
    id_name: str
    read: Callable[[Path], PublishedScores]
    item_of: Callable[[str], str]
    run_data: Callable[[Mapping[str, Any], Callable[[str], str]], RunData] | None = None
    # (a score job's input table) -> the data it was prepared from, in words (`allenai/reward-bench@<commit>`)
    input_words: Callable[[Path], str] | None = None
    job_rows: Callable[[PublishedScores, Path], tuple[PublishedScores, Mapping[str, tuple[str, ...]]]] | None = None


@dataclass(frozen=True)
class RunData:
    """This run's data of a benchmark, as its reader sees it before any job."""

    words: str  # `allenai/reward-bench@<revision>`, `local file <path>`
    row_ids: tuple[str, ...] | None = None  # None: not known before the prepare job


def reader_for(benchmark: str) -> PublishedReader:
    """The reader the benchmark's catalogue names; an error naming the benchmark when it has none."""
    from rmeval.benchmarks import all_benchmarks
    from rmeval.benchmarks import benchmark as find
    from rmeval.benchmarks.catalogue import import_target

    try:
        bench = find(benchmark)
    except (KeyError, RmevalError):
        known = [b.name for b in all_benchmarks() if b.published_reader]
        raise RmevalError(f"unknown benchmark {benchmark!r}; published results are read for: "
                          f"{', '.join(known) or 'none'}") from None
    if not bench.published_reader:
        known = [b.name for b in all_benchmarks() if b.published_reader]
        raise RmevalError(f"benchmark {benchmark!r} has no reader of published results (its catalogue's "
                          f"`published_reader`); published results are read for: {', '.join(known) or 'none'}")
    reader = import_target(bench.published_reader)
    if not isinstance(reader, PublishedReader):
        raise RmevalError(f"benchmark {benchmark!r}: {bench.published_reader} is not a PublishedReader")
    return reader


def finite_score(value: Any, where: str) -> float:
    """A published per-item score as a float; an error naming `where` for a null (no per-item score) or a value that
    is not a finite number."""
    import math

    if value is None:
        raise RmevalError(f"{where}: no score (null): the file has no per-item scores for it")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RmevalError(f"{where}: score {value!r} is not a finite number")
    return float(value)


def load_json_records(path: Path) -> Any:
    """A JSON document, or JSON values one after another (`save_to_hub` writes a list of records that way: each
    `json.dumps(record, indent=4)` followed by a newline); an error naming the file."""
    import json

    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    decoder, values, at = json.JSONDecoder(), [], 0
    try:
        while at < len(text):
            while at < len(text) and text[at].isspace():
                at += 1
            if at == len(text):
                break
            value, at = decoder.raw_decode(text, at)
            values.append(value)
    except json.JSONDecodeError as error:
        raise RmevalError(f"{path}: not JSON or JSON lines ({error})") from None
    return values
