"""The `fairness_stats` rule and the run-level `run_reproduction` and `run_summary` rules, run by Snakemake on
hand-made score files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from test_stats_cli import GROUPS, MODELS, write_scores
from workflow_helpers import run_snakemake_process

DISTINCT_ARCHIVES = ["cs", "math", "econ", "q-fin", "q-bio", "astro-ph", "nlin", "stat"]

REPO = Path(__file__).resolve().parents[1]

SNAKEFILE = f"""\
# As the Snakefile does: the shared schema plus each benchmark's own sections check the config and fill it.
from rmeval.config_check import check_config, config_schema

check_config(config, config_schema())


include: {str(REPO / "workflow/rules/common.smk")!r}
include: {str(REPO / "workflow/rules/fairness.smk")!r}
include: {str(REPO / "workflow/rules/run.smk")!r}


rule all:
    input:
        "results/summary.md",
"""


def test_rules_turn_score_files_into_tables_and_summary(tmp_path: Path) -> None:
    models = {k: MODELS[k] for k in ("unfair-rm", "negative-rm", "ref-rm")}
    write_scores(tmp_path / "results" / "scores" / "fairness", models)
    for csv in (tmp_path / "results" / "scores" / "fairness").glob("*/*.csv"):  # the workflow's scores are parquet
        pd.read_csv(csv).to_parquet(csv.with_suffix(".parquet"))
        csv.unlink()
    config = {
        # Distinct archives: the workflow rejects a category shared by two groups at parse time.
        "groups": {group: [archive] for group, archive in zip(GROUPS, DISTINCT_ARCHIVES[: len(GROUPS)], strict=True)},
        "arxiv": {"source": "snapshot", "snapshot": "unused.jsonl"},
        "registry": str(REPO / "config" / "models.yaml"),
        # inline models: their ranks must reach the tables even though the registry lacks them
        "models": [{"name": name, "path": f"local/{name}", "rewardbench_rank": rank}
                   for name, rank in zip(models, (5, 2, 1), strict=True)],
        "reference_model": "ref-rm",
        "stats": {"bootstrap": 200, "permutations": 200, "seed": 4},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    result = run_snakemake_process(["-s", "Snakefile", "--configfile", "config.yaml", "--cores", "1"], cwd=tmp_path,
                                   timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    tables = tmp_path / "results" / "tables"
    table1 = pd.read_csv(tables / "table1_anova.csv")
    assert list(table1["model"]) == list(models)  # config order, not alphabetical
    assert list(table1["rewardbench_rank"]) == [5, 2, 1]
    assert list(pd.read_csv(tables / "group_means.csv")["group"][:4]) == GROUPS
    assert set(pd.read_csv(tables / "table4_pearson.csv")["model"]) == {"unfair-rm", "negative-rm"}
    assert pd.read_csv(tables / "table10_rank_vs_fairness.csv")["n_models"].eq(3).all()
    summary = (tmp_path / "results" / "summary.md").read_text()
    assert "### unfair-rm" in summary
    # the run's reproduction rule ran against resources/published/: none of these models is published, so the only
    # row is the paper's claim about the run's own models ("top-2 RewardBench models"), judged on their ranks
    reproduction = pd.read_csv(tables / "reproduction.csv")
    assert list(reproduction["model"]) == ["top-2 RewardBench models"], reproduction
    assert "Left out (no published values): unfair-rm, negative-rm, ref-rm." in (tables / "reproduction.md").read_text()
    assert "- Reproduction: no model of this run has published values" in summary
    assert "Data source: not recorded (no manifests in data)." in (tables / "table1_anova.md").read_text()
    assert (tables / "provenance.json").exists() and (tmp_path / "logs" / "run_reproduction.log").exists()
    assert "tables written" in (tmp_path / "logs" / "fairness_stats.log").read_text()
    assert "wrote results/summary.md (fairness)" in (tmp_path / "logs" / "run_summary.log").read_text()
