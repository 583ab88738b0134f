# Stage 4: the fairness figures, drawn from the tables of `fairness_stats` (no torch, no GPU).
# The PNGs go into `snakemake --report`, each with a caption; the PDFs are for papers.


rule fairness_figures:
    input:
        group_means="results/tables/group_means.csv",
        gap="results/tables/table7_gap.csv",
        adjusted="results/tables/adjusted_group_means.csv",
        rank_points="results/tables/rank_vs_fairness_points.csv",
    output:
        fig2=report(
            "results/figures/fig2_group_means.png",
            caption="../report/fig2_group_means.rst",
            category="Fairness figures",
            labels={"figure": "Figure 2", "shows": "mean reward by group, 95% CI"},
        ),
        fig2_pdf="results/figures/fig2_group_means.pdf",
        fig3=report(
            "results/figures/fig3_standardized.png",
            caption="../report/fig3_standardized.rst",
            category="Fairness figures",
            labels={"figure": "Figure 3", "shows": "z-scored group means, model x group"},
        ),
        fig3_pdf="results/figures/fig3_standardized.pdf",
        gap_forest=report(
            "results/figures/fig_gap_forest.png",
            caption="../report/fig_gap_forest.rst",
            category="Fairness figures",
            labels={"figure": "Gap forest plot", "shows": "scale-free gap per model, 95% CI"},
        ),
        gap_forest_pdf="results/figures/fig_gap_forest.pdf",
        length_adjusted=report(
            "results/figures/fig_length_adjusted.png",
            caption="../report/fig_length_adjusted.rst",
            category="Fairness figures",
            labels={"figure": "Length adjustment", "shows": "length-adjusted vs raw group means"},
        ),
        length_adjusted_pdf="results/figures/fig_length_adjusted.pdf",
        gap_vs_rank=report(
            "results/figures/fig_gap_vs_rank.png",
            caption="../report/fig_gap_vs_rank.rst",
            category="Fairness figures",
            labels={"figure": "Gap vs rank", "shows": "fairness gap against RewardBench rank"},
        ),
        gap_vs_rank_pdf="results/figures/fig_gap_vs_rank.pdf",
    params:
        out_dir=subpath(output.fig2, parent=True),
        dpi=config.get("figures", {}).get("dpi", 200),
    localrule: True
    log:
        "logs/fairness_figures.log",
    benchmark:
        benchmark_file("fairness_figures.tsv")
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval fairness-figures --group-means {input.group_means:q} --gap {input.gap:q}"
        " --adjusted {input.adjusted:q} --rank-points {input.rank_points:q}"
        " --out {params.out_dir:q} --dpi {params.dpi} > {log:q} 2>&1"
