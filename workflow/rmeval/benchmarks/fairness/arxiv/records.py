"""Paper records and the text rules shared by both sources: normalisation, version-free ids, hash keys."""

from __future__ import annotations

import re
from dataclasses import dataclass
from hashlib import blake2b

_ID = re.compile(r"^\s*(?:https?://(?:export\.)?arxiv\.org/abs/)?(.*?)(?:v\d+)?\s*$")
_VERSION = re.compile(r"\d(v\d+)\s*$")


def normalize_text(text: str) -> str:
    """Collapse every whitespace run to one space and strip; TeX ($x^2$, \\emph{...}) is kept as is."""
    return " ".join(text.split())


def canonical_id(raw: str) -> str:
    """arXiv id without URL prefix and version: 'http://arxiv.org/abs/2104.12255v1' -> '2104.12255'."""
    match = _ID.match(raw)
    return match.group(1) if match else raw.strip()


def id_version(raw: str) -> str:
    """The version suffix of an arXiv id: '2104.12255v2' -> 'v2'; '' when the id carries none."""
    match = _VERSION.search(raw)
    return match.group(1) if match else ""


def latest_version(versions: object) -> str:
    """The last entry of a Kaggle/OAI record's `versions` list ({'version': 'v2', ...}); '' when absent.

    The snapshot's title and abstract are those of this version."""
    if isinstance(versions, list) and versions and isinstance(versions[-1], dict):
        value = versions[-1].get("version")
        if isinstance(value, str):
            return value.strip()
    return ""


_VERSION_NUMBER = re.compile(r"v(\d+)\s*$")


def version_number(raw_id: object = None, versions: object = None) -> int:
    """The latest version a record describes: the highest `vN` in a Kaggle record's `versions` list or at the
    end of an API id ('2104.12255v3' -> 3); 0 when neither says."""
    best = 0
    if isinstance(versions, list):
        for entry in versions:
            label = entry.get("version") if isinstance(entry, dict) else None
            match = _VERSION_NUMBER.match(label) if isinstance(label, str) else None
            if match:
                best = max(best, int(match.group(1)))
    if isinstance(raw_id, str):
        match = _VERSION_NUMBER.search(raw_id)
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
    version: str = ""  # 'v2': the version whose title and abstract these are ('' when the source has none)
