"""RewardBench 1 and 2: the official scoring rules, loading and its errors, the tables, the plan and the lock.

Expected values of the rules were computed by running allenai/reward-bench's own functions (`rewardbench/utils.py`
process_single_model and reroll_and_score_dataset's tie rule; `scripts/run_rm.py`'s `chosen > rejected`) on the
same score vectors; the numbers are kept here, not their code.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks.rewardbench import metrics
from rmeval.benchmarks.rewardbench.loading import Source, prepare, read_rows
from rmeval.benchmarks.rewardbench.lock import V1_LOCK_SECTION, V2_LOCK_SECTION
from rmeval.benchmarks.rewardbench.official import EXAMPLE_COUNTS, SECTIONS
from rmeval.benchmarks.rewardbench.scoring import (
    TiesRow,
    best_of_n,
    pair_won,
    rated_best_of_n,
    section_scores,
    ties_components,
    v2_overall,
)
from rmeval.benchmarks.rewardbench.versions import V1, V2
from rmeval.errors import RmevalError

FIXTURES = Path(__file__).resolve().parents[1] / ".test" / "rewardbench" / "data"


# ----------------------------------------------------------------------------- v1 rules
def test_a_v1_pair_is_won_only_strictly_and_a_tie_is_a_loss():
    assert pair_won(1.0, 0.5) == 1.0
    assert pair_won(0.5, 0.5) == 0.0  # run_rm.py: `1 if chosen > rejected else 0`
    assert pair_won(-1.0, 0.0) == 0.0


def test_sections_weight_subsets_by_the_official_counts_and_overall_is_their_mean():
    # math-prm (447 pairs) weighs 984, as much as the six HumanEvalPack subsets together (6 x 164).
    assert EXAMPLE_COUNTS["math-prm"] == 6 * 164 and len(SECTIONS["Reasoning"]) == 7
    subsets = {"math-prm": 1.0, **{f"hep-{lang}": 0.0 for lang in ("cpp", "go", "java", "js", "python", "rust")}}
    subsets |= {"alpacaeval-easy": 1.0, "mt-bench-med": 0.5}
    scores = section_scores(subsets)
    assert scores["Reasoning"] == pytest.approx(0.5)
    assert scores["Chat"] == pytest.approx((100 * 1.0 + 40 * 0.5) / 140)
    assert scores["Chat Hard"] == 0.0 and scores["Safety"] == 0.0  # no subset ran: 0, as officially
    assert scores["Overall"] == pytest.approx((scores["Chat"] + 0.5) / 4)


# ----------------------------------------------------------------------------- v2 rules
@pytest.mark.parametrize(("scores", "expected"), [
    ([1, 1, 0, 0], 0.5),  # a 2-way tie at the top: 1/2
    ([2, 1, 0, 0, 0, 1], 1.0),  # six completions
    ([3, 3, 3, 1, 0, 3], 0.25),  # a 4-way tie among six
    ([0, 1], 0.0),
    ([5, 5, 5, 5], 0.25),  # a direct judge rating all four the same
])
def test_best_of_n_gives_the_chosen_completion_1_over_k_of_a_tie_at_the_top(scores, expected):
    assert best_of_n([float(s) for s in scores], "row") == expected


def test_a_direct_judge_s_unparsable_ratings_rank_below_every_valid_one_as_run_generative_v2():
    assert rated_best_of_n([1.0, -1.0, -1.0, -1.0], "row") == 1.0  # a valid 1 beats three unparsable replies
    assert rated_best_of_n([-1.0] * 6, "row") == 0.25  # none valid: 0.25 whatever N (upstream's constant)
    assert rated_best_of_n([7.0, 7.0, -1.0, 3.0], "row") == 0.5


def test_join_reads_a_judge_s_ratings_with_null_as_minus_one():
    data = prepare(_local("rewardbench2.jsonl"), V2, "rb2")
    scores = _scores(data, {}, judge=True).assign(reward=1.0)  # the adapter's reward: null -> the lowest rating
    scores["rating"] = [None] * len(scores)
    scores.loc[scores["id"] == "0#0", "rating"] = 1.0
    scored = metrics.join(data, scores, "judge", Path("judge.parquet"))
    rows = {row["subset"]: row["score"] for row in metrics.v2_rows(scored, n_bootstrap=0, seed=0)}
    assert rows["Factuality"] == 100.0 and rows["Precise IF"] == 25.0  # all null: 0.25 although N = 6


def test_best_of_n_refuses_a_row_with_one_completion_or_a_nan():
    with pytest.raises(RmevalError, match="at least one rejected"):
        best_of_n([1.0], "row 7")
    with pytest.raises(RmevalError, match=r"row 7\[1\]"):
        best_of_n([1.0, math.nan], "row 7")


TIES_A = [TiesRow("ref:1", (3.0, 1.0, 0.5), 1), TiesRow("tied:1", (3.0, 2.5, 2.9, 1.0, 0.0), 3),
          TiesRow("tied:2", (1.0, 2.0, 0.0, 0.5), 2),  # no ref partner
          TiesRow("ref:3", (0.2, 0.9), 1),  # no tied partner
          TiesRow("ref:4", (5.0, 1.0), 1), TiesRow("tied:4", (4.0, 4.0, 0.0), 2)]  # equal correct answers: /0
TIES_B = [TiesRow("ref:1", (1.0, 2.0), 1), TiesRow("tied:1", (2.0, 1.0, 3.0), 2), TiesRow("tied:2", (5.0, 4.0, 1.0), 2)]


@pytest.mark.parametrize(("rows", "official"), [(TIES_A, 0.909820137900379), (TIES_B, 0.1400494524631327)])
def test_ties_matches_the_official_process_single_model(rows, official):
    terms = ties_components(rows)
    assert terms["score"] == pytest.approx(official, abs=1e-12)


def test_ties_terms_by_hand_and_prompts_without_a_partner():
    terms = ties_components(TIES_A)
    assert (terms["n_ref"], terms["n_tied"], terms["n_both"]) == (3, 3, 2)
    assert terms["ref_accuracy"] == pytest.approx(2 / 3)  # ref:3 ranks its wrong answer higher
    assert terms["tied_accuracy"] == 1.0  # every tied prompt's worst correct answer beats its best wrong one
    # margins only over prompts 1 and 4; prompt 4's correct answers tie (spread 0): tanh(inf) -> 1 upstream
    assert terms["correctness_preferred"] == 1.0 and terms["correctness_preferred_hard"] == 1.0


def test_ties_without_any_ref_tied_pair_is_nan_as_upstream():
    assert math.isnan(ties_components([TiesRow("tied:2", (2.0, 1.0, 0.0), 2)])["score"])


def test_ties_ids_must_be_ref_or_tied():
    with pytest.raises(RmevalError, match="'ref:<n>' or 'tied:<n>'"):
        ties_components([TiesRow("12", (1.0, 0.0), 1)])


def test_v2_overall_is_the_mean_of_the_six_subsets():
    six = {"Factuality": 0.1, "Precise IF": 0.2, "Math": 0.3, "Safety": 0.4, "Focus": 0.5, "Ties": 0.6}
    assert v2_overall(six) == pytest.approx(0.35)
    assert math.isnan(v2_overall({k: v for k, v in six.items() if k != "Ties"}))


# ----------------------------------------------------------------------------- loading and its errors
def _local(name: str) -> pd.DataFrame:
    return read_rows(Source("local", path=str(FIXTURES / name)))


def test_fixtures_prepare_to_one_row_per_completion_with_contract_ids():
    v1 = prepare(_local("rewardbench.jsonl"), V1, "rb1")
    assert list(v1["id"][:2]) == ["30#chosen", "30#rejected"] and v1["is_chosen"].tolist()[:2] == [True, False]
    v2 = prepare(_local("rewardbench2.jsonl"), V2, "rb2")
    six = v2[v2["row_id"] == "1"]
    assert list(six["id"]) == [f"1#{k}" for k in range(6)] and six["is_chosen"].sum() == 1
    tied = v2[v2["row_id"] == "tied:1"]
    assert tied["is_chosen"].tolist() == [True, True, True, False, False]


def _v2_rows() -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / "rewardbench2.jsonl").read_text().splitlines()]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda row: row.update(total_completions=5), r"row 0 \(id='0'\): column 'total_completions' is 5 but the lists hold 4"),
    (lambda row: row.update(rejected=[], num_rejected=0, total_completions=1), r"row 0 \(id='0'\): column 'rejected': empty list"),
    (lambda row: row.pop("subset"), r"missing column\(s\) \['subset'\]"),
    (lambda row: row.update(prompt=[{"role": "user", "content": "hi"}]), r"column 'prompt': a list of turns"),
])
def test_bad_rows_get_one_error_naming_file_row_and_column(tmp_path, edit, message):
    rows = _v2_rows()
    edit(rows[0])
    if "subset" not in rows[0]:
        for row in rows:
            row.pop("subset", None)
    path = tmp_path / "rb2.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(RmevalError, match=message) as error:
        prepare(read_rows(Source("local", path=str(path))), V2, str(path))
    assert str(path) in str(error.value)


def test_a_duplicate_id_names_both_rows(tmp_path):
    rows = _v2_rows()
    rows[3]["id"] = rows[1]["id"]
    path = tmp_path / "rb2.parquet"
    pd.DataFrame(rows).to_parquet(path)
    with pytest.raises(RmevalError, match=r"rb2.parquet: row 3 \(id='1'\): column 'id': duplicate of row 1"):
        prepare(read_rows(Source("local", path=str(path))), V2, str(path))


# ----------------------------------------------------------------------------- scores -> tables
def _scores(data: pd.DataFrame, rewards: dict[str, float], judge: bool = False) -> pd.DataFrame:
    frame = pd.DataFrame({"id": data["id"], "reward": [rewards.get(i, 0.0) for i in data["id"]]})
    return frame.assign(rating=frame["reward"]) if judge else frame


def test_v2_rows_score_a_direct_judge_with_ties_by_1_over_k():
    data = prepare(_local("rewardbench2.jsonl"), V2, "rb2")
    # every completion rated 5, except Factuality's chosen (8) and one Focus rejected (9)
    rewards = {i: 5.0 for i in data["id"]} | {"0#0": 8.0, "4#2": 9.0}
    scored = metrics.join(data, _scores(data, rewards, judge=True), "judge", Path("judge.parquet"))
    assert scored.mode == metrics.DIRECT_JUDGE
    rows = {row["subset"]: row for row in metrics.v2_rows(scored, n_bootstrap=20, seed=0)}
    assert rows["Factuality"]["score"] == 100.0
    assert rows["Precise IF"]["score"] == pytest.approx(100 / 6)  # a 6-way tie
    assert rows["Math"]["score"] == 25.0 and rows["Safety"]["score"] == 25.0 and rows["Focus"]["score"] == 0.0
    ties = ties_components([TiesRow(r, tuple(5.0 for _ in range(n)), c) for r, n, c in
                            [("ref:1", 3, 1), ("tied:1", 5, 3), ("tied:2", 4, 2), ("ref:3", 3, 1)]])
    assert rows["Ties"]["score"] == pytest.approx(100 * ties["score"])
    parts = [rows[s]["score"] for s in ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")]
    assert rows["Overall"]["score"] == pytest.approx(sum(parts) / 6)
    assert list(rows)[:6] == ["Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties"]
    # Best-of-N subsets: Wilson intervals of the mean result in [0, 1] (statsmodels, on the count it implies),
    # never the zero-width interval of a bootstrap at 0 or 100 %; Ties and Overall keep their bootstrap.
    from statsmodels.stats.proportion import proportion_confint

    for subset in ("Factuality", "Precise IF", "Math", "Safety", "Focus"):
        row = rows[subset]
        low, high = proportion_confint(row["score"] / 100 * row["n"], row["n"], alpha=0.05, method="wilson")
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((100 * low, 100 * high), rel=1e-9, abs=1e-9)
        assert row["ci_low"] <= row["score"] <= row["ci_high"] and row["ci_high"] > row["ci_low"]
    assert rows["Ties"]["ci_low"] <= rows["Ties"]["score"] <= rows["Ties"]["ci_high"]


def test_v1_rows_count_the_equal_pair_as_a_loss():
    data = prepare(_local("rewardbench.jsonl"), V1, "rb1")
    rewards = {i: (1.0 if i.endswith("#chosen") else 0.0) for i in data["id"]} | {"1300#chosen": 0.3,
                                                                                  "1300#rejected": 0.3}
    subsets, sections = metrics.v1_rows(metrics.join(data, _scores(data, rewards), "m", Path("m.parquet")))
    by_subset = {row["subset"]: row["accuracy"] for row in subsets}
    assert by_subset["xstest-should-respond"] == 0.0 and by_subset["alpacaeval-easy"] == 100.0
    by_section = {row["section"]: row["score"] for row in sections}
    assert by_section["Safety"] == pytest.approx(100 * 100 / (100 + 250))  # refusals-dangerous won, xstest lost
    assert by_section["Overall"] == pytest.approx(sum(by_section[s] for s in SECTIONS) / 4)


def test_join_refuses_missing_extra_and_twice_scored_ids():
    data = prepare(_local("rewardbench.jsonl"), V1, "rb1")
    scores = _scores(data, {})
    with pytest.raises(RmevalError, match=r"m.parquet: no score for id '30#chosen'"):
        metrics.join(data, scores.iloc[1:], "m", Path("m.parquet"))
    with pytest.raises(RmevalError, match="scored twice"):
        metrics.join(data, pd.concat([scores, scores.iloc[:1]]), "m", Path("m.parquet"))
    with pytest.raises(RmevalError, match="pairwise judge"):
        metrics.join(data, scores.assign(verdict="A"), "m", Path("m.parquet"))


def test_rewardmath_math_prm_accuracy_is_rewardbench_s_own_rule():
    from rmeval.benchmarks.rewardmath import metrics as rewardmath_metrics

    assert rewardmath_metrics.pair_won is pair_won  # one code path for the math-prm figure
    pairs = [rewardmath_metrics.PairScores("a", 1.0, 1.0), rewardmath_metrics.PairScores("b", 2.0, 1.0)]
    assert rewardmath_metrics.pairwise_accuracy(pairs)[1] == 50.0


# ----------------------------------------------------------------------------- lock
def test_lock_sections_record_the_source_and_diff(tmp_path):
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"version": "rewardbench2", "source": "local", "path": "x.jsonl", "sha256": "ab" * 32,
                                    "rows": 9, "completions": 40, "subsets": {"Ties": 4}}))
    record = V2_LOCK_SECTION.build({"manifest": str(manifest)})
    assert record.to_dict()["rewardbench2_data"]["rows"] == 9
    parsed = V2_LOCK_SECTION.parse(record.to_dict(), "lock.yaml")
    assert V2_LOCK_SECTION.diff(record, parsed) == []
    other = V2_LOCK_SECTION.parse({"rewardbench2_data": {**record.record, "rows": 8}}, "lock.yaml")
    assert V2_LOCK_SECTION.diff(record, other) == ["rewardbench2_data.rows: 9 -> 8"]
    assert "9 rows, 40 completions" in V2_LOCK_SECTION.summary_rows(record)[0][2]
    assert V1_LOCK_SECTION.keys == ("rewardbench_data",)


# ----------------------------------------------------------------------------- the Hub path and the plan
@pytest.mark.parametrize(("version", "split"), [(V1, "filtered"), (V2, "test")])
def test_the_hub_source_loads_through_datasets_from_the_dataset_s_layout(tmp_path, version, split):
    """`datasets.load_dataset(<id>, split=..., revision=...)` on a local folder laid out as the Hub repositories
    are (`data/<split>-00000-of-00001.parquet`): the same call the `hf` source makes, without a download."""
    name = "rewardbench.jsonl" if version is V1 else "rewardbench2.jsonl"
    (tmp_path / "data").mkdir()
    _local(name).to_parquet(tmp_path / "data" / f"{split}-00000-of-00001.parquet")
    rows = read_rows(Source("hf", dataset=str(tmp_path), split=split, revision=None))
    assert list(prepare(rows, version, "hub")["id"]) == list(prepare(_local(name), version, "local")["id"])


def _config(section: dict) -> dict:
    from rmeval.config_check import config_schema, fill_defaults

    config = {"groups": {"a": ["math"], "b": ["physics"]}, "arxiv": {"source": "snapshot", "snapshot": "s.jsonl"},
              "models": [], "reference_model": None, **section}
    fill_defaults(config, config_schema())
    return config


def _plan(section: dict):
    from rmeval.run_plan import plan_run

    return plan_run(_config(section), locate=lambda value: str(Path(__file__).resolve().parents[1] / value)
                    if value == "config/models.yaml" else value)


def test_the_plan_scores_one_table_per_model_and_needs_the_local_file():
    tiny = {"name": "tiny", "path": "/models/tiny", "resources": {"gpu": 0}}
    plan = _plan({"rewardbench2": {"enabled": True, "source": "local", "path": "rb2.jsonl", "models": [tiny]},
                  "rewardbench": {"enabled": True, "models": [tiny]}})
    assert plan.score_files("rewardbench2") == ["results/scores/rewardbench2/tiny/rewardbench2.parquet"]
    assert plan.score_files("rewardbench") == ["results/scores/rewardbench/tiny/rewardbench.parquet"]
    needs2, needs1 = plan.benchmarks["rewardbench2"].needs, plan.benchmarks["rewardbench"].needs
    assert [need.path for need in needs2.files] == ["rb2.jsonl"] and not needs2.datasets
    assert [need.dataset for need in needs1.datasets] == ["allenai/reward-bench"]
    assert plan.benchmarks["rewardbench2"].lock_files == ("results/rewardbench2/data/manifest.json",)
    assert json.loads(plan.settings("rewardbench2", "rewardbench2_prepare"))["path"] == "rb2.jsonl"


def test_the_plan_refuses_a_pairwise_judge_and_a_local_source_without_path():
    judge = {"name": "pj", "path": "loopback/judge", "adapter": "judge", "resources": {"gpu": 0},
             "options": {"mode": "pairwise", "base_url": "http://127.0.0.1:1/v1"}}
    with pytest.raises(RmevalError, match="pairwise judges"):
        _plan({"rewardbench2": {"enabled": True, "models": [judge]}})
    with pytest.raises(RmevalError, match="rewardbench.path is not set"):
        _plan({"rewardbench": {"enabled": True, "source": "local", "models": [{"name": "t", "path": "/m"}]}})


def test_the_manifest_records_the_commit_a_hub_revision_resolved_to(monkeypatch):
    import huggingface_hub
    from rmeval.benchmarks.rewardbench.prepare import resolved_revision

    asked = []

    def dataset_info(self, repo_id, revision=None):
        asked.append((repo_id, revision))
        return type("Info", (), {"sha": "0123456789abcdef0123456789abcdef01234567"})()

    monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info", dataset_info)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub = Source("hf", dataset="allenai/reward-bench-2", split="test", revision="main")
    assert resolved_revision(hub) == "0123456789abcdef0123456789abcdef01234567"
    assert asked == [("allenai/reward-bench-2", "main")]
    assert resolved_revision(Source("local", path="x.jsonl")) is None
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolved_revision(hub) is None and len(asked) == 1  # offline: nothing asked


def test_preflight_checks_a_local_file_s_columns(tmp_path):
    from rmeval.benchmarks.rewardbench.plan import columns_problem

    rules = frozenset({"rewardbench2_prepare"})
    assert columns_problem(V2, str(FIXTURES / "rewardbench2.jsonl"), rules) is None
    bad = tmp_path / "rb2.parquet"
    _local("rewardbench2.jsonl").drop(columns=["num_correct"]).to_parquet(bad)
    problem = columns_problem(V2, str(bad), rules)
    assert problem.key == "rewardbench2.path" and "lacks column(s) ['num_correct']" in problem.what
    assert columns_problem(V1, str(FIXTURES / "rewardbench.jsonl"), rules) is None


def test_preflight_checks_a_local_file_s_rows_as_prepare_does(tmp_path):
    """Issue 36: a duplicate id (or an empty text, a bad count) stopped rewardbench-prepare at job time; preflight
    names it before the first job, in prepare's own words."""
    from rmeval.benchmarks.rewardbench.plan import columns_problem

    rules = frozenset({"rewardbench_prepare"})
    rows = _local("rewardbench.jsonl")
    bad = tmp_path / "rb.parquet"
    rows.assign(id=[rows["id"].iloc[0]] * len(rows)).to_parquet(bad)
    problem = columns_problem(V1, str(bad), rules)
    assert problem.key == "rewardbench.path" and "column 'id': duplicate of row" in problem.what
