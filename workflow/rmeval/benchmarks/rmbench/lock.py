"""RM-Bench's lock section (`rmbench_data`): the file it read, from the prepare stage's manifest: the local path or
the Hub dataset, file and revision (configured, and the commit it resolved to), the file's sha256, prompts and
texts, prompts per domain. A run following the lock (`lock:`) reads the locked commit and refuses other bytes
(plan.py)."""

from __future__ import annotations

from typing import Any

from rmeval.lock import manifest
from rmeval.lock.section import SummaryRow

KEY = "rmbench_data"
FIELDS = ("source", "dataset", "file", "revision", "resolved_revision", "path", "sha256", "prompts", "texts",
          "domains")


def summary(data: dict[str, Any]) -> list[SummaryRow]:
    origin = (f"{data.get('dataset')}@{data.get('resolved_revision') or data.get('revision') or 'main'}"
              if data["source"] == "hub" else str(data.get("path")))
    return [("dataset", "rmbench", f"{origin} sha256 {str(data['sha256'])[:16]}: {data.get('prompts')} prompts, "
                                   f"{data.get('texts')} texts")]


def locked_record(lock_path: str | None) -> dict[str, Any] | None:
    """The followed lock's `rmbench_data` record, or None (no lock, or a lock without it)."""
    return manifest.locked_record(lock_path, KEY)


LOCK_SECTION = manifest.manifest_section(KEY, FIELDS, required=("source", "sha256"), locks="the RM-Bench file",
                                         summary=summary)
