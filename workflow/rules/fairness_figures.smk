# The fairness figures, drawn from the tables of `fairness_stats` (no torch, no GPU); included by fairness.smk.
# The PNGs go into `snakemake --report`, each with a caption; the PDFs are for papers. The figures, their tables
# and captions are declared in rmeval.benchmarks.fairness.catalogue.


rule fairness_figures:
    input:
        **rule_inputs("fairness", "fairness_figures"),
    output:
        **rule_outputs("fairness", "fairness_figures"),
    params:
        tables_dir=subpath(input.group_means, parent=True),
        out_dir=subpath(output.fig2, parent=True),
        settings=stage_settings("fairness", "fairness_figures"),
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
        "rmeval fairness-figures --tables {params.tables_dir:q} --out {params.out_dir:q} --settings {params.settings:q}"
        " > {log:q} 2>&1"
