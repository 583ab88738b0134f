# RewardBench 2 (Malik et al. 2025): prepare (Hub at a revision, or a local file) -> score (every completion, one job per model: the shared
# score rule, scoring.smk) -> metrics (the official rules, rmeval.benchmarks.rewardbench.scoring). Enabled by
# `rewardbench2.enabled: true`; planned by rmeval.benchmarks.rewardbench.plan, files declared in the rewardbench2 catalogue.

rule rewardbench2_prepare:
    input:
        **PLAN.own("rewardbench2")["local_inputs"],
    output:
        table="results/rewardbench2/data/rewardbench2.parquet",
        manifest="results/rewardbench2/data/manifest.json",
    params:
        settings=stage_settings("rewardbench2", "rewardbench2_prepare"),  # version, source, revision, local path
    localrule: True
    log:
        "logs/rewardbench2/prepare.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardbench-prepare --out {output.table:q} --settings {params.settings:q} > {log:q} 2>&1"


rule rewardbench2_metrics:
    input:
        data="results/rewardbench2/data/rewardbench2.parquet",
        scores=PLAN.score_files("rewardbench2"),
    output:
        **rule_outputs("rewardbench2", "rewardbench2_metrics"),
    params:
        out=subpath(output.scores, parent=True),
        settings=stage_settings("rewardbench2", "rewardbench2_metrics"),  # version, models, bootstrap, seed
    localrule: True
    log:
        "logs/rewardbench2/metrics.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardbench-metrics --data {input.data:q} --out {params.out:q} --settings {params.settings:q}"
        " > {log:q} 2>&1"
