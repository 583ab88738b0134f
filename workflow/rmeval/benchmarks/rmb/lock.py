"""RMB's lock section (key `rmb_data`): the data it read, from the prepare stage's manifest: the source, the
repository and pinned commit with the archive's sha256 (hub) or the local folder, and the sha256 of every file of
both sets; items per set, responses, distinct texts and scenarios. `rmb-prepare --lock` compares the files with it:
a rerun from the lock reads the same bytes or stops."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmeval.errors import RmevalError
from rmeval.lock.section import LockSection, SummaryRow

KEY = "rmb_data"
FIELDS = ("source", "repository", "revision", "archive_sha256", "path", "items", "responses", "texts", "scenarios",
          "files")


@dataclass(frozen=True)
class DataLock:
    record: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {KEY: self.record}


def build(inputs: Mapping[str, Any]) -> DataLock:
    with open(inputs["manifest"], encoding="utf-8") as handle:
        manifest = json.load(handle)
    return DataLock({name: manifest[name] for name in FIELDS if name in manifest})


def parse(document: Mapping[str, Any], where: str) -> DataLock:
    record = document[KEY]
    if not isinstance(record, dict) or "source" not in record or not isinstance(record.get("files"), dict):
        raise RmevalError(f"{where}: {KEY}: expected a mapping with source and files")
    return DataLock(dict(record))


def diff(first: DataLock | None, second: DataLock | None) -> list[str]:
    a = first.record if first else {}
    b = second.record if second else {}
    lines = [f"{KEY}.{name}: {a.get(name)!r} -> {b.get(name)!r}" for name in FIELDS
             if name != "files" and a.get(name) != b.get(name)]
    files_a, files_b = a.get("files") or {}, b.get("files") or {}
    lines += [f"{KEY}.files.{name}: {files_a.get(name)} -> {files_b.get(name)}"
              for name in sorted(set(files_a) | set(files_b)) if files_a.get(name) != files_b.get(name)]
    return lines


def summary_rows(lock: DataLock) -> list[SummaryRow]:
    data = lock.record
    origin = (f"{data.get('repository')}@{str(data.get('revision'))[:12]} (archive sha256 "
              f"{str(data.get('archive_sha256'))[:16]})" if data["source"] == "hub" else str(data.get("path")))
    return [("dataset", "rmb", f"{origin}: {len(data['files'])} files, {data.get('items')} items, "
                               f"{data.get('texts')} distinct texts")]


LOCK_SECTION = LockSection(keys=(KEY,), locks="the RMB files (sha256 each)", build=build, parse=parse, diff=diff,
                           summary_rows=summary_rows)
