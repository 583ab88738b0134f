# rmeval: benchmark RLHF reward models for group fairness (Song et al. 2025) and math robustness (RewardMATH).
from snakemake.utils import min_version, validate

min_version("8.20")


# A config given with --configfile replaces the paper's config as a whole (it must be complete), so that a
# smaller `groups:` mapping is not silently merged with the paper's eight groups.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
wildcard_constraints:
    group="|".join(GROUPS),
    model="[A-Za-z0-9._-]+",


include: "workflow/rules/arxiv.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/fairness.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/rewardmath.smk"
include: "workflow/rules/lock.smk"


rule all:
    input:
        all_outputs(),
    default_target: True
