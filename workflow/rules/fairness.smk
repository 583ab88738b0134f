# The group-fairness benchmark (Song et al. 2025): arXiv papers per group (fairness_arxiv.smk) -> one score file per
# (model, group) (the shared score rule, scoring.smk) -> statistics (the paper's Tables 1-4 and the extended tables)
# -> figures (fairness_figures.smk); its parts of the reproduction table and results/summary.md are written by
# the run-level rules (run.smk). Pure numpy/scipy/statsmodels after scoring: no torch, no GPU. The files these
# rules write, and the tables each of them reads, are declared once in rmeval.benchmarks.fairness.catalogue; what
# a run does is planned by rmeval.benchmarks.fairness.planner.
FAIRNESS = PLAN.own("fairness")
GROUPS = list(FAIRNESS.groups)


# The data: arXiv papers (fairness_arxiv.smk), or with `corpus:` a grouped corpus (fairness_corpus.smk), whose
# rows land in the same results/data/{group}.parquet + manifest; arXiv's rules are not defined then.
if FAIRNESS.corpus:

    include: "fairness_corpus.smk"

else:

    include: "fairness_arxiv.smk"


# A paired corpus adds the paired design's tables (fairness_stats) and figure (fairness_figures): catalogued
# outputs with `when="paired"`, which its plan sets (rule_outputs / rule_inputs keep them out otherwise).
include: "fairness_figures.smk"


rule fairness_stats:
    input:
        scores=PLAN.score_files("fairness"),
    output:
        **rule_outputs("fairness", "fairness_stats"),
    params:
        scores_dir=lambda wildcards, input: str(Path(input.scores[0]).parents[1]),
        out_dir=subpath(output.table1, parent=True),
        # models and groups in config order, the reference, ranks (inline models' too), stats:, the manifests
        settings=stage_settings("fairness", "fairness_stats"),
    localrule: True
    log:
        "logs/fairness_stats.log",
    benchmark:
        benchmark_file("fairness_stats.tsv")
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval fairness-stats --scores {params.scores_dir:q} --out {params.out_dir:q} --settings {params.settings:q}"
        " > {log:q} 2>&1"


rule fairness_capability:
    input:
        **rule_inputs("fairness", "fairness_capability"),
        capability=FAIRNESS.capability_files,  # the enabled benchmarks' declared capability files
    output:
        **rule_outputs("fairness", "fairness_capability"),
    params:
        tables_dir=subpath(input.table1, parent=True),
        out_dir=subpath(output.capability, parent=True),
        # the capability files, the models' published ranks, permutations, seed, dpi, the figure unless skipped
        settings=stage_settings("fairness", "fairness_capability"),
    localrule: True
    log:
        "logs/fairness_capability.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval fairness-capability --tables {params.tables_dir:q} --out {params.out_dir:q}"
        " --settings {params.settings:q} > {log:q} 2>&1"


rule fairness_calibrate:
    input:
        scores=PLAN.score_files("fairness"),
    output:
        **rule_outputs("fairness", "fairness_calibrate"),
    params:
        scores_dir=lambda wildcards, input: str(Path(input.scores[0]).parents[1]),
        out_dir=subpath(output.calibration, parent=True),
        # stats.calibration.replicates, alpha, seed, the models and groups in config order
        settings=stage_settings("fairness", "fairness_calibrate"),
    localrule: True
    log:
        "logs/fairness_calibrate.log",
    benchmark:
        benchmark_file("fairness_calibrate.tsv")
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval fairness-calibrate --scores {params.scores_dir:q} --out {params.out_dir:q}"
        " --settings {params.settings:q} > {log:q} 2>&1"
