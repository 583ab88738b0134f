# RMB (Zhou et al. 2025): prepare (the official RMB_dataset folder, local or the authors' repository at a pinned
# commit) -> score (every distinct conversation + response once per model: the shared score rule, scoring.smk) ->
# metrics (pairwise and best-of-N accuracy per scenario, the four headline cells, overall). Planned by
# rmeval.benchmarks.rmb.planner, its files declared in its catalogue.


rule rmb_prepare:
    input:
        PLAN.own("rmb")["local_inputs"],
    output:
        table="results/rmb/data/texts.parquet",
        item_table="results/rmb/data/items.parquet",
        manifest="results/rmb/data/manifest.json",
    params:
        settings=stage_settings("rmb", "rmb_prepare"),  # source, path or revision, download folder, lock
    localrule: True
    log:
        "logs/rmb/prepare.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rmb-prepare --out {output.table:q} --settings {params.settings:q} > {log:q} 2>&1"


rule rmb_metrics:
    input:
        data="results/rmb/data/texts.parquet",
        item_table="results/rmb/data/items.parquet",
        scores=PLAN.score_files("rmb"),
    output:
        **rule_outputs("rmb", "rmb_metrics"),
    params:
        out=subpath(output.main, parent=True),
        settings=stage_settings("rmb", "rmb_metrics"),  # the models
    localrule: True
    log:
        "logs/rmb/metrics.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rmb-metrics --data {input.data:q} --out {params.out:q} --settings {params.settings:q} > {log:q} 2>&1"
