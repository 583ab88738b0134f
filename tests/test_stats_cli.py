"""`rmeval fairness-stats` and `rmeval fairness-summary` end to end on hand-made score files.

Every value in the written tables is recomputed here from the raw files with scipy,
statsmodels or pandas."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.cli import main as rmeval_main
from scipy import stats

GROUPS = ["computer_science", "economics", "mathematics", "physics"]
SIZES = {"computer_science": 24, "economics": 31, "mathematics": 18, "physics": 40}
# model -> (location, per-group shifts, per-group SDs): a clearly unfair model, a negative-mean model,
# a near-zero-mean model, and a reference model
MODELS = {
    "unfair-rm": (2.0, [0.0, 1.5, -0.5, 0.2], [1.0, 1.0, 1.0, 1.0]),
    "negative-rm": (-4.0, [0.1, 0.0, -0.3, 0.4], [0.5, 1.5, 0.8, 1.1]),
    "zero-rm": (0.0, [0.02, -0.01, 0.0, 0.03], [0.3, 0.3, 0.6, 0.4]),
    "ref-rm": (1.0, [0.1, 1.0, -0.2, 0.3], [1.0, 1.0, 1.0, 1.0]),
}
EXPECTED_COLUMNS = {
    "table1_anova": ["model", "f_statistic", "p_value", "q_value", "rewardbench_rank", "note"],
    "table2_tukey": ["model", "significant_pairs", "total_pairs", "pairs_ci_low", "pairs_ci_high"],
    "table3_nmgd": ["model", "nmgd_percent", "rewardbench_rank"],
    "table4_pearson": ["model", "pearson_r", "ci_low", "ci_high", "p_value"],
    "group_means": ["model", "group", "n", "mean", "std", "sem", "ci_low", "ci_high", "truncated_percent"],
    "table5_robust_anova": ["model", "welch_f", "welch_p", "welch_q", "kruskal_h", "kruskal_p", "kruskal_q", "eta_sq",
                            "omega_sq", "cohens_f", "note"],
    "table6_games_howell": ["model", "significant_pairs", "total_pairs"],
    "table7_gap": ["model", "max_group", "min_group", "scale_free_gap", "gap_ci_low", "gap_ci_high", "nmgd_percent",
                   "nmgd_ci_low", "nmgd_ci_high", "perm_p_value", "perm_q_value", "null_max_gap", "nmgd_unstable",
                   "interval_family", "note"],
    "table8_length": ["model", "group_f", "group_p", "length_coef", "length_p", "raw_gap", "adjusted_gap",
                      "gap_retained_percent", "note"],
    "adjusted_group_means": ["model", "group", "raw_mean", "adjusted_mean"],
    "table9_rank_agreement": ["model_a", "model_b", "kendall_tau", "spearman_rho", "top_group_match"],
    "table10_rank_vs_fairness": ["metric", "spearman_rho", "p_value", "n_models", "note"],
    "rank_vs_fairness_points": ["model", "rewardbench_rank", "nmgd_percent", "scale_free_gap"],
    "power": ["model", "test", "n", "groups", "alpha", "mde_cohens_f", "cohens_f", "paper_cohens_f",
              "power_at_paper_effect", "note"],
}
PAIR_COLUMNS = ["model", "group_a", "group_b", "mean_diff", "std_error", "df", "q_statistic", "p_adj", "ci_low",
                "ci_high", "reject"]
RANKS = {"unfair-rm": 9, "negative-rm": 4, "zero-rm": 2, "ref-rm": 1}


def write_scores(root: Path, models: dict = MODELS, with_tokens: bool = True) -> Path:
    rng = np.random.default_rng(2025)
    for index, (model, (location, shifts, sds)) in enumerate(models.items()):
        (root / model).mkdir(parents=True, exist_ok=True)
        for group, shift, sd in zip(GROUPS, shifts, sds, strict=True):
            n = SIZES[group]
            tokens = rng.integers(60, 400, n)
            frame = pd.DataFrame({
                "id": [f"2401.{i:05d}" for i in range(n)],
                "reward": location + shift + 0.05 * np.log(tokens / 200) + rng.normal(0, sd, n),
                "truncated": False,
            })
            if with_tokens:
                frame["n_tokens"] = tokens
            if index % 2:  # score files made elsewhere may be CSV
                frame.to_csv(root / model / f"{group}.csv", index=False)
            else:
                frame.to_parquet(root / model / f"{group}.parquet")
    return root


def write_registry(path: Path) -> Path:
    lines = ["models:"]
    for model, rank in RANKS.items():
        lines += [f"  {model}:", f"    path: local/{model}", f"    rewardbench_rank: {rank}"]
    lines += ["  Nemotron-4-340B-Reward:", "    path: nvidia/nemotron-4-340b-reward", "    adapter: nemotron-api",
              "    options: {base_url: 'https://integrate.api.nvidia.com/v1'}"]
    path.write_text("\n".join(lines) + "\n")
    return path


SNAPSHOT_SHA = "5f" * 32


def write_manifests(folder: Path) -> Path:
    """Manifests as `rmeval arxiv-select` writes them (rmeval/benchmarks/fairness/arxiv/select.py), for a snapshot source."""
    folder.mkdir(parents=True, exist_ok=True)
    for index, group in enumerate(GROUPS):
        (folder / f"{group}.manifest.json").write_text(json.dumps({
            "group": group,
            "source": {"kind": "snapshot", "path": "/data/arxiv/arxiv-metadata-oai-snapshot.json",
                       "bytes": 123456, "sha256": SNAPSHOT_SHA, "gzip": False},
            "date": {"fetched_at": f"2026-11-{29 + index % 2:02d}T10:00:00+00:00",
                     "selected_at": "2026-11-30T11:00:00+00:00"},
            "seed": 7,
            "settings": {"source": "snapshot", "seed": 7, "date_from": "2020-01-01", "date_to": "2024-12-31"},
            "counts": {"eligible": 100, "sampled": SIZES[group]},
            "output": {"path": f"results/data/{group}.parquet", "rows": SIZES[group],
                       "sha256": f"{index:02d}" * 32, "content_sha256": f"{index + 10:02d}" * 32},
        }))
    return folder


def read_raw(scores: Path) -> pd.DataFrame:
    frames = []
    for model in MODELS:
        for group in GROUPS:
            parquet = scores / model / f"{group}.parquet"
            frame = pd.read_parquet(parquet) if parquet.exists() else pd.read_csv(scores / model / f"{group}.csv")
            frames.append(frame.assign(model=model, group=group))
    return pd.concat(frames, ignore_index=True)


def run_stats(scores: Path, out: Path, *extra: str) -> int:
    return rmeval_main(["fairness-stats", "--scores", str(scores), "--out", str(out), "--bootstrap", "200",
                        "--permutations", "200", "--seed", "3", *extra])


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("stats")
    scores = write_scores(root / "scores")
    registry = write_registry(root / "models.yaml")
    manifests = write_manifests(root / "data")
    out = root / "tables"
    assert run_stats(scores, out, "--reference-model", "ref-rm", "--registry", str(registry),
                     "--manifests", str(manifests)) == 0
    return scores, out


def test_every_table_is_written_with_the_contract_columns(full_run: tuple[Path, Path]) -> None:
    _, out = full_run
    for stem, columns in {**EXPECTED_COLUMNS, "tukey_pairs": PAIR_COLUMNS, "games_howell_pairs": PAIR_COLUMNS}.items():
        frame = pd.read_csv(out / f"{stem}.csv")
        assert list(frame.columns) == columns, stem
        for suffix in ("md", "tex"):
            assert (out / f"{stem}.{suffix}").stat().st_size > 0
    for method in ("pearson", "spearman"):
        matrix = pd.read_csv(out / f"correlation_{method}.csv")
        assert list(matrix.columns) == ["model", *sorted(MODELS)]  # model folders in sorted order by default
        assert list(matrix["model"]) == sorted(MODELS)
    assert not list(out.glob("*.tmp"))


def test_paper_tables_match_scipy_and_statsmodels(full_run: tuple[Path, Path]) -> None:
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    scores, out = full_run
    raw = read_raw(scores)
    table1 = pd.read_csv(out / "table1_anova.csv").set_index("model")
    table2 = pd.read_csv(out / "table2_tukey.csv").set_index("model")
    table3 = pd.read_csv(out / "table3_nmgd.csv").set_index("model")
    group_means = pd.read_csv(out / "group_means.csv")
    for model in MODELS:
        rows = raw[raw["model"] == model]
        samples = [rows.loc[rows["group"] == g, "reward"].to_numpy() for g in GROUPS]
        anova = stats.f_oneway(*samples)
        assert table1.loc[model, "f_statistic"] == pytest.approx(anova.statistic, rel=1e-9)
        assert table1.loc[model, "p_value"] == pytest.approx(anova.pvalue, rel=1e-7)
        assert table1.loc[model, "rewardbench_rank"] == RANKS[model]
        tukey = pairwise_tukeyhsd(rows["reward"].to_numpy(), rows["group"].to_numpy())
        assert table2.loc[model, "significant_pairs"] == int(tukey.reject.sum())
        assert table2.loc[model, "total_pairs"] == 6
        means = rows.groupby("group")["reward"].agg(["mean", "std", "count"]).loc[GROUPS]
        nmgd = (means["mean"].max() - means["mean"].min()) / means["mean"].mean() * 100
        assert table3.loc[model, "nmgd_percent"] == pytest.approx(nmgd, rel=1e-9)
        ours = group_means[group_means["model"] == model].set_index("group").loc[GROUPS]
        assert list(ours["n"]) == [SIZES[g] for g in GROUPS]
        np.testing.assert_allclose(ours["mean"], means["mean"], rtol=1e-10)
        np.testing.assert_allclose(ours["std"], means["std"], rtol=1e-10)
        half = stats.t.ppf(0.975, means["count"] - 1) * means["std"] / np.sqrt(means["count"])
        np.testing.assert_allclose(ours["ci_high"], means["mean"] + half, rtol=1e-9)
    assert table3.loc["negative-rm", "nmgd_percent"] < 0  # sign kept as in the paper


def test_table4_and_correlations_match_pandas(full_run: tuple[Path, Path]) -> None:
    scores, out = full_run
    means = read_raw(scores).groupby(["model", "group"])["reward"].mean().unstack("model").loc[GROUPS]
    table4 = pd.read_csv(out / "table4_pearson.csv").set_index("model")
    assert sorted(table4.index) == sorted(m for m in MODELS if m != "ref-rm")
    for model in table4.index:
        reference = stats.pearsonr(means[model], means["ref-rm"])
        assert table4.loc[model, "pearson_r"] == pytest.approx(reference.statistic, rel=1e-9)
        assert table4.loc[model, "p_value"] == pytest.approx(reference.pvalue, rel=1e-7)
    for method in ("pearson", "spearman"):
        matrix = pd.read_csv(out / f"correlation_{method}.csv").set_index("model")
        np.testing.assert_allclose(matrix.to_numpy(), means[sorted(MODELS)].corr(method=method).to_numpy(), rtol=1e-9)
    agreement = pd.read_csv(out / "table9_rank_agreement.csv")
    assert len(agreement) == 6
    first = agreement.iloc[0]
    assert first["kendall_tau"] == pytest.approx(stats.kendalltau(means[first["model_a"]],
                                                                  means[first["model_b"]]).statistic)


def test_extended_tables_match_independent_implementations(full_run: tuple[Path, Path]) -> None:
    import statsmodels.api as sm
    import statsmodels.formula.api as smf
    from statsmodels.stats.oneway import anova_oneway

    scores, out = full_run
    raw = read_raw(scores)
    table5 = pd.read_csv(out / "table5_robust_anova.csv").set_index("model")
    table7 = pd.read_csv(out / "table7_gap.csv").set_index("model")
    table8 = pd.read_csv(out / "table8_length.csv").set_index("model")
    for model in MODELS:
        rows = raw[raw["model"] == model].assign(log_len=lambda f: np.log(f["n_tokens"]))
        samples = [rows.loc[rows["group"] == g, "reward"].to_numpy() for g in GROUPS]
        welch = anova_oneway(samples, use_var="unequal")
        assert table5.loc[model, "welch_f"] == pytest.approx(welch.statistic, rel=1e-9)
        assert table5.loc[model, "welch_p"] == pytest.approx(welch.pvalue, rel=1e-7)
        assert table5.loc[model, "kruskal_h"] == pytest.approx(stats.kruskal(*samples).statistic, rel=1e-9)
        fit = smf.ols("reward ~ C(group)", data=rows).fit()
        ss = sm.stats.anova_lm(fit, typ=1)["sum_sq"]
        assert table5.loc[model, "eta_sq"] == pytest.approx(ss.iloc[0] / ss.sum(), rel=1e-9)
        means = np.array([s.mean() for s in samples])
        pooled = np.sqrt(fit.mse_resid)
        assert table7.loc[model, "scale_free_gap"] == pytest.approx(np.ptp(means) / pooled, rel=1e-9)
        assert table7.loc[model, "max_group"] == GROUPS[int(np.argmax(means))]
        assert table7.loc[model, "gap_ci_low"] <= table7.loc[model, "scale_free_gap"] <= table7.loc[
            model, "gap_ci_high"]
        assert 1 / 201 <= table7.loc[model, "perm_p_value"] <= 1
        ancova = sm.stats.anova_lm(smf.ols("reward ~ C(group) + log_len", data=rows).fit(), typ=2)
        assert table8.loc[model, "group_f"] == pytest.approx(ancova.loc["C(group)", "F"], rel=1e-9)
    assert table7.loc["unfair-rm", "perm_p_value"] == pytest.approx(1 / 201)
    assert bool(table7.loc["zero-rm", "nmgd_unstable"])
    assert not bool(table7.loc["unfair-rm", "nmgd_unstable"])
    table10 = pd.read_csv(out / "table10_rank_vs_fairness.csv").set_index("metric")
    gaps = table7["scale_free_gap"]
    reference = stats.spearmanr([RANKS[m] for m in gaps.index], gaps.to_numpy())
    assert table10.loc["scale_free_gap", "spearman_rho"] == pytest.approx(reference.statistic)
    assert table10.loc["scale_free_gap", "n_models"] == 4


def test_footnotes_give_n_per_group_and_the_data_source(full_run: tuple[Path, Path]) -> None:
    _, out = full_run
    markdown = (out / "table1_anova.md").read_text()
    assert "n per group: computer science 24, economics 31, mathematics 18, physics 40." in markdown
    assert ("Data: arXiv metadata snapshot, papers from 2020-01-01 to 2024-12-31, read 2026-11-29 to 2026-11-30, "
            "sample ") in markdown
    latex = (out / "table1_anova.tex").read_text()
    assert "computer science 24" in latex and "\\begin{tabular}{lrrrr}" in latex and "\\bottomrule" in latex
    assert "| unfair-rm |" in markdown and "| RewardBench Rank |" in markdown
    provenance = json.loads((out / "provenance.json").read_text())
    assert set(provenance["groups"]) == set(GROUPS) and set(provenance["scores"]) == set(MODELS)
    assert provenance["sentence"] in markdown
    assert "## Score files" in (out / "provenance.md").read_text()


def test_same_seed_gives_identical_tables(full_run: tuple[Path, Path], tmp_path: Path) -> None:
    scores, out = full_run
    registry = write_registry(tmp_path / "models.yaml")
    manifests = write_manifests(tmp_path / "data")
    assert run_stats(scores, tmp_path / "again", "--reference-model", "ref-rm", "--registry", str(registry),
                     "--manifests", str(manifests)) == 0
    for stem in ("table7_gap", "group_means", "table1_anova"):
        assert (tmp_path / "again" / f"{stem}.csv").read_bytes() == (out / f"{stem}.csv").read_bytes()


def test_missing_reference_skips_table4_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    scores = write_scores(tmp_path / "scores", {k: MODELS[k] for k in ("unfair-rm", "zero-rm")})
    out = tmp_path / "tables"
    assert run_stats(scores, out, "--registry", str(write_registry(tmp_path / "models.yaml"))) == 0
    assert pd.read_csv(out / "table4_pearson.csv").empty
    assert "Nemotron-4-340B-Reward" in (out / "table4_pearson.md").read_text()
    assert "Table 4 skipped" in capsys.readouterr().err
    rank_rows = pd.read_csv(out / "table10_rank_vs_fairness.csv")
    assert rank_rows["spearman_rho"].isna().all() and rank_rows["note"].str.contains("needs at least 3").all()


def test_unknown_reference_is_an_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    scores = write_scores(tmp_path / "scores", {k: MODELS[k] for k in ("unfair-rm", "zero-rm")})
    assert run_stats(scores, tmp_path / "tables", "--reference-model", "Nemotorn-typo") == 2
    assert "Nemotorn-typo" in capsys.readouterr().err
    assert not (tmp_path / "tables").exists()


def _corrupt(scores: Path, case: str) -> str:
    path = scores / "unfair-rm" / "economics.parquet"
    frame = pd.read_parquet(path)
    if case == "nan":
        frame.loc[3, "reward"] = np.nan
    elif case == "inf":
        frame.loc[5, "reward"] = np.inf
    elif case == "n_below_2":
        frame = frame.iloc[:1]
    elif case == "all_equal":
        frame["reward"] = 0.5
    elif case == "no_reward_column":
        frame = frame.drop(columns="reward")
    elif case == "one_group":
        for model in ("unfair-rm", "zero-rm"):
            for group in GROUPS[1:]:
                for file in (scores / model).glob(f"{group}.*"):
                    file.unlink()
        return "only one group"
    frame.to_parquet(path)
    return str(path)


@pytest.mark.parametrize("case", ["nan", "inf", "no_reward_column", "one_group"])
def test_degenerate_input_is_a_clear_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture, case: str
) -> None:
    scores = write_scores(tmp_path / "scores", {k: MODELS[k] for k in ("unfair-rm", "zero-rm")})
    expected = _corrupt(scores, case)
    assert run_stats(scores, tmp_path / "tables") == 2
    message = capsys.readouterr().err
    assert expected in message
    if case != "one_group":
        assert "unfair-rm" in message or "reward" in message
        assert "economics" in message
    assert not (tmp_path / "tables").exists()


@pytest.mark.parametrize(("case", "undefined", "family"), [
    ("n_below_2", "fewer than 2 rewards in economics (n = 1)", "Tukey-Kramer"),  # no variance: GH pairs undefined
    ("all_equal", "rewards constant in economics", "Games-Howell"),  # a zero variance: its GH pairs still defined
])
def test_degenerate_but_legal_rewards_are_a_note_not_an_error(tmp_path: Path, case: str, undefined: str,
                                                               family: str) -> None:
    """Issue 33: a group of one or a constant group leaves some statistics undefined; the run goes on, and the
    model's rows say what is undefined and why."""
    scores = write_scores(tmp_path / "scores", {k: MODELS[k] for k in ("unfair-rm", "zero-rm")})
    _corrupt(scores, case)
    out = tmp_path / "tables"
    assert run_stats(scores, out) == 0
    for stem in ("table1_anova", "table5_robust_anova", "power"):
        notes = pd.read_csv(out / f"{stem}.csv").set_index("model")["note"]
        assert undefined in notes["unfair-rm"] and pd.isna(notes["zero-rm"])
    robust = pd.read_csv(out / "table5_robust_anova.csv").set_index("model")
    assert np.isnan(robust.loc["unfair-rm", "welch_p"]) and robust.loc["unfair-rm", "kruskal_p"] < 1
    gap = pd.read_csv(out / "table7_gap.csv").set_index("model")
    assert gap.loc["unfair-rm", "interval_family"] == f"{family} + test inversion"
    assert gap.loc["unfair-rm", "gap_ci_low"] <= gap.loc["unfair-rm", "scale_free_gap"] <= gap.loc[
        "unfair-rm", "gap_ci_high"]
    assert "| Note |" in (out / "table1_anova.md").read_text()


def test_scores_without_n_tokens_skip_the_length_analysis(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "scores", {k: MODELS[k] for k in ("unfair-rm", "zero-rm")}, with_tokens=False)
    out = tmp_path / "tables"
    assert run_stats(scores, out, "--reference-model", "zero-rm") == 0
    table8 = pd.read_csv(out / "table8_length.csv")
    assert table8["group_f"].isna().all()
    assert table8["note"].str.contains("no n_tokens column").all()
    assert pd.read_csv(out / "adjusted_group_means.csv").empty
    summary = tmp_path / "summary.md"
    assert rmeval_main(["fairness-summary", "--tables", str(out), "--out", str(summary)]) == 0
    assert "**Length:** not analysed (length analysis skipped: no n_tokens column" in summary.read_text()


def test_truncation_per_group_is_tabled_noted_and_warned(tmp_path: Path) -> None:
    """Issue 36: truncation that differs by group showed only in the score logs. group_means gives each model x
    group's share of cut rows; Table 8's note says whether it confounds; the summary warns when shares differ."""
    scores = write_scores(tmp_path / "scores", {k: MODELS[k] for k in ("unfair-rm", "zero-rm")})
    cut = {}  # unfair-rm: only its first group's first rows are cut; zero-rm: every row of every group
    for model in ("unfair-rm", "zero-rm"):
        for index, group in enumerate(GROUPS):
            path = next((scores / model).glob(f"{group}.*"))
            frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
            rows = (len(frame) // 2 if index == 0 else 0) if model == "unfair-rm" else len(frame)
            frame["truncated"] = [i < rows for i in range(len(frame))]
            cut[model, group] = 100 * rows / len(frame)
            frame.to_parquet(path) if path.suffix == ".parquet" else frame.to_csv(path, index=False)
    out = tmp_path / "tables"
    assert run_stats(scores, out, "--reference-model", "zero-rm") == 0
    means = pd.read_csv(out / "group_means.csv")
    for row in means.itertuples(index=False):
        assert row.truncated_percent == pytest.approx(cut[row.model, row.group])
    note = (out / "table8_length.md").read_text()
    assert "Truncation: unfair-rm, zero-rm cut responses at max_length" in note
    assert "differs between groups for unfair-rm: truncation confounds this length analysis" in note
    summary = tmp_path / "summary.md"
    assert rmeval_main(["fairness-summary", "--tables", str(out), "--out", str(summary)]) == 0
    text = summary.read_text()
    assert f"**Warning, truncation differs by group:** unfair-rm cut {cut['unfair-rm', GROUPS[0]]:.0f}% of" in text
    assert "truncation differs by group:** zero-rm" not in text  # the same share everywhere: no warning


def test_summary_reads_like_a_report(full_run: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = full_run
    summary = tmp_path / "results" / "summary.md"
    assert rmeval_main(["fairness-summary", "--tables", str(out), "--out", str(summary)]) == 0
    text = summary.read_text()
    for model in MODELS:
        assert f"### {model}" in text
    unfair = text.split("### unfair-rm")[1].split("###")[0]
    assert "**Significantly unfair:** yes" in unfair
    assert "economics over mathematics" in unfair  # largest gap named
    assert "**Favoured:** economics" in unfair and "**disfavoured:** mathematics" in unfair
    assert "after adjusting for length" in unfair and "length explains" in unfair
    assert "the smallest 200 permutations can give" in unfair
    zero = text.split("### zero-rm")[1].split("###")[0]
    assert "meaningless here" in zero  # NMGD flagged for the near-zero-mean model
    negative = text.split("### negative-rm")[1].split("###")[0]
    assert "negative only because the mean reward is" in negative
    assert "Agreement with ref-rm" in text and "Better models are fairer" in text
    assert len(text.split()) < 900  # one page


@pytest.mark.slow(reason="a fresh interpreter, to see which modules the stats commands import")
def test_stats_commands_do_not_import_torch(full_run: tuple[Path, Path], tmp_path: Path) -> None:
    scores, _ = full_run
    code = (
        "import sys\n"
        "from rmeval.cli import main\n"
        f"assert main(['fairness-stats', '--scores', {str(scores)!r}, '--out', {str(tmp_path / 't')!r},"
        " '--reference-model', 'ref-rm', '--bootstrap', '100', '--permutations', '100']) == 0\n"
        f"assert main(['fairness-summary', '--tables', {str(tmp_path / 't')!r}, '--out',"
        f" {str(tmp_path / 's.md')!r}]) == 0\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def test_p_values_and_nan_render_cleanly() -> None:
    from rmeval.benchmarks.fairness.stats.tables import Table, to_latex, to_markdown
    from rmeval.tables import Column, format_cell

    p = Column("p_value", "p", "p")
    assert format_cell(0.0, p) == "<1e-300" and format_cell(0.0, p, latex=True) == "$<10^{-300}$"
    assert format_cell(1.234e-12, p) == "1.23e-12"
    assert format_cell(9.46e-101, p, latex=True) == "$9.46\\times10^{-101}$"
    assert format_cell(0.27, p, latex=True) == "$0.270$"
    assert format_cell(float("nan"), Column("pearson_r", "r", "fixed", 3)) == ""
    assert format_cell(-111.5234, Column("nmgd_percent", "NMGD", "fixed", 2)) == "-111.52"
    assert format_cell(-111.5234, Column("nmgd_percent", "NMGD", "fixed", 2), latex=True) == "$-111.52$"
    table = Table("t", "50% & more_x", pd.DataFrame({"model": ["a_b"], "pearson_r": [math.nan]}), "n_1 = 3")
    latex = to_latex(table)
    assert "50\\% \\& more\\_x" in latex and "a\\_b & -- \\\\" in latex and "n\\_1 = 3" in latex
    assert "| a_b |  |" in to_markdown(table)


def test_manifests_are_read_only_when_given(full_run: tuple[Path, Path], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13, Seen 3: run by hand from a folder holding an earlier run's results/data, the tables must not
    name that run's data source."""
    scores, _ = full_run
    stale = write_manifests(tmp_path / "results" / "data")
    for manifest in stale.glob("*.manifest.json"):  # an earlier run: another snapshot, other sizes
        document = json.loads(manifest.read_text())
        document["source"]["path"] = "/old/run/other-snapshot.json"
        document["output"]["rows"] = 999
        manifest.write_text(json.dumps(document))
    monkeypatch.chdir(tmp_path)
    assert run_stats(scores, tmp_path / "tables", "--reference-model", "ref-rm") == 0
    note = (tmp_path / "tables" / "table1_anova.md").read_text()
    assert "Data source: not recorded (run without --manifests)." in note and "arXiv" not in note
    provenance = json.loads((tmp_path / "tables" / "provenance.json").read_text())
    assert provenance["manifests_dir"] is None and all(g["manifest"] is None for g in provenance["groups"].values())
    # told where they are, it reads them (and checks the row counts against them)
    assert run_stats(scores, tmp_path / "told", "--reference-model", "ref-rm", "--manifests", "results/data") == 2


def test_a_gap_within_noise_is_called_indistinguishable_from_chance(tmp_path: Path) -> None:
    """Issue 13, Seen 10: pure noise, 8 groups of 30. The largest gap is about 0.5 SD but must not be called "a
    medium gap"; the summary shows the null gap beside it and says why Tukey and Games-Howell counts differ."""
    rng = np.random.default_rng(5)
    groups = [f"group_{i}" for i in range(8)]
    for model, scale in (("noise-rm", 0.0), ("shifted-rm", 1.0)):
        shifts = rng.normal(0, 1, 8) * scale
        for index, (group, shift) in enumerate(zip(groups, shifts, strict=True)):
            (tmp_path / "scores" / model).mkdir(parents=True, exist_ok=True)
            spread = 0.3 + 0.4 * index if model == "shifted-rm" else 1.0  # unequal variances: Tukey != Games-Howell
            pd.DataFrame({"id": [f"2401.{i:05d}" for i in range(30)],
                          "reward": shift + rng.normal(0, spread, 30)}).to_parquet(
                tmp_path / "scores" / model / f"{group}.parquet")
    out = tmp_path / "tables"
    assert run_stats(tmp_path / "scores", out, "--reference-model", "") == 0
    gap = pd.read_csv(out / "table7_gap.csv").set_index("model")
    assert gap.loc["noise-rm", "perm_p_value"] >= 0.05
    # E[range of 8 standard normals] / sqrt(30) = 0.52 (Tippett 1925): the null gap the permutations give
    assert gap.loc["noise-rm", "null_max_gap"] == pytest.approx(2.847 / math.sqrt(30), rel=0.1)
    assert rmeval_main(["fairness-summary", "--tables", str(out), "--out", str(tmp_path / "summary.md")]) == 0
    text = (tmp_path / "summary.md").read_text()
    noise = text.split("### noise-rm")[1].split("###")[0]
    observed = gap.loc["noise-rm", "scale_free_gap"]
    # a gap with the catalogue's decimals (3), as the console, the leaderboard and the figures show it (issue 46)
    assert f"by {observed:.3f} within-group SDs" in noise
    assert f"noise alone gives {gap.loc['noise-rm', 'null_max_gap']:.3f} on average" in noise
    assert "not distinguishable from chance at alpha = 0.05" in noise and " gap;" not in noise
    shifted = text.split("### shifted-rm")[1]
    tukey = int(pd.read_csv(out / "table2_tukey.csv").set_index("model").loc["shifted-rm", "significant_pairs"])
    games_howell = pd.read_csv(out / "table6_games_howell.csv").set_index("model").loc["shifted-rm"]
    assert tukey != int(games_howell["significant_pairs"])
    assert (f"{int(games_howell['significant_pairs'])} of 28 group pairs differ (Games-Howell, which allows "
            f"unequal variances; Tukey HSD in Table 2 assumes equal ones and finds {tukey})") in shifted


def test_summary_appends_another_stages_section(full_run: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = full_run
    section = tmp_path / "rewardmath_summary.md"
    section.write_text("RewardMATH: 2 models, accuracy 20.5 % and 17.0 %.\n")
    summary = tmp_path / "summary.md"
    assert rmeval_main(["fairness-summary", "--tables", str(out), "--out", str(summary), "--section",
                        str(section)]) == 0
    assert summary.read_text().endswith("## Rewardmath summary\n\nRewardMATH: 2 models, accuracy 20.5 % and 17.0 %.\n")
