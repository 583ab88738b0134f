# Stage 3: group-fairness statistics (the paper's Tables 1-4 and the extended tables) and the
# plain-words summary. Pure numpy/scipy/statsmodels: no torch, no GPU.


rule fairness_stats:
    input:
        scores=fairness_score_files(),
    output:
        table1=report(
            "results/tables/table1_anova.csv",
            caption="../report/table1_anova.rst",
            category="Fairness tables",
        ),
        table2=report(
            "results/tables/table2_tukey.csv",
            caption="../report/table2_tukey.rst",
            category="Fairness tables",
        ),
        tukey_pairs="results/tables/tukey_pairs.csv",
        table3=report(
            "results/tables/table3_nmgd.csv",
            caption="../report/table3_nmgd.rst",
            category="Fairness tables",
        ),
        table4=report(
            "results/tables/table4_pearson.csv",
            caption="../report/table4_pearson.rst",
            category="Fairness tables",
        ),
        group_means=report(
            "results/tables/group_means.csv",
            caption="../report/group_means.rst",
            category="Fairness tables",
        ),
        table5=report(
            "results/tables/table5_robust_anova.csv",
            caption="../report/table5_robust_anova.rst",
            category="Fairness tables",
        ),
        table6=report(
            "results/tables/table6_games_howell.csv",
            caption="../report/table6_games_howell.rst",
            category="Fairness tables",
        ),
        games_howell_pairs="results/tables/games_howell_pairs.csv",
        table7=report(
            "results/tables/table7_gap.csv",
            caption="../report/table7_gap.rst",
            category="Fairness tables",
        ),
        table8=report(
            "results/tables/table8_length.csv",
            caption="../report/table8_length.rst",
            category="Fairness tables",
        ),
        adjusted_group_means="results/tables/adjusted_group_means.csv",
        correlation_pearson=report(
            "results/tables/correlation_pearson.csv",
            caption="../report/correlation_pearson.rst",
            category="Fairness tables",
        ),
        correlation_spearman=report(
            "results/tables/correlation_spearman.csv",
            caption="../report/correlation_spearman.rst",
            category="Fairness tables",
        ),
        table9=report(
            "results/tables/table9_rank_agreement.csv",
            caption="../report/table9_rank_agreement.rst",
            category="Fairness tables",
        ),
        table10=report(
            "results/tables/table10_rank_vs_fairness.csv",
            caption="../report/table10_rank_vs_fairness.rst",
            category="Fairness tables",
        ),
        rank_points="results/tables/rank_vs_fairness_points.csv",
        record="results/tables/fairness_stats.json",
        provenance=report(
            "results/tables/provenance.md",
            caption="../report/provenance.rst",
            category="Provenance",
        ),
        provenance_json="results/tables/provenance.json",
    params:
        scores_dir=lambda wildcards, input: str(Path(input.scores[0]).parents[1]),
        out_dir=subpath(output.table1, parent=True),
        models=MODEL_NAMES,
        groups=GROUPS,
        # null reference_model -> "" -> Table 4 skipped with a note
        reference=config.get("reference_model", "Nemotron-4-340B-Reward") or "",
        registry=config_path(config.get("registry", "config/models.yaml")),
        # ranks of inline config models too, not only registry entries
        ranks=json.dumps({name: spec.rewardbench_rank for name, spec in MODEL_SPECS.items()}),
        alpha=config.get("stats", {}).get("alpha", 0.05),
        bootstrap=config.get("stats", {}).get("bootstrap", 2000),
        permutations=config.get("stats", {}).get("permutations", 2000),
        seed=config.get("stats", {}).get("seed", 0),
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


# The papers' own numbers (resources/published/), next to this rules file whatever the working directory.
PUBLISHED_DIR = Path(str(workflow.current_basedir)).parents[1] / "resources" / "published"
# Our tables (and RewardMATH's, when that branch runs) against the published values.
REPRODUCTION_INPUTS = {
    "table1": "results/tables/table1_anova.csv",
    "table2": "results/tables/table2_tukey.csv",
    "table3": "results/tables/table3_nmgd.csv",
    "table4": "results/tables/table4_pearson.csv",
    "published": [str(PUBLISHED_DIR / "song2025_fairness.yaml"), str(PUBLISHED_DIR / "kim2024_rewardmath.yaml")],
}
if REWARDMATH_ENABLED:
    REPRODUCTION_INPUTS["rewardmath"] = "results/tables/rewardmath_metrics.csv"


rule fairness_reproduction:
    input:
        **REPRODUCTION_INPUTS,
    output:
        csv=report(
            "results/tables/reproduction.csv",
            caption="../report/reproduction.rst",
            category="Reproduction",
        ),
        md="results/tables/reproduction.md",
        tex="results/tables/reproduction.tex",
    params:
        tables_dir=subpath(input.table1, parent=True),
        rewardmath=(
            f"--rewardmath {REPRODUCTION_INPUTS['rewardmath']}" if "rewardmath" in REPRODUCTION_INPUTS else ""
        ),
        alpha=config.get("stats", {}).get("alpha", 0.05),
    localrule: True
    log:
        "logs/fairness_reproduction.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval fairness-reproduction --tables {params.tables_dir:q} --published {input.published:q}"
        " {params.rewardmath} --alpha {params.alpha} > {log:q} 2>&1"


rule fairness_summary:
    input:
        reproduction="results/tables/reproduction.csv",
        table1="results/tables/table1_anova.csv",
        table2="results/tables/table2_tukey.csv",
        table4="results/tables/table4_pearson.csv",
        group_means="results/tables/group_means.csv",
        table5="results/tables/table5_robust_anova.csv",
        table6="results/tables/table6_games_howell.csv",
        games_howell_pairs="results/tables/games_howell_pairs.csv",
        table7="results/tables/table7_gap.csv",
        table8="results/tables/table8_length.csv",
        table10="results/tables/table10_rank_vs_fairness.csv",
        record="results/tables/fairness_stats.json",
        # The RewardMATH section (rewardmath.smk), appended when that branch runs.
        rewardmath=lambda wildcards: [RM_TABLE_FILES["side_by_side"]] if REWARDMATH_ENABLED else [],
    output:
        "results/summary.md",
    params:
        tables_dir=subpath(input.table1, parent=True),
        rewardmath=lambda wildcards, input, output: (
            f" && rmeval rewardmath-summary --table {shlex.quote(input.rewardmath[0])} --append-to"
            f" {shlex.quote(output[0])} --prm-aggregation {RM_PRM_AGGREGATION}"
            if input.rewardmath
            else ""
        ),
    localrule: True
    log:
        "logs/fairness_summary.log",
    benchmark:
        benchmark_file("fairness_summary.tsv")
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "(rmeval fairness-summary --tables {params.tables_dir:q} --out {output:q}{params.rewardmath}) > {log:q} 2>&1"
