"""Official result-file ingestion: the 31 shared RewardMATH files, the RewardBench files, and malformed files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from rmeval.benchmarks.rewardmath import cli_metrics
from rmeval.benchmarks.rewardmath.official import model_key, read_rewardbench_file, read_rewardmath_file
from rmeval.errors import RmevalError

REFS = ["human_to_GPT-4", "modified_with_GPT-4", "gpt-3.5-turbo-0125"]


def _write(tmp_path: Path, name: str, rows) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows))
    return path


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_all_shared_official_files(shared_data, tmp_path):
    official = shared_data / "rewardmath" / "results_rewardmath"
    assert cli_metrics.main(["--official", str(official), "--official-rewardbench",
                             str(shared_data / "rewardmath" / "results_rewardbench"), "--problems",
                             str(shared_data / "rewardmath" / "rewardmath_problems_483_index.jsonl"),
                             "--out", str(tmp_path)]) == 0
    rows = _csv(tmp_path / "rewardmath_metrics.csv")
    assert list(rows[0]) == ["model", "setup", "source", "kind", "aggregation", "n", "full_set", "accuracy", "mrr"]
    by_key = {(row["setup"], row["aggregation"]): row for row in rows}
    assert {row["setup"] for row in rows} == {path.stem for path in official.glob("*.json")}
    assert len(rows) == 31 + 4 * 4  # four PRMs have five aggregations each
    assert (by_key["internlm2_reward", "scalar"]["accuracy"], by_key["internlm2_reward", "scalar"]["mrr"]) == (
        "37.27", "55.17")
    assert (by_key["Math_Shepherd_reward", "prod"]["accuracy"], by_key["Math_Shepherd_reward", "prod"]["mrr"]) == (
        "17.18", "34.68")
    assert by_key["gpt4_reward", "scalar"]["n"] == "485"
    assert {row["aggregation"] for row in rows if row["setup"].endswith("_pairwise_reward")} == {"pairwise"}
    # Judges beside classifiers and PRMs (9 direct and 9 pairwise judge files), the mode in the aggregation.
    kinds = {row["setup"]: row["kind"] for row in rows}
    assert kinds["gpt4_reward"] == kinds["gpt4_pairwise_reward"] == "LLM judge"
    assert kinds["ArmoRM_reward"] == "classifier" and kinds["Math_Shepherd_reward"] == "PRM"
    judges = [row for row in rows if row["kind"] == "LLM judge"]
    assert sum(row["aggregation"] == "scalar" for row in judges) == 9
    assert sum(row["aggregation"] == "pairwise" for row in judges) == 9
    for row in rows:  # percent with two decimals
        assert len(row["accuracy"].split(".")[1]) == 2 and 0 <= float(row["accuracy"]) <= 100

    ci = {(row["setup"], row["aggregation"]): row for row in _csv(tmp_path / "rewardmath_metrics_ci.csv")}
    assert ci["gpt4_pairwise_reward", "pairwise"]["n_missing_verdicts"] == "35"
    low, high = float(ci["internlm2_reward", "scalar"]["accuracy_ci_low"]), float(
        ci["internlm2_reward", "scalar"]["accuracy_ci_high"])
    assert low < 37.27 < high

    breakdown = _csv(tmp_path / "rewardmath_breakdown.csv")
    subjects = [row for row in breakdown if row["setup"] == "internlm2_reward" and row["by"] == "subject"]
    assert len(subjects) == 7
    assert sum(int(row["n"]) for row in subjects) == 477  # 6 of 483 problems are unmatched in the index
    levels = [row for row in breakdown if row["setup"] == "internlm2_reward" and row["by"] == "level"]
    assert [row["value"] for row in levels] == ["1", "2", "3", "4", "5"]

    side = {(row["setup"], row["aggregation"]): row for row in _csv(tmp_path / "rewardmath_vs_rewardbench.csv")}
    assert side["grm_gemma_reward", "scalar"]["rewardbench_setup"] == "rewardbench_GRM_Gemma_2B"
    assert side["Math_Shepherd_reward", "prod"]["rewardbench_setup"] == "rewardbench_Math_Shepherd"
    assert side["gpt4_pairwise_reward", "pairwise"]["rewardbench_accuracy"] == ""
    assert (tmp_path / "rewardmath_metrics.tex").read_text().count(r"\\") == 1 + len(rows)
    assert ("| internlm2-7b-reward | internlm2_reward | official | classifier | scalar | 483 | 37.27 | 55.17 |"
            in (tmp_path / "rewardmath_metrics.md").read_text())


def test_shared_rewardbench_files_both_layouts(shared_data):
    folder = shared_data / "rewardmath" / "results_rewardbench"
    (classifier,) = read_rewardbench_file(folder / "rewardbench_beaver.json")  # labels chosen / rejected
    assert classifier.aggregation == "scalar" and len(classifier.pairs) == 447
    prm = read_rewardbench_file(folder / "rewardbench_Math_Shepherd.json")  # 894 rows, one per solution
    assert [setup.aggregation for setup in prm] == ["prod", "geo", "min", "mean", "last"]
    assert all(len(setup.pairs) == 447 for setup in prm)


def test_model_key_joins_the_two_official_folders():
    assert model_key("rewardbench_Eurus-RM") == model_key("Eurus-RM_reward")
    assert model_key("rewardbench_Skywork-Llama-3.1-8B") == model_key("skywork_llama3_reward")
    assert model_key("rewardbench_internlm2-20b") == model_key("internlm2_20b_reward")
    assert model_key("rewardbench_internlm2") != model_key("internlm2_20b_reward")


def test_duplicated_problems_are_counted_as_given(tmp_path):
    row = {"problem": "p", "solution_reference": REFS, "score": [1.0, 0.0, 0.5]}
    (setup,) = read_rewardmath_file(_write(tmp_path, "dup_reward.json", [row, row, dict(row, score=[0, 1, 0])]))
    assert len(setup.problems) == 3


def test_missing_chosen_solution_names_file_and_row(tmp_path):
    rows = [{"problem": "p", "solution_reference": REFS, "score": [1, 0, 0]},
            {"problem": "q", "solution_reference": ["a", "b", "c"], "score": [1, 0, 0]}]
    with pytest.raises(RmevalError, match=r"bad_reward\.json: row 1: no chosen solution"):
        read_rewardmath_file(_write(tmp_path, "bad_reward.json", rows))


def test_score_length_mismatch(tmp_path):
    rows = [{"problem": "p", "solution_reference": REFS, "score": [1, 0]}]
    with pytest.raises(RmevalError, match="row 0: 2 scores for 3"):
        read_rewardmath_file(_write(tmp_path, "short.json", rows))


def test_verdicts_without_chosen_position(tmp_path):
    rows = [{"problem": "p", "solution_reference": REFS, "score": ["A", "B", "A"]}]
    with pytest.raises(RmevalError, match="no chosen_position"):
        read_rewardmath_file(_write(tmp_path, "judge.json", rows))


def _pairwise_row(verdicts, positions=("A", "B", "A")):
    return {"problem": "p", "solution_reference": REFS[1:] + ["x"], "score": list(verdicts),
            "chosen_position": list(positions)}


def test_pairwise_null_verdict_is_a_counted_loss(tmp_path):
    rows = [_pairwise_row(["A", "B", "A"]), _pairwise_row(["A", None, "B"])]
    (setup,) = read_rewardmath_file(_write(tmp_path, "judge_pairwise.json", rows))
    assert setup.aggregation == "pairwise" and setup.n_missing_verdicts == 1
    from rmeval.benchmarks.rewardmath.metrics import summarize

    summary = summarize(setup.problems)
    assert summary.accuracy == 50.0
    assert summary.mrr == pytest.approx(100 * (1 + 1 / 3) / 2)  # second row: two losses -> rank 3


@pytest.mark.parametrize(("row", "message"), [
    (_pairwise_row(["A", "C", "A"]), r"verdict score\[1\] = 'C'"),
    (_pairwise_row(["A", 1, "A"]), r"verdict score\[1\] = 1"),
    (_pairwise_row(["A", "B", "A"], positions=("A", "B", "left")), r"chosen_position\[2\]"),
    (dict(_pairwise_row(["A", "B", "A"]), chosen_position=["A"]), "as long as score"),
])
def test_malformed_verdicts_are_errors(tmp_path, row, message):
    with pytest.raises(RmevalError, match=message):
        read_rewardmath_file(_write(tmp_path, "judge_pairwise.json", [row]))


def test_mixed_kinds_and_empty_steps(tmp_path):
    rows = [{"problem": "p", "solution_reference": REFS, "score": [1, 0, 0]},
            {"problem": "q", "solution_reference": REFS, "score": [[0.5], [0.2], [0.1]]}]
    with pytest.raises(RmevalError, match="mix score kinds"):
        read_rewardmath_file(_write(tmp_path, "mixed.json", rows))
    rows = [{"problem": "q", "solution_reference": REFS, "score": [[0.5], [], [0.1]]}]
    with pytest.raises(RmevalError, match=r"row 0: score\[1\]: empty list of step scores"):
        read_rewardmath_file(_write(tmp_path, "prm.json", rows))


def test_cli_needs_an_input_and_reports_errors(tmp_path, capsys):
    from rmeval.cli import main

    assert main(["rewardmath-metrics", "--out", str(tmp_path)]) == 2
    assert "--official" in capsys.readouterr().err
    assert main(["rewardmath-metrics", "--official", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 2
    assert "not found" in capsys.readouterr().err
