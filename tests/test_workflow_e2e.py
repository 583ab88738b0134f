"""End to end: the `fairness` scenario of .test/, config/demo.yaml as shipped (`snakemake --cores 2` from the arXiv
sample of resources/demo/ through the two tiny reward models the run builds and the length baseline to every table
and figure, with no network and no shared data); values are recomputed here independently."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multicomp import pairwise_tukeyhsd

pytestmark = pytest.mark.e2e
REPO_ROOT = Path(__file__).resolve().parents[1]
BASELINE = "length-baseline"  # the demo's trivial baseline (config/models.yaml)


def _scores(run, model: str) -> pd.DataFrame:
    frames = []
    for group in run.groups:
        frame = pd.read_parquet(run.results / "scores" / "fairness" / model / f"{group}.parquet")
        frames.append(frame.assign(group=group))
    return pd.concat(frames, ignore_index=True)


def _papers(run) -> int:
    return run.config["arxiv"]["papers_per_group"]


def test_data_stage_is_balanced_single_group_and_deduplicated(e2e_run):
    titles: dict[str, str] = {}
    for group in e2e_run.groups:
        data = pd.read_parquet(e2e_run.results / "data" / f"{group}.parquet")
        assert list(data.columns[:5]) == ["id", "title", "abstract", "categories", "group"]
        assert len(data) == _papers(e2e_run), group
        assert data["id"].is_unique
        assert (data["group"] == group).all()
        assert data["title"].str.len().gt(0).all() and data["abstract"].str.len().gt(0).all()
        for title in data["title"]:
            assert title not in titles, f"{title!r} in {group} and {titles.get(title)}"
            titles[title] = group
        manifest = json.loads((e2e_run.results / "data" / f"{group}.manifest.json").read_text())
        assert manifest["seed"] == 0
    # eess.SY papers are listed as "eess.SY cs.SY": alias canonicalisation must keep them.
    systems = pd.read_parquet(e2e_run.results / "data" / "systems_science.parquet")
    assert systems["categories"].str.contains("eess.SY").all()


def test_every_pair_is_scored_with_finite_rewards(e2e_run):
    for model in e2e_run.models:
        for group in e2e_run.groups:
            scores = pd.read_parquet(e2e_run.results / "scores" / "fairness" / model / f"{group}.parquet")
            data = pd.read_parquet(e2e_run.results / "data" / f"{group}.parquet")
            assert {"id", "reward", "n_tokens", "truncated"} <= set(scores.columns)
            assert sorted(scores["id"]) == sorted(data["id"])
            assert np.isfinite(scores["reward"]).all()
            assert (scores["n_tokens"] > 0).all()
            meta = json.loads((e2e_run.results / "scores" / "fairness" / model / f"{group}.meta.json").read_text())
            assert meta["rows"] == _papers(e2e_run)
    # Two different seeds are two different reward models.
    a, b = _scores(e2e_run, "tiny-a"), _scores(e2e_run, "tiny-b")
    assert not np.allclose(a.sort_values("id")["reward"], b.sort_values("id")["reward"])


def test_table1_anova_matches_scipy(e2e_run):
    table = pd.read_csv(e2e_run.results / "tables" / "table1_anova.csv").set_index("model")
    for model in e2e_run.models:
        scores = _scores(e2e_run, model)
        expected = sps.f_oneway(*[g["reward"].to_numpy() for _, g in scores.groupby("group")])
        assert table.loc[model, "f_statistic"] == pytest.approx(expected.statistic, rel=1e-6)
        assert table.loc[model, "p_value"] == pytest.approx(expected.pvalue, rel=1e-6, abs=1e-300)


def test_table2_tukey_counts_match_statsmodels(e2e_run):
    table = pd.read_csv(e2e_run.results / "tables" / "table2_tukey.csv").set_index("model")
    for model in e2e_run.models:
        scores = _scores(e2e_run, model)
        result = pairwise_tukeyhsd(scores["reward"].to_numpy(), scores["group"].to_numpy(), alpha=0.05)
        assert table.loc[model, "total_pairs"] == 28
        assert table.loc[model, "significant_pairs"] == int(np.sum(result.reject))


def test_table3_and_table4_match_group_means(e2e_run):
    nmgd = pd.read_csv(e2e_run.results / "tables" / "table3_nmgd.csv").set_index("model")
    pearson = pd.read_csv(e2e_run.results / "tables" / "table4_pearson.csv").set_index("model")
    means = {m: _scores(e2e_run, m).groupby("group")["reward"].mean() for m in e2e_run.models}
    for model in e2e_run.models:
        m = means[model]
        assert nmgd.loc[model, "nmgd_percent"] == pytest.approx((m.max() - m.min()) / m.mean() * 100, rel=1e-6)
        if model == "tiny-b":
            continue  # the reference model itself (r = 1) is not a row of Table 4
        r = sps.pearsonr(m.sort_index(), means["tiny-b"].sort_index()).statistic
        assert pearson.loc[model, "pearson_r"] == pytest.approx(r, rel=1e-6, abs=1e-9)
    assert "tiny-b" not in pearson.index


def test_group_means_table_and_table_formats(e2e_run):
    tables = e2e_run.results / "tables"
    means = pd.read_csv(tables / "group_means.csv")
    # the `note` column marks the length baseline's rows (a table that names a baseline or a judge has one)
    assert list(means.columns) == ["model", "group", "n", "mean", "std", "sem", "ci_low", "ci_high", "truncated_percent",
                                   "note"]
    assert len(means) == len(e2e_run.models) * len(e2e_run.groups)
    assert (means["n"] == _papers(e2e_run)).all()
    assert ((means["ci_low"] < means["mean"]) & (means["mean"] < means["ci_high"])).all()
    for stem in ("table1_anova", "table2_tukey", "table3_nmgd", "table4_pearson"):
        markdown = (tables / f"{stem}.md").read_text()
        latex = (tables / f"{stem}.tex").read_text()
        assert "tiny-a" in markdown and "|" in markdown
        assert "tiny-a" in latex and "tabular" in latex
    # provenance: the notes name this run's data (the manifests of results/data) by the sample hash on record
    provenance = json.loads((tables / "provenance.json").read_text())
    assert set(provenance["groups"]) == set(e2e_run.groups)
    for group, entry in provenance["groups"].items():
        manifest = json.loads((e2e_run.results / "data" / f"{group}.manifest.json").read_text())
        assert entry["output"]["sha256"] == manifest["output"]["sha256"]
    note = (tables / "table1_anova.md").read_text()
    # the demo's shipped sample is named as what it is (issue 46), not as a snapshot fetched today
    assert "Data: the shipped demo sample (resources/demo/arxiv-sample.jsonl: arXiv listings of 2023-24" in note
    assert "fetched" not in note and f"sample {provenance['sample_sha256'][:8]}" in note
    assert (tables / "reproduction.csv").exists() and "Reproduction" in (e2e_run.results / "summary.md").read_text()


def test_figures_and_summary_exist(e2e_run):
    for stem in ("fig2_group_means", "fig3_standardized"):
        png = e2e_run.results / "figures" / f"{stem}.png"
        pdf = e2e_run.results / "figures" / f"{stem}.pdf"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert pdf.read_bytes()[:5] == b"%PDF-"
    summary = (e2e_run.results / "summary.md").read_text()
    assert "tiny-a" in summary and "tiny-b" in summary
    # issue 39: the demo's models have no published rank, said as such (not "only 0 model(s) have ...")
    assert "0 model" not in summary and "no model of this run has a published RewardBench rank" in summary


def test_rerun_is_a_no_op(e2e_run):
    from workflow_helpers import run_snakemake

    result = run_snakemake(e2e_run.workdir, e2e_run.configfile, "-n", "--cores", "2")
    assert "Nothing to be done" in result.stdout + result.stderr


def test_lock_records_the_run_and_rebuilds_its_groups(e2e_run, tmp_path):
    """results/lock.yaml of the e2e run; its groups rebuilt from the same snapshot hash equal (rmeval.lock)."""
    from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
    from rmeval.benchmarks.fairness.lock.rebuild import rebuild
    from rmeval.lock.lockfile import load_lock

    lock = load_lock(e2e_run.results / "lock.yaml")
    locked_groups = lock.sections["fairness"].groups
    assert list(locked_groups) == list(e2e_run.groups) and sorted(lock.models) == sorted(e2e_run.models)
    config = e2e_run.config
    # The demo's sample records no versions (resources/demo/SOURCE.md): the lock says none rather than guess one.
    assert all(len(group.papers) == config["arxiv"]["papers_per_group"] and group.papers[0].version == ""
               for group in locked_groups.values())
    # The demo's snapshot path is relative to the repository (the run directory has none).
    snapshot = REPO_ROOT / config["arxiv"]["snapshot"]
    assert not (e2e_run.workdir / config["arxiv"]["snapshot"]).exists()
    settings = ArxivSettings.from_mapping({"source": "lock", "snapshot": str(snapshot)})
    manifests = rebuild(lock, str(e2e_run.results / "lock.yaml"), config["groups"], settings, tmp_path)
    for group in e2e_run.groups:
        assert manifests[group]["output"]["content_sha256"] == locked_groups[group].table_sha256
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / f"{group}.parquet"),
                                      pd.read_parquet(e2e_run.results / "data" / f"{group}.parquet"))


def test_each_model_is_loaded_once_per_run(e2e_run):
    """One model server per model: its first job started it, every later job reused the warm model."""
    for model in (m for m in e2e_run.models if m != BASELINE):  # a baseline loads nothing: no server
        servers = [json.loads((e2e_run.results / "scores" / "fairness" / model / f"{group}.meta.json").read_text())["model_server"]
                   for group in e2e_run.groups]
        assert all(server is not None for server in servers), "local jobs of a Snakemake run use the model server"
        assert sum(server["started_by_this_job"] for server in servers) == 1, servers
        assert sorted(server["jobs_before"] for server in servers) == list(range(len(servers)))


def test_a_deleted_score_file_is_rebuilt_by_a_plain_rerun(e2e_run):
    from workflow_helpers import run_snakemake

    target = e2e_run.results / "scores" / "fairness" / "tiny-a" / f"{e2e_run.groups[0]}.parquet"
    before = pd.read_parquet(target)
    target.unlink()
    rerun = run_snakemake(e2e_run.workdir, e2e_run.configfile, "--cores", "2")
    assert "rule score_fairness:" in rerun.stdout + rerun.stderr, "a deleted score file must be rebuilt"
    pd.testing.assert_frame_equal(pd.read_parquet(target), before, check_exact=True)
    # The rerun's benchmark files sit in their own run folder: nothing mixed with the first run's.
    runs = sorted(path for path in (e2e_run.results / "perf").iterdir() if path.is_dir())
    assert len(runs) >= 2
    assert [p.relative_to(runs[-1]).as_posix() for p in (runs[-1] / "score_fairness").rglob("*.tsv")] == [
        f"score_fairness/tiny-a/{e2e_run.groups[0]}.tsv"]


def test_rerun_after_rebuild_is_a_no_op(e2e_run):
    from workflow_helpers import run_snakemake

    result = run_snakemake(e2e_run.workdir, e2e_run.configfile, "-n", "--cores", "2")
    assert "Nothing to be done" in result.stdout + result.stderr


def test_demo_builds_its_own_models_and_says_its_rewards_mean_nothing(e2e_run):
    """config/demo.yaml on a fresh clone: rule tiny_model wrote both model folders (`tiny_models`), the weights stage
    waited for them, and the summary's first line says the rewards are random."""
    for folder, built in e2e_run.config["tiny_models"].items():
        assert (e2e_run.workdir / folder / "config.json").is_file(), folder
        assert f"seed {built['seed']}" in next((e2e_run.workdir / "logs" / "tiny_model").rglob("*.log")).parent.joinpath(
            Path(folder).name + ".log").read_text()
    assert "rule tiny_model:" in e2e_run.output
    first_line = (e2e_run.results / "summary.md").read_text().splitlines()[0]
    assert first_line.startswith("**These rewards come from random tiny models (tiny-a, tiny-b")
    assert "mean nothing" in first_line


def test_the_length_baseline_is_scored_marked_and_set_beside_the_models(e2e_run):
    """The demo's length baseline: its reward is each abstract's length in characters; every table names it as a
    baseline (Markdown suffix, CSV note) and keeps it out of the models' q-value family; the summary and the gap
    figure set its gap beside the models' as what length alone produces."""
    from statsmodels.stats.multitest import multipletests

    assert BASELINE in e2e_run.models
    tables = e2e_run.results / "tables"
    for group in e2e_run.groups:
        scores = pd.read_parquet(e2e_run.results / "scores" / "fairness" / BASELINE / f"{group}.parquet")
        data = pd.read_parquet(e2e_run.results / "data" / f"{group}.parquet").set_index("id")
        assert scores.set_index("id")["reward"].to_dict() == data["abstract"].str.len().astype(float).to_dict()
        meta = json.loads((e2e_run.results / "scores" / "fairness" / BASELINE / f"{group}.meta.json").read_text())
        assert meta["revision"] == "baseline:length" and meta["model_server"] is None and meta["device"] == "cpu"
    marker = json.loads((e2e_run.results / "models" / f"{BASELINE}.downloaded.json").read_text())
    assert marker["source"] == "none"
    record = json.loads((tables / "fairness_stats.json").read_text())
    assert list(record["baselines"]) == [BASELINE] and record["baselines"][BASELINE]["kind"] == "length"
    for stem in ("table1_anova", "table3_nmgd", "table4_pearson", "table7_gap", "table8_length", "power",
                 "calibration"):
        frame = pd.read_csv(tables / f"{stem}.csv", keep_default_na=False)
        is_baseline = frame["model"] == BASELINE
        assert is_baseline.any() and frame["note"].str.contains("trivial baseline").eq(is_baseline).all(), stem
        markdown = (tables / f"{stem}.md").read_text()
        assert f"{BASELINE} (baseline‡)" in markdown and "‡ A trivial baseline" in markdown, stem
    # Benjamini-Hochberg over the reward models only, as statsmodels computes it; the baseline is a family alone
    anova = pd.read_csv(tables / "table1_anova.csv").set_index("model")
    models = [m for m in e2e_run.models if m != BASELINE]
    expected = multipletests(anova.loc[models, "p_value"], method="fdr_bh")[1]
    assert anova.loc[models, "q_value"].to_numpy() == pytest.approx(expected, rel=1e-12)
    assert anova.loc[BASELINE, "q_value"] == pytest.approx(anova.loc[BASELINE, "p_value"], rel=1e-12)
    gap = pd.read_csv(tables / "table7_gap.csv").set_index("model").loc[BASELINE]
    summary = (e2e_run.results / "summary.md").read_text()
    assert f"### {BASELINE} (trivial baseline, not a reward model" in summary
    assert "2 reward models and 1 trivial baseline (length-baseline) scored" in summary
    assert (f"Length alone: the length baseline {BASELINE} (reward = the number of characters of the response) "
            f"has a scale-free gap of {gap['scale_free_gap']:.3f} SD (95% CI {gap['gap_ci_low']:.3f} to "
            f"{gap['gap_ci_high']:.3f}") in summary
    assert (e2e_run.results / "figures" / "fig_gap_forest.png").stat().st_size > 0


def test_comparisons_leaderboard_figure_and_summary(e2e_run):
    """Which model is better (issue 40): the demo (two models and a length baseline) writes comparisons.* and
    leaderboard.* with the contract's columns, the ranks' figure and the summary's section; every model's value is
    its Table 7 gap and its power table's f, every pair is compared, and the rank intervals hold the point ranks."""
    from rmeval.run_outputs.compare.parts import COMPARISON_COLUMNS, LEADERBOARD_COLUMNS

    tables = e2e_run.results / "tables"
    comparisons, board = pd.read_csv(tables / "comparisons.csv"), pd.read_csv(tables / "leaderboard.csv")
    assert list(comparisons.columns) == COMPARISON_COLUMNS and list(board.columns) == LEADERBOARD_COLUMNS
    for suffix in ("md", "tex"):
        assert (tables / f"comparisons.{suffix}").stat().st_size and (tables / f"leaderboard.{suffix}").stat().st_size
    figure = e2e_run.results / "figures" / "fig_leaderboard"
    assert figure.with_suffix(".png").read_bytes()[:4] == b"\x89PNG" and figure.with_suffix(".pdf").exists()
    models = [m if isinstance(m, str) else m["name"] for m in e2e_run.config["models"]]
    pairs = {(a, b) for i, a in enumerate(models) for b in models[i + 1:]}
    assert set(zip(comparisons["model_a"], comparisons["model_b"], strict=True)) == pairs
    assert set(comparisons["metric"]) == {"scale_free_gap", "cohens_f"} and (comparisons["benchmark"] == "fairness").all()
    table7 = pd.read_csv(tables / "table7_gap.csv").set_index("model")
    power = pd.read_csv(tables / "power.csv").set_index("model")["cohens_f"]
    for row in board.itertuples():
        expected = table7.at[row.model, "scale_free_gap"] if row.metric == "scale_free_gap" else power[row.model]
        assert row.value == pytest.approx(expected, rel=1e-9)
        if row.metric == "scale_free_gap":  # one number, one interval: the leaderboard's is Table 7's
            assert (row.ci_low, row.ci_high) == pytest.approx(
                (table7.at[row.model, "gap_ci_low"], table7.at[row.model, "gap_ci_high"]), rel=1e-9, abs=1e-12)
        assert row.rank_low <= row.rank <= row.rank_high and row.ci_low <= row.value <= row.ci_high
    assert (comparisons["n"] == len(e2e_run.groups) * _papers(e2e_run)).all()
    # the demo's length baseline is marked (the registry entry's adapter) and every real model is set against it
    assert board.set_index("model")["baseline"].groupby(level=0).first().to_dict() == {
        model: model == BASELINE for model in models}
    summary = (e2e_run.results / "summary.md").read_text()
    assert "## Which model is better" in summary and "**scale_free_gap**, best first:" in summary
    assert f"### Against the length baseline ({BASELINE})" in summary
    for model in (m for m in models if m != BASELINE):
        assert f"- {model} against {BASELINE} (Holm-adjusted p, significant below 0.05): fairness: {model}'s " \
               "scale-free gap is " in summary
