"""`stats.alpha` reaches every table and figure: `rmeval fairness-stats` at alpha 0.01 on a small seeded score set,
then `rmeval fairness-figures` and the summary; the tables' significance columns, the run record, the gap forest's
markers and title and the summary's sentences all say 0.01. The score set is built so that 0.01 and 0.05 disagree on some gaps and pairs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.figures import gap_forest
from rmeval.benchmarks.fairness.figures.inputs import read_gap, read_stats_record
from rmeval.cli import main as rmeval_main
from rmeval.cli_settings import settings_json

ALPHA = 0.01
GROUPS = [f"group_{index}" for index in range(8)]
ROWS = 30
# model -> shift of its first group (in SDs): a clear gap, a borderline one, none
SHIFTS = {"clear-rm": 1.2, "borderline-rm": 0.6, "flat-rm": 0.0}


def write_scores(root: Path) -> Path:
    rng = np.random.default_rng(0)
    for model, shift in SHIFTS.items():
        (root / model).mkdir(parents=True)
        for index, group in enumerate(GROUPS):
            rewards = rng.normal(shift if index == 0 else 0.0, 1.0, ROWS)
            pd.DataFrame({"id": [f"2401.{i:05d}" for i in range(ROWS)], "reward": rewards}).to_csv(
                root / model / f"{group}.csv", index=False)
    return root


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("alpha")
    settings = {"alpha": ALPHA, "bootstrap": 100, "permutations": 400, "seed": 0, "reference_model": None}
    argv = ["fairness-stats", "--scores", str(write_scores(root / "scores")), "--out", str(root / "tables")]
    assert rmeval_main([*argv, "--settings", settings_json(settings)]) == 0
    figures = ["fairness-figures", "--tables", str(root / "tables"), "--out", str(root / "figures")]
    assert rmeval_main([*figures, "--settings", settings_json({"figures": ["fig_gap_forest"], "dpi": 50})]) == 0
    assert (root / "figures" / "fig_gap_forest.png").is_file()
    return root / "tables"


def test_the_run_record_carries_the_alpha(run: Path) -> None:
    record = json.loads((run / "fairness_stats.json").read_text())
    assert record["settings"]["alpha"] == ALPHA


def test_the_pairwise_tables_reject_at_the_alpha(run: Path) -> None:
    for pairs_file, counts_file in (("tukey_pairs.csv", "table2_tukey.csv"),
                                    ("games_howell_pairs.csv", "table6_games_howell.csv")):
        pairs = pd.read_csv(run / pairs_file)
        assert ((pairs["p_adj"] >= ALPHA) & (pairs["p_adj"] < 0.05)).any(), "no pair where 0.01 and 0.05 differ"
        assert (pairs["reject"] == (pairs["p_adj"] < ALPHA)).all(), pairs_file
        counts = pd.read_csv(run / counts_file).set_index("model")["significant_pairs"]
        assert counts.to_dict() == pairs.groupby("model", sort=False)["reject"].sum().to_dict(), counts_file
    assert "at alpha = 0.01" in (run / "table2_tukey.md").read_text()
    assert "Family-wise alpha = 0.01." in (run / "tukey_pairs.md").read_text()


def test_the_gap_forest_marks_significance_at_the_alpha(run: Path) -> None:
    gap = read_gap(run / "table7_gap.csv")
    p_values = gap.set_index("model")["perm_p_value"]
    assert ((p_values >= ALPHA) & (p_values < 0.05)).any() and (p_values < ALPHA).any(), p_values.to_dict()
    axes = gap_forest.draw(gap, read_stats_record(run / "fairness_stats.json")).axes[0]
    models = [label.get_text() for label in axes.get_yticklabels()]
    squares = {model: container.lines[0].get_marker() == "s"
               for model, container in zip(models, axes.containers, strict=True)}
    assert squares == {model: bool(p_values[model] < ALPHA) for model in SHIFTS}
    assert "(squares: permutation p < 0.01; circles: not significant)" in axes.get_title(loc="left")


def test_the_summary_judges_at_the_alpha(run: Path) -> None:
    """The summary (its fairness section; the run summary's is the same text) takes the run record's alpha: a gap is
    called chance exactly where the gap forest draws a circle, and the count of unfair models is the ANOVA's."""
    out = run.parent / "summary.md"
    assert rmeval_main(["fairness-summary", "--tables", str(run), "--out", str(out)]) == 0
    text = out.read_text()
    p_values = read_gap(run / "table7_gap.csv").set_index("model")["perm_p_value"]
    anova = pd.read_csv(run / "table1_anova.csv").set_index("model")["q_value"]  # counted by BH q over the models
    unfair = int((anova < ALPHA).sum())
    assert f"{unfair} of the {len(SHIFTS)} reward models show{'s' if unfair == 1 else ''} a significant difference " \
           f"between groups at alpha = 0.01 (ANOVA, Benjamini-Hochberg q-value over the models)." in text
    paragraphs = {model: text.split(f"### {model}", 1)[1].split("###", 1)[0] for model in SHIFTS}
    for model, p_value in p_values.items():
        chance = ("not distinguishable from chance at alpha = 0.01" in paragraphs[model]
                  or "the permutation test does not reject at alpha = 0.01" in paragraphs[model])
        assert chance == bool(p_value >= ALPHA), (model, p_value)
    assert "0.05" not in text.replace("p < 0.05", "")  # no sentence judges at another level
