"""workflow/rules/fairness_arxiv.smk run by Snakemake on a small snapshot (three groups), and linted."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from workflow_helpers import run_snakemake_process

REPO = Path(__file__).resolve().parents[1]

# Stands in for the Snakefile + fairness.smk: the schema's defaults, common.smk (the run plan and its helpers), the
# fairness plan's groups, then the arXiv stage alone.
SNAKEFILE = """
from rmeval.config_check import config_schema, fill_defaults

configfile: "config.yaml"
fill_defaults(config, config_schema())

include: "{common}"

FAIRNESS = PLAN.own("fairness")
GROUPS = list(FAIRNESS.groups)

include: "{rules}"

rule all:
    input:
        expand("results/data/{{group}}.parquet", group=GROUPS),
    default_target: True
"""


def record(paper_id: str, categories: str) -> str:
    return json.dumps(
        {
            "id": paper_id,
            "title": f"On paper {paper_id}",
            "abstract": "We study it.  Twice.",
            "categories": categories,
        }
    )


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    rows = [record(f"2301.{i:05d}", "eess.SY cs.SY") for i in range(12)]
    rows += [record(f"2302.{i:05d}", "math.AG math.NT") for i in range(12)]
    rows += [record(f"2303.{i:05d}", "econ.EM") for i in range(12)]
    rows += [record("2304.00001", "cs.LG stat.ML"), "{not json"]
    (tmp_path / "snapshot.jsonl").write_text("\n".join(rows) + "\n")
    (tmp_path / "config.yaml").write_text(
        "groups:\n  systems_science: [eess.SY]\n  mathematics: [math]\n  economics: [econ]\n"
        "arxiv:\n  source: snapshot\n  snapshot: snapshot.jsonl\n  papers_per_group: 5\n  seed: 3\n"
        "models: [{name: unused, path: local/unused}]\n"
        f"registry: {REPO / 'config' / 'models.yaml'}\n"
    )
    (tmp_path / "Snakefile").write_text(
        SNAKEFILE.format(common=REPO / "workflow/rules/common.smk", rules=REPO / "workflow/rules/fairness_arxiv.smk")
    )
    return tmp_path


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return run_snakemake_process(["--cores", "2", "--directory", str(workdir), "--snakefile", str(workdir / "Snakefile"),
                                  *args], timeout=300)


def test_rules_write_data_manifests_and_logs(workdir):
    done = snakemake(workdir)
    assert done.returncode == 0, done.stderr[-3000:]
    for group, category in (
        ("systems_science", "eess.SY"),
        ("mathematics", "math.AG math.NT"),
        ("economics", "econ.EM"),
    ):
        data = pd.read_parquet(workdir / "results/data" / f"{group}.parquet")
        assert len(data) == 5 and set(data["categories"]) == {category}
        assert (data["abstract"] == "We study it. Twice.").all()
        manifest = json.loads((workdir / "results/data" / f"{group}.manifest.json").read_text())
        assert manifest["seed"] == 3 and manifest["counts"]["malformed"] == 1
        assert manifest["counts"]["eligible"] == 12 and manifest["counts"]["sampled"] == 5
        assert (workdir / "logs/arxiv" / f"fetch_{group}.log").is_file()
    assert "sampled=5" in (workdir / "logs/arxiv/select.log").read_text()
    # Nothing left to do on a second run.
    again = snakemake(workdir, "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def test_rules_pass_snakemake_lint(workdir):
    done = snakemake(workdir, "--lint")
    output = done.stdout + done.stderr
    assert "Lints for rule arxiv_fetch" not in output and "Lints for rule arxiv_select" not in output, output
