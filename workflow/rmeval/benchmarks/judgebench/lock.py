"""JudgeBench's lock section (`judgebench_data`): the files the run read, from the prepare stage's manifest: the Hub
id, the configured revision and, per split, the commit it resolved to, or the local folder; per split the file, its
sha256 and its pairs per category. A run that follows the lock (`lock:`) reads the same bytes or stops
(plan.locked_files)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmeval.errors import RmevalError
from rmeval.lock.section import LockSection, SummaryRow

KEY = "judgebench_data"
FIELDS = ("source", "dataset", "revision", "path", "splits")


@dataclass(frozen=True)
class DataLock:
    record: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {KEY: self.record}

    def split_sha256(self) -> dict[str, str]:
        return {name: str(item["sha256"]) for name, item in (self.record.get("splits") or {}).items()}

    def resolved_revision(self) -> str | None:
        """The one commit every split resolved to (None for a local source, or when they differ)."""
        commits = {item.get("resolved_revision") for item in (self.record.get("splits") or {}).values()}
        return commits.pop() if len(commits) == 1 else None


def build(inputs: Mapping[str, Any]) -> DataLock:
    with open(inputs["manifest"], encoding="utf-8") as handle:
        manifest = json.load(handle)
    return DataLock({name: manifest[name] for name in FIELDS if name in manifest})


def parse(document: Mapping[str, Any], where: str) -> DataLock:
    record = document[KEY]
    if not isinstance(record, dict) or "source" not in record or not isinstance(record.get("splits"), dict):
        raise RmevalError(f"{where}: {KEY}: expected a mapping with source and splits")
    for name, item in record["splits"].items():
        if not isinstance(item, dict) or not isinstance(item.get("sha256"), str):
            raise RmevalError(f"{where}: {KEY}.splits.{name}: expected a mapping with sha256")
    return DataLock(dict(record))


def diff(first: DataLock | None, second: DataLock | None) -> list[str]:
    a = first.record if first else {}
    b = second.record if second else {}
    lines = [f"{KEY}.{name}: {a.get(name)!r} -> {b.get(name)!r}" for name in FIELDS
             if name != "splits" and a.get(name) != b.get(name)]
    splits_a, splits_b = a.get("splits") or {}, b.get("splits") or {}
    for split in dict.fromkeys([*splits_a, *splits_b]):
        one, two = splits_a.get(split) or {}, splits_b.get(split) or {}
        lines += [f"{KEY}.splits.{split}.{field}: {one.get(field)!r} -> {two.get(field)!r}"
                  for field in dict.fromkeys([*one, *two]) if one.get(field) != two.get(field)]
    return lines


def summary_rows(record: DataLock) -> list[SummaryRow]:
    data = record.record
    rows = []
    for split, item in (data.get("splits") or {}).items():
        origin = (f"{data.get('dataset')}@{item.get('resolved_revision') or data.get('revision') or 'main'}"
                  if data["source"] == "hub" else str(item.get("file")))
        published = {True: ", the published bytes", False: ", not the published bytes"}.get(
            item.get("published_bytes"), "")
        rows.append(("dataset", f"judgebench {split}",
                     f"{origin} sha256 {str(item['sha256'])[:16]}{published}: {item.get('pairs')} pairs"))
    return rows


LOCK_SECTION = LockSection(keys=(KEY,), locks="the JudgeBench files", build=build, parse=parse, diff=diff,
                           summary_rows=summary_rows)
