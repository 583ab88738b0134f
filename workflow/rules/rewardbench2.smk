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


# Every model's subset scores in the official results layout (`results_grouped` of allenai/reward-bench).
BENCHMARK_EXTRA_TARGETS["rewardbench2"] = lambda: expand("results/rewardbench2/official/{model}.json", model=PLAN.own("rewardbench2")["models"])


rule rewardbench2_export:
    input:
        data="results/rewardbench2/data/rewardbench2.parquet",
        scores="results/scores/{model}/rewardbench2.parquet",
    output:
        **rule_outputs("rewardbench2", "rewardbench2_export"),
    params:
        settings=stage_settings("rewardbench2", "rewardbench2_export"),  # the version
    localrule: True
    log:
        "logs/rewardbench2/export/{model}.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardbench-export --model {wildcards.model:q} --data {input.data:q} --scores {input.scores:q}"
        " --out {output.export:q} --settings {params.settings:q} > {log:q} 2>&1"
