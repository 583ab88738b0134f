"""A snapshot whose records lack `categories` is named as such, not as "too few papers" (issue 13, Seen 2)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from rmeval.cli import main as rmeval_main

GROUPS = {"mathematics": "math", "economics": "econ"}


def write(path: Path, records: list[dict]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    return path


def record(serial: int, categories: str | None) -> dict:
    row = {"id": f"2101.{serial:05d}", "title": f"Title {serial}", "abstract": f"Abstract {serial}.",
           "versions": [{"version": "v1", "created": "Mon, 4 Jan 2021 10:00:00 GMT"}], "update_date": "2021-01-04"}
    if categories is not None:
        row["categories"] = categories
    return row


def fetch(snapshot: Path, out: Path, group: str) -> int:
    settings = json.dumps({"source": "snapshot", "snapshot": str(snapshot), "papers_per_group": 5})
    return rmeval_main(["arxiv-fetch", "--group", group, "--categories", GROUPS[group], "--out-dir", str(out),
                        "--settings", settings])


def test_a_snapshot_without_categories_stops_the_fetch_naming_the_field(tmp_path, capsys):
    snapshot = write(tmp_path / "s.json.gz", [record(i, None) for i in range(3)])
    assert fetch(snapshot, tmp_path / "arxiv", "mathematics") == 2
    err = capsys.readouterr().err
    assert "none of its 3 records has a `categories` field" in err and "Snapshot format" in err
    assert "larger snapshot" not in err


def test_a_group_short_because_records_lack_categories_says_so(tmp_path, capsys):
    rows = [record(i, "math.CO") for i in range(3)] + [record(10 + i, None) for i in range(7)]
    rows += [record(20 + i, "econ.GN") for i in range(6)]
    snapshot = write(tmp_path / "s.json.gz", rows)
    for group in GROUPS:
        assert fetch(snapshot, tmp_path / "arxiv", group) == 0
    capsys.readouterr()
    settings = json.dumps({"papers_per_group": 5})
    assert rmeval_main(["arxiv-select", "--groups", *GROUPS, "--candidates-dir", str(tmp_path / "arxiv"),
                        "--out-dir", str(tmp_path / "data"), "--settings", settings]) == 2
    err = capsys.readouterr().err
    assert "mathematics: 3 papers < 5: many records lack a field the filter needs (no_categories=7)" in err, err
    assert "Snapshot format" in err and "larger snapshot" not in err
