"""What the arXiv data stage needs from this machine (rmeval.preflight `Needs`): the snapshot file and a sane first
record for `source: snapshot`, the API host for `source: api`."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rmeval.preflight import OFFLINE_DOCS, Check, FileNeed, Needs, Problem, UrlNeed

FETCH_RULES = frozenset({"arxiv_fetch"})
# The snapshot fields the arXiv stage reads (rmeval.benchmarks.fairness.arxiv.snapshot); `versions` or
# `update_date` give the date.
SNAPSHOT_FIELDS = ("id", "title", "abstract", "categories")
SNAPSHOT_FORMAT = "config/README.md (\"Snapshot format\")"


def snapshot_first_record_problem(path: str, needs_date: bool = False) -> str | None:
    """What is wrong with the snapshot's first record, if anything (reads one line); a date field is needed
    only with a date window."""
    try:
        with open(path, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
        opener = gzip.open if gz else open
        with opener(path, "rb") as handle:  # type: ignore[operator]
            for line in handle:
                if line.strip():
                    break
            else:
                return "is empty"
    except (OSError, EOFError) as error:
        return f"cannot be read ({type(error).__name__}: {error})"
    try:
        record = json.loads(line)
    except ValueError:
        return "does not hold JSON lines (its first line is not JSON)"
    if not isinstance(record, dict):
        return "does not hold JSON objects, one per line"
    missing = [name for name in SNAPSHOT_FIELDS if name not in record]
    if needs_date and "versions" not in record and "update_date" not in record:
        missing.append("versions or update_date")
    if missing:
        return f"its first record has no {', '.join(f'`{name}`' for name in missing)} field"
    if not isinstance(record["categories"], (str, list)):
        return (f"its first record's `categories` is {type(record['categories']).__name__}, not a space-separated "
                f"string such as \"math.CO cs.DM\"")
    return None


def _snapshot_check(snapshot: str, window: bool) -> Problem | None:
    if not Path(snapshot).is_file():
        return None  # a missing file is a FileNeed
    reason = snapshot_first_record_problem(snapshot, window)
    if reason is None:
        return None
    return Problem("arxiv.snapshot", f"{snapshot} {reason}",
                   f"the fields the code reads are listed in {SNAPSHOT_FORMAT}", FETCH_RULES)


def arxiv_needs(arxiv: Mapping[str, Any], snapshot: str | None) -> Needs:
    """`arxiv`: the config's section (defaults filled); `snapshot`: the located snapshot the fetch reads."""
    source = arxiv["source"]
    if source == "snapshot" and snapshot:
        given = str(arxiv.get("snapshot") or snapshot)
        where = "" if Path(given).is_absolute() else " (a relative path is read from the working directory)"
        window = bool(arxiv.get("date_from") or arxiv.get("date_to"))
        return Needs(
            files=(FileNeed(key="arxiv.snapshot", path=snapshot, what=f"file not found: {given}{where}",
                            fix="download arxiv-metadata-oai-snapshot (Kaggle) or fix the path; the format is in "
                                f"{SNAPSHOT_FORMAT}, the route in the {OFFLINE_DOCS}", rules=FETCH_RULES),),
            checks=(Check(FETCH_RULES, lambda: _snapshot_check(snapshot, window)),),
        )
    if source == "api":
        url = str(arxiv["api"]["base_url"])
        return Needs(urls=(UrlNeed(key="arxiv.source", url=url, what="'api'",
                                   fix=f"offline, run config/demo.yaml (nothing to fetch), or use `arxiv.source: "
                                       f"snapshot` (config/offline.yaml; {OFFLINE_DOCS})",
                                   rules=FETCH_RULES),))
    return Needs()
