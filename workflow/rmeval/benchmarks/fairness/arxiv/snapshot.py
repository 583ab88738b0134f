"""One streaming pass over a Kaggle/OAI `arxiv-metadata-oai-snapshot` JSON-lines file (plain or gzip).

Memory is bounded by the sample: lines are decoded one at a time and only eligible papers reach the
bounded sampler. The sha256 of the file as stored on disk is computed during the same pass.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import queue
import sys
import threading
import zlib
from collections.abc import Callable
from datetime import date, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from rmeval.benchmarks.fairness.arxiv.categories import Membership
from rmeval.benchmarks.fairness.arxiv.collect import GroupCollector
from rmeval.errors import RmevalError

try:  # orjson decodes about 3x faster than the standard library; the result is the same
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - exercised only where orjson is missing
    import json

    _loads = json.loads

_GZIP_MAGIC = b"\x1f\x8b"
_BUFFER = 1 << 20


class _HashingReader(io.RawIOBase):
    """Raw reader that feeds every byte it returns into a sha256 digest.

    The digest runs in a helper thread (hashlib releases the GIL on large buffers), so hashing the file
    overlaps with JSON decoding instead of adding to it. At most 8 chunks wait in the queue.
    """

    def __init__(self, handle: io.BufferedIOBase) -> None:
        self._handle = handle
        self._digest = hashlib.sha256()
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=8)
        self._worker = threading.Thread(target=self._hash_chunks, daemon=True)
        self._worker.start()
        self._finished = False
        self.bytes_read = 0

    def _hash_chunks(self) -> None:
        while (chunk := self._queue.get()) is not None:
            self._digest.update(chunk)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._handle.readinto(buffer)
        if n:
            self._queue.put(bytes(memoryview(buffer)[:n]))
            self.bytes_read += n
        return n or 0

    def drain(self) -> None:
        while self.read(_BUFFER):
            pass

    def _finish(self) -> None:
        if not self._finished:
            self._finished = True
            self._queue.put(None)
            self._worker.join()

    def hexdigest(self) -> str:
        self._finish()
        return self._digest.hexdigest()

    def close(self) -> None:
        self._finish()
        super().close()


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == _GZIP_MAGIC


def open_snapshot(path: str | Path) -> tuple[Path, bool]:
    path = Path(path)
    if not path.is_file():
        raise RmevalError(f"snapshot file not found: {path} (arxiv.snapshot)")
    gz = is_gzip(path)
    if path.suffix == ".gz" and not gz:
        raise RmevalError(f"{path}: has a .gz name but is not gzip-compressed (bad .gz file)")
    return path, gz


def kaggle_date(record: dict[str, Any]) -> date | None:
    """Submission date: first version's 'created' (RFC 2822), else 'update_date' (YYYY-MM-DD)."""
    versions = record.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        created = versions[0].get("created")
        if isinstance(created, str):
            try:
                return parsedate_to_datetime(created).date()
            except (TypeError, ValueError):
                pass
    updated = record.get("update_date")
    if isinstance(updated, str):
        try:
            return datetime.strptime(updated[:10], "%Y-%m-%d").date()
        except ValueError:
            return None
    return None


def open_lines(path: Path, gz: bool, reader: _HashingReader) -> io.BufferedIOBase:
    """Binary line stream over the raw (hashing) reader, decompressing when the file is gzip."""
    if gz:
        return gzip.GzipFile(fileobj=io.BufferedReader(reader, _BUFFER), mode="rb")  # type: ignore[return-value]
    return io.BufferedReader(reader, _BUFFER)


def stream_snapshot(path: str | Path, collector: GroupCollector) -> dict[str, Any]:
    """Feed every line to `collector`; returns the source description (path, size, sha256)."""
    path, gz = open_snapshot(path)
    window_active = collector.window.active
    offer = collector.offer
    classify = collector.spec.classify
    counts = collector.counts
    outside = Membership.OUTSIDE
    line_number = 0
    records = 0
    malformed = 0
    outside_group = 0
    first_error = ""
    name = str(path)  # every warning names the file as the user gave it (as the summary lines below do)
    cache = collector.spec._cache  # classify()'s cache, read inline: this loop runs once per line
    with open(path, "rb", buffering=0) as raw:
        reader = _HashingReader(raw)  # type: ignore[arg-type]
        try:
            with open_lines(path, gz, reader) as stream:
                for line in stream:
                    line_number += 1
                    try:
                        record = _loads(line)
                    except ValueError as error:
                        if not line.strip():
                            counts["blank_lines"] += 1
                            continue
                        record = error
                    records += 1
                    if type(record) is not dict:
                        malformed += 1
                        reason = (
                            f"not JSON ({record})" if isinstance(record, ValueError) else "not a JSON object"
                        )
                        first_error = first_error or f"line {line_number}: {reason}"
                        collector.problems.add("malformed", f"{path} line {line_number}: {reason}; skipped")
                        continue
                    raw_id = record.get("id")
                    raw_categories = record.get("categories")
                    # Fast path for most lines: a well-formed paper outside the group is only counted.
                    if type(raw_id) is str and type(raw_categories) is str and raw_id.strip():
                        hit = cache.get(raw_categories) or classify(raw_categories)
                        if hit[0] is outside:
                            outside_group += 1
                            continue
                    offer(
                        raw_id,
                        raw_categories,
                        record.get("title"),
                        record.get("abstract"),
                        (name, line_number),
                        kaggle_date(record) if window_active else None,
                        record.get("versions"),
                    )
                reader.drain()  # bytes after the gzip end-of-stream still belong to the file's sha256
        except (gzip.BadGzipFile, EOFError, zlib.error) as error:
            raise RmevalError(
                f"{path}: bad .gz file, cannot decompress after line {line_number}: {error}"
            ) from error
        finally:
            sha256 = reader.hexdigest()
    counts["outside_group"] += outside_group
    counts["records_read"] = records
    counts["malformed"] += malformed
    if records == 0:
        raise RmevalError(f"{path}: snapshot has no records (empty file)")
    if counts["malformed"] == records:
        first = first_error or (collector.problems.examples.get("malformed") or ["?"])[0]
        raise RmevalError(f"{path}: every one of its {records} lines is malformed (first: {first})")
    if counts["no_categories"] == records - counts["malformed"]:
        # Not "too few papers": the file lacks the field every group is chosen by (config/README.md, Snapshot format).
        raise RmevalError(
            f"{path}: none of its {counts['no_categories']} records has a `categories` field (a space-separated "
            f'string of arXiv categories such as "math.CO cs.DM"); see config/README.md, "Snapshot format"'
        )
    if counts["malformed"]:
        print(
            f"warning: {path}: {counts['malformed']} of {records} lines are malformed and were skipped",
            file=sys.stderr,
        )
    collector.report_unknown(path)
    stat = path.stat()
    return {
        "kind": "snapshot",
        "path": str(path.resolve()),
        "bytes": stat.st_size,
        "sha256": sha256,
        "gzip": gz,
        "modified": datetime.fromtimestamp(stat.st_mtime).astimezone().isoformat(timespec="seconds"),
    }
