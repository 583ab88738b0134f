"""The arXiv category table (resources/arxiv_categories.tsv): canonical names, archives and group resolution.

Every filter works on canonical categories: aliases (cs.SY -> eess.SY, ...) and subsumed archives
(acc-phys -> physics.acc-ph, ...) are mapped first, so a paper listed as "eess.SY cs.SY" is one category,
not two, and is kept by a single-group filter.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rmeval.errors import RmevalError

REPO_ROOT = Path(__file__).resolve().parents[5]  # workflow/rmeval/benchmarks/fairness/arxiv/ -> repo
DEFAULT_TABLE = REPO_ROOT / "resources" / "arxiv_categories.tsv"
_COLUMNS = ["name", "archive", "archive_group", "canonical", "kind"]
_KINDS = {"archive", "category", "alias", "subsumed"}


@dataclass(frozen=True)
class CategoryTable:
    """Lookup tables built from the TSV; `canonical_of` holds every known name, canonical ones included."""

    canonical_of: dict[str, str]
    archive_of: dict[str, str]  # canonical name -> its archive
    archive_group_of: dict[str, str]  # archive -> arXiv's top-level group (physics, math, cs, ...)
    names_by_canonical: dict[str, tuple[str, ...]]  # canonical -> every name that maps to it (itself first)
    path: str
    sha256: str

    @property
    def archives(self) -> set[str]:
        return set(self.archive_group_of)

    def canonicalize(self, name: str) -> str | None:
        """Canonical name of one category; None when neither it nor its archive is known."""
        known = self.canonical_of.get(name)
        if known is not None:
            return known
        # A category arXiv added after this table was written still belongs to its (known) archive.
        archive = name.split(".", 1)[0]
        return name if "." in name and archive in self.archive_group_of else None

    def archive(self, canonical: str) -> str:
        return self.archive_of.get(canonical, canonical.split(".", 1)[0])

    def categories_in_archive(self, archive: str) -> list[str]:
        return sorted(c for c, a in self.archive_of.items() if a == archive)


def load_table(path: str | Path | None = None) -> CategoryTable:
    table_path = Path(path) if path else DEFAULT_TABLE
    if not table_path.is_file():
        raise RmevalError(f"arXiv category table not found: {table_path} (arxiv.categories_table)")
    raw = table_path.read_bytes()
    rows: list[list[str]] = []
    header: list[str] | None = None
    for number, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            if cells != _COLUMNS:
                raise RmevalError(f"{table_path} line {number}: header must be {'<TAB>'.join(_COLUMNS)}")
            header = cells
            continue
        if len(cells) != len(_COLUMNS) or cells[4] not in _KINDS or not all(cells):
            raise RmevalError(
                f"{table_path} line {number}: expected 5 non-empty columns with kind in {sorted(_KINDS)}"
            )
        rows.append(cells)
    canonical_of: dict[str, str] = {}
    archive_of: dict[str, str] = {}
    archive_group_of: dict[str, str] = {}
    for name, archive, archive_group, canonical, kind in rows:
        if name in canonical_of:
            raise RmevalError(f"{table_path}: {name!r} is listed twice")
        canonical_of[name] = canonical
        if kind in {"archive", "category"}:
            if canonical != name:
                raise RmevalError(f"{table_path}: {kind} {name!r} must be its own canonical name")
            archive_of[name] = archive
            archive_group_of[archive] = archive_group
    for name, canonical in canonical_of.items():
        if canonical not in archive_of:
            raise RmevalError(
                f"{table_path}: {name!r} maps to {canonical!r}, which is not a category in the table"
            )
    names: dict[str, list[str]] = {c: [c] for c in archive_of}
    for name, canonical in canonical_of.items():
        if name != canonical:
            names[canonical].append(name)
    return CategoryTable(
        canonical_of=canonical_of,
        archive_of=archive_of,
        archive_group_of=archive_group_of,
        names_by_canonical={c: tuple(n) for c, n in names.items()},
        path=str(table_path),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


class Membership:
    """Where a paper stands with respect to one group; plain strings (the count names) for speed."""

    NO_CATEGORIES = "no_categories"
    UNKNOWN_CATEGORY = "unknown_category"
    OUTSIDE = "outside_group"  # none of its categories is in the group
    MIXED = "mixed_groups"  # some categories in the group, some outside it
    INSIDE = "single_group"  # all canonical categories in the group


@dataclass
class GroupSpec:
    """One configured group resolved against the table: explicit canonical categories plus whole archives."""

    name: str
    entries: tuple[str, ...]
    categories: frozenset[str]
    archives: frozenset[str]
    table: CategoryTable = field(repr=False)
    _cache: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict, repr=False)

    def contains(self, canonical: str) -> bool:
        return canonical in self.categories or self.table.archive(canonical) in self.archives

    def classify(self, raw: str | Sequence[str] | None) -> tuple[str, tuple[str, ...]]:
        """Membership of a paper from its raw category field (space-separated string or list).

        Returns the canonical categories too (sorted, de-duplicated). Results are cached per distinct raw
        string: there are far fewer distinct category lists than papers.
        """
        if raw is None:
            return Membership.NO_CATEGORIES, ()
        key = raw if isinstance(raw, str) else " ".join(str(x) for x in raw)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        names = key.split()
        result: tuple[str, tuple[str, ...]]
        if not names:
            result = (Membership.NO_CATEGORIES, ())
        else:
            canon = [self.table.canonicalize(n) for n in names]
            if any(c is None for c in canon):
                result = (Membership.UNKNOWN_CATEGORY, tuple(names))
            else:
                unique = tuple(sorted(set(c for c in canon if c is not None)))
                inside = [self.contains(c) for c in unique]
                if all(inside):
                    result = (Membership.INSIDE, unique)
                elif any(inside):
                    result = (Membership.MIXED, unique)
                else:
                    result = (Membership.OUTSIDE, unique)
        if len(self._cache) < 1 << 18:  # bounded: pathological inputs must not grow memory with the file
            self._cache[key] = result
        return result

    def query_terms(self) -> list[str]:
        """Every category name (aliases and subsumed archives included) whose papers may belong here."""
        canonical: set[str] = set(self.categories)
        for archive in self.archives:
            canonical.update(self.table.categories_in_archive(archive))
        terms: list[str] = []
        for c in sorted(canonical):
            terms.extend(self.table.names_by_canonical.get(c, (c,)))
        return terms

    def canonical_list(self) -> list[str]:
        return sorted(self.categories) + sorted(f"{a} (archive)" for a in self.archives)


def resolve_group(name: str, entries: Iterable[str], table: CategoryTable) -> GroupSpec:
    """Turn a config entry `groups.NAME: [eess.SY, math, ...]` into a GroupSpec; errors name the key."""
    entries = tuple(entries)
    if not entries:
        raise RmevalError(f"groups.{name}: empty list; give arXiv categories (eess.SY) or archives (math)")
    categories: set[str] = set()
    archives: set[str] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, str) or not entry.strip():
            raise RmevalError(f"groups.{name}[{index}]: {entry!r} is not a category name")
        entry = entry.strip()
        canonical = table.canonical_of.get(entry)
        if entry in table.archive_group_of and (canonical is None or canonical == entry):
            archives.add(entry)
        elif canonical is not None:
            categories.add(canonical)
        else:
            raise RmevalError(
                f"groups.{name}[{index}]: unknown arXiv category or archive {entry!r} (see {table.path})"
            )
    return GroupSpec(
        name=name,
        entries=entries,
        categories=frozenset(categories),
        archives=frozenset(archives),
        table=table,
    )


def check_disjoint(specs: Mapping[str, GroupSpec]) -> None:
    """Groups must not share a canonical category, otherwise the single-group rule is ambiguous."""
    table_categories: dict[str, list[str]] = {}
    for spec in specs.values():
        every = set(spec.categories)
        for archive in spec.archives:
            every.update(spec.table.categories_in_archive(archive))
        for c in every:
            table_categories.setdefault(c, []).append(spec.name)
    clashes = {c: g for c, g in table_categories.items() if len(g) > 1}
    if clashes:
        shown = ", ".join(f"{c} in {' and '.join(g)}" for c, g in sorted(clashes.items())[:5])
        raise RmevalError(f"groups: a category may belong to one group only ({shown})")
