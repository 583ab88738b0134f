"""Fairness figures: drawn from hand-made tables with the exact columns `rmeval fairness-stats` writes.

The fixture holds three models on different reward scales (one with a negative mean and one with
a mean near zero), eight groups with unequal sizes, and a model without a RewardBench rank.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.figures import (
    gap_forest,
    gap_vs_rank,
    group_means,
    length_adjusted,
    standardized,
)
from rmeval.benchmarks.fairness.figures.cli import FIGURE_NAMES, TABLE_KEYS, draw_figures
from rmeval.benchmarks.fairness.figures.cli import main as cli_main
from rmeval.benchmarks.fairness.figures.inputs import (
    read_gap,
    read_group_means,
    read_rank_points,
    read_stats_record,
    table_paths,
)
from rmeval.cli import main as rmeval_main
from rmeval.errors import RmevalError
from scipy import stats

GROUPS = (
    "physics",
    "mathematics",
    "computer_science",
    "economics",
    "electrical_engineering",
    "systems_science",
    "quantitative_biology",
    "quantitative_finance",
)
# model -> (reward location, spread, per-group shift scale, RewardBench rank)
MODELS = {
    "positive-rm": (4.0, 1.0, 0.35, 3),
    "negative-rm": (-6.5, 2.0, 0.6, 1),
    "near-zero-rm": (0.02, 0.5, 0.1, None),
}


def fixture_rewards(seed: int = 7) -> pd.DataFrame:
    """Per-paper rewards: unequal group sizes and unequal variances."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, (location, spread, shift, _) in MODELS.items():
        for index, group in enumerate(GROUPS):
            n = 20 + 3 * index
            centre = location + shift * (index - 3.5) / 3.5
            rewards = rng.normal(centre, spread * (1 + 0.1 * index), size=n)
            rows += [
                {"model": model, "group": group, "reward": float(r), "log_len": float(rng.normal(5.3, 0.3))}
                for r in rewards
            ]
    return pd.DataFrame(rows)


def write_fixture_tables(tables: Path, with_ranks: bool = True) -> dict[str, Path]:
    """The four input tables, computed with plain formulas from `fixture_rewards`."""
    tables.mkdir(parents=True, exist_ok=True)
    rewards = fixture_rewards()
    means = []
    for (model, group), frame in rewards.groupby(["model", "group"], sort=False):
        values = frame["reward"].to_numpy()
        n, mean, std = len(values), values.mean(), values.std(ddof=1)
        sem = std / np.sqrt(n)
        half = stats.t.ppf(0.975, n - 1) * sem
        means.append(
            {
                "model": model,
                "group": group,
                "n": n,
                "mean": mean,
                "std": std,
                "sem": sem,
                "ci_low": mean - half,
                "ci_high": mean + half,
            }
        )
    group_means = pd.DataFrame(means)

    gaps, adjusted, points = [], [], []
    for model, frame in group_means.groupby("model", sort=False):
        top, bottom = frame.loc[frame["mean"].idxmax()], frame.loc[frame["mean"].idxmin()]
        pooled = np.sqrt(((frame["n"] - 1) * frame["std"] ** 2).sum() / (frame["n"] - 1).sum())
        gap = (top["mean"] - bottom["mean"]) / pooled
        overall = frame["mean"].mean()  # NMGD's denominator: the mean of the group means
        nmgd = 100 * (top["mean"] - bottom["mean"]) / overall
        gaps.append(
            {
                "model": model,
                "max_group": top["group"],
                "min_group": bottom["group"],
                "scale_free_gap": gap,
                "gap_ci_low": 0.6 * gap,
                "gap_ci_high": 1.4 * gap,
                "nmgd_percent": nmgd,
                "nmgd_ci_low": nmgd - 0.5 * abs(nmgd),
                "nmgd_ci_high": nmgd + 0.5 * abs(nmgd),
                "perm_p_value": 0.0004 if model != "near-zero-rm" else 0.31,
            }
        )
        for row in frame.itertuples(index=False):
            adjusted.append(
                {
                    "model": model,
                    "group": row.group,
                    "raw_mean": row.mean,
                    "adjusted_mean": overall + 0.6 * (row.mean - overall),
                }
            )
        rank = MODELS[model][3] if with_ranks else None
        points.append({"model": model, "rewardbench_rank": rank, "nmgd_percent": nmgd, "scale_free_gap": gap})

    paths = {
        "group_means": tables / "group_means.csv",
        "gap": tables / "table7_gap.csv",
        "adjusted": tables / "adjusted_group_means.csv",
        "rank_points": tables / "rank_vs_fairness_points.csv",
        "record": tables / "fairness_stats.json",
        "calibration": tables / "calibration.csv",
    }
    write_record(paths["record"], alpha=0.05)
    from rmeval.benchmarks.fairness.stats.calibration import calibrate_model
    from rmeval.benchmarks.fairness.stats.gaps import interval_draws

    calibration = []
    for index, (model, frame) in enumerate(rewards.groupby("model", sort=False)):
        samples = [group["reward"].to_numpy() for _, group in frame.groupby("group", sort=False)]
        calibration += calibrate_model(model, samples, 40, 0.05, None, np.random.default_rng(index),
                                       interval_draws(index, model, len(samples)))
    pd.DataFrame(calibration).to_csv(paths["calibration"], index=False)
    group_means.to_csv(paths["group_means"], index=False)
    pd.DataFrame(gaps).to_csv(paths["gap"], index=False)
    pd.DataFrame(adjusted).to_csv(paths["adjusted"], index=False)
    pd.DataFrame(points).to_csv(paths["rank_points"], index=False)
    return paths


def write_record(path: Path, alpha: float) -> dict:
    """The part of fairness-stats' run record the figures read: the alpha the tables used."""
    record = {"settings": {"alpha": alpha, "bootstrap": 2000, "permutations": 2000, "seed": 0}}
    path.write_text(json.dumps(record))
    return record


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tables")
    write_fixture_tables(folder)
    return folder


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def figure_texts(figure) -> list[str]:
    """Every piece of text drawn on the figure (titles, ticks, annotations, figure text)."""
    return [text.get_text() for text in figure.findobj(lambda artist: hasattr(artist, "get_text"))]


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.slow(reason="a fresh interpreter, to see that drawing never imports torch")
def test_cli_writes_every_figure_as_png_and_pdf_and_never_imports_torch(tables: Path, tmp_path: Path) -> None:
    """`rmeval fairness-figures` in a fresh interpreter: its module imports nothing heavy at load, the command
    never imports torch and draws with Agg; then every figure is checked here."""
    out = tmp_path / "figures"
    script = (
        "import sys\n"
        "import rmeval.benchmarks.fairness.figures.cli\n"
        "lazy = [name for name in ('matplotlib', 'pandas', 'numpy', 'scipy') if name in sys.modules]\n"
        "assert not lazy, f'imported at module load: {lazy}'\n"
        "from rmeval.cli import main\n"
        f"assert main(['fairness-figures', '--tables', {str(tables)!r}, '--out', {str(out)!r}, '--dpi', '80']) == 0\n"
        "assert 'torch' not in sys.modules, 'the figure command imported torch'\n"
        "assert sys.modules['matplotlib'].get_backend().lower() == 'agg'\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    for stem in FIGURE_NAMES:
        width, height = png_size(out / f"{stem}.png")
        assert width > 300 and height > 150, (stem, width, height)
        pdf = (out / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") >= 1
    assert sorted(path.name for path in out.iterdir()) == sorted(
        f"{stem}.{fmt}" for stem in FIGURE_NAMES for fmt in ("png", "pdf")
    ), "no temporary or extra files are left behind"


def test_figures_are_byte_identical_when_redrawn(tables: Path, tmp_path: Path) -> None:
    paths = table_paths(tables, TABLE_KEYS)
    first = draw_figures(paths, tmp_path / "a", ["fig3_standardized", "fig_gap_forest"], dpi=60)
    second = draw_figures(paths, tmp_path / "b", ["fig3_standardized", "fig_gap_forest"], dpi=60)
    assert [path.name for path in first] == [path.name for path in second]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), f"{a.name} differs between two runs on the same tables"


def test_subset_needs_only_its_own_table(tables: Path, tmp_path: Path) -> None:
    only_means = tmp_path / "tables"
    only_means.mkdir()
    (only_means / "group_means.csv").write_bytes((tables / "group_means.csv").read_bytes())
    out = tmp_path / "figures"
    argv = ["fairness-figures", "--tables", str(only_means), "--out", str(out), "--dpi", "60"]
    assert rmeval_main([*argv, "--figures", "fig2_group_means", "fig3_standardized"]) == 0
    assert sorted(path.name for path in out.iterdir()) == [
        "fig2_group_means.pdf",
        "fig2_group_means.png",
        "fig3_standardized.pdf",
        "fig3_standardized.png",
    ]


def test_a_table_can_be_read_from_elsewhere_by_its_catalogue_key(tables: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "gap.csv"
    elsewhere.write_bytes((tables / "table7_gap.csv").read_bytes())
    argv = ["fairness-figures", "--tables", str(tmp_path / "none"), "--out", str(tmp_path / "figures"),
            "--dpi", "60", "--figures", "fig_gap_forest"]
    assert rmeval_main([*argv, "--table", f"table7={elsewhere}"]) == 2  # the run record is not there
    record = f"record={tables / 'fairness_stats.json'}"
    assert rmeval_main([*argv, "--table", f"table7={elsewhere}", "--table", record]) == 0
    assert (tmp_path / "figures" / "fig_gap_forest.pdf").is_file()
    with pytest.raises(RmevalError, match=r"--table 'gap=.*': expected KEY=PATH with KEY one of group_means, table7"):
        cli_main([*argv[1:], "--table", f"gap={elsewhere}"])


def test_fig2_plots_each_models_means_and_cis(tables: Path) -> None:
    means = read_group_means(tables / "group_means.csv")
    figure = group_means.draw(means)
    panels = [axes for axes in figure.axes if axes.get_title(loc="left")]
    assert [axes.get_title(loc="left") for axes in panels] == list(MODELS)
    tick_labels = [label.get_text() for label in panels[0].get_yticklabels()]
    assert tick_labels == [group.replace("_", " ") for group in GROUPS]
    assert "computer science" in tick_labels
    for axes, model in zip(panels, MODELS, strict=True):
        expected = means[means["model"] == model].reset_index(drop=True)
        bars = axes.containers
        assert len(bars) == len(GROUPS)
        for container, row in zip(bars, expected.itertuples(index=False), strict=True):
            x, y = container.lines[0].get_data()
            assert x[0] == pytest.approx(row.mean)
            segment = container.lines[2][0].get_segments()[0]
            assert sorted(point[0] for point in segment) == pytest.approx([row.ci_low, row.ci_high])
        # The dashed reference line is the model's mean over all papers (n-weighted).
        overall = (expected["mean"] * expected["n"]).sum() / expected["n"].sum()
        dashed = [line for line in axes.get_lines() if line.get_linestyle() == "--"]
        assert dashed and dashed[0].get_xdata()[0] == pytest.approx(overall)
    assert "n = 20-41 papers per group" in figure._suptitle.get_text()


def test_fig3_zscores_match_scipy_and_are_annotated(tables: Path) -> None:
    means = read_group_means(tables / "group_means.csv")
    z = standardized.standardized_means(means)
    for model in MODELS:
        vector = means[means["model"] == model].set_index("group").loc[list(GROUPS), "mean"].to_numpy()
        np.testing.assert_allclose(z.loc[model, list(GROUPS)].to_numpy(), stats.zscore(vector, ddof=0))
    figure = standardized.draw(means)
    texts = figure_texts(figure)
    for model in MODELS:
        for group in GROUPS:
            assert f"{z.loc[model, group]:+.2f}" in texts
    heatmap = figure.axes[0]
    assert [label.get_text() for label in heatmap.get_xticklabels()] == [g.replace("_", " ") for g in GROUPS]
    assert [label.get_text() for label in heatmap.get_yticklabels()] == list(MODELS)


def test_fig3_marks_a_model_with_equal_group_means_as_undefined(tables: Path) -> None:
    means = read_group_means(tables / "group_means.csv")
    means.loc[means["model"] == "positive-rm", "mean"] = 2.5
    z = standardized.standardized_means(means)
    assert z.loc["positive-rm"].isna().all() and z.loc["negative-rm"].notna().all()
    texts = figure_texts(standardized.draw(means))
    assert texts.count("n/a") == len(GROUPS)


def test_gap_forest_orders_models_and_annotates_groups_p_and_nmgd(tables: Path) -> None:
    gap = read_gap(tables / "table7_gap.csv")
    figure = gap_forest.draw(gap, read_stats_record(tables / "fairness_stats.json"))
    axes = figure.axes[0]
    order = [label.get_text() for label in axes.get_yticklabels()]
    expected_order = list(gap.sort_values("scale_free_gap")["model"])  # largest gap drawn on top
    assert order == expected_order
    texts = "\n".join(figure_texts(figure))
    negative = gap.set_index("model").loc["negative-rm"]
    assert "quantitative finance > mathematics" in texts
    assert f"p < 0.001 · NMGD {negative['nmgd_percent']:.1f}%" in texts
    assert "p = 0.310" in texts
    markers = {container.lines[0].get_marker() for container in axes.containers}
    assert markers == {"s", "o"}  # significant squares and a non-significant circle
    assert axes.get_xlim()[0] == 0.0
    assert "permutation p < 0.05;" in axes.get_title(loc="left")


def test_gap_forest_marks_significance_at_the_records_alpha(tables: Path, tmp_path: Path) -> None:
    gap = read_gap(tables / "table7_gap.csv")
    # p = 0.31 for near-zero-rm: a square only once alpha is above it
    for alpha, squares in ((0.0001, 0), (0.05, 2), (0.5, 3)):
        axes = gap_forest.draw(gap, write_record(tmp_path / "record.json", alpha)).axes[0]
        assert sum(container.lines[0].get_marker() == "s" for container in axes.containers) == squares, alpha
        assert f"(squares: permutation p < {alpha:g}; circles" in axes.get_title(loc="left")
    (tmp_path / "record.json").write_text(json.dumps({"settings": {}}))
    with pytest.raises(RmevalError, match=r"record.json: settings.alpha must be a number in \(0, 1\), got None"):
        read_stats_record(tmp_path / "record.json")


def test_gap_forest_flags_unstable_nmgd(tables: Path, tmp_path: Path) -> None:
    gap = pd.read_csv(tables / "table7_gap.csv")
    gap["nmgd_unstable"] = gap["model"] == "near-zero-rm"
    gap.to_csv(tmp_path / "gap.csv", index=False)
    texts = figure_texts(gap_forest.draw(read_gap(tmp_path / "gap.csv"), {"settings": {"alpha": 0.05}}))
    assert sum("unstable: mean reward near 0" in text for text in texts) == 1


def test_length_adjusted_draws_raw_and_adjusted_means(tables: Path) -> None:
    adjusted = pd.read_csv(tables / "adjusted_group_means.csv")
    figure = length_adjusted.draw(adjusted)
    panels = [axes for axes in figure.axes if axes.get_title(loc="left")]
    assert [axes.get_title(loc="left").split("\n")[0] for axes in panels] == list(MODELS)
    first = adjusted[adjusted["model"] == "positive-rm"]
    # The fixture shrinks every group towards the mean by 0.6: 60% of the gap is retained.
    assert all(axes.get_title(loc="left").endswith("gap retained after adjustment: 60%") for axes in panels)
    xs = sorted(x for line in panels[0].get_lines() for x in np.atleast_1d(line.get_xdata()))
    for value in [*first["raw_mean"], *first["adjusted_mean"]]:
        assert min(abs(x - value) for x in xs) < 1e-12
    assert "adjusted for log(n_tokens)" in figure_texts(figure)


def test_length_adjusted_says_when_there_were_no_token_counts(tables: Path) -> None:
    adjusted = pd.read_csv(tables / "adjusted_group_means.csv")
    adjusted["adjusted_mean"] = np.nan
    texts = "\n".join(figure_texts(length_adjusted.draw(adjusted)))
    assert "no n_tokens column" in texts


def test_length_adjusted_accepts_a_header_only_table(tmp_path: Path) -> None:
    """fairness-stats writes no rows when no model's scores carry n_tokens."""
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "adjusted_group_means.csv").write_text("model,group,raw_mean,adjusted_mean\n")
    out = tmp_path / "figures"
    argv = ["fairness-figures", "--tables", str(tables), "--out", str(out), "--dpi", "60"]
    assert rmeval_main([*argv, "--figures", "fig_length_adjusted"]) == 0
    assert png_size(out / "fig_length_adjusted.png")[0] > 200


def test_gap_vs_rank_reports_spearman_and_lists_unranked_models(tables: Path, tmp_path: Path) -> None:
    points = read_rank_points(tables / "rank_vs_fairness_points.csv")
    points.loc[points["model"] == "near-zero-rm", "rewardbench_rank"] = 2
    extra = pd.DataFrame(
        [{"model": "unranked-rm", "rewardbench_rank": None, "nmgd_percent": 5.0, "scale_free_gap": 0.3}]
    )
    points = pd.concat([points, extra], ignore_index=True)
    figure = gap_vs_rank.draw(points)
    texts = "\n".join(figure_texts(figure))
    ranked = points.dropna(subset=["rewardbench_rank"])
    rho = stats.spearmanr(ranked["rewardbench_rank"], ranked["scale_free_gap"])
    assert f"Spearman rho = {rho.statistic:+.2f}, p = {rho.pvalue:.3g} (n = 3)" in texts
    assert "Not shown (no rewardbench_rank): unranked-rm" in texts
    scatter = figure.axes[0].collections[0].get_offsets()
    assert sorted(map(tuple, np.asarray(scatter))) == sorted(
        zip(ranked["rewardbench_rank"], ranked["scale_free_gap"], strict=True)
    )


def test_gap_vs_rank_without_ranks_draws_a_clear_panel(tmp_path: Path) -> None:
    paths = write_fixture_tables(tmp_path / "tables", with_ranks=False)
    assert pd.read_csv(paths["rank_points"])["rewardbench_rank"].isna().all()
    figure = gap_vs_rank.draw(read_rank_points(paths["rank_points"]))
    texts = "\n".join(figure_texts(figure))
    assert "No RewardBench ranks available for these models (0 of 3 ranked)" in texts
    assert "rewardbench_rank" in texts
    out = tmp_path / "figures"
    assert (
        rmeval_main(
            [
                "fairness-figures",
                "--tables",
                str(tmp_path / "tables"),
                "--out",
                str(out),
                "--figures",
                "fig_gap_vs_rank",
                "--dpi",
                "60",
            ]
        )
        == 0
    )
    assert png_size(out / "fig_gap_vs_rank.png")[0] > 200


@pytest.mark.parametrize(
    ("table", "edit", "message"),
    [
        ("group_means.csv", lambda t: t.drop(columns=["ci_high"]), "missing column(s) ['ci_high']"),
        (
            "group_means.csv",
            lambda t: t.assign(mean=t["mean"].astype(object).where(t.index != 4, "high")),
            "row 6 (model 'positive-rm'): column 'mean' is not a number: 'high'",
        ),
        (
            "group_means.csv",
            lambda t: t.assign(ci_low=t["ci_low"].where(t.index != 9, np.inf)),
            "row 11 (model 'negative-rm'): ci_low must be a finite number",
        ),
        (
            "group_means.csv",
            lambda t: pd.concat([t, t.iloc[[0]]]),
            "duplicate entry for model 'positive-rm', group 'physics'",
        ),
        ("group_means.csv", lambda t: t.iloc[0:0], "the table has no rows"),
        ("table7_gap.csv", lambda t: t.drop(columns=["perm_p_value"]), "missing column(s) ['perm_p_value']"),
        (
            "rank_vs_fairness_points.csv",
            lambda t: t.assign(rewardbench_rank="first"),
            "'rewardbench_rank' is not a number",
        ),
    ],
)
def test_bad_tables_fail_with_a_message_naming_file_and_row(
    tables: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, edit, message: str
) -> None:
    broken = tmp_path / "tables"
    broken.mkdir()
    for name in (
        "group_means.csv",
        "table7_gap.csv",
        "adjusted_group_means.csv",
        "rank_vs_fairness_points.csv",
        "calibration.csv",
    ):
        frame = pd.read_csv(tables / name)
        (edit(frame) if name == table else frame).to_csv(broken / name, index=False)
    (broken / "fairness_stats.json").write_bytes((tables / "fairness_stats.json").read_bytes())
    out = tmp_path / "figures"
    assert rmeval_main(["fairness-figures", "--tables", str(broken), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert f"{broken / table}: " in error and message in error, error
    assert not out.exists(), "a bad table must stop the command before any figure is written"


def test_missing_table_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(RmevalError, match=r"group_means\.csv: table not found \(run `rmeval fairness-stats` first"):
        draw_figures(table_paths(tmp_path, TABLE_KEYS), tmp_path / "out", ["fig2_group_means"], dpi=60)


def test_missing_calibration_table_names_the_command_that_writes_it(tables: Path, tmp_path: Path) -> None:
    """calibration.csv comes from `rmeval fairness-calibrate`, not `fairness-stats` (issue 39)."""
    paths = {**table_paths(tables, TABLE_KEYS), "calibration": tmp_path / "calibration.csv"}
    with pytest.raises(RmevalError, match=r"calibration\.csv: table not found \(run `rmeval fairness-calibrate` first"):
        draw_figures(paths, tmp_path / "out", ["fig_calibration"], dpi=60)
