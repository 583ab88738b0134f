"""A lock section that copies the prepare stage's manifest: one top-level key holding the manifest's `fields` (those
it has, in `fields` order). A benchmark whose locked data is what its prepare stage wrote down declares the key,
the fields, what a record must hold and its summary wording (`manifest_section`); building, reading back and
comparing are here, once.

`diff` gives one line per differing field, `<key>.<field>: a -> b`; a mapping field named in `nested` gives one
line per differing entry instead (`PerName`: name -> value, e.g. a file's sha256; `PerEntry`: name -> mapping,
e.g. a split's file, sha256 and counts).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rmeval.errors import RmevalError
from rmeval.lock.section import LockSection, SummaryRow


@dataclass(frozen=True)
class ManifestLock:
    """The record under `key`: the manifest's fields, as written in the lock."""

    key: str
    record: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {self.key: self.record}


class Nested(Protocol):
    """How a mapping field is checked when read back and compared entry by entry."""

    def check(self, value: dict[str, Any], where: str) -> None: ...

    def lines(self, label: str, first: dict[str, Any], second: dict[str, Any]) -> list[str]: ...


@dataclass(frozen=True)
class PerName:
    """name -> value (a file's sha256): one line per differing name, names sorted, values as written."""

    def check(self, value: dict[str, Any], where: str) -> None:
        return None

    def lines(self, label: str, first: dict[str, Any], second: dict[str, Any]) -> list[str]:
        return [f"{label}.{name}: {first.get(name)} -> {second.get(name)}"
                for name in sorted(set(first) | set(second)) if first.get(name) != second.get(name)]


@dataclass(frozen=True)
class PerEntry:
    """name -> mapping (a split's file, sha256, counts): one line per differing field of an entry, entries and
    fields in file order. strings: the fields every entry must hold as a string."""

    strings: tuple[str, ...] = ()

    def check(self, value: dict[str, Any], where: str) -> None:
        for name, item in value.items():
            if not isinstance(item, dict) or not all(isinstance(item.get(key), str) for key in self.strings):
                holding = f" with {' and '.join(self.strings)}" if self.strings else ""
                raise RmevalError(f"{where}.{name}: expected a mapping{holding}")

    def lines(self, label: str, first: dict[str, Any], second: dict[str, Any]) -> list[str]:
        lines: list[str] = []
        for name in dict.fromkeys([*first, *second]):
            one, two = first.get(name) or {}, second.get(name) or {}
            lines += [f"{label}.{name}.{key}: {one.get(key)!r} -> {two.get(key)!r}"
                      for key in dict.fromkeys([*one, *two]) if one.get(key) != two.get(key)]
        return lines


@dataclass(frozen=True)
class ManifestSection:
    """key: the lock's top-level key. fields: the manifest's fields it keeps, in file order. required: the fields a
    record must have (a `nested` one as a mapping). nested: field -> how its entries are checked and compared.
    summary: the record -> its `lock show` rows. record_type: the record's class (a benchmark's, with its own
    accessors)."""

    key: str
    fields: tuple[str, ...]
    required: tuple[str, ...]
    summary: Callable[[dict[str, Any]], list[SummaryRow]]
    nested: Mapping[str, Nested] = field(default_factory=dict)
    record_type: type[ManifestLock] = ManifestLock

    def build(self, inputs: Mapping[str, Any]) -> ManifestLock:
        """inputs["manifest"]: the prepare stage's manifest.json."""
        with open(inputs["manifest"], encoding="utf-8") as handle:
            manifest = json.load(handle)
        return self.record_type(self.key, {name: manifest[name] for name in self.fields if name in manifest})

    def parse(self, document: Mapping[str, Any], where: str) -> ManifestLock:
        record = document[self.key]
        if not isinstance(record, dict) or not all(
            name in record and (name not in self.nested or isinstance(record[name], dict)) for name in self.required
        ):
            raise RmevalError(f"{where}: {self.key}: expected a mapping with {' and '.join(self.required)}")
        for name, nested in self.nested.items():
            if isinstance(record.get(name), dict):
                nested.check(record[name], f"{where}: {self.key}.{name}")
        return self.record_type(self.key, dict(record))

    def diff(self, first: ManifestLock | None, second: ManifestLock | None) -> list[str]:
        a = first.record if first else {}
        b = second.record if second else {}
        lines: list[str] = []
        for name in self.fields:
            if name in self.nested:
                lines += self.nested[name].lines(f"{self.key}.{name}", a.get(name) or {}, b.get(name) or {})
            elif a.get(name) != b.get(name):
                lines.append(f"{self.key}.{name}: {a.get(name)!r} -> {b.get(name)!r}")
        return lines

    def summary_rows(self, lock: ManifestLock) -> list[SummaryRow]:
        return self.summary(lock.record)

    def section(self, locks: str, rerun: str = "") -> LockSection:
        return LockSection(keys=(self.key,), locks=locks, build=self.build, parse=self.parse, diff=self.diff,
                           summary_rows=self.summary_rows, rerun=rerun)


def manifest_section(key: str, fields: tuple[str, ...], *, required: tuple[str, ...], locks: str,
                     summary: Callable[[dict[str, Any]], list[SummaryRow]], nested: Mapping[str, Nested] | None = None,
                     record_type: type[ManifestLock] = ManifestLock, rerun: str = "") -> LockSection:
    """The lock section of a benchmark that locks its prepare stage's manifest (ManifestSection's arguments; locks,
    rerun: the header's phrases, rmeval.lock.section.LockSection)."""
    spec = ManifestSection(key, fields, required, summary, dict(nested or {}), record_type)
    return spec.section(locks, rerun)


def locked_record(lock_path: str | Path | None, key: str) -> dict[str, Any] | None:
    """The `key` record of the lock a run follows, as written, or None (no lock, or a lock without one). Read
    without parsing the whole lock: a prepare stage checks its bytes against it."""
    if not lock_path:
        return None
    from rmeval.io.yaml_io import load_yaml

    document = load_yaml(Path(lock_path).read_text(encoding="utf-8")) or {}
    record = document.get(key)
    return dict(record) if isinstance(record, dict) else None
