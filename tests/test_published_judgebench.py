"""JudgeBench's published per-pair rewards as models (issue 49), without Snakemake: the reader on files in the authors'
own layout (run_judge.py's outputs/*.jsonl, written below from our own numbers), the headline recomputed by rmeval
against the authors' compute_final_metrics (utils/metrics.py, re-stated below) on the same file, ties included,
alignment by `pair_id` and the 90 % rule, bad files named in one line, the registry's five entries."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from rmeval.benchmarks import benchmark
from rmeval.benchmarks.judgebench import metrics
from rmeval.benchmarks.judgebench.loading import ITEM_COLUMNS, frame, item_rows, load_split
from rmeval.benchmarks.judgebench.official import CATEGORIES, OVERALL, SPLITS
from rmeval.cli import main as rmeval_main
from rmeval.errors import RmevalError
from rmeval.published.plan import entry_for, problems
from rmeval.published.reader import reader_for
from rmeval.registry import load_registry, spec_from_mapping
from rmeval.scoring.job import JobRequest, run_job
from workflow_helpers import REPO_ROOT

SOURCES = ("mmlu-pro-law", "livebench-reasoning", "livebench-math", "livecodebench")
GPT = SPLITS["gpt"]
MODEL = "Org/Some-RM"


def judgebench_pairs(per_source: int = 5) -> list[dict[str, Any]]:
    """Our own pairs, in the official data file's fields (utils/file_operations.py read_jsonl of data/*.jsonl)."""
    return [{"pair_id": f"p-{s}-{i}", "original_id": 100 * s + i, "source": source,
             "question": f"Question {s}.{i}?", "response_model": GPT.response_model,
             "response_A": f"Answer A {s}.{i}", "response_B": f"Answer B {s}.{i}",
             "label": "A>B" if (s + i) % 2 == 0 else "B>A"}
            for s, source in enumerate(SOURCES) for i in range(per_source)]


def write_data(folder: Path, pairs: list[dict[str, Any]]) -> Path:
    path = folder / GPT.github_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(pair) + "\n" for pair in pairs))
    return path


def judgment(model: str, first: float, second: float) -> dict[str, Any]:
    """A reward model's judgment of one order (utils/judges.py SkyworkReward.get_judgment's return)."""
    return {"judgment": {"judge_model": model, "prompt": "", "response": "", "scores": [first, second]},
            "decision": "A>B" if first > second else "B>A"}


def write_outputs(path: Path, pairs: list[dict[str, Any]], rewards: dict[str, tuple[float, float]],
                  model: str = MODEL, seed: int = 0) -> Path:
    """run_judge.py judge_pairs: each finished pair appended as `json.dumps(pair, ensure_ascii=False)`, in completion
    order (shuffled here), with `judge_name` and the judgments of (A, B) and (B, A)."""
    order = list(pairs)
    random.Random(seed).shuffle(order)
    lines = []
    for pair in order:
        a, b = rewards[pair["pair_id"]]
        lines.append(json.dumps({**pair, "judge_name": "reward_model",
                                 "judgments": [judgment(model, a, b), judgment(model, b, a)]}, ensure_ascii=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def seeded_rewards(pairs: list[dict[str, Any]], seed: int, ties: int = 0) -> dict[str, tuple[float, float]]:
    rng = random.Random(seed)
    out = {pair["pair_id"]: (rng.gauss(0, 2), rng.gauss(0, 2)) for pair in pairs}
    for pair in pairs[:ties]:  # equal rewards: B>A in both orders, which nets 0 (upstream's ties)
        out[pair["pair_id"]] = (1.5, 1.5)
    return out


# ----------------------------------------------------------------------------- the authors' scoring, re-stated
def flip_judgment(decision: str | None) -> str | None:
    return {"A>B": "B>A", "B>A": "A>B"}.get(decision, decision)  # type: ignore[arg-type]


def compute_final_metrics(pairs: list[dict[str, Any]], prefix: str) -> float:
    """utils/metrics.py compute_final_metrics(reverse_order=True, include_fn=source.startswith(prefix)): per pair
    +1 per decision equal to the label, -1 per decision equal to its flip (the second flipped back); correct when
    above 0; 100 * correct / pairs."""
    chosen = [pair for pair in pairs if pair["source"].startswith(prefix)]
    correct = 0
    for pair in chosen:
        first, second = pair["judgments"]
        decisions = [first["decision"] if first else None, flip_judgment(second["decision"] if second else None)]
        counter = sum(1 if d == pair["label"] else -1 if d == flip_judgment(pair["label"]) else 0 for d in decisions)
        correct += counter > 0
    return 100 * correct / len(chosen)


# ----------------------------------------------------------------------------- helpers
def published_spec(path: Path, model: str = MODEL, **options: Any) -> Any:
    return spec_from_mapping({"name": "pub", "adapter": "published", "options": {
        "benchmark": "judgebench", "model": model, "source": "local", "path": str(path), **options}}, "test")


def score_published(tmp_path: Path, pairs: list[dict[str, Any]], outputs: Path) -> tuple[Path, pd.DataFrame]:
    """The published model's score file, written by the real scoring job on the prepared gpt table."""
    data = frame(item_rows(load_split(write_data(tmp_path / "data", pairs))), ITEM_COLUMNS)
    prepared = tmp_path / "prepared" / "data" / "gpt.parquet"
    prepared.parent.mkdir(parents=True)
    data.to_parquet(prepared)
    out = tmp_path / "scores" / "pub" / "gpt.parquet"
    run_job(JobRequest(spec=published_spec(outputs), task="pairs", input=prepared, output=out,
                       meta=out.with_suffix(".meta.json")))
    return out, data


# ----------------------------------------------------------------------------- the reader, against the authors' scoring
def test_outputs_file_reads_as_the_authors_scored_it_ties_included(tmp_path):
    pairs = judgebench_pairs()
    rewards = seeded_rewards(pairs, 1, ties=3)
    file = write_outputs(tmp_path / "outputs" / f"{GPT.github_file[:-6]},judge_name=reward_model,"
                                                 "judge_model=Org_Some-RM.jsonl", pairs, rewards)
    read = reader_for("judgebench").read(file)
    assert read.model == MODEL and read.details == {"response_model": GPT.response_model}
    assert read.items["p-0-0"] == ("p-0-0#A", "p-0-0#B")
    assert read.rewards["p-0-1#B"] == rewards["p-0-1"][1]
    scores, data = score_published(tmp_path, pairs, file)
    result = metrics.outcomes("pub", "gpt", data, pd.read_parquet(scores), scores)
    assert result.mode == metrics.PUBLISHED and "matched 20 of 20 items" in result.note
    tied = [p for p in result.pairs if p["score_A"] == p["score_B"]]
    assert len(tied) == 3 and all(p["net"] == 0 and not p["correct"] for p in tied)
    theirs = [json.loads(line) for line in file.read_text().splitlines()]
    row = metrics.table_row(result)
    for category, prefix in (*CATEGORIES.items(), (OVERALL, "")):
        assert row[category] == pytest.approx(compute_final_metrics(theirs, prefix), abs=1e-12), category


def test_the_tables_mark_the_published_model_and_name_its_file(tmp_path):
    from rmeval.benchmarks.judgebench import tables

    pairs = judgebench_pairs(2)
    file = write_outputs(tmp_path / "rm.jsonl", pairs, seeded_rewards(pairs, 2))
    scores, data = score_published(tmp_path, pairs, file)
    result = metrics.outcomes("pub", "gpt", data, pd.read_parquet(scores), scores)
    tables.main_table([metrics.table_row(result)], {"pub": result.mode}, tmp_path / "t", "jb", [result.note])
    text = (tmp_path / "t" / "jb.md").read_text()
    assert "pub (published)" in text and f"pub (gpt): published per-pair rewards, not run here: {MODEL} from " \
                                         f"local:{file}" in text
    assert list(pd.read_csv(tmp_path / "t" / "jb.csv")["model"]) == ["pub"]


# ----------------------------------------------------------------------------- alignment
def test_a_file_lacking_a_pair_is_scored_on_the_rest(tmp_path):
    pairs = judgebench_pairs()
    extra = {**pairs[0], "pair_id": "not-in-the-data"}
    rewards = seeded_rewards([*pairs, extra], 3)
    file = write_outputs(tmp_path / "rm.jsonl", [*pairs[1:], extra], rewards)
    scores, data = score_published(tmp_path, pairs, file)
    meta = json.loads(scores.with_suffix(".meta.json").read_text())
    published = meta["adapter_details"]["published"]
    assert published["alignment_words"] == ("matched 19 of 20 items (95.0 %); the file lacks 1 (id p-0-0); this run "
                                            "lacks the file's 1 (id not-in-the-data)")
    assert published["response_model"] == GPT.response_model
    result = metrics.outcomes("pub", "gpt", data, pd.read_parquet(scores), scores)
    assert len(result.pairs) == 19 and "p-0-0" not in result.correct()


def test_fewer_than_90_percent_matched_stops_naming_both_sides_data(tmp_path):
    pairs = judgebench_pairs()
    folder = tmp_path / "data"
    write_data(folder, pairs)
    file = write_outputs(tmp_path / "rm.jsonl", pairs[3:], seeded_rewards(pairs, 4))
    section = {"source": "local", "path": str(folder), "splits": ["gpt"]}
    assert problems(published_spec(file), benchmark("judgebench"), section, str) == [
        f"model 'pub': JudgeBench outputs file (run_judge.py) {file} by JudgeBench `pair_id`: matched 17 of 20 items "
        "(85.0 %); the file lacks 3 (id p-0-0, p-0-1, p-0-2); at least 90 % of this run's items must match. This "
        f"run's data: local folder {folder} (splits gpt); the file's: local:{file} (the file records no dataset "
        "revision)"]
    with pytest.raises(RmevalError, match=r"matched 17 of 20 items \(85.0 %\)"):
        score_published(tmp_path, pairs, file)


# ----------------------------------------------------------------------------- bad files, one line each
@pytest.fixture
def outputs(tmp_path) -> Path:
    pairs = judgebench_pairs(1)
    return write_outputs(tmp_path / "rm.jsonl", pairs, seeded_rewards(pairs, 5))


def rewrite(path: Path, change) -> Path:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    change(records)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_an_llm_judges_file_is_named(outputs):
    def verdicts(records):
        for record in records:
            record["judge_name"] = "arena_hard"
            record["judgments"] = [{"judgment": {"judge_model": "gpt-4o", "prompt": "p", "response": "[[A>B]]"},
                                    "decision": "A>B"}] * 2
    rewrite(outputs, verdicts)
    with pytest.raises(RmevalError, match=r"line 1 \(pair_id p-\d-0\): judge_name 'arena_hard': an LLM judge's "
                                          r"verdicts, no rewards"):
        reader_for("judgebench").read(outputs)


def test_a_file_of_only_aggregates_is_named_as_such(tmp_path):
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"mmlu-pro": 59.74, "livebench-reasoning": 66.33, "Overall": 64.29}))
    with pytest.raises(RmevalError) as error:
        reader_for("judgebench").read(path)
    assert str(error.value) == (f"{path}: holds only aggregates (3 numbers: mmlu-pro, livebench-reasoning, Overall), "
                                "no per-pair scores; the per-pair rewards are in JudgeBench's outputs/*.jsonl "
                                "(run_judge.py)")


def test_another_benchmarks_file_is_named(tmp_path):
    rewardbench = tmp_path / "rb.json"  # a RewardBench eval-set-scores file: columns as lists
    rewardbench.write_text(json.dumps({"id": [1, 2], "subset": ["a", "b"], "scores_chosen": [1.0, 2.0],
                                       "scores_rejected": [0.0, 0.0], "model": "o/m"}))
    with pytest.raises(RmevalError, match=r"not a JudgeBench outputs file \(run_judge.py\): a JSON object with keys "
                                          r"id, model, scores_chosen, scores_rejected, subset"):
        reader_for("judgebench").read(rewardbench)
    rmb = tmp_path / "rmb.json"  # RMB's eval/result file: a list of per-pair records
    rmb.write_text(json.dumps([{"pair_uid": "1", "chosen_reward": 1.0, "reject_reward": 0.0, "is_correct": 1}]))
    with pytest.raises(RmevalError, match=r"a JSON list \(of records with chosen_reward, is_correct, pair_uid, "
                                          r"reject_reward\)"):
        reader_for("judgebench").read(rmb)


def test_the_data_file_itself_is_named(tmp_path):
    path = write_data(tmp_path, judgebench_pairs(1))
    with pytest.raises(RmevalError, match=r"line 1: not a JudgeBench outputs file \(run_judge.py\): JudgeBench's pairs "
                                          r"without any judge's judgments"):
        reader_for("judgebench").read(path)


def test_orders_that_disagree_or_a_failed_judgment_are_named(outputs):
    def disagree(records):
        records[1]["judgments"][1]["judgment"]["scores"][0] += 0.25
    rewrite(outputs, disagree)
    with pytest.raises(RmevalError, match=r"line 2 \(pair_id .*\): the two orders' rewards differ"):
        reader_for("judgebench").read(outputs)

    def failed(records):
        records[1]["judgments"][1] = None
    rewrite(outputs, failed)
    with pytest.raises(RmevalError, match=r"line 2 \(pair_id .*\): judgments\[1\]: null \(the judge failed on it\)"):
        reader_for("judgebench").read(outputs)


def test_a_file_of_another_model_is_named(outputs):
    assert problems(published_spec(outputs, "Org/Other"), benchmark("judgebench"), {"source": "hub"}, str) == [
        f"model 'pub': {outputs} holds the results of {MODEL!r}, but options.model is 'Org/Other'"]


# ----------------------------------------------------------------------------- the registry
def test_the_registry_ships_every_reward_model_the_authors_publish(capsys):
    from rmeval.run_command.against import _registry_opponent

    registry = load_registry(REPO_ROOT / "config" / "models.yaml")
    entries = {name: spec for name, spec in registry.items()
               if spec.adapter == "published" and spec.options["benchmark"] == "judgebench"}
    assert sorted(spec.options["model"] for spec in entries.values()) == [
        "Ray2333/GRM-Gemma-2B-rewardmodel-ft", "Skywork/Skywork-Reward-Gemma-2-27B",
        "Skywork/Skywork-Reward-Llama-3.1-8B", "internlm/internlm2-20b-reward", "internlm/internlm2-7b-reward"]
    for spec in entries.values():
        entry_for(spec, benchmark("judgebench"), "judgebench.models")
        options = spec.options
        assert options["source"] == "github" and options["repo"] == "ScalerLab/JudgeBench"
        assert options["commit"] == "e2c52c284e735e139b3daa61c206ee208f36c461" and len(options["sha256"]) == 64
        assert options["path"] == (f"outputs/{GPT.github_file[:-6]},judge_name=reward_model,"
                                   f"judge_model={options['model'].replace('/', '_')}.jsonl")  # run_judge.py main()
    opponent, problem = _registry_opponent("published:judgebench/Skywork-Reward-Gemma-2-27B", registry)
    assert problem is None and opponent.name == "Skywork-Reward-Gemma-2-27B-jb"
    assert rmeval_main(["published", "judgebench"]) == 0
    out = capsys.readouterr().out
    assert "GRM-Gemma-2B-jb" in out and "5 published model(s)" in out


def test_a_published_file_of_one_split_is_refused_on_another_at_parse_time():
    from rmeval.benchmarks.judgebench.plan import published_splits

    registry = load_registry(REPO_ROOT / "config" / "models.yaml")
    specs = {"GRM-Gemma-2B-jb": registry["GRM-Gemma-2B-jb"]}
    published_splits(specs, ("gpt",))
    with pytest.raises(RmevalError, match=r"published model 'GRM-Gemma-2B-jb' holds the gpt split's pairs only .*"
                                          r"`judgebench.splits: \[gpt\]`"):
        published_splits(specs, ("gpt", "claude"))
