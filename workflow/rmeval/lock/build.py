"""Build `results/lock.yaml` from a finished run: group tables + manifests and every score sidecar.

Nothing time- or machine-dependent goes in (no timestamps, no wall times), so two identical runs write
byte-identical locks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.lock.lockfile import GroupLock, LockedPaper, ModelLock
from rmeval.lock.rows import frame_rows, row_sha

SOFTWARE = ("python", "torch", "transformers", "tokenizers")
# Sidecar fields recorded when present (other stages add them), top-level or under `adapter_details`:
# lock key -> the sidecar names it may have. A scalar, or {table: value} when the tables differ.
OPTIONAL_MODEL_FIELDS = {
    "template_hash": ("template_hash", "chat_template_sha256"),
    "prompt_hash": ("prompt_hash", "prompt_sha256"),
}
# A model's identity: every sidecar of one model must agree on these.
MODEL_IDENTITY = ("adapter", "path", "revision", "dtype")


def group_lock(group: str, data_path: Path, manifest_path: Path) -> GroupLock:
    import pandas as pd

    from rmeval.benchmarks.fairness.arxiv.select import content_sha256

    for path in (data_path, manifest_path):
        if not path.is_file():
            raise RmevalError(f"group {group!r}: {path} is missing")
    frame = pd.read_parquet(data_path)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
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


def _meta_key(path: Path) -> str:
    """`fairness/physics`, `rewardmath/Algebra`: the sidecar's branch and table."""
    branch = "rewardmath" if "rewardmath" in path.parts else "fairness"
    return f"{branch}/{path.name.removesuffix('.meta.json')}"


def _optional(meta: dict[str, Any], names: tuple[str, ...]) -> Any:
    details = meta.get("adapter_details") if isinstance(meta.get("adapter_details"), dict) else {}
    for name in names:
        for where in (meta, details):
            if where.get(name) is not None:
                return where[name]
    return None


def model_locks(meta_paths: list[Path]) -> dict[str, ModelLock]:
    by_model: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for path in sorted(meta_paths):
        meta = json.loads(Path(path).read_text(encoding="utf-8"))
        by_model.setdefault(str(meta.get("model") or Path(path).parent.name), []).append((Path(path), meta))
    locks: dict[str, ModelLock] = {}
    for name in sorted(by_model):
        sidecars = by_model[name]
        first_path, first = sidecars[0]
        for key in MODEL_IDENTITY:
            for path, meta in sidecars[1:]:
                if meta.get(key) != first.get(key):
                    raise RmevalError(
                        f"model {name!r}: {first_path} has {key} {first.get(key)!r} but {path} has "
                        f"{meta.get(key)!r}; one lock entry needs one model (pin `revision`, rerun its jobs)"
                    )
        extra: dict[str, Any] = {}
        for key, names in OPTIONAL_MODEL_FIELDS.items():
            values = {_meta_key(path): value for path, meta in sidecars
                      if (value := _optional(meta, names)) is not None}
            if not values:
                continue
            distinct = {json.dumps(value, sort_keys=True) for value in values.values()}
            extra[key] = next(iter(values.values())) if len(distinct) == 1 else dict(sorted(values.items()))
        locks[name] = ModelLock(
            name, str(first.get("adapter")), str(first.get("path")), str(first.get("revision")),
            str(first.get("dtype")), extra,
        )
    return locks


def software_versions(meta_paths: list[Path]) -> dict[str, Any]:
    """Versions the scoring jobs ran with (their sidecars), else this environment's."""
    import importlib.metadata as metadata
    import platform

    seen: dict[str, set[str]] = {package: set() for package in SOFTWARE}
    for path in meta_paths:
        versions = json.loads(Path(path).read_text(encoding="utf-8")).get("versions") or {}
        for package in SOFTWARE:
            if versions.get(package):
                seen[package].add(str(versions[package]))
    software: dict[str, Any] = {}
    for package in SOFTWARE:
        if not seen[package]:
            try:
                seen[package].add(platform.python_version() if package == "python" else metadata.version(package))
            except metadata.PackageNotFoundError:
                continue
        values = sorted(seen[package])
        software[package] = values[0] if len(values) == 1 else values
    return software


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
