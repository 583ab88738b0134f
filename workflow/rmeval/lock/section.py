"""A benchmark's part of `results/lock.yaml`: the section provider its catalogue names (`Benchmark.lock_section`).

The shared lock writes the run-level records (rmeval version, software, config hash, models); every top-level
key between `config_sha256` and `models` belongs to a benchmark's provider, in catalogue order. A provider builds
its record from the files `rmeval lock write` hands it, reads it back from a lock, compares two, summarises it
for `lock show` / `lock_summary.csv` and names what it locks in the file's header.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from rmeval.errors import RmevalError

# Top-level keys of the shared lock; no provider may claim them.
SHARED_KEYS = ("lock_format", "rmeval", "software", "config_sha256", "models")
SummaryRow = tuple[str, str, str]  # item, name, locked (lock_summary.csv's columns)


class SectionRecord(Protocol):
    """What a provider builds and parses: its top-level keys, in its `keys` order, ready for YAML."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class LockSection:
    """keys: the top-level keys the benchmark writes, in file order.
    locks: what they lock, for the header's "exactly what this run used (<locks>, model commits, software)".
    rerun: the config setting that reruns from them, for the header's "Rerun it: `lock: <this file>` and <rerun>";
        "" when following the lock's models is all.
    build: the provider's inputs (`rmeval lock write` settings `sections.<benchmark>`: paths) -> record.
    parse: (the whole lock document, where) -> record; errors name the key. Called when any of `keys` is present.
    diff: (first, second) -> lines naming what differs; [] when equal.
    summary_rows: record -> (item, name, locked) rows for `lock show` and lock_summary.csv.
    phrases: record -> (locks, rerun) where they depend on what the record holds (a benchmark with two data
        sources); None: `locks` and `rerun` always.
    """

    keys: tuple[str, ...]
    locks: str
    build: Callable[[Any], SectionRecord]
    parse: Callable[[Mapping[str, Any], str], SectionRecord]
    diff: Callable[[Any, Any], list[str]]
    summary_rows: Callable[[Any], list[SummaryRow]]
    rerun: str = ""
    phrases: Callable[[Any], tuple[str, str]] | None = None

    def header_phrases(self, record: Any = None) -> tuple[str, str]:
        return self.phrases(record) if self.phrases is not None and record is not None else (self.locks, self.rerun)


def section_providers() -> dict[str, LockSection]:
    """benchmark -> its lock section provider, in catalogue order (benchmarks without one are left out)."""
    from rmeval.benchmarks import all_benchmarks
    from rmeval.benchmarks.catalogue import import_target

    providers: dict[str, LockSection] = {}
    owner: dict[str, str] = dict.fromkeys(SHARED_KEYS, "the shared lock")
    for benchmark in all_benchmarks():
        if not benchmark.lock_section:
            continue
        provider = import_target(benchmark.lock_section)
        for key in provider.keys:
            if key in owner:
                raise RmevalError(f"benchmark {benchmark.name!r}: lock key {key!r} is already written by {owner[key]}")
            owner[key] = f"benchmark {benchmark.name!r}"
        providers[benchmark.name] = provider
    return providers


def header(providers: list[LockSection], records: list[Any] | None = None) -> str:
    """The lock's two comment lines, naming what the sections lock and how to rerun from them (`records`, in the
    providers' order, for providers whose phrases depend on their record)."""
    phrases = [provider.header_phrases(record)
               for provider, record in zip(providers, records or [None] * len(providers), strict=True)]
    used = ", ".join([locks for locks, _ in phrases] + ["model commits", "software"])
    rerun = " and ".join(["`lock: <this file>`"] + [rerun for _, rerun in phrases if rerun])
    return (
        f"# rmeval lock: exactly what this run used ({used}).\n"
        f"# Rerun it: {rerun} in a config (README, \"Reproduce our run\").\n"
    )


def require(mapping: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """mapping[key], of type `kind`, or an error naming `where` and the key."""
    if not isinstance(mapping, dict) or key not in mapping:
        raise RmevalError(f"{where}: missing key {key!r}")
    value = mapping[key]
    if not isinstance(value, kind):
        raise RmevalError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value
