"""Per-row hashes of a group table, over the same lines `rmeval.benchmarks.fairness.arxiv.select.content_sha256`
hashes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rmeval.benchmarks.fairness.lock.section import ROW_HASH_DIGITS
from rmeval.io.hashing import sha256_text


def row_line(values: Iterable[Any]) -> str:
    return "\t".join(str(value) for value in values) + "\n"


def row_sha(values: Iterable[Any]) -> str:
    return sha256_text(row_line(values))[:ROW_HASH_DIGITS]


def frame_rows(frame: Any) -> list[tuple[Any, ...]]:
    from rmeval.benchmarks.fairness.arxiv.select import DATA_COLUMNS

    return list(frame[DATA_COLUMNS].itertuples(index=False, name=None))
