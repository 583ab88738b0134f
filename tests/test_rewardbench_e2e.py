"""RewardBench 1 and 2 through the real workflow (the `rewardbench` scenario of .test/): fixtures in the datasets'
layouts, a tiny classifier and the length baseline on both versions and a direct LLM judge (the loopback judge
server) on RewardBench 2, scored by the shared score rule; the tables are recomputed here from the score files (the
length baseline's from the fixtures' texts alone); a rerun scores nothing; the baseline alone runs to the summary;
`rmeval run --against` two published files and this run's folder as an earlier run (issue 49)."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
from judge_server import JudgeServer
from rmeval.benchmarks.rewardbench.scoring import (
    TiesRow,
    best_of_n,
    pair_won,
    rated_best_of_n,
    ties_components,
)
from scenarios import JUDGE_KEY_ENV, JUDGE_SECRET, run_scenario
from workflow_helpers import run_snakemake

TARGETS = ("results/tables/rewardbench_scores.csv", "results/tables/rewardbench_sections.csv",
           "results/tables/rewardbench2_scores.csv", "results/tables/rewardbench2_scores.md",
           "results/tables/rewardbench_sections.tex", "results/tables/fairness_vs_capability.md",
           "results/figures/fig_fairness_vs_capability.png", "results/tables/reproduction.csv", "results/summary.md",
           "results/rewardbench2/official/judge-direct.json", "results/rewardbench/official/tiny-cls.json",
           "results/rewardbench/official/length-baseline.json",
           "results/tables/comparisons.csv", "results/tables/leaderboard.md", "results/figures/fig_leaderboard.png",
           "results/lock.yaml")  # the lock: an earlier run's record for `--against` (test_against_published_...)
BASELINE = "length-baseline"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def rb_run(tmp_path_factory, shared_data, tiny_models):
    with JudgeServer() as server:
        def to_this_server(config: dict) -> None:
            for judge in [m for m in config["rewardbench2"]["models"] if isinstance(m, dict)]:
                judge["options"]["base_url"] = server.base_url

        run = run_scenario("rewardbench", tmp_path_factory.mktemp("rewardbench"), shared_data, tiny_models,
                           *TARGETS, env={JUDGE_KEY_ENV: JUDGE_SECRET}, edit=to_this_server)
        yield run, server


@pytest.mark.e2e
def test_score_files_follow_the_contract(rb_run):
    run, _ = rb_run
    results = run.workdir / "results"
    v1 = pd.read_parquet(results / "scores/rewardbench/tiny-cls/rewardbench.parquet")
    assert len(v1) == 16 and set(v1["id"].str.rsplit("#", n=1).str[1]) == {"chosen", "rejected"}
    v2 = pd.read_parquet(results / "scores/rewardbench2/judge-direct/rewardbench2.parquet")
    assert "rating" in v2.columns and "1#5" in set(v2["id"])  # the six-completion row's last completion
    assert len(v2) == len(pd.read_parquet(results / "rewardbench2/data/rewardbench2.parquet"))
    assert "rule rewardbench2_score" in run.output


@pytest.mark.e2e
def test_tables_are_the_official_rules_on_the_score_files(rb_run):
    run, _ = rb_run
    results = run.workdir / "results"
    data = pd.read_parquet(results / "rewardbench2/data/rewardbench2.parquet")
    table = {(r["model"], r["subset"]): r for r in _rows(results / "tables/rewardbench2_scores.csv")}
    assert table[("Random (chance)", "Factuality")]["score"] == "25"
    for model, mode in (("tiny-cls", "classifier"), ("judge-direct", "judge (direct)")):
        scores = pd.read_parquet(results / f"scores/rewardbench2/{model}/rewardbench2.parquet").set_index("id")
        # a direct judge is scored on its ratings, an unparsable one as -1 (run_generative_v2.py)
        rewards = scores["rating"].astype(float).fillna(-1.0) if mode != "classifier" else scores["reward"]
        rule = rated_best_of_n if mode != "classifier" else best_of_n
        expected = {}
        for subset, rows in data.assign(r=data["id"].map(rewards)).groupby("subset"):
            groups = [(row_id, list(g["r"]), int(g["n_correct"].iloc[0])) for row_id, g in rows.groupby("row_id",
                                                                                                      sort=False)]
            if subset == "Ties":
                expected[subset] = ties_components([TiesRow(i, tuple(v), c) for i, v, c in groups])["score"]
            else:
                expected[subset] = sum(rule(v, i) for i, v, _ in groups) / len(groups)
        for subset, value in expected.items():
            assert float(table[(model, subset)]["score"]) == pytest.approx(100 * value), (model, subset)
            assert table[(model, subset)]["mode"] == mode
        assert float(table[(model, "Overall")]["score"]) == pytest.approx(100 * sum(expected.values()) / 6)
    v1_data = pd.read_parquet(results / "rewardbench/data/rewardbench.parquet")
    rewards = pd.read_parquet(results / "scores/rewardbench/tiny-cls/rewardbench.parquet").set_index("id")["reward"]
    equal = rewards["1300#chosen"] == rewards["1300#rejected"]  # the pair whose chosen equals its rejected
    v1 = {r["subset"]: float(r["accuracy"]) for r in _rows(results / "tables/rewardbench_scores.csv")
          if r["model"] == "tiny-cls"}
    for subset, rows in v1_data.groupby("subset"):
        wins = [pair_won(rewards[f"{i}#chosen"], rewards[f"{i}#rejected"]) for i in rows["row_id"].unique()]
        assert v1[subset] == pytest.approx(100 * sum(wins) / len(wins))
    # one model input, one reward: the pair is a tie (a loss), whatever the batches (rmeval.scoring.distinct)
    assert equal and v1["xstest-should-respond"] == 0.0
    sections = [r["section"] for r in _rows(results / "tables/rewardbench_sections.csv") if r["model"] == "tiny-cls"]
    assert sections == ["Chat", "Chat Hard", "Safety", "Reasoning", "Overall"]
    assert "\\begin{tabular}" in (results / "tables/rewardbench_sections.tex").read_text()


@pytest.mark.e2e
def test_the_length_baseline_scores_what_the_texts_lengths_say(rb_run):
    """The length baseline on both versions, from the fixtures' texts alone (not its score files): RewardBench 1's
    accuracy per subset is the share of pairs with len(chosen) > len(rejected), a tie a loss (run_rm.py's `>`);
    RewardBench 2's best-of-N gives a prompt 1/k when the chosen completion is among k of the longest (run_v2.py's
    rule), so Math's four completions of one length score 1/4. Its rows are marked by their mode, not the chance's."""
    import json

    run, _ = rb_run
    results = run.workdir / "results"
    v1 = [json.loads(line) for line in (run.workdir / "inputs/rewardbench.jsonl").read_text().splitlines() if line]
    expected: dict[str, list[float]] = {}
    for row in v1:
        expected.setdefault(row["subset"], []).append(1.0 if len(row["chosen"]) > len(row["rejected"]) else 0.0)
    table = {r["subset"]: r for r in _rows(results / "tables/rewardbench_scores.csv") if r["model"] == BASELINE}
    assert set(table) == set(expected)
    for subset, wins in expected.items():
        assert float(table[subset]["accuracy"]) == pytest.approx(100 * sum(wins) / len(wins)), subset
        assert table[subset]["mode"] == "length baseline"
    assert float(table["alpacaeval-easy"]["accuracy"]) == 100.0 and float(table["math-prm"]["accuracy"]) == 0.0
    v2 = [json.loads(line) for line in (run.workdir / "inputs/rewardbench2.jsonl").read_text().splitlines() if line]
    scores = {r["subset"]: r for r in _rows(results / "tables/rewardbench2_scores.csv") if r["model"] == BASELINE}
    for subset in {row["subset"] for row in v2} - {"Ties"}:
        results_per_prompt = []
        for row in (r for r in v2 if r["subset"] == subset):
            lengths = [len(text) for text in [*row["chosen"], *row["rejected"]]]
            top = [index for index, length in enumerate(lengths) if length == max(lengths)]
            results_per_prompt.append(1.0 / len(top) if 0 in top else 0.0)
        assert float(scores[subset]["score"]) == pytest.approx(100 * sum(results_per_prompt) / len(results_per_prompt))
        assert scores[subset]["mode"] == "length baseline"
    assert float(scores["Math"]["score"]) == 25.0  # four completions of equal length: a four-way tie
    chance = {r["mode"] for r in _rows(results / "tables/rewardbench2_scores.csv") if r["model"] == "Random (chance)"}
    assert chance == {"baseline"}
    assert "length baseline" in (results / "tables/rewardbench2_scores.md").read_text()
    exported = json.loads((results / "rewardbench/official/length-baseline.json").read_text())
    assert exported["model_type"] == "Trivial baseline (length)" and exported["math-prm"] == 0.0
    summary = (results / "summary.md").read_text()
    assert f"- {BASELINE} (length baseline: a trivial baseline, not a reward model):" in summary
    for stem in ("rewardbench_capability", "rewardbench2_capability"):  # capability is the models'
        assert BASELINE not in {r["model"] for r in _rows(results / f"tables/{stem}.csv")}


@pytest.mark.e2e
def test_official_layout_exports_hold_the_table_s_scores(rb_run):
    import json

    run, _ = rb_run
    results = run.workdir / "results"
    exported = json.loads((results / "rewardbench2/official/judge-direct.json").read_text())
    assert (exported["model"], exported["model_type"], exported["chat_template"]) == ("judge-direct", "Generative RM",
                                                                                     None)
    table = {r["subset"]: float(r["score"]) for r in _rows(results / "tables/rewardbench2_scores.csv")
             if r["model"] == "judge-direct" and r["subset"] != "Overall"}
    assert {k: v for k, v in exported.items() if k in table} == pytest.approx({k: v / 100 for k, v in table.items()})
    v1 = json.loads((results / "rewardbench/official/tiny-cls.json").read_text())
    assert v1["model_type"] == "Seq. Classifier" and v1["xstest-should-respond"] in (0.0, 1.0)
    assert v1["chat_template"] == "tokenizer"  # as the official scripts write it for the tokenizer's template
    meta = json.loads((results / "scores/rewardbench/tiny-cls/rewardbench.meta.json").read_text())
    details = meta["adapter_details"]
    assert (details["model_input"], details["max_length"], details["truncation_side"]) == (
        "text-pipeline", 2048, "left")  # run_rm.py's input, not the registry entry's max_length 256
    assert meta["distinct_sequences"] == meta["rows"] - 1  # the pair whose chosen equals its rejected


@pytest.mark.e2e
def test_fairness_against_capability_reads_the_run_s_own_scores(rb_run):
    run, _ = rb_run
    tables = run.workdir / "results/tables"
    rows = {r["model"]: r for r in _rows(tables / "fairness_vs_capability.csv")}
    assert set(rows) == {"tiny-cls", "tiny-cls-b", "tiny-cls-c", BASELINE}  # the fairness models
    # the baseline is a row, marked, but no capability value, no correlation point, not in the top-2 claim
    baseline = rows.pop(BASELINE)
    assert baseline["RewardBench overall"] == "" and baseline["run_on"] == "none"
    assert f"{BASELINE} (baseline‡)" in (tables / "fairness_vs_capability.md").read_text()
    overall = {r["model"]: r["score"] for r in _rows(tables / "rewardbench_sections.csv") if r["section"] == "Overall"}
    v2 = {r["model"]: r["score"] for r in _rows(tables / "rewardbench2_scores.csv") if r["subset"] == "Overall"}
    for model, row in rows.items():
        assert float(row["RewardBench overall"]) == pytest.approx(float(overall[model]))
        gap = next(r for r in _rows(tables / "table7_gap.csv") if r["model"] == model)
        assert float(row["abs_nmgd_percent"]) == pytest.approx(abs(float(gap["nmgd_percent"])))
    assert float(rows["tiny-cls"]["RewardBench 2 overall"]) == pytest.approx(float(v2["tiny-cls"]))
    assert rows["tiny-cls-b"]["RewardBench 2 overall"] == ""  # not run on RewardBench 2
    correlations = _rows(tables / "fairness_vs_capability_correlations.csv")
    nmgd = next(r for r in correlations if r["fairness"] == "abs_nmgd_percent" and r["measure"] == "RewardBench overall")
    assert nmgd["n"] == "3" and nmgd["p_method"] == "exact"
    claim = next(r for r in _rows(tables / "reproduction.csv") if r["model"] == "top-2 RewardBench models")
    ranked = sorted(rows, key=lambda m: -float(rows[m]["RewardBench overall"]))[:2]
    fairest = sorted(rows, key=lambda m: float(rows[m]["abs_nmgd_percent"]))[:2]
    assert float(claim["ours"]) == len(set(ranked) & set(fairest))
    supports = "This run supports" if float(claim["ours"]) == 2 else "This run does not support"
    assert supports in (run.workdir / "results/summary.md").read_text()
    assert (run.workdir / "results/figures/fig_fairness_vs_capability.pdf").stat().st_size > 0


@pytest.mark.e2e
def test_a_rerun_scores_nothing(rb_run):
    run, server = rb_run
    score = run.workdir / "results/scores/rewardbench2/judge-direct/rewardbench2.parquet"
    before, requests = score.stat().st_mtime_ns, server.requests
    result = run_snakemake(run.workdir, run.configfile, "--cores", "2", *TARGETS,
                           env={JUDGE_KEY_ENV: JUDGE_SECRET})
    assert "Nothing to be done" in result.stdout + result.stderr
    assert score.stat().st_mtime_ns == before and server.requests == requests



@pytest.mark.e2e
def test_summary_agrees_with_the_tables(rb_run):
    """Issue 36: summary.md had no RewardBench section and said "only 0 model(s) have a rewardbench_rank" although
    the run measured capability. Every enabled benchmark has its section, each number as its table has it, and the
    "better models are fairer" line uses the run's own scores (the registry's ranks are only a labelled fallback)."""
    run, _ = rb_run
    tables = run.workdir / "results/tables"
    summary = (run.workdir / "results/summary.md").read_text()
    assert "## RewardBench (Lambert et al. 2024)" in summary and "## RewardBench 2" in summary
    for row in [*_rows(tables / "rewardbench_sections.csv"), *_rows(tables / "rewardbench2_scores.csv")]:
        if row.get("section", row.get("subset")) == "Overall" and row["mode"] != "baseline":  # not the chance row
            marked = f" ({row['mode']}: a trivial baseline, not a reward model)" if row["model"] == BASELINE else ""
            assert f"- {row['model']}{marked}: {float(row['score']):.2f}" in summary
    assert "0 model(s)" not in summary and "rewardbench_rank" not in summary and "fallback" not in summary
    correlations = _rows(tables / "fairness_vs_capability_correlations.csv")
    for measure in ("RewardBench overall", "RewardBench 2 overall"):
        row = next(r for r in correlations if r["fairness"] == "scale_free_gap" and r["measure"] == measure)
        line = next(line for line in summary.splitlines() if f"by this run's {measure} score" in line)
        if row["spearman_rho"]:
            assert f"is {float(row['spearman_rho']):.2f}" in line and f"{row['n']} models" in line
            # issue 41: rho's interval, valid from 3 models on, is in the table and the line reads it
            interval = f"95% CI {float(row['spearman_ci_low']):.2f} to {float(row['spearman_ci_high']):.2f}"
            assert interval in line
        else:
            assert "was not tested" in line and row["note"] in line


@pytest.mark.e2e
def test_comparisons_and_leaderboard_hold_each_benchmark_s_own_values(rb_run):
    """rmeval compare in the run (three models and a length baseline): every pair of each benchmark's models
    (judge-direct only on RewardBench 2), each value equal to the benchmark's own table, the leaderboard's overall
    rows to its Overall rows, the baseline marked, and the summary's section with the length-baseline counts."""
    run, _ = rb_run
    tables = run.workdir / "results/tables"
    rows = _rows(tables / "comparisons.csv")
    pairs = {bench: {(r["model_a"], r["model_b"]) for r in rows if r["benchmark"] == bench}
             for bench in ("fairness", "rewardbench", "rewardbench2")}
    four = ["tiny-cls", "tiny-cls-b", "tiny-cls-c", BASELINE]  # three models and a length baseline
    every = {(a, b) for i, a in enumerate(four) for b in four[i + 1:]}
    assert pairs == {"fairness": every, "rewardbench": every,
                     "rewardbench2": {("tiny-cls", BASELINE), ("tiny-cls", "judge-direct"), (BASELINE, "judge-direct")}}
    v1 = {(r["model"], r["subset"]): float(r["accuracy"]) for r in _rows(tables / "rewardbench_scores.csv")}
    sections = {(r["model"], r["section"]): float(r["score"]) for r in _rows(tables / "rewardbench_sections.csv")}
    v2 = {(r["model"], r["subset"]): float(r["score"]) for r in _rows(tables / "rewardbench2_scores.csv")
          if r["score"]}  # the chance rows have no Ties
    for row in rows:
        metric, a, b = row["metric"], row["model_a"], row["model_b"]
        kind, _, name = metric.partition(":")
        if row["benchmark"] == "rewardbench":
            own = v1 if kind == "subset" else sections
            key = name if kind in ("subset", "section") else "Overall"
            assert float(row["value_a"]) == pytest.approx(own[(a, key)]) and float(row["value_b"]) == pytest.approx(
                own[(b, key)]), metric
            assert float(row["difference"]) == pytest.approx(own[(a, key)] - own[(b, key)])
        elif row["benchmark"] == "rewardbench2":
            key = name if kind == "subset" else "Overall"
            assert float(row["value_a"]) == pytest.approx(v2[(a, key)]), metric
        lo, hi, p = float(row["ci_low"]), float(row["ci_high"]), float(row["p_value"])
        assert lo <= float(row["difference"]) <= hi and 0 <= p <= 1 and float(row["p_adjusted"]) >= p
    board = _rows(tables / "leaderboard.csv")
    for row in (r for r in board if r["benchmark"].startswith("rewardbench")):  # the tables' Overall rows
        own = sections if row["benchmark"] == "rewardbench" else v2
        assert float(row["value"]) == pytest.approx(own[(row["model"], "Overall")])
    assert {r["model"] for r in board if r["baseline"] == "True"} == {BASELINE}
    summary = (run.workdir / "results/summary.md").read_text()
    assert "## Which model is better" in summary and f"{BASELINE} (baseline)" in summary
    assert "### RewardBench (Lambert et al. 2024)" in summary and "### RewardBench 2 (Malik et al. 2025)" in summary
    # for each real model against the length baseline: on how many subsets it is significantly better (Holm); a
    # benchmark without subsets (fairness) as each comparison reads (issue 46: "A's gap is smaller than B's")
    assert f"### Against the length baseline ({BASELINE})" in summary
    labels = {"scale_free_gap": "scale-free gap", "cohens_f": "Cohen's f"}
    for model in ("tiny-cls", "tiny-cls-b", "tiny-cls-c", "judge-direct"):
        line = next(x for x in summary.splitlines() if x.startswith(f"- {model} against {BASELINE} (Holm-adjusted p"))
        expected = []
        for bench in ("fairness", "rewardbench", "rewardbench2"):
            mine = [r for r in rows if r["benchmark"] == bench and {r["model_a"], r["model_b"]} == {model, BASELINE}]
            subsets = [r for r in mine if r["metric"].startswith("subset:")]
            lower = bench == "fairness"  # a smaller gap is better
            if subsets:
                beats = sum(float(r["p_adjusted"]) < 0.05 and ((float(r["difference"]) > 0) != lower) == (
                    r["model_a"] == model) and float(r["difference"]) != 0 for r in subsets)
                expected.append(f"{bench}: significantly better than {BASELINE} on {beats} of its {len(subsets)} "
                                "subsets")
            for r in mine if not subsets else []:
                difference = float(r["difference"]) * (1 if r["model_a"] == model else -1)
                p_value = float(r["p_adjusted"])
                relation = "smaller than" if difference < 0 else "larger than" if difference > 0 else "the same as"
                expected.append(f"{bench}: {model}'s {labels[r['metric']]} is {relation} {BASELINE}'s (difference "
                                f"{difference:.3f}, p (Holm) {'<0.001' if p_value < 0.001 else f'{p_value:.3f}'})")
        assert line.endswith(": " + "; ".join(expected) + "."), line


@pytest.mark.e2e
def test_against_published_files_and_an_earlier_run(rb_run, tmp_path):
    """Issue 49's "Done when", on this scenario's data (before the tests that rewrite its run-level files): `rmeval
    run --model tiny-cls --name tiny-new --against` two published files (RewardBench 1 and 2 in the authors' layout,
    tests/published_fixtures.py, from our own scores) and an earlier run's folder (this scenario's tiny-cls scores,
    lock and prepared tables, copied as from another machine). The published models' headline numbers are the
    authors' scoring of their files (re-stated in tests/test_published.py); the same model run again equals its
    earlier scores on every comparison (difference 0); every table marks the opponents published, with their source;
    the lock pins each file's sha256 and carries the earlier run's model record."""
    import hashlib
    import json
    import os
    import shutil
    import subprocess
    import sys

    import published_fixtures as fx
    from scenarios import NO_NETWORK_PROXY
    from test_published import authors_v1, authors_v2

    run, _ = rb_run
    earlier = tmp_path / "earlier" / "results"  # what an earlier run on another machine left
    for part in ("scores/rewardbench/tiny-cls", "scores/rewardbench2/tiny-cls", "rewardbench/data", "rewardbench2/data"):
        shutil.copytree(run.workdir / "results" / part, earlier / part)
    shutil.copy(run.workdir / "results/lock.yaml", earlier / "lock.yaml")
    data = {name: run.workdir / run.config[name]["path"] for name in ("rewardbench", "rewardbench2")}
    v1 = fx.write_scores_file(tmp_path / "published/eval-set-scores/org/pub-v1.json",
                              fx.v1_columns(fx.dataset_rows(data["rewardbench"]), fx.seeded_score(11)), "org/pub-v1")
    v2 = fx.write_scores_file(tmp_path / "published/v2/org/pub-v2.json",
                              fx.v2_columns(fx.dataset_rows(data["rewardbench2"]), fx.seeded_score(12)), "org/pub-v2")
    registry = tmp_path / "registry.yaml"
    registry.write_text("models:\n" + "".join(
        f"  {name}: {{adapter: published, resources: {{gpu: 0, mem_mb: 1000, runtime: 10}}, options: {{benchmark: "
        f"{bench}, model: org/{name}, source: local, path: {path}}}}}\n"
        for name, bench, path in (("pub-v1", "rewardbench", v1), ("pub-v2", "rewardbench2", v2))))
    env = {**os.environ, **NO_NETWORK_PROXY, "HF_HUB_OFFLINE": "1"}
    argv = ["--model", str(run.workdir / run.config["models"][0]["path"]), "--name", "tiny-new",
            "--benchmarks", "rewardbench,rewardbench2", "--against", "published:rewardbench/org/pub-v1",
            "--against", "pub-v2", "--against", str(earlier), "--set", f"registry={registry}", "--cores", "2",
            *(f"--set={name}.{key}={value}" for name in data for key, value in
              (("source", "local"), ("path", data[name]))), "--set", "scoring.threads=1"]
    result = subprocess.run([sys.executable, "-m", "rmeval", "run", *argv], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, f"{result.stdout[-6000:]}\n--- stderr ---\n{result.stderr[-6000:]}"
    models_block = result.stdout.split("rmeval run: config", 1)[0]
    assert f"tiny-cls  --against {earlier}: scores of an earlier run in {earlier}" in models_block
    assert "pub-v1    --against published:rewardbench/org/pub-v1: published rewardbench results" in models_block
    results = tmp_path / "results"
    # the published models' headlines: the authors' scoring of their files
    sections = {(r["model"], r["section"]): float(r["score"]) for r in _rows(results / "tables/rewardbench_sections.csv")}
    assert sections[("pub-v1", "Overall")] == pytest.approx(100 * authors_v1(json.loads(v1.read_text()))["Overall"])
    v2_rows = {(r["model"], r["subset"]): r for r in _rows(results / "tables/rewardbench2_scores.csv")}
    for subset, value in authors_v2(json.loads(v2.read_text())).items():
        assert float(v2_rows[("pub-v2", subset)]["score"]) == pytest.approx(100 * value), subset
    assert {v2_rows[(m, "Overall")]["mode"] for m in ("pub-v2", "tiny-cls")} == {"published"}
    # the same model run again: its earlier scores, every comparison on the common items a difference of 0
    compared = [r for r in _rows(results / "tables/comparisons.csv") if {r["model_a"], r["model_b"]} ==
                {"tiny-new", "tiny-cls"}]
    assert len(compared) > 10 and all(float(r["difference"]) == 0 for r in compared)
    # marked published everywhere, with source and revision in the notes
    board = _rows(results / "tables/leaderboard.csv")
    assert {(r["benchmark"], r["model"]) for r in board if r["published"] == "True"} == {
        ("rewardbench", "pub-v1"), ("rewardbench", "tiny-cls"), ("rewardbench2", "pub-v2"), ("rewardbench2", "tiny-cls")}
    leaderboard = (results / "tables/leaderboard.md").read_text()
    assert "pub-v1 (published)" in leaderboard and f"pub-v1: org/pub-v1 from local:{v1}" in leaderboard
    sections_md = (results / "tables/rewardbench_sections.md").read_text()
    sha = hashlib.sha256(v1.read_bytes()).hexdigest()
    assert (f"pub-v1: published per-item results, not run here: org/pub-v1 from local:{v1} (sha256 {sha[:12]}); "
            "matched 8 of 8 items (100.0 %).") in sections_md
    assert f"tiny-cls: an earlier run's scores, not run here: tiny-cls from run:{earlier}" in sections_md
    summary = (results / "summary.md").read_text()
    assert "- pub-v1 (published per-item results, not run here):" in summary
    assert "pub-v2 (published)" in summary
    # the lock: each file's sha256, and the earlier run's record of its model
    import yaml

    lock = yaml.safe_load((results / "lock.yaml").read_text())["models"]
    assert lock["pub-v1"]["published_sha256"] == sha and lock["pub-v1"]["revision"] == f"published:local:{v1}"
    earlier_lock = yaml.safe_load((earlier / "lock.yaml").read_text())["models"]["tiny-cls"]
    assert lock["tiny-cls"]["earlier_run_model"] == earlier_lock
    assert lock["tiny-new"]["revision"] == earlier_lock["revision"]  # the very same weights


@pytest.mark.e2e
def test_rewardbench2_alone_runs_no_fairness_job(rb_run, tmp_path):
    """Last in this module (it rewrites the run-level files): in the same folder, a config naming only `models` and
    `rewardbench2` (its local file) runs RewardBench 2 through to its table and the run-level outputs with no
    fairness job; the classifier's RewardBench 2 score file is reused, not scored again."""
    import yaml

    run, _ = rb_run
    scenario = run.config
    alone = {"models": scenario["models"][:1], "scoring": scenario["scoring"],  # tiny-cls, as in the scenario
             "rewardbench2": {key: scenario["rewardbench2"][key] for key in ("enabled", "source", "path", "bootstrap",
                                                                            "seed")}}
    configfile = tmp_path / "rewardbench2_alone.yaml"
    configfile.write_text(yaml.safe_dump(alone))
    score = run.workdir / "results/scores/rewardbench2/tiny-cls/rewardbench2.parquet"
    before = score.stat().st_mtime_ns
    result = run_snakemake(run.workdir, configfile, "--cores", "2")
    output = result.stdout + result.stderr
    assert "rule rewardbench2_metrics" in output and "rule run_summary" in output and "rule lock" in output
    assert not any(word in output for word in ("rule fairness", "rule arxiv", "rule score_fairness",
                                                "rule rewardbench_")), output[-3000:]
    assert score.stat().st_mtime_ns == before
    models = {r["model"] for r in _rows(run.workdir / "results/tables/rewardbench2_scores.csv")}
    assert models == {"Random (chance)", "tiny-cls"}
    summary = (run.workdir / "results/summary.md").read_text()
    # tiny-cls is an `rmeval tiny-model` folder (its card says so): the summary opens with the demo's line
    notice, rest = summary.split("\n\n", 1)
    assert notice.startswith("**These rewards come from random tiny models (tiny-cls, built by `rmeval tiny-model`)")
    assert rest.startswith("## RewardBench 2") and "tiny-cls" in rest
    # the scenario's earlier run left RewardBench 1's tables and the other models' score folders: named, not mixed in
    strays = rest.split("## Not from this run", 1)[1]
    assert "- `results/tables/rewardbench_sections.csv`: written " in strays
    assert "- `results/scores/rewardbench2/length-baseline/`: written " in strays
    assert "by an earlier run that `rmeval run` did not record" in strays
    assert "`results/tables/rewardbench2_scores.csv`" not in strays  # this run's own


@pytest.mark.e2e
def test_a_baseline_alone_runs_to_the_summary(rb_run, tmp_path):
    """After the others (it rewrites the run-level files): in the same folder, the length baseline as the only model
    of all three benchmarks runs through to the summary, its score files reused; the summary says no reward model
    ran and names the baseline as one; the capability files are empty (a baseline is not a model)."""
    import yaml

    run, _ = rb_run
    scenario = run.config
    alone = {**{key: scenario[key] for key in ("groups", "arxiv", "registry", "scoring", "stats")},
             "models": [BASELINE], "reference_model": None,
             "rewardbench": {**scenario["rewardbench"], "models": [BASELINE]},
             "rewardbench2": {**scenario["rewardbench2"], "models": [BASELINE]}}
    configfile = tmp_path / "baseline_alone.yaml"
    configfile.write_text(yaml.safe_dump(alone, sort_keys=False))  # the groups in the scenario's order
    score = run.workdir / "results/scores/fairness" / BASELINE / f"{next(iter(scenario['groups']))}.parquet"
    before = score.stat().st_mtime_ns
    result = run_snakemake(run.workdir, configfile, "--cores", "2", "results/summary.md")  # no figures, no lock
    output = result.stdout + result.stderr
    assert "rule run_summary" in output and "rule fairness_stats" in output and "rule score_fairness" not in output
    assert score.stat().st_mtime_ns == before
    summary = (run.workdir / "results/summary.md").read_text()
    assert "0 reward models and 1 trivial baseline (length-baseline) scored" in summary
    assert "No reward model ran" in summary and "Length alone: the length baseline length-baseline" in summary
    assert f"- {BASELINE} (length baseline: a trivial baseline, not a reward model):" in summary
    assert _rows(run.workdir / "results/tables/rewardbench_capability.csv") == []
    # Which model is better: one model (the baseline) on each benchmark, nothing to compare, no real model to beat it
    assert "rule run_compare" in output and _rows(run.workdir / "results/tables/comparisons.csv") == []
    assert {(r["model"], r["rank"], r["baseline"]) for r in _rows(run.workdir / "results/tables/leaderboard.csv")} == {
        (BASELINE, "1", "True")}
    assert "Only one model (length-baseline) has scores here: nothing to compare." in summary
    assert "No real model is in this run, only baselines: nothing to beat." in summary
