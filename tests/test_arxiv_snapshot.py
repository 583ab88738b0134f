"""Snapshot streaming: Kaggle-format files (plain and .gz), bad input, seeded bounded sampling."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks.fairness.arxiv.cli_fetch import fetch_settings
from rmeval.benchmarks.fairness.arxiv.cli_select import select_settings
from rmeval.benchmarks.fairness.arxiv.fetch import fetch_candidates
from rmeval.benchmarks.fairness.arxiv.records import canonical_id, normalize_text
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.cli import main as rmeval_main
from rmeval.cli_settings import settings_json
from rmeval.errors import RmevalError
from workflow_helpers import PAPER_GROUPS


def kaggle_record(paper_id: str, categories: str, title: str = "", abstract: str = "", **extra) -> dict:
    """One line of arxiv-metadata-oai-snapshot.json, with the field order Kaggle uses."""
    record = {
        "id": paper_id,
        "submitter": "A. Author",
        "authors": "A. Author, B. Author",
        "title": title or f"Title of {paper_id}",
        "comments": None,
        "journal-ref": None,
        "doi": None,
        "report-no": None,
        "categories": categories,
        "license": None,
        "abstract": abstract or f"  Abstract of {paper_id}\nwith a line break.\n",
        "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
        "update_date": "2008-11-13",
        "authors_parsed": [["Author", "A.", ""]],
    }
    record.update(extra)
    return record


def write_lines(path: Path, records: list, gz: bool = False) -> Path:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def settings(snapshot: Path, **overrides) -> ArxivSettings:
    return ArxivSettings.from_mapping({"source": "snapshot", "snapshot": str(snapshot), **overrides})


def read_summary(out: Path, group: str) -> dict:
    return json.loads((out / f"{group}.fetch.json").read_text())


# ----------------------------------------------------------------------------- fixtures I write myself
@pytest.fixture
def small_snapshot(tmp_path: Path) -> Path:
    records = [kaggle_record(f"2301.{i:05d}", "eess.SY cs.SY") for i in range(40)]
    records += [kaggle_record(f"2302.{i:05d}", "eess.SY math.OC") for i in range(10)]  # mixed groups
    records += [kaggle_record(f"2303.{i:05d}", "cs.LG") for i in range(10)]
    return write_lines(tmp_path / "snap.jsonl", records)


def test_alias_keeps_eess_sy_papers_and_counts_every_step(small_snapshot, tmp_path):
    out = tmp_path / "out"
    summary = fetch_candidates(
        "systems_science", ["eess.SY"], settings(small_snapshot, papers_per_group=10), out
    )
    counts = summary["counts"]
    assert counts["records_read"] == 60
    assert counts["single_group"] == 40
    assert counts["mixed_groups"] == 10
    assert counts["outside_group"] == 10
    assert counts["eligible_with_duplicates"] == 40
    frame = pd.read_parquet(out / "systems_science.candidates.parquet")
    assert len(frame) == 20  # papers_per_group x candidate_factor
    assert set(frame["categories"]) == {"eess.SY"}
    assert frame["sample_key"].is_monotonic_increasing
    assert summary["source"]["sha256"] and summary["source"]["bytes"] == small_snapshot.stat().st_size
    assert (out / "systems_science.eligible.u64").stat().st_size == 40 * 16


def test_gzip_gives_the_same_candidates_and_hashes_the_file_on_disk(small_snapshot, tmp_path):
    import hashlib

    gz = tmp_path / "snap.jsonl.gz"
    gz.write_bytes(gzip.compress(small_snapshot.read_bytes()))
    a = fetch_candidates(
        "systems_science", ["eess.SY"], settings(small_snapshot, papers_per_group=5), tmp_path / "a"
    )
    b = fetch_candidates("systems_science", ["eess.SY"], settings(gz, papers_per_group=5), tmp_path / "b")
    assert a["counts"] == b["counts"]
    assert b["source"]["gzip"] is True
    assert b["source"]["sha256"] == hashlib.sha256(gz.read_bytes()).hexdigest()
    pa = pd.read_parquet(tmp_path / "a" / "systems_science.candidates.parquet")
    pb = pd.read_parquet(tmp_path / "b" / "systems_science.candidates.parquet")
    pd.testing.assert_frame_equal(pa.drop(columns="origin"), pb.drop(columns="origin"))


def test_sample_depends_on_seed_not_on_file_order(tmp_path):
    records = [kaggle_record(f"2304.{i:05d}", "q-fin.ST") for i in range(200)]
    forward = write_lines(tmp_path / "f.jsonl", records)
    backward = write_lines(tmp_path / "b.jsonl", records[::-1])

    def ids(path: Path, seed: int, n: int = 10) -> list[str]:
        out = tmp_path / f"{path.stem}-{seed}-{n}"
        fetch_candidates(
            "qf", ["q-fin"], settings(path, papers_per_group=n, seed=seed, candidate_factor=1), out
        )
        return list(pd.read_parquet(out / "qf.candidates.parquet")["id"])

    assert ids(forward, 0) == ids(backward, 0)
    assert ids(forward, 0) != ids(forward, 1)
    assert set(ids(forward, 0, 10)) <= set(ids(forward, 0, 20))  # a larger sample extends the smaller one


def test_memory_is_bounded_by_the_sample(tmp_path):
    from rmeval.benchmarks.fairness.arxiv.records import Paper
    from rmeval.benchmarks.fairness.arxiv.sampling import HashSampler

    sampler = HashSampler(capacity=25, seed=3)
    for i in range(5000):
        sampler.offer(Paper(f"id{i}", "t", "a", ("cs.LG",), "x"))
    assert len(sampler) == 25 and len(sampler._heap) == 25
    # A duplicate id never re-enters after eviction: its key is the same.
    kept = {p.id for _, p in sampler.sorted_items()}
    for i in range(5000):
        sampler.offer(Paper(f"id{i}", "other title", "a", ("cs.LG",), "y"))
    assert {p.id for _, p in sampler.sorted_items()} == kept
    assert all(p.title == "t" for _, p in sampler.sorted_items())


def test_text_normalisation_keeps_tex_and_ids_drop_versions(tmp_path):
    assert (
        normalize_text("  On $\\mathbb{R}^n$\n  and   \\emph{spaces}\t ")
        == "On $\\mathbb{R}^n$ and \\emph{spaces}"
    )
    assert canonical_id("http://arxiv.org/abs/2104.12255v3") == "2104.12255"
    assert canonical_id("quant-ph/0201082v1") == "quant-ph/0201082"
    snap = write_lines(
        tmp_path / "s.jsonl",
        [
            kaggle_record(
                "2305.00001v2", "math.AG", title="Sheaves  on\n $X_0$", abstract=" We  prove\n$a=b$. "
            ),
            kaggle_record("2305.00001", "math.AG"),  # same paper without the version suffix
        ],
    )
    out = tmp_path / "out"
    fetch_candidates("mathematics", ["math"], settings(snap, papers_per_group=1), out)
    frame = pd.read_parquet(out / "mathematics.candidates.parquet")
    assert list(frame["id"]) == ["2305.00001"]
    assert frame["title"][0] == "Sheaves on $X_0$" and frame["abstract"][0] == "We prove $a=b$."


def test_bad_lines_are_counted_and_named(tmp_path, capsys):
    snap = write_lines(
        tmp_path / "bad.jsonl",
        [
            kaggle_record("2306.00001", "cs.CL"),
            '{"id": "2306.00002", "title": "cut off',  # truncated line
            "[1, 2, 3]",
            "",
            kaggle_record("2306.00003", ""),
            kaggle_record("2306.00004", "cs.CL", title="   "),
            kaggle_record("2306.00005", "cs.CL", abstract="\n"),
            kaggle_record("2306.00006", "cs.CL bogus.XX"),
            {"title": "no id", "categories": "cs.CL"},
        ],
    )
    summary = fetch_candidates("computer_science", ["cs"], settings(snap, papers_per_group=1), tmp_path / "o")
    counts = summary["counts"]
    assert counts["malformed"] == 3 and counts["blank_lines"] == 1 and counts["records_read"] == 8
    assert counts["no_categories"] == 1 and counts["empty_title"] == 1 and counts["empty_abstract"] == 1
    assert counts["unknown_category"] == 1 and counts["eligible_with_duplicates"] == 1
    assert summary["unknown_categories"] == {"bogus.XX": 1}
    err = capsys.readouterr().err
    assert "bad.jsonl line 2: not JSON" in err
    assert "bad.jsonl line 3: not a JSON object" in err
    assert "bad.jsonl line 5: id 2306.00003 has no categories" in err
    assert "bad.jsonl line 6: id 2306.00004 has an empty title" in err
    assert "bad.jsonl line 7: id 2306.00005 has an empty abstract" in err
    assert "3 of 8 lines are malformed" in err
    # One way of naming the file: every warning starts with its path as given, every per-line one ends "; skipped".
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) >= 8 and all(line.startswith(f"warning: {snap}") for line in warnings), warnings
    assert all(line.endswith("; skipped") for line in warnings if " line " in line), warnings


def test_every_line_malformed_is_an_error(tmp_path):
    snap = write_lines(tmp_path / "junk.jsonl", ["not json", "{broken", "[]"])
    with pytest.raises(
        RmevalError, match=r"junk.jsonl: every one of its 3 lines is malformed \(first: line 1"
    ):
        fetch_candidates("computer_science", ["cs"], settings(snap), tmp_path / "o")
    assert not (tmp_path / "o" / "computer_science.candidates.parquet").exists()
    assert not (tmp_path / "o" / "computer_science.eligible.u64").exists()


def test_bad_gzip_and_missing_file_are_clear_errors(small_snapshot, tmp_path):
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(gzip.compress(small_snapshot.read_bytes() * 20)[:3000])
    with pytest.raises(RmevalError, match=r"cut.jsonl.gz: bad .gz file, cannot decompress after line \d+"):
        fetch_candidates("systems_science", ["eess.SY"], settings(truncated), tmp_path / "o")
    fake = tmp_path / "plain.jsonl.gz"
    fake.write_bytes(small_snapshot.read_bytes())
    with pytest.raises(RmevalError, match="has a .gz name but is not gzip-compressed"):
        fetch_candidates("systems_science", ["eess.SY"], settings(fake), tmp_path / "o")
    corrupt = tmp_path / "corrupt.gz"
    data = bytearray(gzip.compress(small_snapshot.read_bytes()))
    data[40:60] = b"\x00" * 20
    corrupt.write_bytes(bytes(data))
    with pytest.raises(RmevalError, match="corrupt.gz: bad .gz file"):
        fetch_candidates("systems_science", ["eess.SY"], settings(corrupt), tmp_path / "o")
    with pytest.raises(RmevalError, match=r"snapshot file not found: .*nope.jsonl \(arxiv.snapshot\)"):
        fetch_candidates("systems_science", ["eess.SY"], settings(tmp_path / "nope.jsonl"), tmp_path / "o")
    assert not list((tmp_path / "o").glob("*"))


def test_date_window_uses_first_version(tmp_path):
    old = kaggle_record("0704.0001", "hep-ph")
    new = kaggle_record(
        "2201.00001", "hep-ph", versions=[{"version": "v1", "created": "Tue, 4 Jan 2022 10:00:00 GMT"}]
    )
    undated = kaggle_record("2201.00002", "hep-ph", versions=[], update_date=None)
    snap = write_lines(tmp_path / "d.jsonl", [old, new, undated])
    summary = fetch_candidates(
        "physics",
        PAPER_GROUPS["physics"],
        settings(snap, papers_per_group=1, date_from="2021-01-01"),
        tmp_path / "o",
    )
    assert summary["counts"]["outside_dates"] == 2 and summary["counts"]["eligible_with_duplicates"] == 1
    assert summary["problems"]["no_date"] == 1


def test_cli_fetch_reports_user_errors(tmp_path, capsys):
    assert rmeval_main(["arxiv-fetch", "--group", "Bad-Name", "--categories", "cs", "--snapshot", "x"]) == 2
    assert "must match ^[a-z0-9_]+$" in capsys.readouterr().err
    args = ["arxiv-fetch", "--group", "cs", "--categories", "cs", "--snapshot", str(tmp_path / "none.jsonl")]
    assert rmeval_main(args + ["--out-dir", str(tmp_path)]) == 2
    assert "snapshot file not found" in capsys.readouterr().err
    assert rmeval_main(args + ["--settings", '{"papers_per_group": "many"}']) == 2
    assert "arxiv-fetch --settings: papers_per_group: 'many' is not what the option takes" in capsys.readouterr().err
    assert rmeval_main(args + ["--settings", '{"papers_per_group": 0}']) == 2
    assert "arxiv.papers_per_group: must be at least 1, got 0" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the shared arXiv data
def build_shared_snapshot(shared_data: Path, out: Path) -> Path:
    """Kaggle-format file from the .abs-derived and unarXive files (full category lists) and the balanced
    set (categories null there: its primary category stands in, and rows without one have no categories)."""
    arxiv_dir = shared_data / "arxiv"
    records = []
    for name in ("arxiv_browse_testdata_abs.jsonl", "unarxive_sample_2212_metadata.jsonl"):
        for line in (arxiv_dir / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            records.append(
                kaggle_record(row["id"], " ".join(row["categories"]), row["title"], row["abstract"])
            )
    for line in (
        (arxiv_dir / "arxiv_balanced_by_archive_max500.jsonl").read_text(encoding="utf-8").splitlines()
    ):
        row = json.loads(line)
        categories = row["categories"] or ([row["primary_category"]] if row["primary_category"] else [])
        records.append(kaggle_record(row["id"], " ".join(categories), row["title"], row["abstract"]))
    return write_lines(out, records)


def test_shared_data_all_groups_end_to_end(shared_data, tmp_path):
    snap = build_shared_snapshot(shared_data, tmp_path / "shared.jsonl")
    arxiv = {"source": "snapshot", "snapshot": str(snap), "papers_per_group": 30}
    for group, categories in PAPER_GROUPS.items():
        argv = [
            "arxiv-fetch",
            "--group",
            group,
            "--categories",
            *categories,
            "--out-dir",
            str(tmp_path / "arxiv"),
        ]
        assert rmeval_main(argv + ["--settings", settings_json(fetch_settings(arxiv, None))]) == 0
    argv = ["arxiv-select", "--groups", *PAPER_GROUPS, "--candidates-dir", str(tmp_path / "arxiv")]
    assert rmeval_main(argv + ["--out-dir", str(tmp_path / "data"), "--settings",
                               settings_json(select_settings(arxiv))]) == 0

    systems = read_summary(tmp_path / "arxiv", "systems_science")
    assert systems["counts"]["no_categories"] == 23  # the q-bio rows with no primary category
    # The unarXive paper listed as "eess.SY cs.SY" survives the single-group rule (a pool big enough for all).
    everything = fetch_candidates(
        "systems_science", ["eess.SY"], settings(snap, papers_per_group=500), tmp_path / "all"
    )
    frame = pd.read_parquet(tmp_path / "all" / "systems_science.candidates.parquet")
    assert "2212.11874" in set(frame["id"])
    assert len(frame) == everything["counts"]["single_group"] == systems["counts"]["single_group"] == 89

    for group in PAPER_GROUPS:
        data = pd.read_parquet(tmp_path / "data" / f"{group}.parquet")
        manifest = json.loads((tmp_path / "data" / f"{group}.manifest.json").read_text())
        assert list(data.columns) == ["id", "title", "abstract", "categories", "group"]
        assert len(data) == 30 and data["id"].is_unique and (data["group"] == group).all()
        assert manifest["counts"]["sampled"] == 30 and manifest["seed"] == 0
        assert manifest["source"]["sha256"] == systems["source"]["sha256"]
        # The balanced file repeats the papers it took from the other two files: de-duplicated by id.
        assert (
            manifest["counts"]["eligible"] + manifest["counts"]["duplicate_ids"]
            == (manifest["counts"]["eligible_with_duplicates"])
        )
    physics = json.loads((tmp_path / "data" / "physics.manifest.json").read_text())
    assert physics["counts"]["duplicate_ids"] > 0


def test_a_duplicate_id_keeps_its_latest_version_whatever_the_line_order(tmp_path):
    def v(*numbers: int) -> list[dict[str, str]]:
        return [{"version": f"v{n}", "created": "Mon, 2 Apr 2007 19:18:42 GMT"} for n in numbers]

    records = [kaggle_record(f"2301.{i:05d}", "eess.SY") for i in range(5)]
    # 2301.00001: v2 first, then the older v1; 2301.00002: v1 first, then v3; 2301.00003: two equal copies.
    records[1] = kaggle_record("2301.00001", "eess.SY", title="Second version", versions=v(1, 2))
    records += [kaggle_record("2301.00001", "eess.SY", title="First version", versions=v(1)),
                kaggle_record("2301.00002", "eess.SY", title="Third version", abstract="Newest.", versions=v(1, 2, 3)),
                kaggle_record("2301.00003", "eess.SY", title="Copy B")]
    records[3] = kaggle_record("2301.00003", "eess.SY", title="Copy A")
    snapshot = write_lines(tmp_path / "dupes.jsonl", records)
    summary = fetch_candidates("systems_science", ["eess.SY"], settings(snapshot, papers_per_group=10), tmp_path / "o")
    assert summary["counts"]["eligible_with_duplicates"] == 8
    frame = pd.read_parquet(tmp_path / "o" / "systems_science.candidates.parquet").set_index("id")
    assert len(frame) == 5 and frame.index.is_unique
    assert frame.loc["2301.00001", "title"] == "Second version"
    assert (frame.loc["2301.00002", "title"], frame.loc["2301.00002", "abstract"]) == ("Third version", "Newest.")
    assert frame.loc["2301.00003", "title"] == "Copy A"  # same version: the first line is kept


def test_version_number_reads_kaggle_versions_and_api_ids():
    from rmeval.benchmarks.fairness.arxiv.records import version_number

    assert version_number("2104.12255", [{"version": "v1"}, {"version": "v4"}]) == 4
    assert version_number("http://arxiv.org/abs/2104.12255v3") == 3
    assert version_number("2104.12255", None) == 0 and version_number(None, [{"version": "x"}]) == 0
