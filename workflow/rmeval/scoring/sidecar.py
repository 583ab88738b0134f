"""Reading a score file's metadata sidecar (`<table>.meta.json`, written by `rmeval score`) after the fact: what the
tables of a benchmark learn about the model that wrote a score file (its adapter: an LLM judge, a baseline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_sidecar(path: Path) -> dict[str, Any] | None:
    """A sidecar's record, or None when it is missing or unreadable (scores copied by hand carry none)."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def sidecar_of(score_file: Path) -> dict[str, Any] | None:
    """The sidecar beside one score file (`x.parquet` -> `x.meta.json`)."""
    score_file = Path(score_file)
    return read_sidecar(score_file.with_name(score_file.name.rsplit(".", 1)[0] + ".meta.json"))


def model_sidecar(folder: Path) -> dict[str, Any] | None:
    """The first readable sidecar of a model's score folder (`{scores}/{model}/`): one model wrote them all."""
    for path in sorted(Path(folder).glob("*.meta.json")):
        record = read_sidecar(path)
        if record is not None:
            return record
    return None
