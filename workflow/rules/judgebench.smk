# JudgeBench (Tan et al., ICLR 2025): prepare (the Hub at a revision, or a local folder of the official files) ->
# score (each split's responses, one job per model and split: the shared score rule, scoring.smk; a pairwise LLM
# judge reads the pairwise table, both orders) -> metrics (the official rule, rmeval.benchmarks.judgebench.scoring).
# Planned by rmeval.benchmarks.judgebench.plan; its files are declared in its catalogue.
_jb = PLAN.own("judgebench")


rule judgebench_prepare:
    input:
        **_jb.local_inputs,
    output:
        tables=_jb.tables("data"),
        pairwise=_jb.tables("pairwise"),
        manifest="results/judgebench/manifest.json",
    params:
        out=subpath(output.manifest, parent=True),
        settings=stage_settings("judgebench", "judgebench_prepare"),  # source, revision, splits, locked, path
    localrule: True
    log:
        "logs/judgebench/prepare.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval judgebench-prepare --out {params.out:q} --settings {params.settings:q} > {log:q} 2>&1"


rule judgebench_metrics:
    input:
        tables=_jb.tables("data"),
        pairwise=_jb.tables("pairwise"),
        scores=PLAN.score_files("judgebench"),
    output:
        **rule_outputs("judgebench", "judgebench_metrics"),
    params:
        out=subpath(output.table, parent=True),
        settings=stage_settings("judgebench", "judgebench_metrics"),  # data and score folders, models, splits
    localrule: True
    log:
        "logs/judgebench/metrics.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval judgebench-metrics --out {params.out:q} --pairs {output.pairs:q} --settings {params.settings:q} > {log:q} 2>&1"
