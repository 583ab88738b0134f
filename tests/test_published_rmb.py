"""RMB's published per-pair rewards as models (issue 49), without Snakemake: the reader on a result file in the
authors' own layout (eval/scripts/my_run_rm.py, written below from our own numbers), its pairs mapped to rmeval's
distinct texts by `pair_uid`, the accuracy recomputed by rmeval against the authors' (`sum(results) / len(results)`,
ties a loss), the 90 % rule, bad files named in one line, the registry's entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks import benchmark
from rmeval.benchmarks.rmb import loading, metrics
from rmeval.cli import main as rmeval_main
from rmeval.errors import RmevalError
from rmeval.published.plan import entry_for, problems
from rmeval.published.reader import reader_for
from rmeval.registry import load_registry, spec_from_mapping
from rmeval.scoring.job import JobRequest, run_job
from workflow_helpers import REPO_ROOT

SCENARIO = "Helpfulness/Brainstorming/Idea Development"
MODEL = "Org/Some-RM"


def _r(text: str) -> dict[str, str]:
    return {"llm_name": "m", "answer": text}


def rmb_folder(root: Path, pairs: int = 20) -> Path:
    """Our own RMB_dataset: one pairwise scenario whose chosen answers are shared by several pairs (as the
    authors' are: one good answer against several bad ones), and one BoN item."""
    pairwise = [{"pair_uid": str(9000 + i), "conversation_input": [{"role": "user", "content": f"Idea {i // 4}?"}],
                 "chosen": _r(f"A good idea {i // 4}."), "reject": _r(f"A weak idea {i}."),
                 "category_path": f"Pairwise_set/{SCENARIO}"} for i in range(pairs)]
    bon = [{"bon_uid": "b1", "conversation_input": [{"role": "user", "content": "Idea 0?"}],
            "bon_best": _r("A good idea 0."), "loser_list": [_r("A weak idea 0."), _r("Another.")],
            "category_path": f"BoN_set/{SCENARIO}"}]
    for relative, rows in ((f"Pairwise_set/{SCENARIO}.json", pairwise), (f"BoN_set/{SCENARIO}.json", bon)):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rows), encoding="utf-8")
    return root


def reward_of(text: str, seed: int) -> float:
    """One reward per text (a function of the text), bf16-like steps so that some pairs tie."""
    return round(float(np.random.default_rng([seed, *text.encode()]).normal()) * 4) / 16


def write_result(path: Path, root: Path, seed: int, drop: int = 0) -> Path:
    """my_run_rm.py lines 403-425: each pair's dataset fields less the two texts, then chosen_reward, reject_reward,
    is_correct (1 if chosen > rejected else 0); `json.dump(dataset_json, file, indent=2, ensure_ascii=False)`."""
    rows = json.loads((root / f"Pairwise_set/{SCENARIO}.json").read_text())[drop:]
    records = []
    for row in rows:
        chosen, rejected = reward_of(row["chosen"]["answer"], seed), reward_of(row["reject"]["answer"], seed)
        records.append({"pair_uid": row["pair_uid"], "category_path": row["category_path"], "chosen_reward": chosen,
                        "reject_reward": rejected, "is_correct": 1 if chosen > rejected else 0})
    path.write_text(json.dumps(records, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def prepared(tmp_path: Path, root: Path) -> Path:
    texts, items = loading.tables(loading.read_checked(root))
    folder = tmp_path / "prepared"
    folder.mkdir(exist_ok=True)
    texts.to_parquet(folder / "texts.parquet")
    items.to_parquet(folder / "items.parquet")
    return folder / "texts.parquet"


def published_spec(path: Path, **options: Any) -> Any:
    return spec_from_mapping({"name": "pub", "adapter": "published", "options": {
        "benchmark": "rmb", "model": MODEL, "source": "local", "path": str(path), **options}}, "test")


def score_published(tmp_path: Path, root: Path, result: Path) -> Path:
    table = prepared(tmp_path, root)
    out = tmp_path / "scores" / "pub" / "texts.parquet"
    run_job(JobRequest(spec=published_spec(result), task="rmb", input=table, output=out,
                       meta=out.with_suffix(".meta.json")))
    return out


# ----------------------------------------------------------------------------- the reader, against the authors' scoring
def test_result_file_reads_as_the_authors_scored_it(tmp_path):
    root = rmb_folder(tmp_path / "RMB_dataset")
    result = write_result(tmp_path / "Some-RM_result.json", root, seed=1)
    records = json.loads(result.read_text())
    assert any(r["chosen_reward"] == r["reject_reward"] for r in records)  # ties, a loss upstream
    read = reader_for("rmb").read(result)
    assert read.items["9000"] == ("9000#0", "9000#1") and read.details == {"scenarios": [f"Pairwise_set/{SCENARIO}"]}
    scores = score_published(tmp_path, root, result)
    published = json.loads(scores.with_suffix(".meta.json").read_text())["adapter_details"]["published"]
    assert published["alignment_words"] == "matched 20 of 21 items (95.2 %); the file lacks 1 (id bon_uid:b1)"
    table = tmp_path / "prepared" / "texts.parquet"
    texts, items = pd.read_parquet(table), pd.read_parquet(table.with_name("items.parquet"))
    assert len(pd.read_parquet(scores)) == items[items["kind"] == "pairwise"]["text_id"].nunique() == 25
    rewards, mode = metrics.rewards_of(texts, pd.read_parquet(scores), scores)
    frame = metrics.Layout.of(texts, items).frame(rewards)
    row, per_scenario = metrics.model_rows("pub", mode, frame, "items")
    assert mode == metrics.PUBLISHED and set(frame["kind"]) == {"pairwise"}
    authors = 100 * sum(r["is_correct"] for r in records) / len(records)  # my_run_rm.py: sum(results) / len(results)
    assert row["helpfulness_pairwise"] == pytest.approx(authors, abs=1e-12) and row["n_helpfulness_pairwise"] == 20
    assert np.isnan(row["helpfulness_bon"]) and np.isnan(row["overall"])


def test_a_comparison_runs_on_the_items_every_model_holds(tmp_path):
    from rmeval.benchmarks.rmb.compare import common_items

    root = rmb_folder(tmp_path / "RMB_dataset")
    scores = score_published(tmp_path, root, write_result(tmp_path / "r.json", root, seed=2, drop=1))
    table = tmp_path / "prepared" / "texts.parquet"
    texts, items = pd.read_parquet(table), pd.read_parquet(table.with_name("items.parquet"))
    layout = metrics.Layout.of(texts, items)
    mine = layout.frame(texts["response"].str.len().to_numpy(dtype=float))
    theirs = layout.frame(metrics.rewards_of(texts, pd.read_parquet(scores), scores)[0])
    kept, note = common_items({"mine": mine, "pub": theirs})
    assert len(mine) == 21 and len(theirs) == 19 and len(kept["mine"]) == len(kept["pub"]) == 19
    assert list(kept["mine"]["item_id"]) == list(kept["pub"]["item_id"])
    assert note == "compared on the 19 of 21 items every model holds (published results matched fewer: pub (19) items)."


def test_fewer_than_90_percent_matched_stops_naming_both_sides_data(tmp_path):
    root = rmb_folder(tmp_path / "RMB_dataset")
    result = write_result(tmp_path / "r.json", root, seed=3, drop=3)
    with pytest.raises(RmevalError, match=r"matched 17 of 21 items \(81.0 %\); the file lacks 4 \(id 9000, 9001, "
                                          r"9002, bon_uid:b1\); at least 90 %"):
        score_published(tmp_path, root, result)


def test_the_refusal_says_the_file_holds_part_of_rmb_and_that_its_authors_publish_no_more(tmp_path):
    """The registry's file holds one scenario's pairs (its authors publish nothing else per item): a run it does not
    cover is refused with what the file holds, read from it, and the entry's description, which says so."""
    registry = load_registry(REPO_ROOT / "config" / "models.yaml")
    description = registry["ArmoRM-Llama3-8B-v0.1-rmb"].description
    assert "Partial: the only per-item results the RMB authors publish" in description
    root = rmb_folder(tmp_path / "RMB_dataset")
    extra = root / "BoN_set/Harmlessness/S1.json"  # a run of more than the file's scenario
    extra.parent.mkdir(parents=True)
    extra.write_text(json.dumps([{"bon_uid": f"h{i}", "conversation_input": [{"role": "user", "content": f"Q{i}?"}],
                                  "bon_best": _r("No."), "loser_list": [_r("Yes.")],
                                  "category_path": "BoN_set/Harmlessness/S1"} for i in range(9)]))
    result = write_result(tmp_path / "r.json", root, seed=3)
    spec = spec_from_mapping({"name": "pub", "adapter": "published", "description": description, "options": {
        "benchmark": "rmb", "model": MODEL, "source": "local", "path": str(result)}}, "test")
    out = tmp_path / "scores" / "pub" / "texts.parquet"
    with pytest.raises(RmevalError) as error:
        run_job(JobRequest(spec=spec, task="rmb", input=prepared(tmp_path, root), output=out,
                           meta=out.with_suffix(".meta.json")))
    assert str(error.value).endswith(
        f"the file's: local:{result} (the file records no dataset revision), which holds 20 pairwise items of 1 "
        f"scenario(s) (Pairwise_set/{SCENARIO}) and no best-of-N items. Its registry entry: {description}")
    assert "matched 20 of 30 items (66.7 %); the file lacks 10 (id bon_uid:" in str(error.value)


def test_a_text_given_two_rewards_is_refused(tmp_path):
    root = rmb_folder(tmp_path / "RMB_dataset")
    result = write_result(tmp_path / "r.json", root, seed=4)
    records = json.loads(result.read_text())
    records[1]["chosen_reward"] += 1.0  # pair 9001 shares its chosen text with 9000
    records[1]["is_correct"] = 1 if records[1]["chosen_reward"] > records[1]["reject_reward"] else 0
    result.write_text(json.dumps(records))
    with pytest.raises(RmevalError, match=r"pair_uid 9001: its text t[0-9a-f]{16} has reward .* in pair_uid 9000; "
                                          r"rmeval holds one reward per text"):
        score_published(tmp_path, root, result)


# ----------------------------------------------------------------------------- bad files, one line each
def test_a_file_of_only_aggregates_is_named_as_such(tmp_path):
    path = tmp_path / "rm_rank.json"  # my_run_rm.py rm_rank(): model -> ACC, rank
    path.write_text(json.dumps({"ArmoRM-Llama3-8B-v0.1": {"ACC": 0.795, "rank": 1}}))
    with pytest.raises(RmevalError) as error:
        reader_for("rmb").read(path)
    assert str(error.value) == (f"{path}: holds only aggregates (accuracies of 1 model(s) or subsets: `rm_rank.json`), "
                                "no per-pair rewards; they are in eval/result/<model>_result.json (my_run_rm.py)")


def test_another_benchmarks_file_is_named(tmp_path):
    rewardbench = tmp_path / "rb.json"
    rewardbench.write_text(json.dumps({"id": [1], "subset": ["a"], "scores_chosen": [1.0], "scores_rejected": [0.0]}))
    with pytest.raises(RmevalError, match=r"not an RMB result file \(eval/scripts/my_run_rm.py\): a JSON object with "
                                          r"keys id, scores_chosen, scores_rejected, subset"):
        reader_for("rmb").read(rewardbench)
    judgebench = tmp_path / "jb.jsonl"  # run_judge.py's lines
    judgebench.write_text('{"pair_id": "a", "judgments": []}\n{"pair_id": "b", "judgments": []}\n')
    with pytest.raises(RmevalError, match=r"jb.jsonl: not readable as JSON .*; not an RMB result file"):
        reader_for("rmb").read(judgebench)
    records = tmp_path / "records.json"  # per-item records of another benchmark
    records.write_text(json.dumps([{"pair_id": "a", "score_A": 1.0, "score_B": 0.0}]))
    with pytest.raises(RmevalError, match=r"record 0: not an RMB result file .*: expected fields pair_uid, "
                                          r"chosen_reward, reject_reward; found pair_id, score_A, score_B \(another"):
        reader_for("rmb").read(records)


def test_a_result_that_contradicts_its_rewards_or_lacks_one_is_named(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"pair_uid": "1", "chosen_reward": 0.5, "reject_reward": 0.5, "is_correct": 1}]))
    with pytest.raises(RmevalError, match=r"record 0 \(pair_uid '1'\): is_correct 1, but its rewards give 0"):
        reader_for("rmb").read(path)
    path.write_text(json.dumps([{"pair_uid": "1", "chosen_reward": None, "reject_reward": 0.5, "is_correct": 0}]))
    with pytest.raises(RmevalError, match=r"chosen_reward: no score \(null\)"):
        reader_for("rmb").read(path)


def test_the_registry_ships_the_one_file_the_authors_publish(capsys):
    registry = load_registry(REPO_ROOT / "config" / "models.yaml")
    entries = [s for s in registry.values() if s.adapter == "published" and s.options["benchmark"] == "rmb"]
    assert [spec.name for spec in entries] == ["ArmoRM-Llama3-8B-v0.1-rmb"]
    (spec,) = entries
    entry_for(spec, benchmark("rmb"), "rmb.models")
    assert spec.options["repo"] == "Zhou-Zoey/RMB-Reward-Model-Benchmark" and spec.options["source"] == "github"
    assert spec.options["commit"] == "2be3180857f2190b7ffa929d43190835627f1f4d"
    assert spec.options["path"] == "eval/result/ArmoRM-Llama3-8B-v0.1_result.json"
    assert problems(spec, benchmark("rmb"), {"source": "hub"}, str) == []  # not downloaded: the download stage
    assert rmeval_main(["published", "rmb"]) == 0
    assert "1 published model(s)" in capsys.readouterr().out
