"""End to end on tiny local models: the real 20-row RewardMATH sample scored by a classifier and a PRM through
`rmeval score`, metrics recomputed here from the score tables; then the branch's Snakemake rules (the
`both-branches` scenario of .test/)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks.rewardmath.subjects import SUBJECT_SLUGS
from rmeval.cli import main as rmeval
from scenarios import JUDGE_KEY_ENV, JUDGE_SECRET, JudgedRun
from workflow_helpers import run_snakemake, tiny_model_entry


def _cls_entry(name: str, model_dir: Path) -> dict:
    # Long enough for the sample's longest solution: a truncated PRM input loses its last steps' scores.
    return {**tiny_model_entry(name, model_dir), "max_length": 2048}


def _prm_entry(name: str, model_dir: Path) -> dict:
    return {**_cls_entry(name, model_dir), "adapter": "prm",
            "options": {"step_tag": "ки", "good_token": "+", "bad_token": "-"}}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _expected_metrics(data: pd.DataFrame, values: pd.Series) -> tuple[float, float]:
    """Accuracy and MRR (percent) straight from the definitions, for problems keyed by problem_id."""
    table = data.assign(value=data["id"].map(values))
    correct, reciprocal = [], []
    for _, problem in table.groupby("problem_id"):
        chosen = problem.loc[problem["solution_type"] == "chosen", "value"].item()
        rejected = problem.loc[problem["solution_type"] == "rejected", "value"]
        correct.append(bool((chosen > rejected).all()))
        reciprocal.append(1 / (1 + int((rejected >= chosen).sum())))
    return round(100 * sum(correct) / len(correct), 2), round(100 * sum(reciprocal) / len(reciprocal), 2)


def test_classifier_and_prm_score_the_sample(shared_data, tiny_model_dir, tiny_prm_dir, tmp_path):
    sample = shared_data / "rewardmath" / "benchmark_samples" / "RewardMATH_direct.json"
    data_dir, scores = tmp_path / "data", tmp_path / "scores"
    assert rmeval(["rewardmath-prepare", "--source", "local", "--path", str(sample), "--out", str(data_dir)]) == 0
    data = pd.read_parquet(data_dir / "algebra.parquet")
    specs = {"tiny-cls": _cls_entry("tiny-cls", tiny_model_dir), "tiny-prm": _prm_entry("tiny-prm", tiny_prm_dir)}
    for name, spec in specs.items():
        assert rmeval(["score", "--spec", json.dumps(spec), "--task", "pairs", "--input",
                       str(data_dir / "algebra.parquet"), "--output", str(scores / name / "algebra.parquet"),
                       "--threads", "1"]) == 0
    classifier = pd.read_parquet(scores / "tiny-cls" / "algebra.parquet")
    prm = pd.read_parquet(scores / "tiny-prm" / "algebra.parquet")
    assert sorted(classifier["id"]) == sorted(data["id"]) and classifier["reward"].notna().all()
    assert not classifier["truncated"].any() and not prm["truncated"].any()
    # One PRM score per solution step, each a probability.
    steps_per_id = dict(zip(data["id"], data["steps"].map(len), strict=True))
    assert {i: len(s) for i, s in zip(prm["id"], prm["step_rewards"], strict=True)} == steps_per_id
    assert all(0 < value < 1 for steps in prm["step_rewards"] for value in steps)

    out = tmp_path / "tables"
    assert rmeval(["rewardmath-metrics", "--scores", str(scores), "--data", str(data_dir), "--subjects", "algebra",
                   "--out", str(out)]) == 0
    metrics = {(r["setup"], r["aggregation"]): r for r in _csv(out / "rewardmath_metrics.csv")
               if r["source"] == "workflow"}
    assert set(metrics) == {("tiny-cls", "scalar")} | {("tiny-prm", a) for a in ("prod", "geo", "min", "mean", "last")}
    expected = {
        ("tiny-cls", "scalar"): classifier.set_index("id")["reward"],
        ("tiny-prm", "min"): prm.set_index("id")["step_rewards"].map(min),
        ("tiny-prm", "last"): prm.set_index("id")["step_rewards"].map(lambda s: s[-1]),
    }
    for key, values in expected.items():
        accuracy, mrr = _expected_metrics(data, values)
        assert (float(metrics[key]["accuracy"]), float(metrics[key]["mrr"])) == (accuracy, mrr), key
        assert metrics[key]["n"] == "2"


@pytest.mark.e2e
def test_snakemake_rewardmath_branch(both_branches_run: JudgedRun) -> None:
    """The `both-branches` scenario of .test/ (one run, conftest.py; its judges are test_judge_e2e.py's)."""
    targets = ["results/tables/rewardmath_metrics.csv", "results/tables/rewardmath_vs_rewardbench.tex",
               "results/figures/rewardmath_vs_rewardbench.png", "results/figures/rewardmath_vs_rewardbench.pdf"]
    # `rule all`: one DAG runs both branches, the fairness tables beside the RewardMATH ones.
    run = both_branches_run.run
    workdir, configfile = run.workdir, run.configfile
    results = workdir / "results"
    for target in [*targets, "results/tables/table1_anova.csv", "results/figures/fig2_group_means.png",
                   "results/summary.md", "results/rewardmath/summary.md",
                   "results/tables/rewardbench_math_prm_accuracy.tex"]:
        assert (workdir / target).is_file(), target
    assert sorted(p.stem for p in (results / "rewardmath" / "data").glob("*.parquet")) == sorted(
        [*SUBJECT_SLUGS, "rewardbench_math_prm"])
    assert sorted(p.name for p in (results / "scores" / "rewardmath" / "tiny-prm").glob("*.parquet")) == [
        "algebra.parquet", "rewardbench_math_prm.parquet"]
    metrics = {(r["setup"], r["aggregation"]): r for r in _csv(results / "tables" / "rewardmath_metrics.csv")}
    assert metrics["internlm2_reward", "scalar"]["accuracy"] == "37.27"  # official files in the same table
    assert metrics["tiny-prm", "geo"]["n"] == "2"
    assert {a for s, a in metrics if s == "tiny-prm"} == {"prod", "geo", "min", "mean", "last"}
    side = {(r["setup"], r["aggregation"]): r for r in _csv(results / "tables" / "rewardmath_vs_rewardbench.csv")}
    assert side["tiny-prm", "prod"]["rewardbench_setup"] == "tiny-prm"
    assert side["ArmoRM_reward", "scalar"]["rewardbench_accuracy"] == "92.84"
    assert side["ArmoRM_reward", "scalar"]["model"] == "ArmoRM-Llama3-8B-v0.1"
    # Baselines on the run's own prepared data: 4 RewardBench pairs, 2 RewardMATH problems (both partial).
    assert side["fewest steps", "scalar"]["n_rewardbench"] == "4" and side["random", "scalar"]["rewardmath_mrr"] == "29.29"
    assert side["tiny-prm", "prod"]["rewardmath_full_set"] == "no"
    # The combined summary ends with the RewardMATH section, the same text as results/rewardmath/summary.md.
    section = (results / "rewardmath" / "summary.md").read_text()
    combined = (results / "summary.md").read_text()
    # ... before the run's "Which model is better" (issue 40), the summary's last section
    benchmarks_part, better = combined.split("## Which model is better")
    assert section.startswith("## RewardMATH") and benchmarks_part.endswith(section + "\n")
    assert combined.count("\n## RewardMATH") == 1 and "### RewardMATH" in better
    # rmeval compare: RewardMATH accuracy and MRR of every two workflow models (a PRM under its aggregation), each
    # value the metrics table's
    aggregation = run.config["rewardmath"].get("prm_aggregation") or "prod"
    compared = [r for r in _csv(results / "tables" / "comparisons.csv") if r["benchmark"] == "rewardmath"]
    workflow: dict[str, dict[str, str]] = {}
    for r in _csv(results / "tables" / "rewardmath_metrics.csv"):  # a judge's first setup, a PRM's aggregation
        if r["source"] == "workflow" and (r["aggregation"] == aggregation or r["setup"] != "tiny-prm"):
            workflow.setdefault(r["setup"], r)
    assert {(r["model_a"], r["model_b"]) for r in compared} == {
        ("tiny-prm", "judge-direct"), ("tiny-prm", "judge-pairwise"), ("judge-direct", "judge-pairwise")}
    for row in compared:
        for model, column in ((row["model_a"], "value_a"), (row["model_b"], "value_b")):
            assert float(row[column]) == pytest.approx(float(workflow[model][row["metric"]]), abs=0.006), row
    assert "tiny-prm (prod)" in section and "Partial runs" in section
    # Official files are broken down through the prepared data: only the sample's two problems match.
    breakdown = _csv(results / "tables" / "rewardmath_breakdown.csv")
    assert {r["value"] for r in breakdown if r["setup"] == "internlm2_reward" and r["by"] == "subject"} == {"Algebra"}
    assert (results / "figures" / "rewardmath_vs_rewardbench.png").stat().st_size > 10_000
    assert (workdir / "logs" / "rewardmath" / "metrics.log").exists()
    rerun = run_snakemake(workdir, configfile, "-n", "--cores", "2", env={JUDGE_KEY_ENV: JUDGE_SECRET})
    assert "Nothing to be done" in rerun.stdout + rerun.stderr
