# Helpers shared by all rule files (config access, model specs, resources, target lists).
# This is the only .smk file that defines Python functions.
import json
import os
import shlex
import sys
import time
from pathlib import Path

# Make the `rmeval` package importable even when it is not pip-installed (e.g. under --sdm conda).
sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from rmeval.benchmarks import BENCHMARK_MODULES, benchmark
from rmeval.benchmarks.fairness import plan as fairness_plan
from rmeval.errors import RmevalError
from rmeval.registry import load_registry, resolve_models
from rmeval.benchmarks.fairness.arxiv.categories import check_disjoint, load_table, resolve_group
from rmeval.devices import snakemake_gpu_limit
from rmeval.resources import scoring_resources
from rmeval.lock.lockfile import config_sha256, file_sha256, load_lock
from rmeval.lock.models import follow_lock
from rmeval.scoring.address import run_environment

# Identifies this run to its local jobs: a model's scoring jobs share one model server per run
# (rmeval.scoring.server), which ends when this Snakemake process does. Not a param: no rerun trigger.
os.environ.update(run_environment())

# Benchmark files go to one folder per run, so a partial rerun never mixes its timings with an older run's
# (perf/stage_costs.py reads the latest). Jobs re-parsing the Snakefile (Slurm) inherit the folder.
BENCH_RUN = os.environ.setdefault("RMEVAL_BENCH_RUN", time.strftime("%Y%m%dT%H%M%SZ-", time.gmtime()) + str(os.getpid()))


# The repository, found from this file (workflow/rules/common.smk) rather than the main Snakefile, so that the
# report captions and published values resolve for any Snakefile that includes the rule files (the tests' too).
REPOSITORY = Path(str(workflow.current_basedir)).parents[1]


def benchmark_file(path):
    return f"results/perf/{BENCH_RUN}/{path}"


def repo_path(relative):
    """A path inside the rmeval repository (resources/, config/), whatever the working directory."""
    return str(Path(workflow.basedir) / relative)


def config_path(value):
    """A user path from the config: relative to the working directory if it exists there, else to the repo."""
    path = Path(value)
    if path.is_absolute() or path.exists():
        return str(path)
    return repo_path(value)


def _resolve(models, where, registry=None):
    try:
        return resolve_models(models, REGISTRY if registry is None else registry, where=where)
    except RmevalError as error:
        raise WorkflowError(str(error))


try:
    REGISTRY = load_registry(config_path(config.get("registry", "config/models.yaml")))
except RmevalError as error:
    raise WorkflowError(str(error))

# Locally, cap concurrent GPU jobs at the number of GPUs found (no-op under Slurm, on CPU-only machines,
# or when the user passes --resources gpu=N); each job then claims its own devices (rmeval.devices).
_gpu_limit = snakemake_gpu_limit(workflow.global_resources["_nodes"].value, "gpu" in workflow.global_resources)
if _gpu_limit is not None:
    workflow.register_resource("gpu", _gpu_limit)

GROUPS = list(config["groups"])


def _check_groups():
    """Unknown categories, or one category in two groups, fail now rather than after every download."""
    table_path = config["arxiv"].get("categories_table")
    table = load_table(config_path(table_path) if table_path else None)
    check_disjoint({name: resolve_group(name, entries, table) for name, entries in config["groups"].items()})


try:
    _check_groups()
except RmevalError as error:
    raise WorkflowError(f"config: {error}")

MODEL_SPECS = {spec.name: spec for spec in _resolve(config["models"], "config")}
MODEL_NAMES = list(MODEL_SPECS)

REWARDMATH = config.get("rewardmath", {})
REWARDMATH_ENABLED = bool(REWARDMATH.get("enabled", False))
# `rewardmath.models` may name the registry's models and the ones defined inline under `models:`.
REWARDMATH_SPECS = (
    {
        spec.name: spec
        for spec in _resolve(REWARDMATH.get("models", []), "config: rewardmath", {**REGISTRY, **MODEL_SPECS})
    }
    if REWARDMATH_ENABLED
    else {}
)
# One name, one model: scores of both branches live under results/.../{model}/ and share a download.
for _name in set(MODEL_SPECS) & set(REWARDMATH_SPECS):
    if MODEL_SPECS[_name] != REWARDMATH_SPECS[_name]:
        raise WorkflowError(f"config: model {_name!r} is defined differently in `models` and `rewardmath.models`")
ALL_SPECS = {**MODEL_SPECS, **REWARDMATH_SPECS}

# A published lock (`lock:`, README "Reproduce our run"): its commits replace `revision: null`, and every
# scoring job checks that it loaded the locked commit or folder fingerprint (rmeval.lock.models).
LOCK_PATH = config_path(config["lock"]) if config.get("lock") else None
CONFIG_SHA256 = config_sha256(config)  # recorded in results/lock.yaml
if LOCK_PATH and Path(LOCK_PATH).resolve() == Path("results/lock.yaml").resolve():
    raise WorkflowError("config: lock: results/lock.yaml is this run's own output; copy the lock elsewhere first")
if config["arxiv"].get("source") == "lock" and not LOCK_PATH:
    raise WorkflowError("config: arxiv.source is 'lock' but no top-level `lock:` file is given")
try:
    LOCK = load_lock(LOCK_PATH) if LOCK_PATH else None
    ALL_SPECS, LOCKED_REVISIONS = follow_lock(ALL_SPECS, LOCK)
except RmevalError as error:
    raise WorkflowError(f"config: lock: {error}")

_reference = config.get("reference_model")
if _reference is not None and _reference not in MODEL_SPECS:
    # Table 4 needs the reference among the scored models; say so now, not after hours of scoring.
    logger.warning(
        f"config: reference_model {_reference!r} is not in `models`; Table 4 (Pearson r) will be skipped"
    )

def model_spec(name):
    return ALL_SPECS[name]


def model_spec_json(name):
    """The resolved registry entry, passed to `rmeval score --spec` (a change to it re-runs the job)."""
    return ALL_SPECS[name].to_json()


def locked_revision_flag(name):
    """`--expect-revision <commit>` for `rmeval score` when a lock pins the model, else nothing."""
    expected = LOCKED_REVISIONS.get(name)
    return f"--expect-revision {shlex.quote(expected)}" if expected else ""


def rewardmath_score_data(wildcards):
    """A pairwise judge reads the tables that carry chosen positions (rule rewardmath_positions)."""
    folder = "pairwise" if ALL_SPECS[wildcards.model].judge_mode == "pairwise" else "data"
    return f"results/rewardmath/{folder}/{wildcards.rm_table}.parquet"


def model_resource(name, key):
    """One scoring resource (gpu, mem_mb, runtime, ...) for a model, scaled by attempt where it makes sense."""

    def get(wildcards, attempt):
        return scoring_resources(ALL_SPECS[wildcards.model if name is None else name], attempt)[key]

    return get


def scoring_threads():
    return int(config.get("scoring", {}).get("threads", 2))


def fairness_score_files():
    return expand("results/scores/{model}/{group}.parquet", model=MODEL_NAMES, group=GROUPS)


def group_data_files():
    return expand("results/data/{group}.parquet", group=GROUPS)


def rule_outputs(benchmark_name, rule_name):
    """A rule's `output:` from its benchmark's catalogue (rmeval.benchmarks.<name>.catalogue): files with a
    caption become report() entries; a table's other formats (.md, .tex) follow as `<key>_<suffix>`."""
    entries = {}
    for output in benchmark(benchmark_name).of_rule(rule_name):
        entry = output.path
        if output.caption:
            caption = str(REPOSITORY / "workflow" / "report" / output.caption)
            entry = report(output.path, caption=caption, category=output.category, labels=dict(output.labels) or None)
        entries[output.key] = entry
        for suffix in output.formats:
            entries[f"{output.key}_{suffix}"] = output.sibling(suffix)
    return entries


def rule_inputs(benchmark_name, rule_name):
    """A rule's `input:` from its benchmark's catalogue: the outputs its own outputs are built from, by key."""
    return benchmark(benchmark_name).inputs_of_rule(rule_name)


def published_values():
    """The papers' own numbers (resources/published/), inside the repository whatever the working directory."""
    return [str(REPOSITORY / path) for path in fairness_plan.PUBLISHED_VALUES]


def rewardmath_table(key):
    """An input function giving the RewardMATH table `key` when that branch runs, else nothing. Deferred, as
    RM_TABLE_FILES is declared by rewardmath.smk, included after the fairness rules (or not at all)."""
    return lambda wildcards: [RM_TABLE_FILES[key]] if REWARDMATH_ENABLED else []


def rewardmath_summary_step(tables, summary):
    """The shell step appending the RewardMATH section to the fairness summary, when that branch ran (else
    RM_PRM_AGGREGATION, from rewardmath.smk, may not exist: tests include the fairness rules alone)."""
    if not tables:
        return ""
    return fairness_plan.rewardmath_summary_step(tables, summary, RM_PRM_AGGREGATION)


def benchmark_targets(benchmark_name):
    """Every catalogued file of a benchmark that holds no wildcard (the rest come from its rule file)."""
    targets = []
    for output in benchmark(benchmark_name).outputs:
        if "{" not in output.path:
            targets += [output.path, *(output.sibling(suffix) for suffix in output.formats)]
    return targets


def all_outputs():
    # Every catalogued file of the fairness benchmark (always on); RewardMATH's below until its catalogue lands.
    targets = [*benchmark_targets("fairness"), "results/lock.yaml"]
    # Every score file is a target: a deleted one is rebuilt by a plain rerun, not left "missing, no update"
    # because the tables built from it are newer than the files left.
    targets += fairness_score_files()
    if REWARDMATH_ENABLED:
        targets += rewardmath_outputs()
        targets += expand("results/rewardmath/scores/{model}/{rm_table}.parquet", model=RM_MODELS, rm_table=RM_SCORED_TABLES)
    return targets


def rewardmath_outputs():
    """The RewardMATH branch's tables and figures (RM_OUTPUTS is declared in rewardmath.smk)."""
    return list(RM_OUTPUTS)


def preflight_plan():
    """What the run needs from this machine, for rmeval.preflight (called from the Snakefile)."""
    from rmeval.preflight import Plan

    keys = {}
    for section, entries in (("models", config["models"]), ("rewardmath.models", REWARDMATH.get("models") or [])):
        for index, entry in enumerate(entries):
            name = entry if isinstance(entry, str) else entry.get("name")
            keys.setdefault(name, f"{section}[{index}] ({name})")
    return Plan(
        arxiv=ARXIV,
        snapshot=ARXIV_SNAPSHOT,
        models=ALL_SPECS,
        model_keys=keys,
        rewardmath=REWARDMATH if REWARDMATH_ENABLED else {},
        rewardmath_files=RM_LOCAL_INPUTS if REWARDMATH_ENABLED else {},
    )


def preflight_pending(rules, model):
    """The dry run's stand-in for the DAG: would a job of `rules` (for `model`) run? Some output is missing."""
    files = []
    if "arxiv_fetch" in rules:
        files += group_data_files()
    if "rewardmath_prepare" in rules and REWARDMATH_ENABLED:
        files.append("results/rewardmath/data/manifest.json")
    if model in MODEL_SPECS:
        files += expand("results/scores/{model}/{group}.parquet", model=[model], group=GROUPS)
    if model in REWARDMATH_SPECS:
        files += expand("results/rewardmath/scores/{model}/{t}.parquet", model=[model], t=RM_SCORED_TABLES)
    return any(not Path(path).exists() for path in files)
