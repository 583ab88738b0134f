"""Offline runs with no network at all (probes go to a closed loopback port, the hub is off, the HF cache is empty).

config/offline.yaml, exactly as shipped (the `offline` scenario of .test/), with its two inputs where it says
(relative to the working directory): its data stage and a first (model, group) pair. The rest of the pipeline
offline is the `fairness` scenario's run (conftest.py `e2e_run`, the same kinds of inputs: a snapshot and local
model folders), checked here to the tables, figures and summary."""

from __future__ import annotations

import json

import pandas as pd
from scenarios import NO_NETWORK_PROXY, Scenario, ScenarioRun, run_scenario


def _check_snapshot_data(run: ScenarioRun) -> None:
    for group in run.groups:
        manifest = json.loads((run.results / "data" / f"{group}.manifest.json").read_text())
        assert manifest["source"]["kind"] == "snapshot"
        assert manifest["source"]["path"].endswith(run.config["arxiv"]["snapshot"])
        assert manifest["counts"]["sampled"] == run.config["arxiv"]["papers_per_group"]


def _check_local_model(run: ScenarioRun, model: str, groups: tuple[str, ...], source: str = "local-dir") -> None:
    for group in groups:
        scores = pd.read_parquet(run.results / "scores" / "fairness" / model / f"{group}.parquet")
        assert len(scores) == run.config["arxiv"]["papers_per_group"] and scores["reward"].notna().all()
    marker = json.loads((run.results / "models" / f"{model}.downloaded.json").read_text())
    assert marker["source"] == source


def test_shipped_offline_config_runs_without_network(tmp_path, shared_data, tiny_models):
    workdir = tmp_path / "work"
    no_network = {**NO_NETWORK_PROXY, "HF_HOME": str(tmp_path / "empty-hf-home")}
    config = Scenario("offline").config()
    (model,) = [entry["name"] for entry in config["models"]]
    first_group = next(iter(config["groups"]))
    run = run_scenario("offline", workdir, shared_data, tiny_models, f"results/scores/fairness/{model}/{first_group}.parquet",
                       env=no_network)
    assert "preflight" not in run.output
    _check_snapshot_data(run)
    _check_local_model(run, model, (first_group,))


def test_fairness_scenario_runs_to_every_output_without_network(e2e_run):
    assert "preflight" not in e2e_run.output
    _check_snapshot_data(e2e_run)
    for model in e2e_run.models:  # the length baseline has no weights: nothing downloaded, nothing cached
        _check_local_model(e2e_run, model, e2e_run.groups, "none" if model == "length-baseline" else "local-dir")
    anova = pd.read_csv(e2e_run.results / "tables" / "table1_anova.csv")
    assert list(anova["model"]) == list(e2e_run.models)
    for output in ("summary.md", "figures/fig2_group_means.png", "figures/fig3_standardized.png"):
        assert (e2e_run.results / output).stat().st_size > 0, output
