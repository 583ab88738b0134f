"""Shared fixtures: the read-only shared data folder and a locally built tiny reward model."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# tests/ holds shared helper modules (workflow_helpers.py) imported by several test files.
sys.path.insert(0, str(Path(__file__).resolve().parent))


def shared_data_dir() -> Path | None:
    """`$RMEVAL_SHARED_DATA`, else `../shared/data` beside the repository; None when absent."""
    candidates = [os.environ.get("RMEVAL_SHARED_DATA"), REPO_ROOT.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if path is None:
        pytest.skip("shared data not found: set RMEVAL_SHARED_DATA or place it at ../shared/data")
    return path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama-style reward model saved with save_pretrained (seed 0)."""
    from rmeval.testing.tiny_model import build_tiny_model

    out = tmp_path_factory.mktemp("tiny-model-seed0")
    build_tiny_model(out, seed=0)
    return out


@pytest.fixture(scope="session")
def tiny_model_dir_seed1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rmeval.testing.tiny_model import build_tiny_model

    out = tmp_path_factory.mktemp("tiny-model-seed1")
    build_tiny_model(out, seed=1)
    return out


@dataclass(frozen=True)
class WorkflowRun:
    """A completed end-to-end `snakemake --cores 2` run on shared papers with two tiny models."""

    workdir: Path
    configfile: Path
    wall_seconds: float
    models: tuple[str, ...]
    groups: tuple[str, ...]

    @property
    def results(self) -> Path:
        return self.workdir / "results"


@pytest.fixture(scope="session")
def e2e_run(tmp_path_factory: pytest.TempPathFactory, shared_data: Path, tiny_model_dir: Path,
            tiny_model_dir_seed1: Path) -> WorkflowRun:
    from workflow_helpers import (
        PAPER_GROUPS,
        run_snakemake,
        tiny_model_entry,
        write_config,
        write_kaggle_snapshot,
    )

    workdir = tmp_path_factory.mktemp("e2e")
    snapshot = workdir / "inputs" / "arxiv-metadata-oai-snapshot.json.gz"
    write_kaggle_snapshot(shared_data, snapshot, per_group=40)
    models = [tiny_model_entry("tiny-a", tiny_model_dir), tiny_model_entry("tiny-b", tiny_model_dir_seed1)]
    configfile = workdir / "config.yaml"
    write_config(configfile, snapshot, models, papers_per_group=30, reference_model="tiny-b")
    started = time.perf_counter()
    run_snakemake(workdir, configfile, "--cores", "2")
    wall = time.perf_counter() - started
    return WorkflowRun(workdir, configfile, wall, ("tiny-a", "tiny-b"), tuple(PAPER_GROUPS))


def xdist_group_of(item: pytest.Item) -> str:
    """Which tests share a pytest-xdist worker (`--dist loadgroup`): those of one file (their module-scoped
    fixtures build once), the users of the session-wide `e2e_run` (one end-to-end run, not one per worker), and
    all drills (one record of faults and inputs, tests/drills/conftest.py)."""
    path = item.nodeid.split("::")[0]
    if "e2e_run" in getattr(item, "fixturenames", ()):
        return "e2e_run"
    if path.startswith("tests/drills/"):
        return "drills"
    return path


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(xdist_group_of(item)))
