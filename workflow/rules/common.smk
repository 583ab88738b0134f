# Helpers shared by all rule files (config access, model specs, resources, target lists).
# This is the only .smk file that defines Python functions; the planning behind them is rmeval.run_plan, which asks
# every enabled benchmark's planner (its catalogue) what it runs: these helpers name no benchmark.
import json  # used by the rule files' params too
import os
import re
import sys
import time
from pathlib import Path

# Make the `rmeval` package importable even when it is not pip-installed (e.g. under --sdm conda).
sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from rmeval import run_plan
from rmeval.io import paths
from rmeval.benchmarks import benchmark
from rmeval.run_outputs.catalogue import RUN as RUN_CATALOGUE
from rmeval.errors import RmevalError
from rmeval.devices import snakemake_gpu_limit
from rmeval.resources import input_tokens, measured_tokens_per_s, scoring_resources, scoring_runtime
from rmeval.scoring.address import SERVER_DIR
from rmeval.config_check import schema_default
from rmeval.scoring import slurm_group

# Identifies this run to its local jobs: a model's scoring jobs share one model server per run
# (rmeval.scoring.server), which ends when this Snakemake process does. Not a param: no rerun trigger.
# Inside a model's Slurm allocation (`scoring.slurm_grouping: model`) the run is the allocation: its first
# Snakemake process (the jobstep, in the batch step) sets the id and starts the server launcher, and the jobs'
# own Snakemake processes (one `srun` step each) keep both (rmeval.scoring.slurm_group, .slurm_launcher).
_grouping = config.get("scoring", {}).get("slurm_grouping", schema_default("scoring.slurm_grouping"))
os.environ.update(slurm_group.run_identity(os.environ, _grouping, Path.cwd() / SERVER_DIR))

# Benchmark files go to one folder per run, so a partial rerun never mixes its timings with an older run's
# (perf/stage_costs.py reads the latest). Jobs re-parsing the Snakefile (Slurm) inherit the folder.
BENCH_RUN = os.environ.setdefault("RMEVAL_BENCH_RUN", time.strftime("%Y%m%dT%H%M%SZ-", time.gmtime()) + str(os.getpid()))


# The repository, found from this file (workflow/rules/common.smk) rather than the main Snakefile, so that the
# report captions and published values resolve for any Snakefile that includes the rule files (the tests' too).
REPOSITORY = Path(str(workflow.current_basedir)).parents[1]


def benchmark_file(path):
    return f"results/perf/{BENCH_RUN}/{path}"


def config_path(value):
    """A user path from the config: relative to the working directory if it exists there, else to the repo."""
    return paths.config_path(value, Path(workflow.basedir))


# Every enabled benchmark's plan (models, score jobs, preflight needs, settings), the lock and the scoring
# settings (rmeval.run_plan).
try:
    PLAN = run_plan.plan_run(config, config_path)
except RmevalError as error:
    raise WorkflowError(str(error))
for _warning in PLAN.warnings:
    logger.warning(_warning)


# Each scoring job holds one `rmeval_score_slot` when grouped per model: with this limit, scoped local (counted
# inside a group job only, never across the run's allocations), a model's group job asks for one job's GPUs and
# memory and the sum of the jobs' runtimes (rmeval.scoring.slurm_group explains Snakemake's group resources).
workflow.register_resource(slurm_group.SLOT_RESOURCE, 1)

# Locally, cap concurrent GPU jobs at the number of GPUs found (no-op under Slurm, on CPU-only machines,
# or when the user passes --resources gpu=N); each job then claims its own devices (rmeval.devices).
_gpu_limit = snakemake_gpu_limit(workflow.global_resources["_nodes"].value, "gpu" in workflow.global_resources)
if _gpu_limit is not None:
    workflow.register_resource("gpu", _gpu_limit)

# A published lock (`lock:`, README "Reproduce our run"): its commits replace `revision: null`, and every
# scoring job checks that it loaded the locked commit or folder fingerprint (rmeval.lock.models).
ALL_SPECS = PLAN.all_specs


def model_spec_json(name):
    """The resolved registry entry, passed to `rmeval score --spec` (a change to it re-runs the job)."""
    return ALL_SPECS[name].to_json()


def model_runtime(wildcards, input, attempt):
    """A scoring job's minutes: its input's tokens at the model's measured throughput (its earlier sidecars), else
    the registry entry's `runtime` (rmeval.resources.scoring_runtime); a model's Slurm allocation sums them."""
    spec = ALL_SPECS[wildcards.model]
    measured = measured_tokens_per_s(spec, PLAN.model_meta_files(wildcards.model))
    return scoring_runtime(spec, input_tokens(input.data), measured, attempt)


def model_resource(key):
    """One scoring resource (gpu, mem_mb, runtime, ...) of the job's model, scaled by attempt where it makes sense."""

    def get(wildcards, attempt):
        return scoring_resources(ALL_SPECS[wildcards.model], attempt)[key]

    return get


def slurm_grouped():
    """Whether this process submits a model's scoring jobs as one Slurm group job. Asked while the DAG is built,
    after Snakemake chose its executor (at parse time it has none yet)."""
    executor = workflow.executor_plugin.name if workflow.executor_plugin is not None else None
    return slurm_group.grouping_applies(executor, PLAN.scoring.slurm_grouping)


def score_group(wildcards):
    """`group:` of the score rules: a model's jobs of every benchmark in one group, only under the Slurm executor.
    Snakemake merges independent jobs of one group only up to `--group-components` (default 1); it replaces its
    group settings after parsing the Snakefile, so the per-model counts are set here, once the run's are final
    (as if `--group-components rmeval-score-<model>=1000000` had been passed for every model)."""
    if not slurm_grouped():
        return None
    settings = workflow.group_settings
    wanted = slurm_group.group_components(ALL_SPECS, settings.group_components)
    if dict(settings.group_components) != wanted:
        settings.group_components = type(settings.group_components)(wanted)
    return slurm_group.group_id(wildcards.model)


def score_slot(wildcards):
    return slurm_group.slot(slurm_grouped())


def scoring_threads():
    return PLAN.scoring.threads


def one_of(names):
    """A wildcard constraint matching exactly these names."""
    return "|".join(map(re.escape, names))


def score_input(jobs):
    """The input table of a (model, table) job of one score stage (rmeval.run_plan.ScoreJobs)."""
    return lambda wildcards: jobs.data(wildcards.model, wildcards.table)


def score_settings(jobs):
    """`rmeval score --settings` of a job: the stage's task, the `scoring:` settings, a locked revision."""
    return lambda wildcards: PLAN.score_settings(jobs, wildcards.model)


def stage_settings(benchmark_name, rule_name):
    """The `--settings` JSON of one of a benchmark's rules, from its plan (rmeval.cli_settings)."""
    return PLAN.settings(benchmark_name, rule_name)


def output_entries(outputs):
    """A rule's `output:` from catalogued outputs: files with a caption become report() entries; a table's other
    formats (.md, .tex) follow as `<key>_<suffix>`."""
    entries = {}
    for output in outputs:
        entry = output.path
        if output.caption:
            caption = str(REPOSITORY / "workflow" / "report" / output.caption)
            entry = report(output.path, caption=caption, category=output.category, labels=dict(output.labels) or None)
        entries[output.key] = entry
        for suffix in output.formats:
            entries[f"{output.key}_{suffix}"] = output.sibling(suffix)
    return entries


def rule_outputs(benchmark_name, rule_name):
    """A rule's `output:` from its benchmark's catalogue (rmeval.benchmarks.<name>.catalogue): the outputs whose
    `when` holds in this run (its plan's `conditions`)."""
    return output_entries(benchmark(benchmark_name).of_rule(rule_name, PLAN.conditions(benchmark_name)))


def run_rule_outputs(rule_name):
    """A run-level rule's `output:` from the run catalogue (rmeval.run_outputs.catalogue)."""
    return output_entries(RUN_CATALOGUE.of_rule(rule_name))


def rule_inputs(benchmark_name, rule_name):
    """A rule's `input:` from its benchmark's catalogue: the outputs its own outputs are built from, by key."""
    return benchmark(benchmark_name).inputs_of_rule(rule_name, PLAN.conditions(benchmark_name))


def all_outputs():
    """The default target's inputs. For every enabled benchmark: its catalogued files in this run (per-model ones
    for each of their models) and every score file (rmeval.run_plan.RunPlan.targets); then the run-level files
    (run.smk) and the lock, which records them all."""
    from rmeval.run_outputs.strays import own_outputs

    return own_outputs(PLAN)


def preflight_plan():
    """What the run needs from this machine, for rmeval.preflight (called from the Snakefile)."""
    return PLAN.preflight_plan()


def preflight_pending(rules, model):
    """The dry run's stand-in for the DAG: would a job of `rules` (for `model`) run? Some output is missing."""
    return any(not Path(path).exists() for path in PLAN.pending_outputs(rules, model))
