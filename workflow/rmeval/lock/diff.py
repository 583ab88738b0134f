"""`rmeval lock diff A B`: what differs between two locks (papers, versions, commits, software)."""

from __future__ import annotations

from typing import Any

from rmeval.lock.lockfile import GroupLock, Lock

SHOWN_PER_KIND = 20


def _scalar(label: str, a: Any, b: Any) -> list[str]:
    return [] if a == b else [f"{label}: {a!r} -> {b!r}"]


def _shown(kind: str, items: list[str]) -> list[str]:
    lines = [f"  {kind}: {item}" for item in items[:SHOWN_PER_KIND]]
    if len(items) > SHOWN_PER_KIND:
        lines.append(f"  {kind}: ... {len(items) - SHOWN_PER_KIND} more")
    return lines


def diff_group(a: GroupLock, b: GroupLock) -> list[str]:
    lines: list[str] = []
    if a.categories != b.categories:
        lines.append(f"  categories: {list(a.categories)} -> {list(b.categories)}")
    old = {p.id: p for p in a.papers}
    new = {p.id: p for p in b.papers}
    removed = [p.versioned_id for i, p in old.items() if i not in new]
    added = [p.versioned_id for i, p in new.items() if i not in old]
    versions = [f"{i} {old[i].version or '(none)'} -> {new[i].version or '(none)'}"
                for i in old if i in new and old[i].version != new[i].version]
    text = [old[i].versioned_id for i in old if i in new and old[i].version == new[i].version
            and old[i].row_sha != new[i].row_sha]
    order = [p.id for p in a.papers if p.id in new] != [p.id for p in b.papers if p.id in old]
    lines += _shown("removed", removed) + _shown("added", added) + _shown("new version", versions)
    lines += _shown("text changed (same version)", text)
    if order:
        lines.append("  order of papers differs")
    if a.table_sha256 != b.table_sha256:
        lines.append(f"  table_sha256: {a.table_sha256[:16]} -> {b.table_sha256[:16]}")
    if lines:
        lines.insert(0, f"group {a.name}: {len(a.papers)} -> {len(b.papers)} papers")
    return lines


def diff_locks(a: Lock, b: Lock) -> list[str]:
    lines = _scalar("rmeval", a.rmeval, b.rmeval) + _scalar("config_sha256", a.config_sha256, b.config_sha256)
    for key in sorted(set(a.software) | set(b.software)):
        lines += _scalar(f"software.{key}", a.software.get(key), b.software.get(key))
    for key in sorted(set(a.arxiv) | set(b.arxiv)):
        lines += _scalar(f"arxiv.{key}", a.arxiv.get(key), b.arxiv.get(key))
    for name in a.groups:
        if name not in b.groups:
            lines.append(f"group {name}: only in the first lock ({len(a.groups[name].papers)} papers)")
        else:
            lines += diff_group(a.groups[name], b.groups[name])
    lines += [f"group {name}: only in the second lock ({len(b.groups[name].papers)} papers)"
              for name in b.groups if name not in a.groups]
    for name in sorted(set(a.models) | set(b.models)):
        if name not in b.models:
            lines.append(f"model {name}: only in the first lock")
        elif name not in a.models:
            lines.append(f"model {name}: only in the second lock")
        else:
            da, db = a.models[name].to_dict(), b.models[name].to_dict()
            for key in sorted(set(da) | set(db)):
                lines += _scalar(f"model {name}: {key}", da.get(key), db.get(key))
    return lines
