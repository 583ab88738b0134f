"""One Slurm allocation per model and run (`scoring.slurm_grouping: model`), with Snakemake's own job groups.

Under the Slurm executor every scoring job of a model (every benchmark's score rule) is put in the group
`rmeval-score-<model>`, and `--group-components` for that group is set high enough to merge all of the model's
(independent) jobs into one group job: one `sbatch`, whose jobstep runs the members one after another
(snakemake-executor-plugin-slurm starts it with `--jobs 1`) and whose first member starts the run's model server
inside the allocation (rmeval.scoring.server), so the weights load once.

The request of a group job is Snakemake's `GroupResources.basic_layered`: jobs that could run in parallel are
stacked into layers that fit the global constraints, widths (gpu, mem_mb, threads) are summed inside a layer and
maxed over layers, runtime the other way round. Unconstrained, a group of eight one-GPU jobs would ask for eight
GPUs and the runtime of one job. Every scoring job therefore holds one unit of the resource `rmeval_score_slot`,
registered with a limit of 1 and scoped `local` (counted only inside a group job, never across the run's
allocations): each layer holds one job, so the group asks for one job's GPUs, memory and threads (the registry
entry's) and the sum of its members' runtimes, which is what a `--jobs 1` jobstep uses.

Nothing here imports Snakemake: common.smk passes the workflow's facts in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

SLOT_RESOURCE = "rmeval_score_slot"
GROUP_PREFIX = "rmeval-score-"
# --group-components of a model's group: more than any run has scoring jobs, so all of them merge into one.
ALL_COMPONENTS = 1_000_000
# Set in the Snakemake process that runs inside a model's allocation (the jobstep): its jobs may use the server.
ALLOCATION_SERVER_ENV = "RMEVAL_SLURM_SERVER"
# The Slurm job id whose first Snakemake process set RMEVAL_RUN (its job steps inherit both and keep them).
ALLOCATION_ENV = "RMEVAL_SLURM_ALLOCATION"
GROUPING_MODES = ("model", "job")


def grouping_applies(executor: str | None, mode: str) -> bool:
    """Whether scoring jobs are grouped per model: only when this Snakemake process submits to Slurm (not in the
    jobstep inside an allocation, not locally, not in a dry run) and the config asks for it."""
    return executor == "slurm" and mode == "model"


def group_id(model: str) -> str:
    """The Snakemake group of a model's scoring jobs (group ids name Slurm log folders: keep them path-safe)."""
    return GROUP_PREFIX + re.sub(r"[^A-Za-z0-9._-]", "_", model)


def group_components(models: Iterable[str], current: Mapping[str, int]) -> dict[str, int]:
    """`--group-components` with every model's group merged whole; a value the user passed for a group wins."""
    return {**{group_id(model): ALL_COMPONENTS for model in models}, **current}


def slot(grouped: bool) -> int:
    """A scoring job's `rmeval_score_slot`: 1 when grouped (one job per layer of its group), else 0 (no limit)."""
    return 1 if grouped else 0


def allocation_role(environ: Mapping[str, str], mode: str) -> str:
    """What a Snakemake process parsing the Snakefile is, for the model server:
    - "run": not inside a model's allocation (a local run, the submitting process, a per-job allocation): it is
      the run whose id (RMEVAL_RUN) keys and outlives its servers;
    - "allocation": the first Snakemake process of a model's allocation (the jobstep in the batch step, alive
      for the whole allocation): the run id of every job in this allocation, and the server launcher;
    - "step": a job's own Snakemake process in an `srun` step of that allocation: it keeps the allocation's run
      id, so the model's jobs share one server that is never shared with another allocation."""
    job = environ.get("SLURM_JOB_ID")
    if not job or mode != "model":
        return "run"
    return "step" if environ.get(ALLOCATION_ENV) == job else "allocation"


def allocation_environment(slurm_job_id: str) -> dict[str, str]:
    """Set by the allocation's first process: its jobs may use the server, and the allocation owns the run id."""
    return {ALLOCATION_SERVER_ENV: "1", ALLOCATION_ENV: slurm_job_id}


def run_identity(environ: Mapping[str, str], mode: str, server_dir: Path) -> dict[str, str]:
    """The environment common.smk sets in every Snakemake process: the run id (rmeval.scoring.address), and in the
    first process of a model's allocation also the allocation's marks and its server launcher (started here)."""
    from rmeval.scoring.address import run_environment
    from rmeval.scoring.slurm_launcher import launcher_folder, start_launcher

    role = allocation_role(environ, mode)
    if role == "step":
        return {}
    if role == "run":
        return run_environment()
    job = environ["SLURM_JOB_ID"]
    return {**run_environment(), **allocation_environment(job), **start_launcher(launcher_folder(server_dir, job))}
