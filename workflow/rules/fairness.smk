# Stage 3: group-fairness statistics (the paper's Tables 1-4 and the extended tables). Pure numpy/scipy/statsmodels:
# no torch, no GPU. The files this rule writes are declared once in rmeval.benchmarks.fairness.catalogue; the
# fairness parts of the reproduction table and of results/summary.md are written by the run-level rules (run.smk).

# Every score file is a target: a deleted one is rebuilt by a plain rerun, not left "missing, no update"
# because the tables built from it are newer than the files left.
BENCHMARK_EXTRA_TARGETS["fairness"] = fairness_score_files


rule fairness_stats:
    input:
        scores=fairness_score_files(),
    output:
        **rule_outputs("fairness", "fairness_stats"),
    params:
        scores_dir=lambda wildcards, input: str(Path(input.scores[0]).parents[1]),
        out_dir=subpath(output.table1, parent=True),
        models=MODEL_NAMES,
        groups=GROUPS,
        # null reference_model -> "" -> Table 4 skipped with a note
        reference=config["reference_model"] or "",
        registry=config_path(config["registry"]),
        # ranks of inline config models too, not only registry entries
        ranks=json.dumps({name: spec.rewardbench_rank for name, spec in MODEL_SPECS.items()}),
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

