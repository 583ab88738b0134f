# Reproducibility: `results/lock.yaml` records exactly what this run used: each benchmark's own section (its
# catalogue's `lock_section`, e.g. the papers with versions and table hashes), model commits or folder
# fingerprints from every score sidecar, software versions, the config's hash (rmeval.lock). What it is built from
# comes from the run plan (rmeval.run_plan.RunPlan.lock_settings).


rule lock:
    input:
        PLAN.lock_files(),
    output:
        lock="results/lock.yaml",
        summary=report(
            "results/lock_summary.csv",
            caption="../report/lock_summary.rst",
            category="Reproducibility",
            labels={"table": "Lock summary"},
        ),
    params:
        settings=PLAN.lock_settings(),
    localrule: True
    log:
        "logs/lock.log",
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval lock write --settings {params.settings:q} --out {output.lock:q} --summary {output.summary:q}"
        " > {log:q} 2>&1"
