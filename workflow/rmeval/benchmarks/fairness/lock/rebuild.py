"""`arxiv.source: lock`: rebuild exactly the locked group tables from the arXiv API (`id_list`) or a snapshot.

Every locked paper is fetched by id, run through the same text and category rules as a fresh sample, and
compared with the lock: its version, its row hash, and finally each table's sha256. Any paper that is missing
(withdrawn, or absent from the snapshot), has a new version, changed text or left its group fails the run,
named by id; nothing is written then.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.fairness.arxiv.categories import GroupSpec, Membership, load_table, resolve_group
from rmeval.benchmarks.fairness.arxiv.records import canonical_id, id_version, latest_version, normalize_text
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.benchmarks.fairness.lock.rows import row_sha
from rmeval.benchmarks.fairness.lock.section import ArxivLock, GroupLock, arxiv_lock
from rmeval.errors import RmevalError
from rmeval.lock.lockfile import Lock

SHOWN_PROBLEMS = 30


@dataclass(frozen=True)
class SourceRecord:
    """One paper as the source has it now."""

    version: str
    categories: Any  # str (snapshot) or list (API)
    title: Any
    abstract: Any


def _version_number(version: str) -> int:
    return int(version[1:]) if version[1:].isdigit() else -1


def records_from_snapshot(path: str, wanted: set[str]) -> tuple[dict[str, SourceRecord], dict[str, Any]]:
    """The wanted ids from one pass over a Kaggle/OAI snapshot; a repeated id keeps its latest version."""
    from rmeval.benchmarks.fairness.arxiv.snapshot import _HashingReader, _loads, open_lines, open_snapshot

    snapshot, gz = open_snapshot(path)
    found: dict[str, SourceRecord] = {}
    with open(snapshot, "rb", buffering=0) as raw:
        reader = _HashingReader(raw)  # type: ignore[arg-type]
        try:
            with open_lines(snapshot, gz, reader) as stream:
                for line in stream:
                    try:
                        record = _loads(line)
                    except ValueError:
                        continue
                    if type(record) is not dict or type(record.get("id")) is not str:
                        continue
                    paper_id = canonical_id(record["id"])
                    if paper_id not in wanted:
                        continue
                    version = latest_version(record.get("versions")) or id_version(record["id"])
                    old = found.get(paper_id)
                    if old is None or _version_number(version) >= _version_number(old.version):
                        found[paper_id] = SourceRecord(
                            version, record.get("categories"), record.get("title"), record.get("abstract")
                        )
            reader.drain()
        finally:
            sha256 = reader.hexdigest()
    return found, {"kind": "snapshot", "path": str(snapshot.resolve()), "sha256": sha256}


def records_from_api(versioned_ids: list[str], settings: ArxivSettings) -> tuple[dict[str, SourceRecord], dict[str, Any]]:
    from rmeval.benchmarks.fairness.lock.idlist import fetch_ids

    settings.api.validate()
    entries = fetch_ids(versioned_ids, settings.api)
    found = {
        paper_id: SourceRecord(id_version(str(entry["id"])), entry.get("categories"), entry.get("title"),
                               entry.get("abstract"))
        for paper_id, entry in entries.items()
    }
    return found, {"kind": "api", "base_url": settings.api.base_url}


def check_group(locked: GroupLock, spec: GroupSpec, found: dict[str, SourceRecord]) -> tuple[list[tuple], list[str]]:
    """(rows in lock order, problems by id)."""
    rows: list[tuple] = []
    problems: list[str] = []
    for paper in locked.papers:
        record = found.get(paper.id)
        where = f"{locked.name}: {paper.versioned_id}"
        if record is None:
            problems.append(f"{where}: missing from the source (withdrawn, or not in this snapshot)")
            continue
        if paper.version and record.version and record.version != paper.version:
            problems.append(f"{where}: the source has version {record.version}, the lock {paper.version}")
            continue
        membership, categories = spec.classify(record.categories)
        if membership is not Membership.INSIDE:
            problems.append(f"{where}: no longer in group {locked.name} alone (categories {record.categories!r})")
            continue
        title = normalize_text(record.title) if isinstance(record.title, str) else ""
        abstract = normalize_text(record.abstract) if isinstance(record.abstract, str) else ""
        row = (paper.id, title, abstract, " ".join(categories), locked.name)
        if row_sha(row) != paper.row_sha:
            problems.append(f"{where}: title, abstract or categories differ from the locked row (same version)")
            continue
        rows.append(row)
    return rows, problems


def check_config_groups(record: ArxivLock, groups: dict[str, list[str]], lock_path: str) -> None:
    if list(record.groups) != list(groups):
        raise RmevalError(
            f"{lock_path}: the lock has groups {list(record.groups)}, the config {list(groups)}; "
            "`arxiv.source: lock` rebuilds exactly the locked groups, so use the lock's `groups:`"
        )
    for name, categories in groups.items():
        if list(record.groups[name].categories) != list(categories):
            raise RmevalError(
                f"{lock_path}: group {name!r} is locked with categories {list(record.groups[name].categories)}, "
                f"the config has {list(categories)}"
            )


def rebuild(lock: Lock, lock_path: str, groups: dict[str, list[str]], settings: ArxivSettings,
            out_dir: Path) -> dict[str, dict[str, Any]]:
    """Write out_dir/{group}.parquet + .manifest.json for every locked group, or fail naming the papers."""
    import pandas as pd

    from rmeval.benchmarks.fairness.arxiv.select import DATA_COLUMNS, content_sha256
    from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
    from rmeval.io.hashing import sha256_file

    locked_groups = arxiv_lock(lock, lock_path)
    check_config_groups(locked_groups, groups, lock_path)
    table = load_table(settings.categories_table)
    wanted = [paper for group in locked_groups.groups.values() for paper in group.papers]
    if settings.snapshot:
        found, source = records_from_snapshot(settings.snapshot, {p.id for p in wanted})
    else:
        found, source = records_from_api([p.versioned_id for p in wanted], settings)
    frames: dict[str, Any] = {}
    problems: list[str] = []
    for name, locked in locked_groups.groups.items():
        rows, wrong = check_group(locked, resolve_group(name, groups[name], table), found)
        problems += wrong
        frame = pd.DataFrame(rows, columns=DATA_COLUMNS).astype("string")  # as arxiv-select writes them
        if not wrong and content_sha256(frame) != locked.table_sha256:
            problems.append(f"{name}: table sha256 {content_sha256(frame)} differs from the locked "
                            f"{locked.table_sha256} although every row matches (row order?)")
        frames[name] = frame
    if problems:
        shown = "\n  ".join(problems[:SHOWN_PROBLEMS])
        more = f"\n  ... and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
        raise RmevalError(
            f"{lock_path}: {len(problems)} locked paper(s) cannot be rebuilt from {source['kind']} "
            f"{source.get('path') or source.get('base_url')}:\n  {shown}{more}"
        )
    lock_sha = sha256_file(lock_path)
    manifests = {}
    for name, frame in frames.items():
        out = Path(out_dir) / f"{name}.parquet"
        write_parquet_atomic(frame, out)
        locked = locked_groups.groups[name]
        manifest = {
            "group": name,
            "categories": list(groups[name]),
            "source": {"kind": "lock", "lock": str(lock_path), "lock_sha256": lock_sha, "via": source["kind"],
                       **{k: v for k, v in source.items() if k != "kind"}},
            "seed": locked_groups.arxiv.get("seed"),
            "papers_per_group": locked_groups.arxiv.get("papers_per_group"),
            "locked_sources": locked_groups.arxiv.get("sources"),
            "counts": {"locked": len(locked.papers), "sampled": len(frame)},
            "categories_table": {"path": table.path, "sha256": table.sha256},
            "output": {"path": str(out), "rows": len(frame), "sha256": sha256_file(out),
                       "content_sha256": content_sha256(frame), "columns": DATA_COLUMNS},
            "versions": {p.id: p.version for p in locked.papers},
            "rmeval_version": _version(),
        }
        write_json_atomic(manifest, Path(out_dir) / f"{name}.manifest.json", sort_keys=False, ensure_ascii=False)
        manifests[name] = manifest
        print(f"lock rebuild {name}: {len(frame)} papers, table sha256 {locked.table_sha256[:16]} matches",
              file=sys.stderr)
    return manifests


def _version() -> str:
    from rmeval import __version__

    return __version__
