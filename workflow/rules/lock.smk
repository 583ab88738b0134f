# Reproducibility: `results/lock.yaml` records exactly what this run used (papers with versions, the table
# hashes, model commits or folder fingerprints, software versions, the config's hash); with
# `arxiv.source: lock` the group tables are rebuilt from the lock named by `lock:` instead of sampled.

LOCK_METAS = [path for name in PLAN.benchmarks for path in PLAN.meta_files(name)]


rule lock:
    input:
        data=expand("results/data/{group}.parquet", group=GROUPS),
        manifests=expand("results/data/{group}.manifest.json", group=GROUPS),
        metas=LOCK_METAS,
    output:
        lock="results/lock.yaml",
        summary=report(
            "results/lock_summary.csv",
            caption="../report/lock_summary.rst",
            category="Reproducibility",
            labels={"table": "Lock summary"},
        ),
    params:
        groups=GROUPS,
        data_dir=lambda wildcards, input: str(Path(input.data[0]).parent),
        config_sha256=PLAN.config_sha256,
    localrule: True
    log:
        "logs/lock.log",
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval lock write --groups {params.groups} --data-dir {params.data_dir:q} --metas {input.metas:q}"
        " --config-sha256 {params.config_sha256} --out {output.lock:q} --summary {output.summary:q} > {log:q} 2>&1"


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
            lock=ARXIV_FROM_LOCK.lock,
            lock_sha256=ARXIV_FROM_LOCK.lock_sha256,  # a different lock at the same path rebuilds the groups
            groups=ARXIV_FROM_LOCK.groups_json,
            settings=ARXIV_FROM_LOCK.settings_json,
        localrule: True
        log:
            "logs/arxiv/from_lock.log",
        conda:
            "../../envs/rmeval.yaml"
        shell:
            "rmeval lock rebuild --lock {params.lock:q} --groups-json {params.groups:q}"
            " --config-json {params.settings:q} --out-dir results/data > {log:q} 2>&1"
