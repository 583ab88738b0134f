# The group-fairness benchmark (Song et al. 2025): arXiv papers per group (fairness_arxiv.smk) -> one score file per
# (model, group) (the shared score rule, scoring.smk) -> statistics (the paper's Tables 1-4 and the extended tables)
# -> figures (fairness_figures.smk); its parts of the reproduction table and results/summary.md are written by
# the run-level rules (run.smk). Pure numpy/scipy/statsmodels after scoring: no torch, no GPU. The files these
# rules write, and the tables each of them reads, are declared once in rmeval.benchmarks.fairness.catalogue; what
# a run does is planned by rmeval.benchmarks.fairness.planner.
FAIRNESS = PLAN.own("fairness")
GROUPS = list(FAIRNESS.groups)
FAIRNESS_SPECS = PLAN.benchmarks["fairness"].models
FAIRNESS_SCORES = PLAN.score_files("fairness")


include: "arxiv.smk"
include: "figures.smk"


rule fairness_stats:
    input:
        scores=FAIRNESS_SCORES,
    output:
        **rule_outputs("fairness", "fairness_stats"),
    params:
        scores_dir=lambda wildcards, input: str(Path(input.scores[0]).parents[1]),
        out_dir=subpath(output.table1, parent=True),
        models=list(FAIRNESS_SPECS),
        groups=GROUPS,
        # null reference_model -> "" -> Table 4 skipped with a note
        reference=config["reference_model"] or "",
        registry=config_path(config["registry"]),
        # ranks of inline config models too, not only registry entries
        ranks=json.dumps({name: spec.rewardbench_rank for name, spec in FAIRNESS_SPECS.items()}),
        alpha=config["stats"]["alpha"],
        bootstrap=config["stats"]["bootstrap"],
        permutations=config["stats"]["permutations"],
        seed=config["stats"]["seed"],
        # the manifests arxiv_select wrote beside the data the scores were computed on
        manifests="results/data",
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
        "rmeval fairness-stats --scores {params.scores_dir:q} --out {params.out_dir:q}"
        " --models {params.models:q} --groups {params.groups:q}"
        " --reference-model={params.reference:q} --registry {params.registry:q} --ranks {params.ranks:q}"
        " --manifests {params.manifests:q} --alpha {params.alpha} --bootstrap {params.bootstrap}"
        " --permutations {params.permutations} --seed {params.seed} > {log:q} 2>&1"

