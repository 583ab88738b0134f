"""JudgeBench through the real workflow (the `judgebench` scenario of .test/): both splits of fixtures in the official
layout, a tiny classifier, the length baseline and a pairwise LLM judge (the loopback judge server), scored by the
shared score rule; one run read by every test here.

The table is recomputed from the score files with a re-statement of the official code (tests/test_judgebench.py:
compute_final_metrics and the reward-model judgment of ScalerLab/JudgeBench), to the last digit; the length
baseline's from the fixture texts alone. Then: the per-pair file, the lock's sha256, the comparisons and the
leaderboard, the summary, `rmeval run`'s console answer, a rerun with nothing to do, and a bad folder named before
any job with every earlier result left as it was."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from judge_server import JudgeServer
from judgebench_fixtures import file_name
from rmeval.io.hashing import sha256_file
from scenarios import JUDGE_KEY_ENV, JUDGE_SECRET, run_scenario
from test_judgebench import PREFIXES, official_reward_judgment, official_score
from workflow_helpers import run_snakemake, tree_state

SPLITS = ("gpt", "claude")
MODELS = ("tiny-cls", "length-baseline", "judge-pairwise")
COLUMNS = ["model", "split", "knowledge", "reasoning", "math", "coding", "overall"]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def jb_run(tmp_path_factory, tiny_models):
    with JudgeServer() as server:
        def to_this_server(config: dict) -> None:
            for judge in [m for m in config["models"] if isinstance(m, dict) and m["adapter"] == "judge"]:
                judge["options"]["base_url"] = server.base_url

        run = run_scenario("judgebench", tmp_path_factory.mktemp("judgebench"), None, tiny_models,
                           env={JUDGE_KEY_ENV: JUDGE_SECRET}, edit=to_this_server)
        yield run, server


def published_pairs(run, split: str) -> list[dict]:
    path = run.workdir / "inputs" / "judgebench" / file_name(split)
    return [json.loads(line) for line in path.read_text().splitlines()]


def official_judgments(run, model: str, split: str) -> list[dict]:
    """The pairs with their two judgments as run_judge.py records them: (A, B) then (B, A), each decision as the
    judge gave it on the order shown."""
    scores = pd.read_parquet(run.results / "scores" / "judgebench" / model / f"{split}.parquet").set_index("id")
    out = []
    for pair in published_pairs(run, split):
        key = pair["pair_id"]
        if "verdict" in scores.columns:  # a pairwise judge: its verdict letter on each order shown
            decisions = [{"A": "A>B", "B": "B>A"}.get(scores.loc[f"{key}#order{order}", "verdict"])
                         for order in (1, 2)]
            judgments = [{"decision": decision} for decision in decisions]
        else:  # a reward model scores each response once; the second order shows them swapped
            a, b = scores.loc[f"{key}#A", "reward"], scores.loc[f"{key}#B", "reward"]
            judgments = [official_reward_judgment(a, b), official_reward_judgment(b, a)]
        out.append({**pair, "judgments": judgments})
    return out


@pytest.mark.e2e
def test_the_table_is_the_official_metric_on_the_runs_own_scores_to_the_last_digit(jb_run):
    run, _ = jb_run
    path = run.results / "tables" / "judgebench.csv"
    assert path.read_text().splitlines()[0] == ",".join(COLUMNS)
    table = {(row["model"], row["split"]): row for row in _rows(path)}
    assert set(table) == {(model, split) for model in MODELS for split in SPLITS}
    for model in MODELS:
        for split in SPLITS:
            pairs = official_judgments(run, model, split)
            for column, prefix in zip(COLUMNS[2:], PREFIXES, strict=True):
                expected = official_score(pairs, lambda p, s=prefix: p["source"].startswith(s))
                assert table[(model, split)][column] == f"{expected:.12g}", (model, split, column)


@pytest.mark.e2e
def test_equal_rewards_are_not_correct_and_the_length_baseline_follows_from_the_texts(jb_run):
    run, _ = jb_run
    pairs = _rows(run.results / "judgebench" / "pairs.csv")
    same_text = [p["pair_id"] for p in published_pairs(run, "gpt") if p["response_A"] == p["response_B"]]
    assert len(same_text) == 1
    for model in ("tiny-cls", "length-baseline"):
        (row,) = [p for p in pairs if p["model"] == model and p["pair_id"] == same_text[0]]
        assert row["score_A"] == row["score_B"] and (row["decision_1"], row["decision_2"], row["net"],
                                                     row["correct"]) == ("B>A", "A>B", "0", "0")
    table = {(row["model"], row["split"]): row for row in _rows(run.results / "tables" / "judgebench.csv")}
    for split in SPLITS:
        published = published_pairs(run, split)
        longer_wins = [len(p["response_A"]) > len(p["response_B"]) if p["label"] == "A>B" else
                       len(p["response_B"]) > len(p["response_A"]) for p in published]
        assert float(table[("length-baseline", split)]["overall"]) == pytest.approx(
            100 * sum(longer_wins) / len(published))
    assert table[("length-baseline", "gpt")]["overall"] == "58.3333333333"  # 7 of the 12 fixture pairs


@pytest.mark.e2e
def test_pairs_are_keyed_by_the_official_pair_id_and_the_judge_saw_both_orders(jb_run):
    run, server = jb_run
    pairs = pd.read_csv(run.results / "judgebench" / "pairs.csv")
    for split in SPLITS:
        ids = [p["pair_id"] for p in published_pairs(run, split)]
        for model in MODELS:
            assert list(pairs[(pairs["model"] == model) & (pairs["split"] == split)]["pair_id"]) == ids
    assert set(pairs[pairs["model"] == "length-baseline"]["mode"]) == {"length baseline"}
    assert set(pairs[pairs["model"] == "judge-pairwise"]["mode"]) == {"judge (pairwise)"}
    # Two orders per pair, the winner's own row asks nothing; a pair whose two responses are one text (one per split)
    # shows one prompt in both orders (asked once or twice, as the two concurrent requests meet the API cache).
    published = [pair for split in SPLITS for pair in published_pairs(run, split)]
    same_text = sum(pair["response_A"] == pair["response_B"] for pair in published)
    assert same_text == 2 and len(server.intended) == 2 * len(published) - same_text
    assert 2 * len(published) - same_text <= server.requests <= 2 * len(published)
    subsets = _rows(run.results / "tables" / "judgebench_subsets.csv")
    assert {row["subset"] for row in subsets if row["category"] == "knowledge"} == {"all", "mmlu-pro-law",
                                                                                      "mmlu-pro-math"}


@pytest.mark.e2e
def test_the_lock_records_each_files_sha256(jb_run):
    run, _ = jb_run
    record = yaml.safe_load((run.results / "lock.yaml").read_text())["judgebench_data"]
    assert record["source"] == "local"
    for split in SPLITS:
        path = run.workdir / "inputs" / "judgebench" / file_name(split)
        assert record["splits"][split]["sha256"] == sha256_file(path)
    assert record["splits"]["gpt"]["categories"] == {"knowledge": 6, "reasoning": 2, "math": 2, "coding": 2,
                                                     "overall": 12}


@pytest.mark.e2e
def test_comparisons_leaderboard_summary_and_the_console_answer(jb_run):
    run, _ = jb_run
    from rmeval.benchmarks import benchmark
    from rmeval.run_command.answer import AnswerInputs, answer

    board = [row for row in _rows(run.results / "tables" / "leaderboard.csv") if row["benchmark"] == "judgebench"]
    assert {(row["metric"], row["model"]) for row in board} == {(f"{s}:overall", m) for s in SPLITS for m in MODELS}
    assert {row["model"] for row in board if row["baseline"] in ("true", "True", "1")} == {"length-baseline"}
    comparisons = [row for row in _rows(run.results / "tables" / "comparisons.csv")
                   if row["benchmark"] == "judgebench"]
    assert {row["metric"] for row in comparisons} >= {"gpt:overall", "claude:coding"}
    assert all(row["p_adjusted"] and row["q_value"] for row in comparisons)
    overall = {(r["model"], r["split"]): r["overall"] for r in _rows(run.results / "tables" / "judgebench.csv")}
    for row in board:
        assert float(row["value"]) == pytest.approx(float(overall[(row["model"], row["metric"].split(":")[0])]))
    summary = (run.results / "summary.md").read_text()
    assert "## JudgeBench (Tan et al. 2025)" in summary
    assert "length-baseline (length baseline: a trivial baseline, not a reward model)" in summary
    text = answer(AnswerInputs(run.workdir, [benchmark("judgebench")], MODELS, "results/run_config.yaml",
                               "snakemake"))
    assert "gpt:overall" in text and "claude:overall" in text and "judgebench.md" in text


@pytest.mark.e2e
def test_a_rerun_does_nothing_and_a_bad_folder_is_named_before_any_job(jb_run):
    run, _ = jb_run
    again = run_snakemake(run.workdir, run.configfile, "-n", env={JUDGE_KEY_ENV: JUDGE_SECRET})
    assert "Nothing to be done" in again.stdout + again.stderr
    before = tree_state(run.results)
    bad = run.workdir / "inputs" / "bad"
    bad.mkdir()
    rows = published_pairs(run, "gpt")
    del rows[1]["response_B"]
    rows[2]["label"] = "A=B"
    (bad / file_name("gpt")).write_text("".join(json.dumps(row) + "\n" for row in rows))
    (bad / file_name("claude")).write_text("")
    config = yaml.safe_load(run.configfile.read_text())
    config["judgebench"]["path"] = "inputs/bad"
    configfile = run.workdir / "bad.yaml"
    configfile.write_text(yaml.safe_dump(config))
    result = run_snakemake(run.workdir, configfile, "--cores", "1", check=False, env={JUDGE_KEY_ENV: JUDGE_SECRET})
    output = result.stdout + result.stderr
    assert result.returncode != 0
    gpt = Path("inputs/bad") / file_name("gpt")
    assert f"{gpt}: line 2 (pair_id {rows[1]['pair_id']}): field 'response_B': missing" in output
    assert f"{gpt}: line 3 (pair_id {rows[2]['pair_id']}): field 'label': unknown label 'A=B'" in output
    assert f"inputs/bad/{file_name('claude')}: no pairs (an empty split)" in output
    assert "rule judgebench_prepare" not in output
    assert tree_state(run.results) == before
