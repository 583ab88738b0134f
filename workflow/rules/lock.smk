# Reproducibility: `results/lock.yaml` records exactly what this run used (papers with versions, the table
# hashes, model commits or folder fingerprints, software versions, the config's hash). The groups rebuilt from a
# followed lock (`arxiv.source: lock`) are arxiv.smk's rule arxiv_from_lock.

from rmeval.cli_settings import settings_json

# `rmeval lock write --settings`: each benchmark's score sidecars (its models' records, keyed `<benchmark>/<table>`)
# and each benchmark's lock section inputs (rmeval.lock.section; the fairness provider's: its group tables and
# manifests, in config order).
LOCK_METAS = {
    "fairness": expand("results/scores/{model}/{group}.meta.json", model=MODEL_NAMES, group=GROUPS),
    **(
        {
            "rewardmath": expand(
                "results/rewardmath/scores/{model}/{rm_table}.meta.json", model=RM_MODELS, rm_table=RM_SCORED_TABLES
            )
        }
        if REWARDMATH_ENABLED
        else {}
    ),
}
LOCK_SECTIONS = {
    "fairness": {
        "groups": [
            {"name": group, "data": f"results/data/{group}.parquet", "manifest": f"results/data/{group}.manifest.json"}
            for group in GROUPS
        ]
    },
}


rule lock:
    input:
        data=group_data_files(),
        manifests=expand("results/data/{group}.manifest.json", group=GROUPS),
        metas=[meta for metas in LOCK_METAS.values() for meta in metas],
    output:
        lock="results/lock.yaml",
        summary=report(
            "results/lock_summary.csv",
            caption="../report/lock_summary.rst",
            category="Reproducibility",
            labels={"table": "Lock summary"},
        ),
    params:
        settings=settings_json({"config_sha256": CONFIG_SHA256, "metas": LOCK_METAS, "sections": LOCK_SECTIONS}),
    localrule: True
    log:
        "logs/lock.log",
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval lock write --settings {params.settings:q} --out {output.lock:q} --summary {output.summary:q}"
        " > {log:q} 2>&1"
