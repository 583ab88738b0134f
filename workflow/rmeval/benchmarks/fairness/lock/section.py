"""The fairness sections of the lock: `arxiv` (seed, sample size, sources) and `groups` (categories, rows, table
hash, papers); dataclasses and a reader whose errors name the key.

A paper is one string `<id><version> <row hash>`: `2104.12255v2 5d41402abc4b`. The row hash is the first 12 hex
digits of the sha256 of the paper's row in the group table (the line `content_sha256` hashes), so a rebuild can
name the papers whose text changed even when their version did not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmeval.errors import RmevalError
from rmeval.lock.section import require

BENCHMARK = "fairness"  # the catalogue's name: its record in rmeval.lock.lockfile.Lock.sections
ROW_HASH_DIGITS = 12
_PAPER = re.compile(r"^(?P<id>\S+?)(?P<version>v\d+)? (?P<row>[0-9a-f]{" + str(ROW_HASH_DIGITS) + r"})$")


@dataclass(frozen=True)
class LockedPaper:
    id: str  # without version
    version: str  # 'v2'; '' when the source recorded none
    row_sha: str  # first ROW_HASH_DIGITS hex digits of the row's sha256

    @property
    def versioned_id(self) -> str:
        return f"{self.id}{self.version}"

    def entry(self) -> str:
        return f"{self.versioned_id} {self.row_sha}"

    @classmethod
    def parse(cls, text: object, where: str, versioned: bool = True) -> LockedPaper:
        if not versioned:  # a corpus row: `<id> <row hash>`, the id taken whole (it may end in v<digits>)
            parts = text.rsplit(" ", 1) if isinstance(text, str) else []
            if len(parts) != 2 or not re.fullmatch(r"[0-9a-f]{" + str(ROW_HASH_DIGITS) + "}", parts[1]):
                raise RmevalError(f"{where}: expected '<id> <{ROW_HASH_DIGITS} hex digits>', got {text!r}")
            return cls(parts[0], "", parts[1])
        match = _PAPER.match(text) if isinstance(text, str) else None
        if match is None:
            raise RmevalError(f"{where}: expected '<arXiv id><version> <{ROW_HASH_DIGITS} hex digits>', got {text!r}")
        return cls(match["id"], match["version"] or "", match["row"])


@dataclass(frozen=True)
class GroupLock:
    name: str
    categories: tuple[str, ...]
    table_sha256: str  # content_sha256 of the group table (rmeval.benchmarks.fairness.arxiv.select), independent of the parquet writer
    papers: tuple[LockedPaper, ...]  # in table order

    def to_dict(self) -> dict[str, Any]:
        return {
            "categories": list(self.categories),
            "rows": len(self.papers),
            "table_sha256": self.table_sha256,
            "papers": [paper.entry() for paper in self.papers],
        }


@dataclass(frozen=True)
class ArxivLock:
    """The record of the fairness provider: where the papers came from, and each group's papers (config order).
    A grouped corpus run (`corpus:`) writes `corpus` (the file's sha256, or the HF dataset and revision) instead of
    `arxiv`; its groups' `categories` are the raw labels and its rows `<id> <row hash>`."""

    arxiv: dict[str, Any]
    groups: dict[str, GroupLock]
    corpus: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        head = {"corpus": self.corpus} if self.corpus is not None else {"arxiv": self.arxiv}
        return {**head, "groups": {name: group.to_dict() for name, group in self.groups.items()}}


def parse_section(document: Mapping[str, Any], where: str) -> ArxivLock:
    corpus = document.get("corpus")
    groups: dict[str, GroupLock] = {}
    for name, raw in (require(document, "groups", dict, where)).items():
        at = f"{where}: groups.{name}"
        papers = tuple(
            LockedPaper.parse(text, f"{at}.papers[{index}]", versioned=corpus is None)
            for index, text in enumerate(require(raw, "papers", list, at))
        )
        rows = require(raw, "rows", int, at)
        if rows != len(papers):
            raise RmevalError(f"{at}: rows is {rows} but papers lists {len(papers)}")
        groups[str(name)] = GroupLock(
            str(name),
            tuple(str(c) for c in require(raw, "categories", list, at)),
            require(raw, "table_sha256", str, at),
            papers,
        )
    return ArxivLock(arxiv=dict(document.get("arxiv") or {}), groups=groups,
                     corpus=dict(corpus) if isinstance(corpus, Mapping) else None)


def arxiv_lock(lock: Any, where: str) -> ArxivLock:
    """The fairness record of a lock (rmeval.lock.lockfile.Lock), or an error naming the file."""
    record = lock.section(BENCHMARK)
    if record is not None and record.corpus is not None:
        raise RmevalError(f"{where}: the lock's groups come from a grouped corpus (`corpus`), not arXiv; rerun "
                          "with the same `corpus:` (its sha256 and row hashes are checked by `rmeval lock diff`)")
    if record is None:
        raise RmevalError(f"{where}: the lock has no `groups` (no arXiv papers were locked), so there is nothing to "
                          "rebuild with `arxiv.source: lock`")
    return record
