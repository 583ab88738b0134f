"""RewardBench's lock sections (v1 key `rewardbench_data`, v2 `rewardbench2_data`): the dataset each version read,
from the prepare stage's manifest: Hub id, split, the configured revision and the commit it resolved to, or the
local file's sha256; rows and completions per subset."""

from __future__ import annotations

from typing import Any

from rmeval.lock.manifest import manifest_section
from rmeval.lock.section import LockSection, SummaryRow

FIELDS = ("source", "dataset", "split", "revision", "resolved_revision", "path", "sha256", "rows", "completions",
          "subsets")


def _section(version: str) -> LockSection:
    def summary(data: dict[str, Any]) -> list[SummaryRow]:
        revision = data.get("resolved_revision") or data.get("revision") or "main"
        origin = (f"{data.get('dataset')}@{revision}" if data["source"] == "hf"
                  else f"{data.get('path')} sha256 {str(data.get('sha256'))[:16]}")
        return [("dataset", version, f"{origin}: {data['rows']} rows, {data.get('completions')} completions")]

    return manifest_section(f"{version}_data", FIELDS, required=("source", "rows"), locks=f"the {version} rows",
                            summary=summary)


V1_LOCK_SECTION = _section("rewardbench")
V2_LOCK_SECTION = _section("rewardbench2")
