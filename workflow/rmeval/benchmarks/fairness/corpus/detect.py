"""Is this run's data a grouped corpus? Read from the manifests the data stage wrote beside the group tables
(their `source.kind`), for the run-level parts that compare with Song et al.: a corpus run has no paper to
compare with, so they say "not applicable" instead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rmeval.benchmarks.fairness.catalogue import MANIFEST


def corpus_source(root: Path, groups: list[str]) -> dict[str, Any] | None:
    """The corpus source record of the run's first group manifest, or None for arXiv (or no manifest)."""
    for group in groups:
        path = root / MANIFEST.format(group=group)
        if path.is_file():
            source = json.loads(path.read_text(encoding="utf-8")).get("source")
            return source if isinstance(source, dict) and source.get("kind") == "corpus" else None
    return None


def describe(source: dict[str, Any]) -> str:
    if source.get("type") == "hf":
        return f"the Hugging Face dataset {source.get('name')} (split {source.get('split')})"
    return f"the corpus file {Path(str(source.get('path', ''))).name}"


NOT_APPLICABLE = ("Reproduction verdicts: not applicable; this run scored a grouped corpus, not Song et al.'s "
                  "arXiv groups, so there are no published values to compare with.")
