"""RewardBench's lock sections (v1 key `rewardbench_data`, v2 `rewardbench2_data`): the dataset each version read,
from the prepare stage's manifest: Hub id, split, the configured revision and the commit it resolved to, or the
local file's sha256; rows and completions per subset."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmeval.errors import RmevalError
from rmeval.lock.section import LockSection, SummaryRow

FIELDS = ("source", "dataset", "split", "revision", "resolved_revision", "path", "sha256", "rows", "completions",
          "subsets")


@dataclass(frozen=True)
class DataLock:
    key: str
    record: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {self.key: self.record}


def _section(version: str) -> LockSection:
    key = f"{version}_data"

    def build(inputs: Mapping[str, Any]) -> DataLock:
        with open(inputs["manifest"]) as handle:
            manifest = json.load(handle)
        return DataLock(key, {name: manifest[name] for name in FIELDS if name in manifest})

    def parse(document: Mapping[str, Any], where: str) -> DataLock:
        record = document[key]
        if not isinstance(record, dict) or "source" not in record or "rows" not in record:
            raise RmevalError(f"{where}: {key}: expected a mapping with source and rows")
        return DataLock(key, dict(record))

    def diff(first: DataLock | None, second: DataLock | None) -> list[str]:
        a = first.record if first else {}
        b = second.record if second else {}
        return [f"{key}.{name}: {a.get(name)!r} -> {b.get(name)!r}" for name in FIELDS if a.get(name) != b.get(name)]

    def summary_rows(record: DataLock) -> list[SummaryRow]:
        data = record.record
        revision = data.get("resolved_revision") or data.get("revision") or "main"
        origin = (f"{data.get('dataset')}@{revision}" if data["source"] == "hf"
                  else f"{data.get('path')} sha256 {str(data.get('sha256'))[:16]}")
        return [("dataset", version, f"{origin}: {data['rows']} rows, {data.get('completions')} completions")]

    return LockSection(keys=(key,), locks=f"the {version} rows", build=build, parse=parse, diff=diff,
                       summary_rows=summary_rows)


V1_LOCK_SECTION = _section("rewardbench")
V2_LOCK_SECTION = _section("rewardbench2")
