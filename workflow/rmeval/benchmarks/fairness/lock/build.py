"""The fairness sections of a run's lock, from its group tables and their manifests.

Inputs (`rmeval lock write` settings `sections.fairness`): {"groups": [{"name": G, "data": results/data/G.parquet,
"manifest": results/data/G.manifest.json}, ...]}, a list so that the groups keep the config's order.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rmeval.benchmarks.fairness.lock.rows import frame_rows, row_sha
from rmeval.benchmarks.fairness.lock.section import ArxivLock, GroupLock, LockedPaper
from rmeval.errors import RmevalError

GROUP_INPUT_KEYS = ("name", "data", "manifest")


def group_lock(group: str, data_path: Path, manifest_path: Path) -> GroupLock:
    import pandas as pd

    from rmeval.benchmarks.fairness.arxiv.select import content_sha256

    for path in (data_path, manifest_path):
        if not path.is_file():
            raise RmevalError(f"group {group!r}: {path} is missing")
    frame = pd.read_parquet(data_path)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if _is_corpus(manifest):
        return corpus_group_lock(group, frame, manifest)
    versions = manifest.get("versions") or {}
    papers = tuple(
        LockedPaper(str(row[0]), str(versions.get(str(row[0]), "")), row_sha(row)) for row in frame_rows(frame)
    )
    unversioned = sum(1 for paper in papers if not paper.version)
    if unversioned:
        print(f"warning: group {group!r}: {unversioned} of {len(papers)} papers have no recorded version "
              f"({manifest_path} has no `versions`)", file=sys.stderr)
    categories = tuple(manifest.get("categories") or ())
    return GroupLock(group, categories, content_sha256(frame), papers)


def _is_corpus(manifest: Mapping[str, Any]) -> bool:
    source = manifest.get("source")
    return isinstance(source, Mapping) and source.get("kind") == "corpus"


def corpus_group_lock(group: str, frame: Any, manifest: Mapping[str, Any]) -> GroupLock:
    """A corpus group: its labels, and each row's hash over the columns its manifest's `content_sha256` hashes."""
    from rmeval.benchmarks.fairness.corpus.prepare import content_sha256

    columns = list(manifest["output"]["columns"])
    rows = list(frame[columns].itertuples(index=False, name=None))
    papers = tuple(LockedPaper(str(row[0]), "", row_sha(row)) for row in rows)
    return GroupLock(group, tuple(manifest.get("labels") or ()), content_sha256(frame, columns), papers)


def corpus_section(manifest_paths: list[Path]) -> dict[str, Any]:
    """What identifies the corpus: the file's sha256 and size (no path), or the HF dataset, split and revision."""
    manifests = [json.loads(Path(p).read_text(encoding="utf-8")) for p in manifest_paths]
    first = manifests[0]
    source = dict(first["source"])
    identity = ({"type": "table", "file": Path(str(source.get("path"))).name, "sha256": source.get("sha256"),
                 "bytes": source.get("bytes")} if source.get("type") == "table" else
                {key: source.get(key) for key in ("type", "name", "config", "split", "revision", "fingerprint")})
    return {**identity, "columns": first.get("columns"), "prompt_template": first.get("prompt_template"),
            "per_group": first.get("per_group"), "seed": first.get("seed"),
            "unmapped_labels": first.get("unmapped_labels") or {}}


def _source_identity(source: dict[str, Any]) -> dict[str, Any]:
    """What identifies a source across machines (no paths, no dates)."""
    kind = source.get("kind")
    if kind == "snapshot":
        return {"kind": "snapshot", "sha256": source.get("sha256"), "bytes": source.get("bytes")}
    if kind == "api":
        return {"kind": "api", "base_url": source.get("base_url"), "date_to": source.get("date_to")}
    if kind == "lock":
        return {"kind": "lock", "lock_sha256": source.get("lock_sha256"), "via": source.get("via")}
    return {"kind": str(kind)}


def arxiv_section(manifest_paths: list[Path]) -> dict[str, Any]:
    manifests = [json.loads(Path(p).read_text(encoding="utf-8")) for p in manifest_paths]
    sources = {json.dumps(_source_identity(m.get("source") or {}), sort_keys=True) for m in manifests}
    tables = {json.dumps((m.get("categories_table") or {}).get("sha256")) for m in manifests}
    first = manifests[0] if manifests else {}
    return {
        "seed": first.get("seed"),
        "papers_per_group": first.get("papers_per_group"),
        "sources": [json.loads(s) for s in sorted(sources)],
        "categories_table_sha256": [json.loads(t) for t in sorted(tables)][0] if len(tables) == 1 else
        [json.loads(t) for t in sorted(tables)],
    }


def _group_inputs(inputs: Any) -> list[dict[str, str]]:
    where = "lock sections.fairness"
    groups = inputs.get("groups") if isinstance(inputs, Mapping) else None
    if not isinstance(groups, list):
        raise RmevalError(f"{where}: expected {{\"groups\": [{{\"name\", \"data\", \"manifest\"}}, ...]}}, "
                          f"got {inputs!r}")
    for index, group in enumerate(groups):
        if not isinstance(group, Mapping) or not all(isinstance(group.get(key), str) for key in GROUP_INPUT_KEYS):
            raise RmevalError(f"{where}.groups[{index}]: expected strings {', '.join(GROUP_INPUT_KEYS)}, "
                              f"got {group!r}")
    return groups


def build_section(inputs: Any) -> ArxivLock:
    """The `arxiv` and `groups` sections from the files the lock rule hands over (module docstring)."""
    groups = _group_inputs(inputs)
    manifests = [Path(group["manifest"]) for group in groups]
    corpus = None
    if manifests and manifests[0].is_file() and _is_corpus(json.loads(manifests[0].read_text(encoding="utf-8"))):
        corpus = corpus_section(manifests)
    return ArxivLock(
        corpus=corpus,
        arxiv=arxiv_section(manifests),
        groups={group["name"]: group_lock(group["name"], Path(group["data"]), manifest)
                for group, manifest in zip(groups, manifests, strict=True)},
    )
