# Stage 2: one scoring job per (model, table) of every benchmark's score stages (its catalogue's `score_stages`,
# planned by rmeval.run_plan: which models score which tables, and the input of each job), all from this one rule.
# The job batches to a token budget, checkpoints to `<output>.partial/` and resumes after pre-emption. Locally its
# forward passes run in the run's model server for that model (loaded once, holding the GPUs:
# rmeval.scoring.server; on free GPUs a busy model gets warm replicas, rmeval.scoring.replicas); under Slurm the same
# server runs inside the model's allocation; in a per-job allocation (`scoring.slurm_grouping: job`) or with
# `scoring.server: false`, the job claims its GPUs itself (rmeval.devices) and loads the model. Each registry entry's resources (gpu, mem_mb, runtime, ...) flow into
# `resources:`; the `scoring:` settings, the stage's task and a locked revision go in `--settings`.

# Under the Slurm executor (`scoring.slurm_grouping: model`, the default) a model's jobs of every score rule form one
# group job: one allocation that loads the model once (rmeval.scoring.slurm_group; CONTRIBUTING.md says why).
resource_scopes:
    rmeval_score_slot="local",


for _jobs in PLAN.score_jobs:
    if not _jobs.models:
        continue

    rule:
        name:
            _jobs.stage.rule
        input:
            data=score_input(_jobs),
            # Weights are fetched once per model by `download_model` (a local rule); jobs load them offline.
            downloaded="results/models/{model}.downloaded.json",
        output:
            scores=_jobs.stage.scores,
            meta=_jobs.stage.meta,
        params:
            spec=lambda wildcards: model_spec_json(wildcards.model),
            settings=score_settings(_jobs),
        log:
            _jobs.stage.log,
        benchmark:
            benchmark_file(_jobs.stage.timings)
        wildcard_constraints:
            model=one_of(_jobs.models),
            table=one_of(_jobs.tables),
        group:
            score_group
        threads: scoring_threads()
        resources:
            rmeval_score_slot=score_slot,
            gpu=model_resource("gpu"),
            mem_mb=model_resource("mem_mb"),
            runtime=model_runtime,
            gpu_model=model_resource("gpu_model"),
            slurm_partition=model_resource("slurm_partition"),
        conda:
            "../../envs/rmeval.yaml"
        shell:
            "HF_HUB_OFFLINE=1 rmeval score --spec {params.spec:q} --input {input.data:q} --output {output.scores:q}"
            " --meta {output.meta:q} --threads {threads} --settings {params.settings:q} > {log:q} 2>&1"
