# The fairness benchmark's data: arXiv papers -> results/data/{group}.parquet (+ manifest).
# arxiv_fetch streams the snapshot (or pages through the API) once per group and keeps a bounded seeded
# candidate pool; arxiv_select drops titles shared between groups and writes the balanced sample.
# Both run on the submitting host under SLURM: the API needs internet, and the work is I/O, not compute.
# Included by fairness.smk; the settings come from its plan (rmeval.benchmarks.fairness.planner).


wildcard_constraints:
    group=one_of(GROUPS),


localrules:
    arxiv_fetch,
    arxiv_select,


rule arxiv_fetch:
    input:
        snapshot=[FAIRNESS.snapshot] if FAIRNESS.snapshot else [],
    output:
        candidates="results/arxiv/{group}.candidates.parquet",
        eligible="results/arxiv/{group}.eligible.u64",
        summary="results/arxiv/{group}.fetch.json",
    params:
        categories=lambda wildcards: config["groups"][wildcards.group],
        settings=stage_settings("fairness", "arxiv_fetch"),
    log:
        "logs/arxiv/fetch_{group}.log",
    benchmark:
        benchmark_file("arxiv_fetch/{group}.tsv")
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval arxiv-fetch --group {wildcards.group} --categories {params.categories}"
        " --out-dir results/arxiv --settings {params.settings:q} > {log:q} 2>&1"


rule arxiv_select:
    input:
        candidates=expand("results/arxiv/{group}.candidates.parquet", group=GROUPS),
        eligible=expand("results/arxiv/{group}.eligible.u64", group=GROUPS),
        summaries=expand("results/arxiv/{group}.fetch.json", group=GROUPS),
    output:
        data=expand("results/data/{group}.parquet", group=GROUPS),
        manifests=expand("results/data/{group}.manifest.json", group=GROUPS),
    params:
        settings=stage_settings("fairness", "arxiv_select"),  # the groups in config order, the sample's settings
    log:
        "logs/arxiv/select.log",
    benchmark:
        benchmark_file("arxiv_select.tsv")
    conda:
        "../../envs/rmeval.yaml"
    # Warnings (allow_fewer's cut, with the counts) and errors go to the log and to the console.
    shell:
        ": > {log:q}; rmeval arxiv-select --candidates-dir results/arxiv --out-dir results/data"
        " --settings {params.settings:q} 2>&1 >> {log:q} | tee -a {log:q} >&2"


# `arxiv.source: lock`: the groups rebuilt from the papers of the followed lock (`lock:`) instead of sampled.
if FAIRNESS.arxiv_from_lock:
    ARXIV_FROM_LOCK = FAIRNESS.arxiv_from_lock

    ruleorder: arxiv_from_lock > arxiv_select

    rule arxiv_from_lock:
        input:
            snapshot=ARXIV_FROM_LOCK.snapshot,
        output:
            data=expand("results/data/{group}.parquet", group=GROUPS),
            manifests=expand("results/data/{group}.manifest.json", group=GROUPS),
        params:
            lock_sha256=ARXIV_FROM_LOCK.lock_sha256,  # a different lock at the same path rebuilds the groups
            settings=stage_settings("fairness", "arxiv_from_lock"),  # the lock, the groups, the arxiv: section
        localrule: True
        log:
            "logs/arxiv/from_lock.log",
        conda:
            "../../envs/rmeval.yaml"
        shell:
            "rmeval arxiv-from-lock --settings {params.settings:q} > {log:q} 2>&1"
