# RM-Bench (Liu et al. 2025): prepare (the official total_dataset.json, from the Hub at a revision or a local copy)
# -> score (each of a prompt's six responses once per model: the shared score rule, scoring.smk) -> metrics (the
# official 3 x 3 style matrix, rmeval.benchmarks.rmbench.scoring). Planned by rmeval.benchmarks.rmbench.plan, its
# files declared in its catalogue.
from rmeval.benchmarks.rmbench import paths as RMBENCH


rule rmbench_prepare:
    input:
        **PLAN.own(RMBENCH.NAME)["local_inputs"],
    output:
        table=RMBENCH.DATA,
        manifest=RMBENCH.MANIFEST,
    params:
        settings=stage_settings(RMBENCH.NAME, RMBENCH.PREPARE_RULE),  # source, revision, local path, locked sha256
    localrule: True
    log:
        "logs/rmbench/prepare.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rmbench-prepare --out {output.table:q} --settings {params.settings:q} > {log:q} 2>&1"


rule rmbench_metrics:
    input:
        data=RMBENCH.DATA,
        scores=PLAN.score_files(RMBENCH.NAME),
    output:
        **rule_outputs(RMBENCH.NAME, RMBENCH.METRICS_RULE),
    params:
        out=subpath(output.scores, parent=True),
        settings=stage_settings(RMBENCH.NAME, RMBENCH.METRICS_RULE),  # the models, in config order
    localrule: True
    log:
        "logs/rmbench/metrics.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rmbench-metrics --data {input.data:q} --out {params.out:q} --settings {params.settings:q}"
        " > {log:q} 2>&1"
