"""Per-model Slurm allocations (rmeval.scoring.slurm_group): when grouping applies, the group ids and counts handed
to Snakemake, and what its group-resource rule makes of them: one job's GPUs and memory, the members' summed
runtime. The real cluster run is tests/test_slurm.py; the side-by-side measurement perf/bench_slurm_grouping.py."""

from __future__ import annotations

import pytest
from rmeval.scoring import slurm_group


def test_grouping_applies_only_where_this_process_submits_to_slurm() -> None:
    assert slurm_group.grouping_applies("slurm", "model")
    assert not slurm_group.grouping_applies("slurm", "job")
    # the jobstep inside an allocation, a local run, a dry run: no groups
    for executor in ("slurm-jobstep", "local", "dryrun", None):
        assert not slurm_group.grouping_applies(executor, "model")


def test_group_ids_are_path_safe_and_user_group_components_win() -> None:
    assert slurm_group.group_id("org/Model v1") == "rmeval-score-org_Model_v1"
    merged = slurm_group.group_components(["a", "b"], {"rmeval-score-b": 2, "other": 3})
    assert merged == {"rmeval-score-a": slurm_group.ALL_COMPONENTS, "rmeval-score-b": 2, "other": 3}
    assert slurm_group.slot(True) == 1 and slurm_group.slot(False) == 0


def test_the_allocation_owns_the_run_id_and_its_job_steps_keep_it() -> None:
    assert slurm_group.allocation_role({}, "model") == "run"  # local, or the submitting process
    assert slurm_group.allocation_role({"SLURM_JOB_ID": "7"}, "job") == "run"  # a per-job allocation
    first = slurm_group.allocation_role({"SLURM_JOB_ID": "7"}, "model")
    assert first == "allocation"
    set_by_first = {"SLURM_JOB_ID": "7", **slurm_group.allocation_environment("7")}
    assert set_by_first[slurm_group.ALLOCATION_SERVER_ENV] == "1"
    assert slurm_group.allocation_role(set_by_first, "model") == "step"
    # exported from another allocation (or a login session inside one): this allocation starts its own run
    assert slurm_group.allocation_role({**set_by_first, "SLURM_JOB_ID": "8"}, "model") == "allocation"


def test_the_launcher_starts_a_server_outside_the_step_and_reports_its_exit(tmp_path, monkeypatch) -> None:
    import sys

    from rmeval.scoring import slurm_launcher

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")  # the allocation's GPUs reach the server, not the job's
    folder = tmp_path / "launcher-7"
    env = slurm_launcher.start_launcher(folder)
    assert env == {slurm_launcher.LAUNCHER_ENV: str(folder.resolve())}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    log = tmp_path / "server.log"
    script = "import os, sys; print(os.environ['CUDA_VISIBLE_DEVICES'], os.getsid(0) == os.getpid()); sys.exit(3)"
    server = slurm_launcher.launch(folder, [sys.executable, "-c", script], log)
    assert server.pid > 0
    import time

    deadline = time.monotonic() + 30
    while server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.returncode == 3
    assert log.read_text().split() == ["1", "True"]


class _Job:
    """What Snakemake's GroupResources reads of a member job."""

    pipe_group = None

    def __init__(self, **resources: int | str) -> None:
        self.resources = resources


@pytest.mark.parametrize(("limit", "expected"), [
    # with the slot limit of 1: one job per layer -> one job's width, the members' runtimes summed
    (1, {"gpu": 2, "mem_mb": 64000, "_cores": 2, "runtime": 600}),
    # without it (what a plain group would ask): widths summed, runtime of the longest member
    (None, {"gpu": 8, "mem_mb": 256000, "_cores": 8, "runtime": 240}),
])
def test_snakemake_group_request_with_and_without_the_slot_limit(limit: int | None, expected: dict[str, int]) -> None:
    from snakemake.resources import GroupResources, Resources

    constraints = Resources()
    if limit is not None:
        constraints[slurm_group.SLOT_RESOURCE] = limit
    members = [_Job(gpu=2, mem_mb=64000, _cores=2, runtime=runtime, gpu_model="h100", slurm_partition="gpu",
                    **{slurm_group.SLOT_RESOURCE: 1}) for runtime in (240, 120, 120, 120)]
    request = GroupResources.basic_layered([members], constraints, run_local=False, additive_resources=["runtime"],
                                           sortby=["runtime"])
    assert {key: request[key] for key in expected} == expected
    assert request["gpu_model"] == "h100" and request["slurm_partition"] == "gpu"


def test_run_identity_of_each_process(tmp_path) -> None:
    from rmeval.scoring.address import RUN_ENV

    assert set(slurm_group.run_identity({}, "model", tmp_path)) == {RUN_ENV}
    assert slurm_group.run_identity({"SLURM_JOB_ID": "7", **slurm_group.allocation_environment("7")}, "model",
                                    tmp_path) == {}  # a job step keeps the allocation's
    first = slurm_group.run_identity({"SLURM_JOB_ID": "9"}, "model", tmp_path)
    assert first[slurm_group.ALLOCATION_ENV] == "9" and RUN_ENV in first
    assert (tmp_path / "launcher-9").is_dir()
