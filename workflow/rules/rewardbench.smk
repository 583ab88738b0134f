# RewardBench (Lambert et al. 2024): prepare (Hub at a revision, or a local file) -> score (every completion, one job per model: the shared
# score rule, scoring.smk) -> metrics (the official rules, rmeval.benchmarks.rewardbench.scoring). Enabled by
# `rewardbench.enabled: true`; planned by rmeval.benchmarks.rewardbench.plan, files declared in the rewardbench catalogue.

rule rewardbench_prepare:
    input:
        **PLAN.own("rewardbench")["local_inputs"],
    output:
        table="results/rewardbench/data/rewardbench.parquet",
        manifest="results/rewardbench/data/manifest.json",
    params:
        settings=stage_settings("rewardbench", "rewardbench_prepare"),  # version, source, revision, local path
    localrule: True
    log:
        "logs/rewardbench/prepare.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardbench-prepare --out {output.table:q} --settings {params.settings:q} > {log:q} 2>&1"


rule rewardbench_metrics:
    input:
        data="results/rewardbench/data/rewardbench.parquet",
        scores=PLAN.score_files("rewardbench"),
    output:
        **rule_outputs("rewardbench", "rewardbench_metrics"),
    params:
        out=subpath(output.scores, parent=True),
        settings=stage_settings("rewardbench", "rewardbench_metrics"),  # version, models, bootstrap, seed
    localrule: True
    log:
        "logs/rewardbench/metrics.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardbench-metrics --data {input.data:q} --out {params.out:q} --settings {params.settings:q}"
        " > {log:q} 2>&1"


# Every model's subset scores in the official results layout (`results_grouped` of allenai/reward-bench).
BENCHMARK_EXTRA_TARGETS["rewardbench"] = lambda: expand("results/rewardbench/official/{model}.json", model=PLAN.own("rewardbench")["models"])


rule rewardbench_export:
    input:
        data="results/rewardbench/data/rewardbench.parquet",
        scores="results/scores/{model}/rewardbench.parquet",
    output:
        **rule_outputs("rewardbench", "rewardbench_export"),
    params:
        settings=stage_settings("rewardbench", "rewardbench_export"),  # the version
    localrule: True
    log:
        "logs/rewardbench/export/{model}.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardbench-export --model {wildcards.model:q} --data {input.data:q} --scores {input.scores:q}"
        " --out {output.export:q} --settings {params.settings:q} > {log:q} 2>&1"
