"""Table footnotes: n per group (from the score files) and the data source (from the
`results/data/{group}.manifest.json` files that `arxiv-select` writes, when present)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.stats.loading import ScoreSet


def read_manifests(manifest_dir: Path | None, groups: list[str]) -> dict[str, dict[str, Any]]:
    """Manifests by group; missing or unreadable ones are skipped (footnotes say so)."""
    found: dict[str, dict[str, Any]] = {}
    if manifest_dir is None or not manifest_dir.is_dir():
        return found
    for group in groups:
        path = manifest_dir / f"{group}.manifest.json"
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(document, dict):
            found[group] = document
    return found


def check_row_counts(scores: ScoreSet, manifests: dict[str, dict[str, Any]], manifest_dir: Path) -> None:
    """Every score file holds every row of its group: `output.rows` of the manifest `arxiv-select` wrote.

    A score file that lost rows (an old, partial or hand-edited file) would otherwise shift the group
    means silently; manifests without an `output.rows` count (made elsewhere) are not checked.
    """
    for model in scores.models:
        for group in model.groups:
            output = manifests.get(group.group, {}).get("output")
            expected = output.get("rows") if isinstance(output, dict) else None
            if not isinstance(expected, int) or group.n == expected:
                continue
            what = f"is missing {expected - group.n}" if group.n < expected else f"has {group.n - expected} extra"
            raise RmevalError(
                f"{group.source}: {group.n} rows, but {manifest_dir / f'{group.group}.manifest.json'} says group "
                f"{group.group!r} has {expected}; model {model.model} {what} row(s). Re-score it (delete the "
                "file and re-run the workflow) so every model is compared on the same papers"
            )


def _describe_source(source: Any) -> str:
    if isinstance(source, dict):
        parts = [f"{key}={value}" for key, value in source.items() if isinstance(value, str | int | float)]
        return ", ".join(parts[:4])
    return str(source)


def sample_size_note(scores: ScoreSet) -> str:
    per_group: dict[str, set[int]] = {g: set() for g in scores.groups}
    for model in scores.models:
        for group in model.groups:
            per_group[group.group].add(group.n)
    parts = []
    for group, sizes in per_group.items():
        parts.append(f"{group} {min(sizes)}" if len(sizes) == 1 else f"{group} {min(sizes)}-{max(sizes)}")
    varies = any(len(sizes) > 1 for sizes in per_group.values())
    suffix = " (ranges: n differs between models)" if varies else ""
    return f"n per group: {', '.join(parts)}{suffix}."


def source_note(manifests: dict[str, dict[str, Any]], groups: list[str], manifest_dir: Path | None) -> str:
    if not manifests:
        where = f" in {manifest_dir}" if manifest_dir is not None else ""
        return f"Data source: not recorded (no {{group}}.manifest.json{where})."
    sources = sorted({_describe_source(m.get("source", "unknown")) for m in manifests.values()})
    dates = sorted({str(m["date"]) for m in manifests.values() if m.get("date")})
    seeds = sorted({str(m["seed"]) for m in manifests.values() if m.get("seed") is not None})
    text = f"Data source: arXiv papers from {'; '.join(sources)}"
    if dates:
        text += f", collected {dates[0]}" if len(dates) == 1 else f", collected {dates[0]} to {dates[-1]}"
    if seeds:
        text += f", sampling seed {', '.join(seeds)}"
    missing = [g for g in groups if g not in manifests]
    if missing:
        text += f" (no manifest for {', '.join(missing)})"
    return text + "."


def footnote(scores: ScoreSet, manifests: dict[str, dict[str, Any]], manifest_dir: Path | None) -> str:
    return f"{sample_size_note(scores)} {source_note(manifests, scores.groups, manifest_dir)}"
