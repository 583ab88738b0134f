# Stage 2: one scoring job per (model, group). The job batches to a token budget, checkpoints to
# `<output>.partial/` and resumes after pre-emption. Locally its forward passes run in the run's model
# server for that model (loaded once, holding the GPUs: rmeval.scoring.server); under Slurm, or with
# `scoring.server: false`, the job claims its GPUs itself (rmeval.devices) and loads the model.
# Each registry entry's resources (gpu, mem_mb, runtime, ...) flow into `resources:`.

# The config's `scoring:` section as `rmeval score` flags (rmeval.scoring.settings), shared with rewardmath_score.
SCORING_FLAGS = PLAN.scoring.command_flags()


rule score_fairness:
    input:
        data="results/data/{group}.parquet",
        # Weights are fetched once per model by `download_model` (a local rule); jobs load them offline.
        downloaded="results/models/{model}.downloaded.json",
    output:
        scores="results/scores/{model}/{group}.parquet",
        meta="results/scores/{model}/{group}.meta.json",
    params:
        spec=lambda wildcards: model_spec_json(wildcards.model),
        locked=lambda wildcards: locked_revision_flag(wildcards.model),
        engine=SCORING_FLAGS,
    log:
        "logs/score/{model}/{group}.log",
    benchmark:
        benchmark_file("score_fairness/{model}/{group}.tsv")
    threads: scoring_threads()
    resources:
        gpu=model_resource(None, "gpu"),
        mem_mb=model_resource(None, "mem_mb"),
        runtime=model_resource(None, "runtime"),
        gpu_model=model_resource(None, "gpu_model"),
        slurm_partition=model_resource(None, "slurm_partition"),
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "HF_HUB_OFFLINE=1 rmeval score --spec {params.spec:q} --task fairness --input {input.data:q} --output {output.scores:q}"
        " --meta {output.meta:q} --threads {threads} {params.engine} {params.locked} > {log:q} 2>&1"
