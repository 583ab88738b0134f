"""The lock's record of a grouped corpus (rmeval.benchmarks.fairness.lock): the file's sha256 in `corpus` (no
`arxiv`), the labels and one `<id> <row hash>` per row, read back whole (an id may end in v<digits>), and a
changed row named by `rmeval lock diff`'s section diff; an arXiv record keeps its exact shape."""

from __future__ import annotations

import json

from rmeval.benchmarks.fairness.corpus import cli
from rmeval.benchmarks.fairness.lock.build import build_section
from rmeval.benchmarks.fairness.lock.diff import diff_section
from rmeval.benchmarks.fairness.lock.provider import LOCK_SECTION
from rmeval.benchmarks.fairness.lock.section import ArxivLock, parse_section
from rmeval.io.hashing import sha256_file
from rmeval.lock.section import header

GROUPS = {"a": ["la"], "b": ["lb"]}


def locked(tmp_path, answers: dict[str, str]) -> ArxivLock:
    tmp_path.mkdir()
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "g": "la" if i.startswith("a") else "lb", "q": "Q?", "r": r}) + "\n"
                              for i, r in answers.items()))
    spec = {"source": "table", "path": str(corpus), "columns": {"id": "id", "group": "g", "prompt": "q",
                                                                 "response": "r"}, "seed": 0}
    out = tmp_path / "data"
    cli.main(["--corpus-json", json.dumps(spec), "--groups-json", json.dumps(GROUPS), "--out-dir", str(out)])
    record = build_section({"groups": [{"name": g, "data": str(out / f"{g}.parquet"),
                                        "manifest": str(out / f"{g}.manifest.json")} for g in GROUPS]})
    assert record.corpus["sha256"] == sha256_file(corpus)
    return record


def test_corpus_record_round_trips_and_diffs_by_row(tmp_path):
    first = locked(tmp_path / "1", {"a-v2": "one", "a2": "two", "bv10": "three"})
    document = first.to_dict()
    assert list(document) == ["corpus", "groups"] and document["groups"]["a"]["categories"] == ["la"]
    assert document["groups"]["a"]["papers"][0].startswith("a-v2 ")
    parsed = parse_section(document, "lock.yaml")
    assert parsed.to_dict() == document and parsed.groups["b"].papers[0].id == "bv10"
    second = locked(tmp_path / "2", {"a-v2": "one, edited", "a2": "two", "bv10": "three"})
    lines = diff_section(first, second)
    assert any("corpus.sha256" in line for line in lines)
    assert any("text changed (same version): a-v2" in line for line in lines)
    assert "corpus rows" in header([LOCK_SECTION], [first]) and "the same `corpus:`" in header([LOCK_SECTION], [first])


def test_arxiv_record_keeps_its_shape():
    record = ArxivLock(arxiv={"seed": 0}, groups={})
    assert list(record.to_dict()) == ["arxiv", "groups"]
    assert header([LOCK_SECTION], [record]) == header([LOCK_SECTION])
