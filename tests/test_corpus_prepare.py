"""The grouped-corpus stage (rmeval.benchmarks.fairness.corpus): reading every table format and a datasets
folder, mapping raw labels to groups, the seeded sample, and one clear error per bad input that names the file,
column or row, with nothing written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks.fairness.corpus import cli
from rmeval.benchmarks.fairness.corpus.prepare import prepare, sample_key
from rmeval.benchmarks.fairness.corpus.source import load, read_file
from rmeval.errors import RmevalError

GROUPS = {"plain": ["v_plain"], "prefixed": ["v_prefix", "v_prefix2"]}
COLUMNS = {"id": "doc", "group": "field", "prompt": "question", "response": "answer"}


def rows(n: int = 3, paired: bool = False) -> list[dict]:
    out = []
    for i in range(n):
        out.append({"doc": f"p{i}", "field": "v_plain", "question": f"Q{i}?", "answer": f"plain answer {i}",
                    "pid": f"k{i}"})
        out.append({"doc": f"x{i}", "field": "v_prefix" if i % 2 else "v_prefix2", "question": f"Q{i}?",
                    "answer": f"Sure! prefixed answer {i}", "pid": f"k{i}"})
    out.append({"doc": "u1", "field": "v_other", "question": "Q?", "answer": "dropped", "pid": "k99"})
    return out


def corpus(path: Path, **overrides) -> dict:
    return {"source": "table", "path": str(path), "columns": dict(COLUMNS), "prompt_template": None,
            "per_group": None, "allow_fewer": False, "seed": 0, **overrides}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def run_cli(tmp_path: Path, spec: dict, groups: dict = GROUPS) -> Path:
    out = tmp_path / "data"
    cli.main(["--corpus-json", json.dumps(spec), "--groups-json", json.dumps(groups), "--out-dir", str(out)])
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "parquet", "jsonl.gz", "csv.gz"])
def test_every_format_reads_the_same_rows(tmp_path, fmt):
    frame = pd.DataFrame(rows())
    path = tmp_path / f"corpus.{fmt}"
    base = fmt.removesuffix(".gz")
    if base == "parquet":
        frame.to_parquet(path)
    else:
        text = {"jsonl": frame.to_json(orient="records", lines=True), "json": frame.to_json(orient="records"),
                "csv": frame.to_csv(index=False)}[base]
        path.write_bytes(gzip.compress(text.encode()) if fmt.endswith(".gz") else text.encode())
    loaded = read_file(path)
    prepared = prepare(loaded.frame, GROUPS, corpus(path), loaded.where)
    assert list(prepared.frames["plain"]["id"]) == ["p0", "p1", "p2"]
    assert list(prepared.frames["prefixed"]["label"]) == ["v_prefix2", "v_prefix", "v_prefix2"]
    assert prepared.unmapped == {"v_other": 1}
    assert loaded.source["sha256"] and loaded.source["kind"] == "corpus"


def test_stage_writes_the_data_contract_and_manifest(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", rows())
    out = run_cli(tmp_path, corpus(path, columns={**COLUMNS, "pair": "pid"}))
    frame = pd.read_parquet(out / "plain.parquet")
    assert list(frame.columns) == ["id", "prompt", "response", "group", "label", "pair"]
    manifest = json.loads((out / "prefixed.manifest.json").read_text())
    assert manifest["source"]["type"] == "table" and len(manifest["source"]["sha256"]) == 64
    assert manifest["unmapped_labels"] == {"v_other": 1} and manifest["counts"]["unmapped_rows"] == 1
    assert manifest["output"]["rows"] == 3 and manifest["labels"] == ["v_prefix", "v_prefix2"]
    assert manifest["pairs"] == {"column": "pid", "pair_ids": 3, "incomplete": 0}


def test_prompt_template_over_any_column(tmp_path):
    records = [{**r, "title": f"T {r['doc']}"} for r in rows()]
    path = write_jsonl(tmp_path / "c.jsonl", records)
    columns = {k: v for k, v in COLUMNS.items() if k != "prompt"}
    loaded = read_file(path)
    prepared = prepare(loaded.frame, GROUPS, corpus(path, columns=columns,
                                                    prompt_template="Write an abstract for {title}"), loaded.where)
    assert prepared.frames["plain"]["prompt"][0] == "Write an abstract for T p0"


def test_sample_is_seeded_and_independent_of_row_order(tmp_path):
    records = rows(10)
    spec = corpus(tmp_path / "c.jsonl", per_group=4, seed=7)
    first = prepare(pd.DataFrame(records), GROUPS, spec, "c")
    second = prepare(pd.DataFrame(records[::-1]), GROUPS, spec, "c")
    assert set(first.frames["plain"]["id"]) == set(second.frames["plain"]["id"])
    expected = sorted((r["doc"] for r in records if r["field"] == "v_plain"), key=lambda i: sample_key(7, i))[:4]
    assert set(first.frames["plain"]["id"]) == set(expected)
    assert list(first.frames["plain"]["id"]) == sorted(expected, key=lambda i: int(i[1:]))  # the file's order


def test_paired_sample_keeps_whole_pairs(tmp_path):
    spec = corpus(tmp_path / "c.jsonl", per_group=3, seed=1, columns={**COLUMNS, "pair": "pid"})
    prepared = prepare(pd.DataFrame(rows(10)), GROUPS, spec, "c")
    assert set(prepared.frames["plain"]["pair"]) == set(prepared.frames["prefixed"]["pair"])
    assert len(prepared.frames["plain"]) == 3


def test_fewer_rows_than_per_group(tmp_path):
    spec = corpus(tmp_path / "c.jsonl", per_group=5)
    with pytest.raises(RmevalError, match="per_group is 5 but these groups have fewer rows: plain 3, prefixed 3"):
        prepare(pd.DataFrame(rows()), GROUPS, spec, "c")
    kept = prepare(pd.DataFrame(rows()), GROUPS, {**spec, "allow_fewer": "keep"}, "c")
    assert len(kept.frames["plain"]) == 3 and kept.warnings


def expect_error(tmp_path: Path, records_or_text, match: str, spec_overrides=None, groups=GROUPS, name="c.jsonl"):
    path = tmp_path / name
    if isinstance(records_or_text, str):
        path.write_text(records_or_text)
    else:
        write_jsonl(path, records_or_text)
    with pytest.raises(RmevalError, match=match):
        run_cli(tmp_path, corpus(path, **(spec_overrides or {})), groups)
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir()), "nothing half-written"


def test_missing_column_lists_the_columns_there(tmp_path):
    expect_error(tmp_path, rows(), r"c.jsonl: column 'reply' \(columns.response\) is missing; the columns there "
                 r"are: doc, field, question, answer, pid", {"columns": {**COLUMNS, "response": "reply"}})


def test_empty_group(tmp_path):
    records = [r for r in rows() if r["field"] == "v_plain"]
    expect_error(tmp_path, records, r"group 'prefixed' has no rows: no row's column 'field' holds one of its "
                 r"labels \['v_prefix', 'v_prefix2'\]")


@pytest.mark.parametrize(("answer", "what"), [("  ", "is empty"), (7, "is a int, not a string"),
                                              (None, "is missing")])
def test_bad_response_names_the_row(tmp_path, answer, what):
    records = rows()
    records[2]["answer"] = answer
    expect_error(tmp_path, records, rf"c.jsonl row 3 \(id 'p1'\): column 'answer' {what}")


def test_duplicate_ids(tmp_path):
    records = rows()
    records[3]["doc"] = "p0"
    expect_error(tmp_path, records, r"c.jsonl rows 1 and 4: duplicate id 'p0' in column 'doc'")


def test_pair_id_twice_in_one_group(tmp_path):
    records = rows()
    records[2]["pid"] = "k0"
    expect_error(tmp_path, records, r"rows 1 and 3: pair id 'k0' \(column 'pid'\) appears twice in group 'plain'",
                 {"columns": {**COLUMNS, "pair": "pid"}})


def test_label_in_two_groups_names_the_row(tmp_path):
    expect_error(tmp_path, rows(), r"c.jsonl row 1 \(id 'p0'\): label\(s\) \['v_plain'\] map to groups "
                 r"\['plain', 'prefixed'\]", groups={"plain": ["v_plain"], "prefixed": ["v_prefix", "v_plain"]})


def test_ragged_csv_row_names_the_line(tmp_path):
    text = "doc,field,question,answer\np0,v_plain,Q?,fine\np1,v_plain,Q?,an, unquoted comma\n"
    expect_error(tmp_path, text, r"c.csv line 3: 5 fields, but the header has 4", name="c.csv")
    short = "doc,field,question,answer\np0,v_plain,Q?\n"
    expect_error(tmp_path, short, r"c.csv line 2: 3 fields, but the header has 4", name="c.csv")


def test_hf_dataset_through_datasets_load_dataset(tmp_path):
    folder = tmp_path / "hfdata"
    folder.mkdir()
    write_jsonl(folder / "test.jsonl", rows())
    loaded = load({"source": "hf", "hf": {"name": str(folder), "split": "test", "revision": None, "config": None}})
    assert len(loaded.frame) == 7 and loaded.source["type"] == "hf" and loaded.where.endswith("[test]")
    with pytest.raises(RmevalError, match=r"corpus.hf: cannot load dataset .*split 'validation'"):
        load({"source": "hf", "hf": {"name": str(folder), "split": "validation", "revision": None, "config": None}})
    with pytest.raises(RmevalError, match=r"corpus.hf: cannot load dataset '.*no-such-dataset'"):
        load({"source": "hf", "hf": {"name": str(tmp_path / "no-such-dataset"), "split": "test"}})
