"""config/offline.yaml, exactly as shipped, run end to end with no network: the two inputs it names are put where
it says (relative to the working directory): a Kaggle-format snapshot written from the shared papers and a tiny
local reward model folder under the quick-start model's name."""

from __future__ import annotations

import json
import os

import pandas as pd
import yaml
from workflow_helpers import REPO_ROOT, run_snakemake, write_kaggle_snapshot

OFFLINE = REPO_ROOT / "config" / "offline.yaml"


def test_offline_config_runs_end_to_end_without_network(tmp_path, shared_data):
    from rmeval.testing.tiny_model import build_tiny_model

    config = yaml.safe_load(OFFLINE.read_text())
    (model,) = config["models"]
    workdir = tmp_path / "work"
    write_kaggle_snapshot(shared_data, workdir / config["arxiv"]["snapshot"], per_group=60)
    build_tiny_model(workdir / model["path"], seed=0)

    # No network at all: probes go to a closed loopback port, the hub is off, the HF cache is empty.
    no_network = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                  "HF_HOME": str(tmp_path / "empty-hf-home")}
    saved = {key: os.environ.get(key) for key in no_network}
    os.environ.update(no_network)
    try:
        result = run_snakemake(workdir, OFFLINE, "--cores", "2")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert "preflight" not in result.stdout + result.stderr

    results = workdir / "results"
    for group in config["groups"]:
        manifest = json.loads((results / "data" / f"{group}.manifest.json").read_text())
        assert manifest["source"]["kind"] == "snapshot"
        assert manifest["source"]["path"].endswith("inputs/arxiv-metadata-oai-snapshot.json.gz")
        assert manifest["counts"]["sampled"] == config["arxiv"]["papers_per_group"]
        scores = pd.read_parquet(results / "scores" / model["name"] / f"{group}.parquet")
        assert len(scores) == config["arxiv"]["papers_per_group"] and scores["reward"].notna().all()
    marker = json.loads((results / "models" / f"{model['name']}.downloaded.json").read_text())
    assert marker["source"] == "local-dir"
    anova = pd.read_csv(results / "tables" / "table1_anova.csv")
    assert list(anova["model"]) == [model["name"]]
    for output in ("summary.md", "figures/fig2_group_means.png", "figures/fig3_standardized.png"):
        assert (results / output).stat().st_size > 0, output
