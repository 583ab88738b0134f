"""JudgeBench's lock section (`judgebench_data`): the files the run read, from the prepare stage's manifest: the Hub
id, the configured revision and, per split, the commit it resolved to, or the local folder; per split the file, its
sha256 and its pairs per category. A run that follows the lock (`lock:`) reads the same bytes or stops
(plan.locked_files)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rmeval.lock.manifest import ManifestLock, PerEntry, manifest_section
from rmeval.lock.section import SummaryRow

KEY = "judgebench_data"
FIELDS = ("source", "dataset", "revision", "path", "splits")


@dataclass(frozen=True)
class DataLock(ManifestLock):
    def split_sha256(self) -> dict[str, str]:
        return {name: str(item["sha256"]) for name, item in (self.record.get("splits") or {}).items()}

    def resolved_revision(self) -> str | None:
        """The one commit every split resolved to (None for a local source, or when they differ)."""
        commits = {item.get("resolved_revision") for item in (self.record.get("splits") or {}).values()}
        return commits.pop() if len(commits) == 1 else None


def summary(data: dict[str, Any]) -> list[SummaryRow]:
    rows = []
    for split, item in (data.get("splits") or {}).items():
        origin = (f"{data.get('dataset')}@{item.get('resolved_revision') or data.get('revision') or 'main'}"
                  if data["source"] == "hub" else str(item.get("file")))
        published = {True: ", the published bytes", False: ", not the published bytes"}.get(
            item.get("published_bytes"), "")
        rows.append(("dataset", f"judgebench {split}",
                     f"{origin} sha256 {str(item['sha256'])[:16]}{published}: {item.get('pairs')} pairs"))
    return rows


LOCK_SECTION = manifest_section(KEY, FIELDS, required=("source", "splits"), nested={"splits": PerEntry(("sha256",))},
                                locks="the JudgeBench files", summary=summary, record_type=DataLock)
