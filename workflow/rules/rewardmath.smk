# The RewardMATH branch (Kim et al. 2024, arXiv:2410.01729): prepare -> score (one job per model x MATH
# subject, plus RewardBench math-prm: the shared score rule, scoring.smk) -> metrics -> figure. Enabled by
# `rewardmath.enabled: true`. The subject list comes from the config (no checkpoint): prepare always writes all
# seven subject tables. What runs is planned by rmeval.benchmarks.rewardmath.plan (the benchmark's planner); the
# files written are declared in its catalogue.
from rmeval.benchmarks.rewardmath.plan import ALL_TABLES as RM_ALL_TABLES

RM_PLAN = PLAN.own("rewardmath")
RM_SCORES = PLAN.score_files("rewardmath")
# One judge's score file of one subject (rule rewardmath_export), from the score stage's path.
RM_SCORE_FILE = benchmark("rewardmath").score_stages[0].scores.replace("{model}", "{{model}}").replace("{table}", "{rm_table}")
RM_LOCAL_INPUTS = dict(RM_PLAN.local_inputs)
RM_TABLE_FILES = RM_PLAN.table_files


rule rewardmath_prepare:
    input:
        **RM_LOCAL_INPUTS,
    output:
        tables=expand("results/rewardmath/data/{rm_table}.parquet", rm_table=RM_ALL_TABLES),
        manifest="results/rewardmath/data/manifest.json",
    params:
        out=subpath(output.manifest, parent=True),
        settings=stage_settings("rewardmath", "rewardmath_prepare"),  # sources, local files, Hub splits / revisions
    localrule: True
    log:
        "logs/rewardmath/prepare.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-prepare --out {params.out:q} --settings {params.settings:q} > {log:q} 2>&1"


rule rewardmath_positions:
    input:
        tables=expand("results/rewardmath/data/{rm_table}.parquet", rm_table=RM_ALL_TABLES),
        **RM_PLAN.position_file,
    output:
        tables=expand("results/rewardmath/pairwise/{rm_table}.parquet", rm_table=RM_ALL_TABLES),
        summary="results/rewardmath/pairwise/positions.json",
    params:
        data=lambda wildcards, input: str(Path(input.tables[0]).parent),
        out=subpath(output.summary, parent=True),
        settings=stage_settings("rewardmath", "rewardmath_positions"),  # hf, seeded or the positions file
    localrule: True
    log:
        "logs/rewardmath/positions.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-positions --data {params.data:q} --out {params.out:q} --settings {params.settings:q}"
        " > {log:q} 2>&1"


rule rewardmath_metrics:
    input:
        data=expand("results/rewardmath/data/{rm_table}.parquet", rm_table=RM_ALL_TABLES),
        scores=RM_SCORES,
        official=list(RM_PLAN.official.values()),
        registry=config_path(config["registry"]),
    output:
        **rule_outputs("rewardmath", "rewardmath_metrics"),
    params:
        data=lambda wildcards, input: str(Path(input.data[0]).parent),
        out=subpath(output.metrics, parent=True),
        # the scored models and subjects, the official files, the registry, bootstrap, seed, PRM aggregation
        settings=stage_settings("rewardmath", "rewardmath_metrics"),
    localrule: True
    log:
        "logs/rewardmath/metrics.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-metrics --data {params.data:q} --out {params.out:q} --settings {params.settings:q}"
        " > {log:q} 2>&1"


rule rewardmath_export:
    input:
        data=expand("results/rewardmath/data/{rm_table}.parquet", rm_table=RM_PLAN.subjects),
        scores=expand(RM_SCORE_FILE, rm_table=RM_PLAN.subjects),
    output:
        **rule_outputs("rewardmath", "rewardmath_export"),
    params:
        data=lambda wildcards, input: str(Path(input.data[0]).parent),
        scores=lambda wildcards, input: str(Path(input.scores[0]).parents[1]),
        settings=stage_settings("rewardmath", "rewardmath_export"),
    localrule: True
    log:
        "logs/rewardmath/export/{model}.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-export --model {wildcards.model:q} --scores {params.scores:q} --data {params.data:q}"
        " --out {output.export:q} --settings {params.settings:q} > {log:q} 2>&1"


rule rewardmath_figures:
    input:
        RM_TABLE_FILES["side_by_side"],
    output:
        **rule_outputs("rewardmath", "rewardmath_figures"),
    params:
        settings=stage_settings("rewardmath", "rewardmath_figures"),
    localrule: True
    log:
        "logs/rewardmath/figures.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-figures --table {input:q} --png {output.figure:q} --pdf {output.figure_pdf:q}"
        " --settings {params.settings:q} > {log:q} 2>&1"


rule rewardmath_summary:
    input:
        RM_TABLE_FILES["side_by_side"],
    output:
        **rule_outputs("rewardmath", "rewardmath_summary"),
    params:
        settings=stage_settings("rewardmath", "rewardmath_summary"),  # the PRM aggregation, the run's alpha
    localrule: True
    log:
        "logs/rewardmath/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-summary --table {input:q} --out {output.summary:q} --settings {params.settings:q}"
        " > {log:q} 2>&1"
