"""Reading a corpus: a local .jsonl / .json / .csv / .parquet file (plain or .gz), or a Hugging Face dataset
(`datasets.load_dataset(name, config, split=..., revision=...)`). Every value becomes a Python object per row;
what the rows must hold is checked in `prepare`. Errors name the file (or dataset), the line or the column."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


@dataclass(frozen=True)
class Loaded:
    """The corpus rows (a DataFrame of objects), where they came from (the manifest's `source`) and what the
    errors call it (the file, or `hf:<name>[<split>]`)."""

    frame: Any
    source: dict[str, Any]
    where: str


def _format(path: Path) -> tuple[str, bool]:
    name = path.name.lower()
    gz = name.endswith(".gz")
    stem = name[:-3] if gz else name
    for suffix in SUFFIXES:
        if stem.endswith(suffix):
            return suffix[1:], gz
    raise RmevalError(f"corpus.path: {path} is not one of {', '.join(SUFFIXES)} (plain or .gz)")


def _text(path: Path, gz: bool) -> str:
    raw = path.read_bytes()
    try:
        return (gzip.decompress(raw) if gz else raw).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError) as error:
        raise RmevalError(f"{path}: cannot read as {'gzip-compressed ' if gz else ''}UTF-8 text ({error})") from error


def _records_jsonl(text: str, path: Path) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            raise RmevalError(f"{path} line {number}: not JSON ({error})") from error
        if not isinstance(record, dict):
            raise RmevalError(f"{path} line {number}: expected a JSON object, got {type(record).__name__}")
        records.append(record)
    return records


def _records_json(text: str, path: Path) -> list[dict[str, Any]]:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise RmevalError(f"{path}: not JSON ({error})") from error
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        document = document["data"]  # the {"data": [...]} layout datasets' json loader also reads
    if not isinstance(document, list):
        raise RmevalError(f"{path}: expected a JSON array of objects (or {{\"data\": [...]}})")
    for index, record in enumerate(document):
        if not isinstance(record, dict):
            raise RmevalError(f"{path} row {index + 1}: expected a JSON object, got {type(record).__name__}")
    return document


def _records_csv(text: str, path: Path) -> list[dict[str, Any]]:
    """Every line must have the header's number of fields: pandas would pad a short line with NaN silently."""
    import csv

    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise RmevalError(f"{path}: empty CSV (no header line)") from None
    records = []
    for row in reader:
        if not row:
            continue
        if len(row) != len(header):
            raise RmevalError(f"{path} line {reader.line_num}: {len(row)} fields, but the header has {len(header)} "
                              f"({', '.join(header)}); a ragged row (an unquoted comma or a missing field?)")
        records.append(dict(zip(header, row, strict=True)))
    return records


def file_source(path: Path) -> dict[str, Any]:
    from rmeval.io.hashing import sha256_file

    return {"kind": "corpus", "type": "table", "path": str(path), "sha256": sha256_file(path),
            "bytes": path.stat().st_size}


def read_file(path: Path) -> Loaded:
    import pandas as pd

    if not path.is_file():
        raise RmevalError(f"corpus.path: {path} does not exist")
    kind, gz = _format(path)
    if kind == "parquet":
        try:
            frame = pd.read_parquet(io.BytesIO(gzip.decompress(path.read_bytes())) if gz else path)
        except Exception as error:  # pyarrow raises several types for a damaged file
            raise RmevalError(f"{path}: not a readable parquet file ({error})") from error
        frame = frame.astype(object)
    else:
        text = _text(path, gz)
        records = {"jsonl": _records_jsonl, "json": _records_json, "csv": _records_csv}[kind](text, path)
        frame = pd.DataFrame.from_records(records).astype(object) if records else pd.DataFrame()
    return Loaded(frame.reset_index(drop=True), file_source(path), str(path))


def read_hf(hf: Mapping[str, Any]) -> Loaded:
    """A Hugging Face dataset through `datasets.load_dataset` (a Hub id, or a local folder for tests). A missing
    dataset, config or split is one error naming it."""
    import datasets

    name, split, revision, subset = hf["name"], hf["split"], hf.get("revision"), hf.get("config")
    where = f"hf:{name}[{split}]"
    try:
        dataset = datasets.load_dataset(name, subset, split=split, revision=revision)
    except Exception as error:  # DatasetNotFoundError, ValueError (unknown split), FileNotFoundError, ...
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise RmevalError(f"corpus.hf: cannot load dataset {name!r} (config {subset!r}, split {split!r}, revision "
                          f"{revision!r}): {type(error).__name__}: {message}") from error
    frame = dataset.to_pandas().astype(object)
    source = {"kind": "corpus", "type": "hf", "name": name, "config": subset, "split": split,
              "revision": revision, "fingerprint": getattr(dataset, "_fingerprint", None),
              "rows": len(frame)}
    return Loaded(frame.reset_index(drop=True), source, where)


def load(corpus: Mapping[str, Any]) -> Loaded:
    if corpus["source"] == "hf":
        return read_hf(corpus["hf"])
    return read_file(Path(corpus["path"]))
