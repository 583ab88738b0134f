# The RewardMATH branch (Kim et al. 2024, arXiv:2410.01729): prepare -> score (one job per model x MATH
# subject, plus RewardBench math-prm) -> metrics -> figure. Enabled by `rewardmath.enabled: true`.
# The subject list comes from the config (no checkpoint): prepare always writes all seven subject tables.
import shlex

from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_STEM, SUBJECT_SLUGS

RM_SUBJECTS = list(REWARDMATH.get("subjects") or SUBJECT_SLUGS)
RM_ALL_TABLES = [*SUBJECT_SLUGS, REWARDBENCH_STEM]
RM_MODELS = list(REWARDMATH_SPECS)
RM_WITH_REWARDBENCH = REWARDMATH.get("rewardbench_source", "hf") != "none"
RM_SCORED_TABLES = RM_SUBJECTS + ([REWARDBENCH_STEM] if RM_WITH_REWARDBENCH else [])
# Optional official result files, ingested into the same tables: `rmeval rewardmath-metrics` flag -> path.
RM_OFFICIAL = {
    "--official": REWARDMATH.get("official_dir"),
    "--official-rewardbench": REWARDMATH.get("official_rewardbench_dir"),
    "--problems": REWARDMATH.get("problems"),
}
RM_OFFICIAL = {flag: config_path(value) for flag, value in RM_OFFICIAL.items() if value}
# Local data files (named after their `rmeval rewardmath-prepare` flag), so that editing them re-runs prepare.
RM_LOCAL_INPUTS = {
    key: config_path(REWARDMATH[key])
    for key, source_key in (("path", "source"), ("rewardbench_path", "rewardbench_source"))
    if REWARDMATH.get(source_key, "hf") == "local" and REWARDMATH.get(key)
}
if REWARDMATH_ENABLED and not RM_MODELS and "--official" not in RM_OFFICIAL:
    raise WorkflowError("config: rewardmath is enabled but has neither `models` nor `official_dir`")
RM_TABLE_FILES = {
    "metrics": "results/tables/rewardmath_metrics.csv",
    "metrics_md": "results/tables/rewardmath_metrics.md",
    "metrics_tex": "results/tables/rewardmath_metrics.tex",
    "metrics_ci": "results/tables/rewardmath_metrics_ci.csv",
    "breakdown": "results/tables/rewardmath_breakdown.csv",
    "rewardbench": "results/tables/rewardbench_math_prm_accuracy.csv",
    "rewardbench_md": "results/tables/rewardbench_math_prm_accuracy.md",
    "rewardbench_tex": "results/tables/rewardbench_math_prm_accuracy.tex",
    "side_by_side": "results/tables/rewardmath_vs_rewardbench.csv",
    "side_by_side_md": "results/tables/rewardmath_vs_rewardbench.md",
    "side_by_side_tex": "results/tables/rewardmath_vs_rewardbench.tex",
}
RM_FIGURES = ["results/figures/rewardmath_vs_rewardbench.png", "results/figures/rewardmath_vs_rewardbench.pdf"]
RM_SUMMARY = "results/rewardmath/summary.md"
RM_PRM_AGGREGATION = REWARDMATH.get("prm_aggregation", "prod")
# LLM judges (adapter `judge`): pairwise ones read the tables with recorded chosen positions; every judge's scores
# are also written in the official result-file layout (results/rewardmath/official/{model}.json).
RM_JUDGES = [name for name in RM_MODELS if REWARDMATH_SPECS[name].judge_mode]
RM_PAIRWISE = [name for name in RM_MODELS if REWARDMATH_SPECS[name].judge_mode == "pairwise"]
RM_POSITIONS = REWARDMATH.get("pairwise_positions") or ("hf" if REWARDMATH.get("source", "hf") == "hf" else None)
if RM_POSITIONS is None and RM_PAIRWISE:
    _recorded = [n for n in RM_PAIRWISE if REWARDMATH_SPECS[n].options.get("positions", "recorded") == "recorded"]
    if _recorded:
        raise WorkflowError(
            f"config: pairwise judge(s) {_recorded} show the chosen solution at its recorded position, but "
            "rewardmath.pairwise_positions is not set (a local RewardMATH_pairwise file or *_pairwise_reward.json, "
            "hf, or seeded)"
        )
    RM_POSITIONS = "seeded"
RM_POSITION_FILE = {"positions": config_path(RM_POSITIONS)} if RM_POSITIONS not in (None, "hf", "seeded") else {}
RM_EXPORTS = expand("results/rewardmath/official/{model}.json", model=RM_JUDGES)
RM_OUTPUTS = [*RM_TABLE_FILES.values(), *RM_FIGURES, RM_SUMMARY, *RM_EXPORTS]


wildcard_constraints:
    rm_table="|".join(RM_ALL_TABLES),


rule rewardmath_prepare:
    input:
        **RM_LOCAL_INPUTS,
    output:
        tables=expand("results/rewardmath/data/{rm_table}.parquet", rm_table=RM_ALL_TABLES),
        manifest="results/rewardmath/data/manifest.json",
    params:
        out=subpath(output.manifest, parent=True),
        source=REWARDMATH.get("source", "hf"),
        local_files=lambda wildcards, input: " ".join(
            f"--{key.replace('_', '-')} {shlex.quote(str(value))}" for key, value in input.items()
        ),
        rb_source=REWARDMATH.get("rewardbench_source", "hf"),
        # Hub split / revision flags, only for the keys the config sets.
        hub=" ".join(
            f"--{key.replace('_', '-')} {shlex.quote(str(REWARDMATH[key]))}"
            for key in ("split", "revision", "rewardbench_split", "rewardbench_revision")
            if REWARDMATH.get(key)
        ),
    localrule: True
    log:
        "logs/rewardmath/prepare.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-prepare --source {params.source} --rewardbench-source {params.rb_source}"
        " {params.local_files} {params.hub} --out {params.out:q} > {log:q} 2>&1"


rule rewardmath_positions:
    input:
        tables=expand("results/rewardmath/data/{rm_table}.parquet", rm_table=RM_ALL_TABLES),
        **RM_POSITION_FILE,
    output:
        tables=expand("results/rewardmath/pairwise/{rm_table}.parquet", rm_table=RM_ALL_TABLES),
        summary="results/rewardmath/pairwise/positions.json",
    params:
        data=lambda wildcards, input: str(Path(input.tables[0]).parent),
        positions=RM_POSITION_FILE.get("positions", RM_POSITIONS),
        out=subpath(output.summary, parent=True),
    localrule: True
    log:
        "logs/rewardmath/positions.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-positions --data {params.data:q} --positions {params.positions:q} --out {params.out:q}"
        " > {log:q} 2>&1"


rule rewardmath_score:
    input:
        data=rewardmath_score_data,
        downloaded="results/models/{model}.downloaded.json",
    output:
        scores="results/rewardmath/scores/{model}/{rm_table}.parquet",
        meta="results/rewardmath/scores/{model}/{rm_table}.meta.json",
    params:
        spec=lambda wildcards: model_spec_json(wildcards.model),
        locked=lambda wildcards: locked_revision_flag(wildcards.model),
        engine=SCORING_FLAGS,  # the `scoring:` engine settings, shared with score_fairness (scoring.smk)
    log:
        "logs/rewardmath/score/{model}/{rm_table}.log",
    benchmark:
        benchmark_file("rewardmath_score/{model}/{rm_table}.tsv")
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
        "HF_HUB_OFFLINE=1 rmeval score --spec {params.spec:q} --task pairs --input {input.data:q} --output {output.scores:q}"
        " --meta {output.meta:q} --threads {threads} {params.engine} {params.locked} > {log:q} 2>&1"


rule rewardmath_metrics:
    input:
        data=expand("results/rewardmath/data/{rm_table}.parquet", rm_table=RM_ALL_TABLES),
        scores=expand("results/rewardmath/scores/{model}/{rm_table}.parquet", model=RM_MODELS, rm_table=RM_SCORED_TABLES),
        official=list(RM_OFFICIAL.values()),
        registry=config_path(config.get("registry", "config/models.yaml")),
    output:
        metrics=report(
            RM_TABLE_FILES["metrics"],
            caption="../report/rewardmath_metrics.rst",
            category="RewardMATH",
            labels={"table": "RewardMATH accuracy and MRR"},
        ),
        metrics_md=RM_TABLE_FILES["metrics_md"],
        metrics_tex=RM_TABLE_FILES["metrics_tex"],
        metrics_ci=report(
            RM_TABLE_FILES["metrics_ci"],
            caption="../report/rewardmath_metrics_ci.rst",
            category="RewardMATH",
            labels={"table": "RewardMATH with bootstrap CIs"},
        ),
        breakdown=report(
            RM_TABLE_FILES["breakdown"],
            caption="../report/rewardmath_breakdown.rst",
            category="RewardMATH",
            labels={"table": "RewardMATH by subject and level"},
        ),
        rewardbench=report(
            RM_TABLE_FILES["rewardbench"],
            caption="../report/rewardbench_math_prm.rst",
            category="RewardMATH",
            labels={"table": "RewardBench math-prm accuracy"},
        ),
        rewardbench_md=RM_TABLE_FILES["rewardbench_md"],
        rewardbench_tex=RM_TABLE_FILES["rewardbench_tex"],
        side_by_side=report(
            RM_TABLE_FILES["side_by_side"],
            caption="../report/rewardmath_vs_rewardbench.rst",
            category="RewardMATH",
            labels={"table": "RewardMATH next to RewardBench math-prm"},
        ),
        side_by_side_md=RM_TABLE_FILES["side_by_side_md"],
        side_by_side_tex=RM_TABLE_FILES["side_by_side_tex"],
    params:
        workflow_scores=lambda wildcards, input: (
            f"--scores {shlex.quote(str(Path(input.scores[0]).parents[1]))} --models {' '.join(RM_MODELS)}"
            f" --subjects {' '.join(RM_SUBJECTS)}"
            if RM_MODELS
            else ""
        ),
        official=" ".join(f"{flag} {shlex.quote(path)}" for flag, path in RM_OFFICIAL.items()),
        data=lambda wildcards, input: str(Path(input.data[0]).parent),
        out=subpath(output.metrics, parent=True),
        bootstrap=REWARDMATH.get("bootstrap", 1000),
        seed=REWARDMATH.get("seed", 0),
        prm_aggregation=RM_PRM_AGGREGATION,
    localrule: True
    log:
        "logs/rewardmath/metrics.log",
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-metrics {params.workflow_scores} {params.official} --data {params.data:q}"
        " --registry {input.registry:q} --prm-aggregation {params.prm_aggregation}"
        " --out {params.out:q} --bootstrap {params.bootstrap} --seed {params.seed} > {log:q} 2>&1"


rule rewardmath_export:
    input:
        data=expand("results/rewardmath/data/{rm_table}.parquet", rm_table=RM_SUBJECTS),
        scores=expand("results/rewardmath/scores/{{model}}/{rm_table}.parquet", rm_table=RM_SUBJECTS),
    output:
        "results/rewardmath/official/{model}.json",
    params:
        data=lambda wildcards, input: str(Path(input.data[0]).parent),
        scores=lambda wildcards, input: str(Path(input.scores[0]).parents[1]),
        subjects=" ".join(RM_SUBJECTS),
    localrule: True
    log:
        "logs/rewardmath/export/{model}.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-export --model {wildcards.model:q} --scores {params.scores:q} --data {params.data:q}"
        " --subjects {params.subjects} --out {output:q} > {log:q} 2>&1"


rule rewardmath_figures:
    input:
        RM_TABLE_FILES["side_by_side"],
    output:
        png=report(
            RM_FIGURES[0],
            caption="../report/rewardmath_figure.rst",
            category="RewardMATH",
            labels={"figure": "RewardBench math vs RewardMATH"},
        ),
        pdf=RM_FIGURES[1],
    params:
        prm_aggregation=RM_PRM_AGGREGATION,
    localrule: True
    log:
        "logs/rewardmath/figures.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-figures --table {input:q} --png {output.png:q} --pdf {output.pdf:q}"
        " --prm-aggregation {params.prm_aggregation} > {log:q} 2>&1"


rule rewardmath_summary:
    input:
        RM_TABLE_FILES["side_by_side"],
    output:
        report(
            RM_SUMMARY,
            caption="../report/rewardmath_summary.rst",
            category="RewardMATH",
            labels={"summary": "RewardMATH in plain words"},
        ),
    params:
        prm_aggregation=RM_PRM_AGGREGATION,
    localrule: True
    log:
        "logs/rewardmath/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval rewardmath-summary --table {input:q} --out {output:q}"
        " --prm-aggregation {params.prm_aggregation} > {log:q} 2>&1"
