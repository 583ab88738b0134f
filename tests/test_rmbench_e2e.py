"""RM-Bench through the real workflow (the `rmbench` scenario of .test/, run once for this module): a fixture in the
official layout, two tiny classifiers and the length baseline scored by the shared score rule; the tables are
recomputed here with a re-statement of the authors' compute_accuracy on the score files (the length baseline's
from the texts alone); comparisons, leaderboard, summary, the console answer and the lock; a rerun has nothing to
do, a lost score file reruns that job alone, and a bad file is named before the first job with results/ intact."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scenarios import run_scenario
from test_rmbench import official_compute_accuracy, official_results
from workflow_helpers import run_snakemake

MODELS = ("tiny-cls", "tiny-cls-b", "length-baseline")
BASELINE = "length-baseline"
COLUMNS = ["model", "chat", "math", "code", "safety", "easy", "normal", "hard", "average"]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def rmbench_run(tmp_path_factory, tiny_models):
    return run_scenario("rmbench", tmp_path_factory.mktemp("rmbench"), None, tiny_models)


def _expected(official: dict[str, float]) -> dict[str, str]:
    """The official values as the CSV writes them (percent, 12 significant digits: rmeval.tables.frame_csv)."""
    keys = {"chat": "chat", "math": "math", "code": "code", "safety": "safety", "easy": "easy_acc",
            "normal": "normal_acc", "hard": "hard_acc", "average": "total_avg_acc"}
    return {column: "%.12g" % (100 * official[key]) for column, key in keys.items()}


@pytest.mark.e2e
def test_each_response_is_scored_once_per_model(rmbench_run):
    results = rmbench_run.results
    data = pd.read_parquet(results / "rmbench/data/rmbench.parquet")
    assert len(data) == 60 and data.groupby("item").size().eq(6).all()
    for model in MODELS:
        scores = pd.read_parquet(results / f"scores/rmbench/{model}/rmbench.parquet")
        assert sorted(scores["id"]) == sorted(data["id"])
        meta = json.loads((results / f"scores/rmbench/{model}/rmbench.meta.json").read_text())
        # chat/21's concise and detailed chosen texts are one text: one model input, one forward pass
        assert (meta["rows"], meta["distinct_sequences"]) == (60, 59)
    tiny = json.loads((results / "scores/rmbench/tiny-cls/rmbench.meta.json").read_text())
    assert tiny["adapter_details"]["model_input"] == "text-pipeline"  # run_rm.py's input (RewardBench's)


@pytest.mark.e2e
def test_the_table_is_the_authors_compute_accuracy_on_the_score_files_to_the_last_digit(rmbench_run):
    results = rmbench_run.results
    units = json.loads((rmbench_run.workdir / "inputs/total_dataset.json").read_text())
    data = pd.read_parquet(results / "rmbench/data/rmbench.parquet")
    table = {row["model"]: row for row in _rows(results / "tables/rmbench.csv")}
    assert list(_rows(results / "tables/rmbench.csv")[0]) == COLUMNS and list(table) == list(MODELS)
    for model in MODELS:
        rewards = pd.read_parquet(results / f"scores/rmbench/{model}/rmbench.parquet").set_index("id")["reward"]
        official = official_compute_accuracy(official_results(units, data, rewards[data["id"]].to_numpy()))
        assert {key: table[model][key] for key in COLUMNS[1:]} == _expected(official), model


@pytest.mark.e2e
def test_the_length_baseline_scores_what_the_texts_lengths_say(rmbench_run):
    """Its numbers from the fixture's texts alone (len of each response), through the authors' rule: the fancier
    (longer) response wins, so easy is high and hard low; it is marked as a baseline."""
    results = rmbench_run.results
    units = json.loads((rmbench_run.workdir / "inputs/total_dataset.json").read_text())
    by_length = [{**unit, "score_chosen": [len(t) for t in unit["chosen"]],
                  "score_rejected": [len(t) for t in unit["rejected"]]} for unit in units]
    row = next(r for r in _rows(results / "tables/rmbench.csv") if r["model"] == BASELINE)
    expected = _expected(official_compute_accuracy(by_length))
    assert {key: row[key] for key in COLUMNS[1:]} == expected
    assert float(row["easy"]) > float(row["hard"])
    assert f"{BASELINE} (length baseline)" in (results / "tables/rmbench.md").read_text()
    modes = {r["model"]: r["mode"] for r in _rows(results / "tables/rmbench_subsets.csv")}
    assert modes == {"tiny-cls": "classifier", "tiny-cls-b": "classifier", BASELINE: "length baseline"}
    capability = [r["model"] for r in _rows(results / "tables/rmbench_capability.csv")]
    assert capability == ["tiny-cls", "tiny-cls-b"]  # capability is the reward models'


@pytest.mark.e2e
def test_comparisons_and_leaderboard_cover_it_with_holm_and_bh_within_the_benchmark(rmbench_run):
    from statsmodels.stats.multitest import multipletests

    results = rmbench_run.results
    rows = [r for r in _rows(results / "tables/comparisons.csv") if r["benchmark"] == "rmbench"]
    metrics = {r["metric"] for r in rows}
    assert metrics == {"domain:chat", "domain:math", "domain:code", "domain:safety", "difficulty:easy",
                       "difficulty:normal", "difficulty:hard", "average"}
    assert len(rows) == 8 * 3  # three pairs of three models
    p = [float(r["p_value"]) for r in rows]
    assert [float(r["p_adjusted"]) for r in rows] == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert [float(r["q_value"]) for r in rows] == pytest.approx(list(multipletests(p, method="fdr_bh")[1]))
    table = {r["model"]: r for r in _rows(results / "tables/rmbench.csv")}
    board = {r["model"]: r for r in _rows(results / "tables/leaderboard.csv") if r["benchmark"] == "rmbench"}
    assert set(board) == set(MODELS) and {r["metric"] for r in board.values()} == {"average"}
    for model, row in board.items():
        assert float(row["value"]) == pytest.approx(float(table[model]["average"]), rel=1e-9)
        assert float(row["ci_low"]) <= float(row["value"]) <= float(row["ci_high"])
        assert 1 <= int(row["rank_low"]) <= int(row["rank"]) <= int(row["rank_high"]) <= 3
        assert row["baseline"] == str(model == BASELINE)


@pytest.mark.e2e
def test_summary_lock_and_console_answer(rmbench_run):
    from rmeval.benchmarks import benchmark
    from rmeval.io.hashing import sha256_file
    from rmeval.run_command.answer import AnswerInputs, answer

    results = rmbench_run.results
    summary = (results / "summary.md").read_text()
    assert "## RM-Bench (Liu et al. 2025)" in summary
    assert f"- {BASELINE} (length baseline: a trivial baseline, not a reward model):" in summary
    assert "Easy against hard" in summary
    lock = yaml.safe_load((results / "lock.yaml").read_text())
    assert lock["rmbench_data"]["sha256"] == sha256_file(rmbench_run.workdir / "inputs/total_dataset.json")
    assert lock["rmbench_data"]["prompts"] == 10 and lock["rmbench_data"]["texts"] == 60
    text = answer(AnswerInputs(rmbench_run.workdir, [benchmark("rmbench")], list(MODELS),
                               str(rmbench_run.configfile), "snakemake"))
    board = {r["model"]: r for r in _rows(results / "tables/leaderboard.csv")}
    assert "RM-Bench" in text and BASELINE in text
    for model in MODELS:
        assert f"{float(board[model]['value']):.2f}" in text, text


@pytest.mark.e2e
def test_a_rerun_has_nothing_to_do_and_a_lost_score_file_reruns_its_job_alone(rmbench_run):
    workdir, configfile = rmbench_run.workdir, rmbench_run.configfile
    rerun = run_snakemake(workdir, configfile, "-n")
    assert "Nothing to be done" in rerun.stdout + rerun.stderr
    lost = workdir / "results/scores/rmbench/tiny-cls-b/rmbench.parquet"
    kept = lost.with_name("kept.parquet")
    shutil.move(lost, kept)
    try:
        plan = run_snakemake(workdir, configfile, "-n", "--quiet", "rules")
        out = plan.stdout + plan.stderr
        assert "rmbench_score" in out and "rmbench_prepare" not in out, out
        jobs = [line.split() for line in out.splitlines() if line.strip().startswith("rmbench_score")]
        assert jobs and jobs[0][-1] == "1", out  # one score job: the lost one
    finally:
        shutil.move(kept, lost)


@pytest.mark.e2e
def test_a_bad_file_is_named_before_the_first_job_and_results_are_untouched(rmbench_run, tmp_path):
    workdir = rmbench_run.workdir
    units = json.loads((workdir / "inputs/total_dataset.json").read_text())
    units[2]["chosen"].pop()  # math/3: two chosen styles
    del units[5]["rejected"]  # code/10: a missing field
    bad = tmp_path / "total_dataset.json"
    bad.write_text(json.dumps(units))
    config = yaml.safe_load(rmbench_run.configfile.read_text())
    config["rmbench"]["path"] = str(bad)
    configfile = tmp_path / "config.yaml"
    configfile.write_text(yaml.safe_dump(config))
    before = {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in (workdir / "results").rglob("*")
              if path.is_file()}
    run = run_snakemake(workdir, configfile, "--cores", "1", check=False)
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "preflight: 2 problems before the first job" in out, out[-3000:]
    assert f"rmbench.path: {bad}: item 2 (domain='math', id=3): field 'chosen': 2 styles instead of 3" in out
    assert f"rmbench.path: {bad}: item 5 (domain='code', id=10): missing field(s) ['rejected']" in out
    after = {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in (workdir / "results").rglob("*")
             if path.is_file()}
    assert after == before
