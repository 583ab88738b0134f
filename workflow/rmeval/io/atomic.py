"""Atomic file writes: a file is written beside its target (`name.tmp`) and moved onto it with `os.replace`,
so a killed or failing job never leaves a file that looks complete under its final name.

`replacing` owns the temporary file and the move; the `write_*_atomic` helpers are what most callers need.
Every write in rmeval that must not be seen half-done goes through `replacing`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


def temporary_path(path: Path, unique: bool = False) -> Path:
    """`path.tmp` beside `path`; with `unique`, also the process and thread id, for a target that several
    threads or processes may write at the same time (each then moves its own whole copy)."""
    suffix = f".{os.getpid()}.{threading.get_ident()}.tmp" if unique else ".tmp"
    return path.with_name(path.name + suffix)


@contextmanager
def replacing(path: str | Path, unique: bool = False) -> Iterator[Path]:
    """Yield the temporary path to write; when the block succeeds, move it onto `path` (parents are created).
    When the block fails, the temporary file is removed and `path` is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_path(path, unique)
    try:
        yield temporary
    except BaseException:
        temporary.unlink(missing_ok=True)  # a half-written temporary file is never picked up later
        raise
    os.replace(temporary, path)


def write_text_atomic(text: str, path: str | Path, unique: bool = False) -> None:
    with replacing(path, unique) as temporary:
        temporary.write_text(text, encoding="utf-8")


def write_json_atomic(document: Any, path: str | Path, *, sort_keys: bool = True, ensure_ascii: bool = True) -> None:
    """`document` as indented JSON with a final newline; values JSON cannot hold (paths, dates) as `str`.
    Records whose key order is part of their layout (manifests, run records) pass `sort_keys=False`."""
    text = json.dumps(document, indent=2, sort_keys=sort_keys, ensure_ascii=ensure_ascii, default=str)
    write_text_atomic(text + "\n", path)


def write_parquet_atomic(table: pd.DataFrame | pa.Table, path: str | Path) -> None:
    """A DataFrame (without its index) or a pyarrow Table (its schema kept, so an empty table keeps its columns)."""
    with replacing(path) as temporary:
        if hasattr(table, "to_parquet"):
            table.to_parquet(temporary, index=False)
        else:
            import pyarrow.parquet as pq

            pq.write_table(table, temporary)
