"""RM-Bench's lock section (`rmbench_data`): the file it read, from the prepare stage's manifest: the local path or
the Hub dataset, file and revision (configured, and the commit it resolved to), the file's sha256, prompts and
texts, prompts per domain. A run following the lock (`lock:`) reads the locked commit and refuses other bytes
(plan.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmeval.errors import RmevalError
from rmeval.lock.section import LockSection, SummaryRow

KEY = "rmbench_data"
FIELDS = ("source", "dataset", "file", "revision", "resolved_revision", "path", "sha256", "prompts", "texts",
          "domains")


@dataclass(frozen=True)
class DataLock:
    record: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {KEY: self.record}


def build(inputs: Mapping[str, Any]) -> DataLock:
    with open(inputs["manifest"]) as handle:
        manifest = json.load(handle)
    return DataLock({name: manifest[name] for name in FIELDS if name in manifest})


def parse(document: Mapping[str, Any], where: str) -> DataLock:
    record = document[KEY]
    if not isinstance(record, dict) or "source" not in record or "sha256" not in record:
        raise RmevalError(f"{where}: {KEY}: expected a mapping with source and sha256")
    return DataLock(dict(record))


def diff(first: DataLock | None, second: DataLock | None) -> list[str]:
    a = first.record if first else {}
    b = second.record if second else {}
    return [f"{KEY}.{name}: {a.get(name)!r} -> {b.get(name)!r}" for name in FIELDS if a.get(name) != b.get(name)]


def summary_rows(lock: DataLock) -> list[SummaryRow]:
    data = lock.record
    origin = (f"{data.get('dataset')}@{data.get('resolved_revision') or data.get('revision') or 'main'}"
              if data["source"] == "hub" else str(data.get("path")))
    return [("dataset", "rmbench", f"{origin} sha256 {str(data['sha256'])[:16]}: {data.get('prompts')} prompts, "
                                   f"{data.get('texts')} texts")]


def locked_record(lock_path: str | None) -> dict[str, Any] | None:
    """The followed lock's `rmbench_data` record, or None (no lock, or a lock without it)."""
    if not lock_path:
        return None
    from rmeval.io.yaml_io import load_yaml

    with open(lock_path, encoding="utf-8") as handle:
        document = load_yaml(handle.read()) or {}
    record = document.get(KEY)
    return dict(record) if isinstance(record, dict) else None


LOCK_SECTION = LockSection(keys=(KEY,), locks="the RM-Bench file", build=build, parse=parse, diff=diff,
                           summary_rows=summary_rows)
