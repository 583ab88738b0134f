"""Shared fixtures: the read-only shared data folder, tiny models built once per worker, and one Snakemake run
per .test/ scenario shared by every test that reads it (one xdist group each, so one worker owns it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# tests/ holds shared helper modules (workflow_helpers.py, scenarios.py) imported by several test files.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_server import JudgeServer  # noqa: E402
from scenarios import (  # noqa: E402
    JUDGE_KEY_ENV,
    JUDGE_SECRET,
    NO_NETWORK_PROXY,
    JudgedRun,
    ScenarioRun,
    TinyModels,
    judge_entries,
    run_scenario,
)
from workflow_helpers import shared_data_dir  # noqa: E402

# Set (to the reason) when the suite found no Slurm controller; tests/test_slurm.py skips with it.
NO_SLURM_CONTROLLER_ENV = "RMEVAL_TEST_NO_SLURM_CONTROLLER"


def _no_slurm_controller() -> bool:
    """A Slurm client is installed but no controller answers (a laptop, or this machine without .ci/slurm)."""
    if shutil.which("scontrol") is None:
        return False
    try:
        probe = subprocess.run(["scontrol", "show", "config"], capture_output=True, timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return True
    return probe.returncode != 0


def pytest_configure(config: pytest.Config) -> None:
    # Every snakemake start imports the Slurm executor plugin, which asks `scontrol show config` for a help text;
    # with no controller that call waits 9 s, at every one of the suite's ~70 snakemake starts. There, point
    # SLURM_CONF at an empty file so that it fails at once (the Slurm tests skip there anyway, saying why).
    # CI's cluster answers and is left alone. Once, in the main process: xdist workers inherit the environment.
    if not os.environ.get("PYTEST_XDIST_WORKER") and _no_slurm_controller():
        empty = Path(config.rootpath) / ".pytest_cache" / "no-slurm-controller.conf"
        empty.parent.mkdir(parents=True, exist_ok=True)
        empty.write_text("")
        os.environ["SLURM_CONF"] = str(empty)
        os.environ[NO_SLURM_CONTROLLER_ENV] = "no Slurm controller answers `scontrol show config`"
    # Each xdist worker gets its share of the cores for torch's and OpenBLAS's threads (OpenMP reads this at
    # import). Left at one thread per core, two workers on two cores run four spinning OpenMP teams and every small op
    # waits for a time slice: the tiny model's 40 rows scored one at a time took 14 s instead of 1 s beside another
    # worker (AMD EPYC, 2 cores). Snakemake jobs get their rule's `threads:` from Snakemake itself.
    workers = getattr(config.option, "numprocesses", None)
    if not os.environ.get("PYTEST_XDIST_WORKER") and isinstance(workers, int) and workers > 1:
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if path is None:
        pytest.skip("shared data not found: set RMEVAL_SHARED_DATA or place it at ../shared/data")
    return path


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> TinyModels:
    return TinyModels(tmp_path_factory.mktemp("tiny-models"))


@pytest.fixture(scope="session")
def tiny_model_dir(tiny_models: TinyModels) -> Path:
    """A tiny Llama-style reward model saved with save_pretrained (seed 0)."""
    return tiny_models.get(0)


@pytest.fixture(scope="session")
def tiny_model_dir_seed1(tiny_models: TinyModels) -> Path:
    return tiny_models.get(1)


@pytest.fixture(scope="session")
def tiny_prm_dir(tiny_models: TinyModels) -> Path:
    """A tiny LlamaForCausalLM process reward model (Math-Shepherd's step tag), seed 0."""
    return tiny_models.get(0, "prm")


@pytest.fixture(scope="session")
def e2e_run(tmp_path_factory: pytest.TempPathFactory, tiny_models: TinyModels) -> ScenarioRun:
    """The `fairness` scenario (config/demo.yaml as shipped), run with no network and no shared data: a fresh
    clone's first run (so it is also the offline run of test_offline_config.py)."""
    workdir = tmp_path_factory.mktemp("fairness")
    no_network = {**NO_NETWORK_PROXY, "HF_HOME": str(workdir / "empty-hf-home")}
    return run_scenario("fairness", workdir, None, tiny_models, env=no_network)


@pytest.fixture(scope="session")
def both_branches_run(tmp_path_factory: pytest.TempPathFactory, shared_data: Path,
                      tiny_models: TinyModels) -> Iterator[JudgedRun]:
    """The `both-branches` scenario, its judges pointed at a loopback judge server that first answers 429, then
    500 (each retried), for tests/test_rewardmath_e2e.py and tests/test_judge_e2e.py."""
    with JudgeServer() as server:
        server.fault_plan = ["429", "500"]

        def to_this_server(config: dict) -> None:
            for judge in judge_entries(config):
                judge["options"]["base_url"] = server.base_url

        run = run_scenario("both-branches", tmp_path_factory.mktemp("both-branches"), shared_data, tiny_models,
                           env={JUDGE_KEY_ENV: JUDGE_SECRET}, edit=to_this_server)
        yield JudgedRun(run, server, server.requests)


# The session-wide scenario runs and the xdist group of the tests that read them.
SCENARIO_RUN_GROUPS = {"e2e_run": "fairness", "both_branches_run": "both-branches"}
# Groups that take longest, first (a full `.ci/run` on 2 cores, --durations=0; the Slurm file mostly waits on the
# scheduler, so it starts first): `--dist loadgroup --no-loadscope-reorder` hands groups to the two workers in this
# order, so the long ones start at once and the short files fill in around them. test_scoring_engine.py holds the
# cold TorchInductor compile (about 45 s): left to its file order it started at 77 % of the run and ended at 99 %.
LONGEST_GROUPS_FIRST = ("tests/test_slurm.py", "tests/test_slurm_vllm.py", "fairness", "tests/test_run_command_e2e.py",
                        "drills", "tests/test_model_server.py", "tests/test_vllm_drills.py", "tests/test_vllm_parity.py",
                        "tests/test_scoring_engine.py", "both-branches", "tests/test_corpus_e2e.py", "tests/test_lock.py",
                        "tests/test_judge_e2e.py", "tests/test_models_native_heads.py", "tests/test_perf_smoke.py")


def xdist_group_of(item: pytest.Item) -> str:
    """Which tests share a pytest-xdist worker (`--dist loadgroup`): those of one file (their module-scoped
    fixtures build once), the users of one session-wide scenario run (one run, not one per worker), and
    all drills (one record of faults and inputs, tests/drills/conftest.py)."""
    path = item.nodeid.split("::")[0]
    for fixture, group in SCENARIO_RUN_GROUPS.items():
        if fixture in getattr(item, "fixturenames", ()):
            return group
    if path.startswith("tests/drills/"):
        return "drills"
    return path


# The fast tier, `python -m pytest -m "not workflow"` (README, Development): what a test module calls says whether
# it starts Snakemake (a scenario run, a dry run, a lint, a toy workflow, the fork server), so a new module is
# marked without anyone remembering to. Its other tests leave the fast tier with it: the tier stays a subset.
WORKFLOW_CALLS = ("run_snakemake", "run_scenario", "e2e_run", "both_branches_run", '"snakemake"', "snakemake_forkserver")
# Unit tests that are slow all the same carry `@pytest.mark.slow(reason=...)` (a fresh interpreter, a process killed
# and resumed, a real wait on the clock, a cold compile): they leave the fast tier with the workflow tests, and the
# README's command still runs them (CONTRIBUTING, "Tests").


def _starts_workflows(path: Path, cache: dict[Path, bool] = {}) -> bool:  # noqa: B006 - a per-session cache
    if path not in cache:
        source = path.read_text(encoding="utf-8") if path.suffix == ".py" else ""
        cache[path] = any(call in source for call in WORKFLOW_CALLS)
    return cache[path]


def _start_rank(group: str) -> int:
    return LONGEST_GROUPS_FIRST.index(group) if group in LONGEST_GROUPS_FIRST else len(LONGEST_GROUPS_FIRST)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups = {item.nodeid: xdist_group_of(item) for item in items}
    items.sort(key=lambda item: _start_rank(groups[item.nodeid]))  # stable: file order within a group
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
        if _starts_workflows(Path(str(item.fspath))) or item.get_closest_marker("slow") is not None:
            item.add_marker(pytest.mark.workflow)
