"""JudgeBench's pieces without the workflow: the official rule (restated from ScalerLab/JudgeBench and checked
against rmeval's), the files' checks (one line per problem: file, line and pair, field), the two tables' layout
(each response once; both orders for a pairwise judge), the lock section, a rerun from the lock, and its part of
`rmeval run`."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest
from judgebench_fixtures import file_name, pair_rows, write_folder
from rmeval.benchmarks.judgebench import loading, lock, metrics, plan, prepare
from rmeval.benchmarks.judgebench.official import CATEGORIES, SPLITS
from rmeval.benchmarks.judgebench.scoring import flip, net, reward_pair, verdict_decision
from rmeval.errors import RmevalError
from workflow_helpers import REPO_ROOT


# ----------------------------------------------------------------------------- the official rule, restated
# ScalerLab/JudgeBench@e2c52c2, utils/metrics.py lines 6-11.
def official_flip(decision):
    if decision == "A>B":
        decision = "B>A"
    elif decision == "B>A":
        decision = "A>B"
    return decision


# utils/metrics.py lines 14-78 (compute_final_metrics, reverse_order=True): the counter over both decisions, the
# second flipped; 100 * n_correct / n_pairs.
def official_score(pairs, include_fn=lambda pair: True):
    pairs = [pair for pair in pairs if include_fn(pair)]
    n_correct = 0
    for pair in pairs:
        label = pair["label"]
        judgment1, judgment2 = pair["judgments"]
        decision1 = judgment1["decision"] if judgment1 is not None else None
        decision2 = official_flip(judgment2["decision"] if judgment2 is not None else None)
        counter = 0
        for decision in [decision1, decision2]:
            if decision == label:
                counter += 1
            elif decision == official_flip(label):
                counter -= 1
        if counter > 0:
            n_correct += 1
    return 100 * n_correct / len(pairs)


# utils/judges.py line 525 (GRMReward; lines 473 and 564 the same): a reward model's judgment on (A, B) as shown.
def official_reward_judgment(score_a, score_b):
    return {"decision": "A>B" if score_a > score_b else "B>A"}


# run_judge.py lines 27-37: the second judgment shows (response_B, response_A); line 94: the category prefixes.
PREFIXES = ["mmlu-pro", "livebench-reasoning", "livebench-math", "livecodebench", ""]


def official_pairs_from_rewards(pairs, rewards):
    return [{**pair, "judgments": [official_reward_judgment(*rewards[pair["pair_id"]]),
                                   official_reward_judgment(*reversed(rewards[pair["pair_id"]]))]}
            for pair in pairs]


def test_the_rule_equals_the_official_one_on_every_decision():
    decisions = ["A>B", "B>A", None, "A=B"]
    for label in ("A>B", "B>A"):
        for first in decisions:
            for raw_second in decisions:
                official = official_score([{"label": label, "judgments": [{"decision": first},
                                                                          {"decision": raw_second}]}])
                assert (official == 100) == (net(label, first, flip(raw_second)) > 0), (label, first, raw_second)


def test_reward_decisions_equal_the_official_ones_and_equal_rewards_are_never_correct():
    rng = random.Random(0)
    for _ in range(500):
        a, b = rng.choice([0.0, 1.0, rng.random()]), rng.choice([0.0, 1.0, rng.random()])
        label = rng.choice(["A>B", "B>A"])
        first, second, total = reward_pair(label, a, b)
        assert first == official_reward_judgment(a, b)["decision"]
        assert second == official_flip(official_reward_judgment(b, a)["decision"])
        pair = {"label": label, "judgments": [official_reward_judgment(a, b), official_reward_judgment(b, a)]}
        assert (total > 0) == (official_score([pair]) == 100)
    assert reward_pair("B>A", 0.5, 0.5) == ("B>A", "A>B", 0)  # equal rewards: opposite decisions, net 0
    assert reward_pair("A>B", 0.5, 0.5)[2] == 0


def test_outcomes_reproduce_compute_final_metrics_per_category_to_the_last_digit(tmp_path):
    rows = pair_rows("gpt", 12)
    table = loading.frame(loading.item_rows(loading.load_split(write_folder(tmp_path, ("gpt",)) / file_name("gpt"))),
                         loading.ITEM_COLUMNS)
    rng = random.Random(1)
    rewards = {row["pair_id"]: (rng.random(), rng.random()) for row in rows}
    rewards[rows[3]["pair_id"]] = (0.25, 0.25)  # equal rewards
    scores = pd.DataFrame({"id": [f"{p}#{s}" for p in rewards for s in "AB"],
                           "reward": [value for pair in rewards.values() for value in pair]})
    item = metrics.outcomes("m", "gpt", table, scores, tmp_path / "m.parquet")
    row = metrics.table_row(item)
    official = official_pairs_from_rewards(rows, rewards)
    for column, prefix in zip([*CATEGORIES, "overall"], PREFIXES, strict=True):
        assert f"{row[column]:.12g}" == f"{official_score(official, lambda p, s=prefix: p['source'].startswith(s)):.12g}"
    assert not next(p for p in item.pairs if p["pair_id"] == rows[3]["pair_id"])["correct"]


# ----------------------------------------------------------------------------- the tables scored
def test_each_response_is_one_row_and_a_pairwise_judge_sees_both_orders(tmp_path):
    pairs = loading.load_split(write_folder(tmp_path, ("gpt",)) / file_name("gpt"))
    items = loading.item_rows(pairs)
    assert len(items) == 2 * len(pairs) and len({row["id"] for row in items}) == len(items)
    pairwise = loading.pairwise_rows(pairs)
    first = pairs[1]  # label B>A
    by_id = {row["id"]: row for row in pairwise if row["pair_id"] == first.pair_id}
    assert by_id[f"{first.pair_id}#chosen"]["response"] == first.response_b
    order1, order2 = by_id[f"{first.pair_id}#order1"], by_id[f"{first.pair_id}#order2"]
    assert (order1["chosen_position"], order2["chosen_position"]) == ("B", "A")  # as published, then swapped
    assert order1["response"] == order2["response"] == first.response_a
    assert verdict_decision("B") == "B>A" and verdict_decision(None) is None


def test_a_pairwise_judges_verdicts_follow_the_official_rule(tmp_path):
    pairs = loading.load_split(write_folder(tmp_path, ("claude",)) / file_name("claude"))
    table = loading.frame(loading.pairwise_rows(pairs), loading.PAIRWISE_COLUMNS)
    rng = random.Random(2)
    rows, official = [], []
    for pair in pairs:
        shown = {1: rng.choice(["A", "B", None]), 2: rng.choice(["A", "B", None])}
        winner_at = pair.label[0]
        rows.append({"id": f"{pair.pair_id}#chosen", "reward": 0.0, "verdict": None, "chosen_position": None})
        for order, position in ((1, winner_at), (2, "B" if winner_at == "A" else "A")):
            rows.append({"id": f"{pair.pair_id}#order{order}", "reward": 1.0, "verdict": shown[order],
                         "chosen_position": position})
        official.append({"label": pair.label, "source": pair.source,
                         "judgments": [{"decision": verdict_decision(shown[1])},
                                       {"decision": verdict_decision(shown[2])}]})
    item = metrics.outcomes("judge", "claude", table, pd.DataFrame(rows), tmp_path / "judge.parquet")
    assert item.mode == metrics.PAIRWISE_JUDGE
    assert f"{metrics.table_row(item)['overall']:.12g}" == f"{official_score(official):.12g}"
    seeded = pd.DataFrame(rows).assign(chosen_position="A")
    with pytest.raises(RmevalError, match="options.positions: recorded"):
        metrics.outcomes("judge", "claude", table, seeded, tmp_path / "judge.parquet")


# ----------------------------------------------------------------------------- bad input, one line each
def test_every_problem_of_a_file_is_one_line_naming_file_line_pair_and_field(tmp_path):
    rows = pair_rows("gpt", 4)
    del rows[1]["response_B"]
    rows[2]["label"] = "A=B"
    rows[3]["pair_id"] = rows[0]["pair_id"]
    path = tmp_path / file_name("gpt")
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    _, problems = loading.read_pairs(path)
    assert problems == [
        f"{path}: line 2 (pair_id {rows[1]['pair_id']}): field 'response_B': missing",
        f"{path}: line 3 (pair_id {rows[2]['pair_id']}): field 'label': unknown label 'A=B' (expected A>B or B>A)",
        f"{path}: line 4 (pair_id {rows[0]['pair_id']}): field 'pair_id': duplicate of line 1",
    ]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert loading.read_pairs(empty)[1] == [f"{empty}: no pairs (an empty split)"]
    found = plan.file_problems("gpt", str(path), None)
    assert [problem.what for problem in found] == problems and found[0].key == "judgebench.path"


def test_a_local_folder_may_hold_the_hubs_layout(tmp_path):
    (tmp_path / "data").mkdir()
    write_folder(tmp_path / "data", ("claude",))
    (tmp_path / "data" / file_name("claude")).rename(tmp_path / SPLITS["claude"].hub_file)
    assert loading.local_file(tmp_path, SPLITS["claude"]) == tmp_path / SPLITS["claude"].hub_file
    assert loading.local_file(tmp_path, SPLITS["gpt"]).name == file_name("gpt")  # named in the message


# ----------------------------------------------------------------------------- prepare, the lock
def test_prepare_writes_both_tables_and_the_manifest_and_a_changed_file_is_stopped(tmp_path):
    folder = write_folder(tmp_path / "in")
    out = tmp_path / "out"
    assert prepare.main(["--source", "local", "--path", str(folder), "--splits", "gpt", "claude",
                         "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["splits"]["gpt"]["pairs"] == 12 and manifest["splits"]["claude"]["categories"]["overall"] == 8
    assert manifest["splits"]["gpt"]["published_bytes"] is False  # our own fixture, not the authors' file
    assert len(pd.read_parquet(out / "pairwise" / "claude.parquet")) == 3 * 8
    record = lock.LOCK_SECTION.build({"manifest": out / "manifest.json"})
    parsed = lock.LOCK_SECTION.parse(record.to_dict(), "lock.yaml")
    assert parsed.split_sha256() == {split: manifest["splits"][split]["sha256"] for split in ("gpt", "claude")}
    assert lock.LOCK_SECTION.diff(record, parsed) == []
    assert lock.LOCK_SECTION.summary_rows(record)[0][1] == "judgebench gpt"
    changed = folder / file_name("gpt")
    changed.write_text(changed.read_text().replace("Question 0", "Question zero"))
    with pytest.raises(RmevalError, match="differ from the locked bytes"):
        prepare.main(["--source", "local", "--path", str(folder), "--splits", "gpt", "--out", str(out),
                      "--locked", json.dumps(parsed.split_sha256())])
    locked = parsed.split_sha256()["gpt"]
    (problem,) = plan.file_problems("gpt", str(changed), locked)
    assert problem.what.endswith(f"the lock's ({locked[:16]}...)")
    rebuilt = lock.LOCK_SECTION.build({"manifest": out / "manifest.json"})
    assert lock.LOCK_SECTION.diff(record, rebuilt) == []  # nothing was rewritten


def test_the_scenario_fixtures_are_the_generated_ones():
    for split in ("gpt", "claude"):
        committed = (REPO_ROOT / ".test" / "judgebench" / "data" / file_name(split)).read_text()
        assert committed == "".join(json.dumps(row) + "\n" for row in pair_rows(split, len(committed.splitlines())))


# ----------------------------------------------------------------------------- rmeval run
def test_rmeval_run_turns_it_on_with_the_runs_models():
    from rmeval.run_command import build, overrides
    from rmeval.run_command.models import Resolved

    chosen, problems = build.selected(["judgebench"])
    assert problems == [] and [bench.name for bench in chosen] == ["judgebench"]
    models = [Resolved("length-baseline", "length-baseline", "--baseline length", "registry")]
    config = build.build_config(models, chosen, None, "config/models.yaml", REPO_ROOT)
    assert config["judgebench"] == {"enabled": True, "models": ["length-baseline"]}
    assert overrides.problems({**config, "judgebench": {**config["judgebench"], "splits": ["gpt", "claude"]}}) == []
    assert any("judgebench.splits" in line for line in overrides.problems({**config, "judgebench": {
        **config["judgebench"], "splits": ["gemini"]}}))


# ----------------------------------------------------------------------------- the Hub, and a rerun from the lock
def test_the_hub_source_reads_the_cache_at_its_commit_and_records_it(tmp_path, monkeypatch):
    from huggingface_hub import constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = tmp_path / "hub" / "datasets--ScalerLab--JudgeBench" / "snapshots" / commit
    write_folder(tmp_path / "in", ("gpt",))
    (snapshot / "data").mkdir(parents=True)
    (tmp_path / "in" / file_name("gpt")).rename(snapshot / SPLITS["gpt"].hub_file)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    out = tmp_path / "out"
    assert prepare.main(["--source", "hub", "--splits", "gpt", "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dataset"] == "ScalerLab/JudgeBench" and manifest["splits"]["gpt"]["resolved_revision"] == commit
    record = lock.LOCK_SECTION.build({"manifest": out / "manifest.json"})
    assert record.resolved_revision() == commit and lock.LOCK_SECTION.summary_rows(record)[0][2].startswith(
        f"ScalerLab/JudgeBench@{commit}")
    with pytest.raises(RmevalError, match="differ from the locked bytes"):
        prepare.main(["--source", "hub", "--revision", commit, "--splits", "gpt", "--out", str(out),
                      "--locked", json.dumps({"gpt": "0" * 64})])


def test_a_run_following_a_lock_reads_its_commit_and_its_bytes(tmp_path, monkeypatch):
    from rmeval.lock import lockfile
    from rmeval.registry import load_registry
    from rmeval.run_plan import PlanContext

    record = lock.DataLock(lock.KEY, {"source": "hub", "dataset": "ScalerLab/JudgeBench", "revision": None,
                                      "splits": {"gpt": {"sha256": "a" * 64, "resolved_revision": "c" * 40}}})
    monkeypatch.setattr(lockfile, "load_lock", lambda path: type("Lock", (), {"sections": {"judgebench": record}}))
    config = {"models": ["length-baseline"], "judgebench": {"enabled": True, "source": "hub", "path": None,
                                                           "revision": None, "splits": ["gpt"], "models": None}}
    registry = load_registry(str(REPO_ROOT / "config" / "models.yaml"))
    context = PlanContext(registry, {}, str, tmp_path, "locked.yaml")
    planned = plan.plan(config, context)
    settings = planned.settings["judgebench_prepare"]
    assert settings["revision"] == "c" * 40 and settings["locked"] == {"gpt": "a" * 64}
    assert planned.settings["judgebench_metrics"]["scored_models"] == ["length-baseline"]
    unlocked = plan.plan(config, PlanContext(registry, {}, str, tmp_path, None)).settings["judgebench_prepare"]
    assert unlocked["revision"] is None and unlocked["locked"] is None
