# Model weights: fetched once per model, on the machine that has internet (a cluster's login node:
# `localrule`), into the shared HF_HOME; scoring jobs load that snapshot offline. Local folders and
# API-only models write the marker without downloading anything; a folder the run builds itself (`tiny_models`,
# rule tiny_model below) is waited for.


rule download_model:
    input:
        built=lambda wildcards: PLAN.built_folder(wildcards.model) or [],
    output:
        marker="results/models/{model}.downloaded.json",
    params:
        spec=lambda wildcards: model_spec_json(wildcards.model),
    log:
        "logs/download_model/{model}.log",
    benchmark:
        benchmark_file("download_model/{model}.tsv")
    localrule: True
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval download-model --spec {params.spec:q} --out {output.marker:q} > {log:q} 2>&1"


# `tiny_models`: local model folders with random (seeded) weights, written by `rmeval tiny-model` -- the demo's
# models (config/demo.yaml), so that a fresh clone runs the whole workflow with nothing to download.
if PLAN.built:

    rule tiny_model:
        output:
            folder=directory("{tiny_folder}"),
        params:
            seed=lambda wildcards: PLAN.built[wildcards.tiny_folder].seed,
            kind=lambda wildcards: PLAN.built[wildcards.tiny_folder].kind,
        wildcard_constraints:
            tiny_folder=one_of(PLAN.built),
        log:
            "logs/tiny_model/{tiny_folder}.log",
        localrule: True
        threads: 1
        conda:
            "../../envs/rmeval.yaml"
        shell:
            "rmeval tiny-model {output.folder:q} --seed {params.seed} --kind {params.kind} > {log:q} 2>&1"
