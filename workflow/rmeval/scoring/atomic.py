"""Atomic file writes: write `path.tmp`, then `os.replace`, so a killed job never leaves a file
that looks complete."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def _temporary(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


def write_parquet_atomic(frame: pd.DataFrame, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _temporary(path)
    frame.to_parquet(temporary, index=False)
    os.replace(temporary, path)


def write_json_atomic(document: dict[str, Any] | list[Any], path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _temporary(path)
    temporary.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(temporary, path)


def write_text_atomic(text: str, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _temporary(path)
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
