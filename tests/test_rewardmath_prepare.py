"""`rmeval rewardmath-prepare`: per-subject scoring tables from local files and (offline) `datasets` loading."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks.rewardmath import loading, prepare
from rmeval.benchmarks.rewardmath.subjects import SUBJECT_SLUGS, slugify_subject
from rmeval.errors import RmevalError

SOLUTION_COLUMNS = ["id", "prompt", "steps", "response", "problem_id", "solution_type", "solution_reference",
                    "subject", "level", "answer"]


def _record(index, problem_id, solution_type, subject="Number Theory", level=3, steps=("Step one.", "Step two.")):
    return {"problem": f"Problem {problem_id}?", "answer": "4", "eval_solution": list(steps),
            "solution_reference": "human_to_GPT-4" if solution_type == "chosen" else f"model-{index}",
            "solution_type": solution_type, "subject": subject, "level": level, "problem_id": problem_id, "id": index}


def _jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_slugs():
    assert slugify_subject("Counting & Probability") == "counting_and_probability"
    assert SUBJECT_SLUGS == ("algebra", "counting_and_probability", "geometry", "intermediate_algebra",
                             "number_theory", "prealgebra", "precalculus")


def test_prepare_shared_sample(shared_data, tmp_path):
    sample = shared_data / "rewardmath" / "benchmark_samples" / "RewardMATH_direct.json"
    pairs = shared_data / "rewardmath" / "rewardbench_math_prm_pairs.jsonl"
    assert prepare.main(["--source", "local", "--path", str(sample), "--rewardbench-source", "local",
                         "--rewardbench-path", str(pairs), "--out", str(tmp_path)]) == 0
    algebra = pd.read_parquet(tmp_path / "algebra.parquet")
    assert list(algebra.columns) == SOLUTION_COLUMNS
    assert len(algebra) == 20 and algebra["id"].is_unique
    assert (algebra.groupby("problem_id")["solution_type"].apply(lambda s: (s == "chosen").sum()) == 1).all()
    first = algebra.iloc[0]
    assert first["response"] == "\n".join(first["steps"])
    assert first["steps"][0] == json.loads(sample.read_text())[0]["eval_solution"][0]
    for slug in SUBJECT_SLUGS[1:]:  # the sample is all Algebra: the other six tables are empty but typed
        empty = pd.read_parquet(tmp_path / f"{slug}.parquet")
        assert len(empty) == 0 and list(empty.columns) == SOLUTION_COLUMNS
    rewardbench = pd.read_parquet(tmp_path / "rewardbench_math_prm.parquet")
    assert len(rewardbench) == 2 * 447
    roles = rewardbench.groupby("pair_id")["role"].apply(lambda values: tuple(sorted(values)))
    assert set(roles) == {("chosen", "rejected")}
    assert rewardbench["id"].is_unique
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["tables"]["algebra"]["rows"] == 20 and manifest["rewardbench_math_prm"]["pairs"] == 447
    assert not list(tmp_path.glob("*.tmp"))


def test_subjects_are_split_and_levels_parsed(tmp_path):
    records = [_record(0, 7, "chosen", "Counting & Probability", "Level 4"), _record(1, 7, "rejected",
               "Counting & Probability", "Level 4"), _record(2, 8, "chosen", "precalculus", 2),
               _record(3, 8, "rejected", "precalculus", 2)]
    path = _jsonl(tmp_path / "rm.jsonl", records)
    prepare.main(["--source", "local", "--path", str(path), "--out", str(tmp_path / "out")])
    counting = pd.read_parquet(tmp_path / "out" / "counting_and_probability.parquet")
    assert counting["level"].tolist() == [4, 4] and set(counting["subject"]) == {"Counting & Probability"}
    precalc = pd.read_parquet(tmp_path / "out" / "precalculus.parquet")
    assert precalc["id"].tolist() == ["2", "3"] and set(precalc["subject"]) == {"Precalculus"}
    assert len(pd.read_parquet(tmp_path / "out" / "rewardbench_math_prm.parquet")) == 0


@pytest.mark.parametrize(("records", "message"), [
    ([_record(0, 1, "chosen"), _record(0, 1, "rejected")], "duplicate id '0'"),
    ([_record(0, 1, "rejected"), _record(1, 1, "rejected")], "exactly one chosen"),
    ([_record(0, 1, "chosen"), _record(1, 1, "winner")], "row 1: solution_type 'winner'"),
    ([_record(0, 1, "chosen", subject="Topology")], "row 0: subject: subject 'Topology'"),
    ([_record(0, 1, "chosen", steps=())], "row 0: eval_solution: expected a non-empty list"),
    ([_record(0, 1, "chosen", steps=("ok", "  "))], "contains an empty step"),
    ([_record(0, 1, "chosen", level="hard")], "level 'hard'"),
    ([{"problem": "x"}], "row 0: missing field"),
])
def test_bad_records_name_the_row(tmp_path, records, message):
    path = _jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(RmevalError, match=message):
        prepare.main(["--source", "local", "--path", str(path), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()  # nothing written that looks complete


def test_local_source_needs_a_path_and_an_existing_file(tmp_path):
    with pytest.raises(RmevalError, match="rewardmath.path"):
        loading.load_rewardmath("local", None)
    with pytest.raises(RmevalError, match="not found"):
        loading.load_rewardmath("local", str(tmp_path / "missing.json"))


def test_hf_sources_go_through_datasets(tmp_path, monkeypatch):
    """The hub loaders, with `datasets.load_dataset` redirected to local JSON files through `datasets` itself."""
    import datasets

    rm = _jsonl(tmp_path / "rm.jsonl", [_record(0, 1, "chosen"), _record(1, 1, "rejected")])
    rb_rows = [
        {"prompt": "What is 2+2?", "chosen": "2+2=4.\nSo \\boxed{4}.", "rejected": "2+2=5.\n\nSo 5.",
         "chosen_model": "human", "rejected_model": "GPT-4", "subset": "math-prm", "id": 30},
        {"prompt": "Say hi", "chosen": "hi", "rejected": "no", "chosen_model": "a", "rejected_model": "b",
         "subset": "alpacaeval-easy", "id": 31},
    ]
    rb = _jsonl(tmp_path / "rb.jsonl", rb_rows)
    real_load = datasets.load_dataset
    calls = []

    def fake_load(name, split=None, revision=None):
        calls.append((name, split, revision))
        files = {"RewardMATH/RewardMATH": {"test": str(rm)}, "allenai/reward-bench": {"filtered": str(rb)}}[name]
        return real_load("json", data_files=files, split=split, cache_dir=str(tmp_path / "cache"))

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    solutions = loading.load_rewardmath("hf")
    assert [s.id for s in solutions] == ["0", "1"] and solutions[0].steps == ["Step one.", "Step two."]
    pairs = loading.load_rewardbench_math_prm("hf")
    assert len(pairs) == 1 and pairs[0].chosen_steps == ["2+2=4.", "So \\boxed{4}."]
    assert pairs[0].rejected_steps == ["2+2=5.", "So 5."]
    assert calls == [("RewardMATH/RewardMATH", None, None), ("allenai/reward-bench", "filtered", None)]
