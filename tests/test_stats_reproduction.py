"""`rmeval run-reproduction`: each benchmark's tables beside the published values its catalogue names
(resources/published/), with the verdict rules recomputed here from the raw numbers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from rmeval.benchmarks import benchmark
from rmeval.benchmarks.fairness import reproduction
from rmeval.benchmarks.rewardmath import reproduction as rewardmath_reproduction
from rmeval.cli import main as rmeval_main
from rmeval.run_outputs.comparison import Published

REPO = Path(__file__).resolve().parents[1]
# Each benchmark compares with the files its catalogue names: Song et al.'s, then Kim et al.'s.
PUBLISHED = [REPO / path for name in ("fairness", "rewardmath") for path in benchmark(name).published]
EIGHT_GROUPS = ["computer_science", "economics", "electrical_engineering", "mathematics", "physics",
                "quantitative_biology", "quantitative_finance", "statistics"]
# registry name -> (location, per-group shift scale): three paper models and one model the papers lack
EIGHT_GROUP_MODELS = {
    "Nemotron-4-340B-Reward": (-20.0, 1.0),
    "ArmoRM-Llama3-8B-v0.1": (0.1, 0.05),
    "Eurus-RM-7b": (1.5, 0.8),
    "my-rm": (3.0, 0.0),
}


def write_eight_group_scores(root: Path, n: int = 25, seed: int = 11) -> Path:
    rng = np.random.default_rng(seed)
    shifts = rng.normal(0, 1, len(EIGHT_GROUPS))
    for model, (location, scale) in EIGHT_GROUP_MODELS.items():
        (root / model).mkdir(parents=True, exist_ok=True)
        for group, shift in zip(EIGHT_GROUPS, shifts, strict=True):
            pd.DataFrame({
                "id": [f"2401.{i:05d}" for i in range(n)],
                "reward": location + scale * shift + rng.normal(0, 1, n),
                "n_tokens": rng.integers(80, 400, n),
            }).to_parquet(root / model / f"{group}.parquet")
    return root


def write_rewardmath_metrics(path: Path) -> Path:
    """rewardmath_metrics.csv as `rmeval rewardmath-metrics` writes it (setup, aggregation, n, accuracy, mrr)."""
    pd.DataFrame([
        {"setup": "ArmoRM-Llama3-8B-v0.1", "aggregation": "scalar", "n": 483, "accuracy": 21.5, "mrr": 41.0},
        {"setup": "Eurus-RM-7b", "aggregation": "scalar", "n": 483, "accuracy": 30.0, "mrr": 38.3},
        {"setup": "math-shepherd-mistral-7b-prm", "aggregation": "prod", "n": 483, "accuracy": 17.18, "mrr": 34.0},
        {"setup": "math-shepherd-mistral-7b-prm", "aggregation": "geo", "n": 2, "accuracy": 50.0, "mrr": 75.0},
    ]).to_csv(path, index=False)
    return path


def run_eight_group_stats(root: Path) -> Path:
    """The fairness tables of a run in `root` (root/results/tables, where the run-level commands read them)."""
    scores = write_eight_group_scores(root / "scores")
    out = root / "results" / "tables"
    assert rmeval_main(["fairness-stats", "--scores", str(scores), "--out", str(out), "--bootstrap", "100",
                        "--permutations", "100", "--registry", str(REPO / "config/models.yaml"),
                        "--ranks", '{"my-rm": null}']) == 0
    return out


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reproduction")
    out = run_eight_group_stats(root)
    write_rewardmath_metrics(out / "rewardmath_metrics.csv")  # where RewardMATH's catalogue puts it
    assert rmeval_main(["run-reproduction", "--root", str(root), "--benchmarks", "fairness", "rewardmath"]) == 0
    return out


def _published() -> dict[tuple[str, str, str], tuple[float, bool]]:
    values = {}
    for path in PUBLISHED:
        for row in yaml.safe_load(path.read_text())["rows"]:
            for key, value in row.items():
                if key not in {"model", "aggregation"}:
                    text = str(value)
                    values[(row["model"], row.get("aggregation") or "", key)] = (float(text.lstrip("<")),
                                                                                text.startswith("<"))
    return values


def test_published_resource_holds_the_papers_values() -> None:
    values = _published()
    assert values[("ArmoRM-Llama3-8B-v0.1", "", "anova_p")] == (9.46e-101, False)
    assert values[("Mistral-RM-for-RAFT-GSHF-v0", "", "anova_p")] == (1e-300, True)
    assert values[("FsfairX-LLaMA3-RM-v0.1", "", "nmgd_percent")] == (-111.52, False)
    assert values[("math-shepherd-mistral-7b-prm", "geo", "rewardmath_mrr")] == (33.61, False)
    assert len([k for k in values if k[2] == "anova_f"]) == 8 and len([k for k in values if k[2] == "pearson_r"]) == 7
    registry = yaml.safe_load((REPO / "config/models.yaml").read_text())["models"]
    # matched by registry name; the one claim row (Song et al.'s top-2 finding) names no single model
    assert {model for model, _, _ in values} <= set(registry) | {"top-2 RewardBench models"}


def _expected_verdict(row: pd.Series, tables: dict[str, pd.DataFrame], paper_p: dict[str, float]) -> str:
    """The documented rules, recomputed from the tables: intervals (Tables 2, 4, 7) and power (power.csv)."""
    statistic, ours, paper, model = row["statistic"], row["ours"], row["paper"], row["model"]
    power = tables["power"].loc[model, "power_at_paper_effect"]
    if statistic in {"anova_f", "anova_p"}:
        ours_significant = tables["table1"].loc[model, "p_value"] < 0.05
        if ours_significant == (paper_p[model] < 0.05):
            return "same conclusion"
        return "differs" if ours_significant or power >= 0.8 else "inconclusive"
    if statistic == "tukey_significant_pairs":
        assert tables["table2"].loc[model, "total_pairs"] == 28
        low, high = tables["table2"].loc[model, ["pairs_ci_low", "pairs_ci_high"]]
        assert low <= ours <= high
        if low <= paper <= high:
            return "same conclusion"
        return "inconclusive" if high < paper and power < 0.8 else "differs"
    table, columns = {"nmgd_percent": ("table7", ["nmgd_ci_low", "nmgd_ci_high"]),
                      "pearson_r": ("table4", ["ci_low", "ci_high"])}[statistic]
    low, high = tables[table].loc[model, columns]
    assert (row["ours_ci_low"], row["ours_ci_high"]) == (low, high)
    assert low <= ours <= high  # an interval holds its estimate
    if not low <= paper <= high:
        return "differs"
    return "inconclusive" if low <= 0 <= high else "same conclusion"


def test_every_row_is_ours_beside_the_papers_with_the_documented_verdict(reproduced: Path) -> None:
    rows = pd.read_csv(reproduced / "reproduction.csv", keep_default_na=False, na_values=[""])
    tables = {key: pd.read_csv(reproduced / f"{stem}.csv").set_index("model") for key, stem in [
        ("table1", "table1_anova"), ("table2", "table2_tukey"), ("table3", "table3_nmgd"),
        ("table4", "table4_pearson"), ("table7", "table7_gap"), ("power", "power")]}
    table1, table2, table3, table4 = (tables[key] for key in ("table1", "table2", "table3", "table4"))
    published = _published()
    paper_p = {m: v[0] for (m, _, s), v in published.items() if s == "anova_p"}
    ours_of = {"anova_f": table1["f_statistic"], "anova_p": table1["p_value"],
               "tukey_significant_pairs": table2["significant_pairs"], "nmgd_percent": table3["nmgd_percent"],
               "pearson_r": table4["pearson_r"]}
    assert "my-rm" not in set(rows["model"])
    fairness = rows[~rows["statistic"].str.startswith("rewardmath")]
    assert len(fairness) == 3 * 4 + 2  # three paper models x (F, p, Tukey, NMGD) + Pearson r of two
    for _, row in fairness.iterrows():
        assert row["ours"] == pytest.approx(ours_of[row["statistic"]][row["model"]], rel=1e-9)
        aggregation = "" if pd.isna(row["aggregation"]) else row["aggregation"]
        assert (row["paper"], bool(row["paper_upper_bound"])) == published[(row["model"], aggregation,
                                                                              row["statistic"])]
        if row["statistic"] == "anova_p":
            assert pd.isna(row["difference"])
        else:
            assert row["difference"] == pytest.approx(row["ours"] - row["paper"])
        assert row["verdict"] == _expected_verdict(row, tables, paper_p), row.to_dict()
        if row["statistic"] in {"anova_f", "anova_p", "tukey_significant_pairs"}:  # the power the verdict read
            assert row["power"] == pytest.approx(tables["power"].loc[row["model"], "power_at_paper_effect"])
    math_rows = rows[rows["statistic"].str.startswith("rewardmath")].set_index(["model", "statistic"])
    assert math_rows.loc[("ArmoRM-Llama3-8B-v0.1", "rewardmath_accuracy"), "verdict"] == "same conclusion"
    assert math_rows.loc[("Eurus-RM-7b", "rewardmath_accuracy"), "verdict"] == "differs"
    assert len(math_rows) == 8
    prm = rows[rows["model"] == "math-shepherd-mistral-7b-prm"]
    assert dict(zip(prm["aggregation"] + " " + prm["statistic"], prm["verdict"], strict=True)) == {
        "prod rewardmath_accuracy": "same conclusion", "prod rewardmath_mrr": "same conclusion",
        "geo rewardmath_accuracy": "not comparable", "geo rewardmath_mrr": "not comparable"}  # 2 of 483 problems
    assert {"Table 1", "Table 4"} <= {s.split(", ")[-1] for s in rows["source"]}


def test_tables_name_left_out_models_and_small_runs(reproduced: Path) -> None:
    markdown = (reproduced / "reproduction.md").read_text()
    assert "Left out (no published values): my-rm." in markdown
    assert "Not comparable, on fewer than the 483 problems of the official results: " \
           "math-shepherd-mistral-7b-prm (geo) on 2 problems." in markdown
    assert "| Nemotron-4-340B-Reward | ANOVA p |" in markdown and "<1e-300 |" in markdown
    latex = (reproduced / "reproduction.tex").read_text()
    assert "$<10^{-300}$" in latex and "$9.46\\times10^{-101}$" in latex
    assert "\\begin{tabular}{llrlrrll}" in latex


def test_summary_gives_the_reproduction_count(reproduced: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    assert rmeval_main(["fairness-summary", "--tables", str(reproduced), "--out", str(summary)]) == 0
    rows = pd.read_csv(reproduced / "reproduction.csv")
    counts = rows["verdict"].value_counts()
    assert f"- Reproduction: of {len(rows)} comparisons with the published values, this run supports " \
           f"{counts.get('same conclusion', 0)}, contradicts {counts.get('differs', 0)}" in summary.read_text()
    assert f"cannot decide {counts.get('inconclusive', 0)}" in summary.read_text()


@pytest.mark.parametrize(("statistic", "interval", "paper", "power", "expected"), [
    ("nmgd_percent", (15.0, 40.0), 21.0, 0.5, "same conclusion"),  # a band edge no longer decides
    ("nmgd_percent", (0.0, 40.0), 21.0, 0.5, "inconclusive"),  # holds the paper's gap and no gap
    ("nmgd_percent", (-np.inf, np.inf), 21.0, 0.5, "inconclusive"),  # unstable NMGD: unbounded CI
    ("nmgd_percent", (30.0, 90.0), 110.0, 0.5, "differs"),
    ("nmgd_percent", (-130.0, -90.0), 110.0, 0.5, "differs"),  # sign
    ("pearson_r", (0.5, 0.95), 0.71, 0.5, "same conclusion"),
    ("pearson_r", (-0.4, 0.9), 0.71, 0.5, "inconclusive"),
    ("pearson_r", (-0.9, -0.2), 0.71, 0.5, "differs"),
    ("nmgd_percent", (np.nan, np.nan), 21.0, 0.5, "not comparable"),
    ("tukey_significant_pairs", (21.0, 25.0), 25.0, 0.5, "same conclusion"),
    ("tukey_significant_pairs", (18.0, 22.0), 25.0, 0.5, "inconclusive"),  # fewer pairs, and too little power
    ("tukey_significant_pairs", (18.0, 22.0), 25.0, 0.95, "differs"),  # fewer pairs with power to find them
    ("tukey_significant_pairs", (27.0, 28.0), 25.0, 0.2, "differs"),  # more pairs than the paper: power is moot
])
def test_verdict_rules_at_their_edges(statistic: str, interval: tuple[float, float], paper: float, power: float,
                                      expected: str) -> None:
    facts = {"p": {"m": 0.01}, "total_pairs": {"m": 28}, "interval": {("m", statistic): interval},
             "power": {"m": power}}
    assert reproduction.verdict(statistic, "m", float(np.mean(interval)) if np.isfinite(interval).all() else 5.0,
                                Published(paper, False), facts, 0.05, None) == expected


@pytest.mark.parametrize(("ours_p", "power", "expected"), [
    (0.3, 0.95, "differs"),  # the paper's effect would have been found 95% of the time: a real difference
    (0.3, 0.40, "inconclusive"),  # this run could not have told
    (1e-5, 0.40, "same conclusion"),
])
def test_anova_verdict_reads_the_power_at_the_papers_effect(ours_p: float, power: float, expected: str) -> None:
    facts = {"p": {"m": ours_p}, "total_pairs": {"m": 28}, "interval": {}, "power": {"m": power}}
    paper_p = Published(1e-100, False)
    assert reproduction.verdict("anova_p", "m", ours_p, paper_p, facts, 0.05, paper_p) == expected


def test_rewardmath_keeps_its_points_rule() -> None:
    assert rewardmath_reproduction.verdict(40.1, Published(42.18, False), 483) == "differs"


def test_tukey_counts_over_other_pair_totals_are_not_comparable() -> None:
    facts = {"p": {"m": 0.01}, "total_pairs": {"m": 6}, "interval": {("m", "tukey_significant_pairs"): (4, 6)},
             "power": {}}
    assert reproduction.verdict("tukey_significant_pairs", "m", 5.0, Published(5.0, False), facts,
                                0.05, None) == "not comparable"


def test_ours_significant_paper_not_differs() -> None:
    facts = {"p": {"m": 1e-5}, "total_pairs": {"m": 28}, "interval": {}, "power": {}}
    paper_p = Published(0.2, False)
    assert reproduction.verdict("anova_p", "m", 1e-5, paper_p, facts, 0.05, paper_p) == "differs"
    assert not math.isnan(Published(1e-300, True).value)


def test_bad_published_file_names_the_row(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("paper: x\nrows:\n  - {model: ArmoRM-Llama3-8B-v0.1, anova_fstat: 3}\n")
    assert rmeval_main(["run-reproduction", "--root", str(tmp_path), "--benchmarks", "fairness",
                        "--published", f"fairness={bad}"]) == 2
    assert f"{bad}: rows[0]: unknown statistic 'anova_fstat'" in capsys.readouterr().err
    # a statistic of another benchmark is unknown to this one: each compares with its own file
    bad.write_text("paper: x\nrows:\n  - {model: ArmoRM-Llama3-8B-v0.1, rewardmath_mrr: 3}\n")
    assert rmeval_main(["run-reproduction", "--root", str(tmp_path), "--benchmarks", "fairness",
                        "--published", f"fairness={bad}"]) == 2
    assert "unknown statistic 'rewardmath_mrr'" in capsys.readouterr().err


def test_the_runs_alpha_reaches_every_verdict_and_rule(reproduced: Path, tmp_path: Path) -> None:
    """stats.alpha, not a fixed 0.05: at alpha = 1e-15, Eurus's ANOVA (p ~ 1e-10 here) is no longer significant."""
    out = tmp_path / "strict"
    assert rmeval_main(["run-reproduction", "--root", str(reproduced.parents[1]), "--benchmarks", "fairness",
                        "rewardmath", "--alpha", "1e-15", "--out", str(out)]) == 0
    rows = pd.read_csv(out / "reproduction.csv").set_index(["model", "statistic"])
    p_value = pd.read_csv(reproduced / "table1_anova.csv").set_index("model").loc["Eurus-RM-7b", "p_value"]
    assert 1e-15 < p_value < 0.05
    power = pd.read_csv(reproduced / "power.csv").set_index("model").loc["Eurus-RM-7b", "power_at_paper_effect"]
    assert rows.loc[("Eurus-RM-7b", "anova_p"), "verdict"] == ("differs" if power >= 0.8 else "inconclusive")
    assert rows.loc[("Eurus-RM-7b", "anova_p"), "rule"].startswith("significant at alpha = 1e-15 in both or in neither")
    assert "significant at alpha = 1e-15" in (out / "reproduction.md").read_text()
