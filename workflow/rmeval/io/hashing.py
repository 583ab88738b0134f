"""Content hashes: every sha256 of a file or a text in rmeval comes from here."""

from __future__ import annotations

import hashlib
from pathlib import Path

CHUNK_BYTES = 1 << 20  # large files are hashed a chunk at a time, never read whole


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of the file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(CHUNK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    """Hex sha256 of the text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
