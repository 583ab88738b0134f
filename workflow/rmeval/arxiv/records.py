"""Paper records and the text rules shared by both sources: normalisation, version-free ids, hash keys."""

from __future__ import annotations

import re
from dataclasses import dataclass
from hashlib import blake2b

_ID = re.compile(r"^\s*(?:https?://(?:export\.)?arxiv\.org/abs/)?(.*?)(?:v\d+)?\s*$")


def normalize_text(text: str) -> str:
    """Collapse every whitespace run to one space and strip; TeX ($x^2$, \\emph{...}) is kept as is."""
    return " ".join(text.split())


def canonical_id(raw: str) -> str:
    """arXiv id without URL prefix and version: 'http://arxiv.org/abs/2104.12255v1' -> '2104.12255'."""
    match = _ID.match(raw)
    return match.group(1) if match else raw.strip()


_VERSION = re.compile(r"v(\d+)\s*$")


def version_number(raw_id: object = None, versions: object = None) -> int:
    """The latest version a record describes: the highest `vN` in a Kaggle record's `versions` list or at the
    end of an API id ('2104.12255v3' -> 3); 0 when neither says."""
    best = 0
    if isinstance(versions, list):
        for entry in versions:
            label = entry.get("version") if isinstance(entry, dict) else None
            match = _VERSION.match(label) if isinstance(label, str) else None
            if match:
                best = max(best, int(match.group(1)))
    if isinstance(raw_id, str):
        match = _VERSION.search(raw_id)
        if match:
            best = max(best, int(match.group(1)))
    return best


def _hash64(text: str, salt: bytes = b"") -> int:
    return int.from_bytes(blake2b(text.encode("utf-8"), digest_size=8, salt=salt).digest(), "little")


def sample_key(paper_id: str, seed: int) -> int:
    """Seeded 64-bit key; a group's sample is the papers with the smallest keys.

    Depends only on (seed, id), so the sample does not depend on file order, and the sample for N papers
    is contained in the sample for N+1.
    """
    return _hash64(f"{seed}\x1f{paper_id}", salt=b"rmeval-sample")


def title_hash(title: str) -> int:
    """Key of the cross-group title filter: case and whitespace do not make two titles different."""
    return normalized_title_hash(normalize_text(title))


def normalized_title_hash(normalized_title: str) -> int:
    return _hash64(normalized_title.casefold(), salt=b"rmeval-title")


@dataclass(frozen=True)
class Paper:
    """One eligible paper, already normalised; `origin` names where it came from (file:line or API page)."""

    id: str
    title: str
    abstract: str
    categories: tuple[str, ...]  # canonical, sorted
    origin: str
