"""What differs between the fairness sections of two locks: `arxiv` settings and sources, each group's papers."""

from __future__ import annotations

from rmeval.benchmarks.fairness.lock.section import ArxivLock, GroupLock
from rmeval.lock.diff import scalar, shown


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
    lines += shown("removed", removed) + shown("added", added) + shown("new version", versions)
    lines += shown("text changed (same version)", text)
    if order:
        lines.append("  order of papers differs")
    if a.table_sha256 != b.table_sha256:
        lines.append(f"  table_sha256: {a.table_sha256[:16]} -> {b.table_sha256[:16]}")
    if lines:
        lines.insert(0, f"group {a.name}: {len(a.papers)} -> {len(b.papers)} papers")
    return lines


def diff_section(a: ArxivLock, b: ArxivLock) -> list[str]:
    lines: list[str] = []
    for key in sorted(set(a.arxiv) | set(b.arxiv)):
        lines += scalar(f"arxiv.{key}", a.arxiv.get(key), b.arxiv.get(key))
    corpus_a, corpus_b = a.corpus or {}, b.corpus or {}
    for key in sorted(set(corpus_a) | set(corpus_b)):
        lines += scalar(f"corpus.{key}", corpus_a.get(key), corpus_b.get(key))
    for name in a.groups:
        if name not in b.groups:
            lines.append(f"group {name}: only in the first lock ({len(a.groups[name].papers)} papers)")
        else:
            lines += diff_group(a.groups[name], b.groups[name])
    lines += [f"group {name}: only in the second lock ({len(b.groups[name].papers)} papers)"
              for name in b.groups if name not in a.groups]
    return lines
