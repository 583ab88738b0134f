"""The scenarios of .test/ (run end to end by the e2e tests): each config is valid as it stands, and its inputs.yaml
provides, relative to the run directory, every input file the config names."""

from __future__ import annotations

import pytest
from rmeval.config_check import check_config, config_schema
from scenarios import Scenario, prepare, scenario_names
from workflow_helpers import REPO_ROOT

SCHEMA = config_schema()
LOCAL_PATH_KEYS = ("path", "rewardbench_path", "pairwise_positions", "official_dir", "official_rewardbench_dir")


def local_inputs(config: dict) -> list[str]:
    """The run-directory paths a config reads: its snapshot, local model folders (`./...`), RewardMATH files."""
    paths = [(config.get("arxiv") or {}).get("snapshot")]
    corpus = config.get("corpus") or {}
    if corpus.get("source") == "table":
        paths.append(corpus["path"])
    rewardmath = config.get("rewardmath") or {}
    models = [m for m in [*config["models"], *rewardmath.get("models", [])] if isinstance(m, dict)]
    paths += [model["path"] for model in models if model["path"].startswith("./")]
    if rewardmath.get("enabled"):
        paths += [rewardmath.get(key) for key in LOCAL_PATH_KEYS]
    for section in ("rewardbench", "rewardbench2"):  # their local files, and local models of their own
        part = config.get(section) or {}
        if part.get("enabled"):
            paths += [part.get("path") if part.get("source") == "local" else None]
            paths += [m["path"] for m in part.get("models", []) if isinstance(m, dict) and m["path"].startswith("./")]
    return [path for path in paths if path]


def test_every_scenario_has_a_config_and_its_inputs():
    names = scenario_names()
    assert {"fairness", "offline", "quickstart", "both-branches", "lock", "slurm"} <= set(names)
    for name in names:
        assert (Scenario(name).folder / "inputs.yaml").is_file(), name
    assert (REPO_ROOT / ".test" / "README.md").is_file()


@pytest.mark.parametrize("name", scenario_names())
def test_scenario_config_is_valid(name):
    check_config(Scenario(name).config(), SCHEMA)


@pytest.mark.parametrize("name", [name for name in scenario_names() if Scenario(name).inputs()])
def test_inputs_provide_every_file_the_config_reads(name, tmp_path, shared_data, tiny_models):
    scenario = Scenario(name)
    paths = local_inputs(scenario.config())
    assert paths, f"{name}: a scenario with inputs.yaml reads local inputs"
    assert all(not path.startswith("/") for path in paths), f"{name}: inputs are relative to the run directory"
    prepare(scenario, tmp_path, shared_data, tiny_models.copy_to)
    missing = [path for path in paths if not (tmp_path / path).exists()]
    assert not missing, f"{name}: inputs.yaml does not provide {missing}"
