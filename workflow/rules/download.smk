# Model weights: fetched once per model, on the machine that has internet (a cluster's login node:
# `localrule`), into the shared HF_HOME; scoring jobs load that snapshot offline. Local folders and
# API-only models write the marker without downloading anything.


rule download_model:
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
