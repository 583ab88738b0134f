# rmeval: benchmark RLHF reward models for group fairness (Song et al. 2025) and math robustness (RewardMATH).
import sys
from pathlib import Path

from snakemake.utils import min_version

# The `rmeval` package, importable even when it is not pip-installed (e.g. under --sdm conda).
sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))
from rmeval import preflight
from rmeval.config_check import ConfigError, check_config, config_schema, fill_defaults

min_version("8.20")


# A config given with --configfile replaces the paper's config as a whole (it must be complete), so that a
# smaller `groups:` mapping is not silently merged with the paper's eight groups.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# The schema is the single source of keys and defaults: it fills them into `config` (the rules read
# `config[...]` with no fallback of their own), and each problem is reported as one line naming the key path,
# the bad value and what is allowed (rmeval.config_check), never as a schema dump. A module's `skip_validation`
# skips only the judging. It is workflow/schemas/config.schema.yaml plus each benchmark's own sections.
CONFIG_SCHEMA = config_schema(Path(workflow.basedir) / "workflow/schemas/config.schema.yaml")
if workflow.modifier.skip_validation:
    fill_defaults(config, CONFIG_SCHEMA)
else:
    try:
        check_config(
            config,
            CONFIG_SCHEMA,
            source=", ".join(map(str, workflow.overwrite_configfiles or ["config/config.yaml"])),
        )
    except ConfigError as error:
        raise WorkflowError(str(error))


include: "workflow/rules/common.smk"


wildcard_constraints:
    model="[A-Za-z0-9._-]+",


# Each enabled benchmark's rule file (its catalogue's `rule_file`), in catalogue order; then the shared stages:
# weights once per model, the one score rule that serves every benchmark's score stages, the lock.
# Two benchmarks may share one rule file (RewardBench 1 and 2): it is included once.
for _rule_file in dict.fromkeys(benchmark(name).rule_file for name in PLAN.benchmarks):

    include: _rule_file


include: "workflow/rules/download.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/lock.smk"
include: "workflow/rules/run.smk"


rule all:
    input:
        all_outputs(),
    default_target: True


# Preflight (rmeval.preflight): what this machine lacks for the run -- network, cached models, API keys, local
# folders and files -- one line per problem. A missing input file stops every mode now (Snakemake would stop on
# it too, with a worse message); a dry run reports the rest as a warning; a real run stops in `onstart`, before
# its first job, on the problems of the jobs that are about to run. RMEVAL_PREFLIGHT=warn|off for experts.
try:
    PREFLIGHT_MODE = preflight.mode()
except ValueError as error:
    raise WorkflowError(str(error))
if PREFLIGHT_MODE != "off" and workflow.is_main_process:
    _missing = preflight.missing_inputs(preflight_plan(), preflight_pending)
    if _missing:
        raise WorkflowError(preflight.report(_missing, preflight.STOP_TAIL))
    if workflow.output_settings.dryrun:
        _problems = preflight.collect(preflight_plan(), preflight_pending)
        if _problems:
            logger.warning(preflight.report(_problems, preflight.DRY_RUN_TAIL))


onstart:
    if PREFLIGHT_MODE != "off" and workflow.is_main_process and not workflow.touch:
        _problems = preflight.collect(preflight_plan(), preflight.jobs_filter(workflow.dag.needrun_jobs()))
        if _problems and PREFLIGHT_MODE == "warn":
            logger.warning(preflight.report(_problems, preflight.WARN_TAIL))
        elif _problems:
            raise WorkflowError(preflight.report(_problems, preflight.STOP_TAIL))
