"""A grouped corpus through the real workflow (`.test/corpus-paired`: config/examples/own_groups.yaml as shipped;
`.test/corpus-unpaired`: a CSV with a prompt template, unmapped labels and a seeded sample): the data contract,
Table 1 and the paired table recomputed from the score files with scipy, the figure, the summary, the
reproduction table saying "not applicable", the lock's corpus record; arXiv's rules never run."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from scenarios import ScenarioRun, TinyModels, run_scenario
from scipy import stats

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def paired_run(tmp_path_factory: pytest.TempPathFactory, tiny_models: TinyModels) -> ScenarioRun:
    # no shared data: both corpora are files of this repository
    return run_scenario("corpus-paired", tmp_path_factory.mktemp("corpus-paired"), tmp_path_factory.mktemp("none"),
                        tiny_models)


@pytest.fixture(scope="module")
def unpaired_run(tmp_path_factory: pytest.TempPathFactory, tiny_models: TinyModels) -> ScenarioRun:
    return run_scenario("corpus-unpaired", tmp_path_factory.mktemp("corpus-unpaired"),
                        tmp_path_factory.mktemp("none"), tiny_models)


def rewards(run: ScenarioRun, group: str) -> pd.DataFrame:
    scores = pd.read_parquet(run.results / "scores" / "fairness" / "tiny" / f"{group}.parquet")
    data = pd.read_parquet(run.results / "data" / f"{group}.parquet")
    assert list(scores["id"]) == list(data["id"]), "the corpus id is the score files' id"
    return scores.merge(data, on="id")


def test_paired_table_recomputed_with_scipy(paired_run):
    groups = list(paired_run.groups)
    frames = {g: rewards(paired_run, g).set_index("pair")["reward"] for g in groups}
    complete = sorted(set.intersection(*(set(f.index) for f in frames.values())))
    matrix = [frames[g].loc[complete].to_numpy() for g in groups]
    expected = stats.friedmanchisquare(*matrix)
    row = pd.read_csv(paired_run.results / "tables" / "table_paired.csv").iloc[0]
    assert row["test"] == "friedman" and row["n_pairs"] == 7 and row["incomplete_pairs"] == 1
    assert row["statistic"] == pytest.approx(expected.statistic) and row["p_value"] == pytest.approx(expected.pvalue)
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
    posthoc = pd.read_csv(paired_run.results / "tables" / "paired_posthoc.csv")
    assert len(posthoc) == 3 and (posthoc["p_holm"] >= posthoc["p_value"]).all()
    note = (paired_run.results / "tables" / "table_paired.md").read_text()
    assert "1 pair(s) missing a group left out" in note and "corpus own_groups_corpus.jsonl" in note
    for suffix in ("png", "pdf"):
        assert (paired_run.results / "figures" / f"fig_paired_differences.{suffix}").stat().st_size > 1000


def test_table1_from_corpus_scores_matches_scipy(paired_run):
    samples = [rewards(paired_run, g)["reward"] for g in paired_run.groups]
    row = pd.read_csv(paired_run.results / "tables" / "table1_anova.csv").iloc[0]
    expected = stats.f_oneway(*samples)
    assert row["f_statistic"] == pytest.approx(expected.statistic) and row["p_value"] == pytest.approx(expected.pvalue)
    prompts = rewards(paired_run, "casual")
    assert prompts.loc[prompts["id"] == "q2-casual", "prompt"].item() == "Why does bread go stale?"


def test_summary_and_reproduction_say_what_applies(paired_run):
    summary = (paired_run.results / "summary.md").read_text()
    assert "the responses of the corpus file own_groups_corpus.jsonl" in summary
    assert "## Paired (counterfactual) design" in summary and "friedman:" in summary
    assert "Reproduction verdicts: not applicable" in summary and "Table 4 not applicable" in summary
    reproduction = (paired_run.results / "tables" / "reproduction.md").read_text()
    assert "not applicable" in reproduction
    assert pd.read_csv(paired_run.results / "tables" / "reproduction.csv").empty
    assert not (paired_run.workdir / "results" / "arxiv").exists(), "arXiv's rules must not run"


def test_lock_records_the_corpus_file_and_row_hashes(paired_run):
    import hashlib

    lock = yaml.safe_load((paired_run.results / "lock.yaml").read_text())
    corpus_file = paired_run.workdir / "config" / "examples" / "own_groups_corpus.jsonl"
    assert lock["corpus"]["sha256"] == hashlib.sha256(corpus_file.read_bytes()).hexdigest()
    assert "arxiv" not in lock and lock["corpus"]["unmapped_labels"] == {"register:draft": 1}
    assert "(corpus rows, model commits" in (paired_run.results / "lock.yaml").read_text().splitlines()[0]
    formal = lock["groups"]["formal"]
    assert formal["categories"] == ["register:formal"] and formal["rows"] == 8
    data = pd.read_parquet(paired_run.results / "data" / "formal.parquet")
    first = "\t".join(str(v) for v in data.iloc[0]) + "\n"
    assert formal["papers"][0] == f"q1-formal {hashlib.sha256(first.encode()).hexdigest()[:12]}"


def test_unpaired_corpus_drops_and_counts_unmapped_labels(unpaired_run):
    manifest = json.loads((unpaired_run.results / "data" / "north.manifest.json").read_text())
    assert manifest["unmapped_labels"] == {"E": 1, "W": 2} and manifest["counts"]["in_group"] == 6
    north = pd.read_parquet(unpaired_run.results / "data" / "north.parquet")
    assert len(north) == 4 and set(north["label"]) <= {"N", "north-east"}
    assert north["prompt"].str.fullmatch(r"Describe the weather today in \w+\.").all()
    assert not (unpaired_run.results / "tables" / "table_paired.csv").exists()
    lock = yaml.safe_load((unpaired_run.results / "lock.yaml").read_text())
    assert lock["corpus"]["per_group"] == 4 and lock["corpus"]["seed"] == 3
    assert lock["groups"]["south"]["rows"] == 4


def _files(root) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_bad_corpus_after_a_good_run_stops_before_any_job_and_keeps_every_output(unpaired_run):
    """Issue 36: a missing column after a good run failed inside corpus_prepare, and Snakemake had removed
    results/data/ first (it deletes a job's outputs before the job runs, even with --keep-incomplete). Preflight
    runs corpus_prepare's checks before the first job: nothing runs, nothing is removed."""
    from workflow_helpers import run_snakemake

    before = _files(unpaired_run.results)
    config = unpaired_run.config
    config["corpus"]["columns"]["response"] = "answer"  # no such column in corpus.csv
    configfile = unpaired_run.workdir / "bad-column.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False))
    result = run_snakemake(unpaired_run.workdir, configfile, "--cores", "2", "results/tables/table1_anova.csv",
                           "results/lock.yaml", check=False)
    console = result.stdout + result.stderr
    assert result.returncode != 0
    assert "preflight: 1 problem before the first job:" in console, console[-3000:]
    assert "column 'answer' (columns.response) is missing" in console
    assert "rule corpus_prepare:" not in console, "a job ran"
    assert _files(unpaired_run.results) == before


def test_a_constant_model_runs_through_beside_the_fair_one(unpaired_run):
    """Issue 33: a model whose reward is the same for every input is legal; its rows say what is undefined and
    why, and every table, figure and the summary are still written for both models."""
    tables = unpaired_run.results / "tables"
    scores = pd.read_parquet(unpaired_run.results / "scores" / "fairness" / "constant" / "north.parquet")
    assert scores["reward"].nunique() == 1
    anova = pd.read_csv(tables / "table1_anova.csv").set_index("model")
    assert pd.isna(anova.loc["constant", "p_value"]) and "no variance at all" in anova.loc["constant", "note"]
    assert anova.loc["tiny", "p_value"] == pytest.approx(anova.loc["tiny", "q_value"])  # BH over one defined p
    gap = pd.read_csv(tables / "table7_gap.csv").set_index("model")
    assert pd.isna(gap.loc["constant", "scale_free_gap"])
    assert gap.loc["tiny", "gap_ci_low"] <= gap.loc["tiny", "scale_free_gap"] <= gap.loc["tiny", "gap_ci_high"]
    power = pd.read_csv(tables / "power.csv").set_index("model")
    assert power.loc["tiny", "n"] == 8 and power.loc["tiny", "mde_cohens_f"] > 1  # 4 rows per group: only huge f
    calibration = pd.read_csv(tables / "calibration.csv")
    assert set(calibration.loc[calibration["model"] == "tiny", "scenario"]) == {"shuffled", "mde"}
    assert calibration.loc[calibration["model"] == "constant", "note"].str.contains("no variance").all()
    for figure in ("fig_gap_forest", "fig2_group_means", "fig_calibration"):
        assert (unpaired_run.results / "figures" / f"{figure}.png").stat().st_size > 1000
    summary = (unpaired_run.results / "summary.md").read_text()
    assert "### constant" in summary and "**Undefined:** every reward equals 0" in summary
    assert "this run had 80% power for Cohen's f >=" in summary or "**Significantly unfair:** yes" in summary
    assert "- Calibration:" in summary
