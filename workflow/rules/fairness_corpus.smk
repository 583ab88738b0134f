# The fairness benchmark's data from a grouped corpus (`corpus:`): a local table or a Hugging Face dataset ->
# results/data/{group}.parquet (+ manifest), the contract the arXiv stage writes (fairness_arxiv.smk, not
# included then). Included by fairness.smk; the settings come from its plan (rmeval.benchmarks.fairness.planner).


wildcard_constraints:
    group=one_of(GROUPS),


rule corpus_prepare:
    input:
        corpus=FAIRNESS.corpus.inputs,
    output:
        data=expand("results/data/{group}.parquet", group=GROUPS),
        manifests=expand("results/data/{group}.manifest.json", group=GROUPS),
    params:
        # the corpus section, the groups in config order; a function, so that a prompt_template's {column}
        # fields are not taken for wildcards
        settings=lambda wildcards: stage_settings("fairness", "corpus_prepare"),
    localrule: True
    log:
        "logs/corpus_prepare.log",
    conda:
        "../../envs/rmeval.yaml"
    # Dropped labels, warnings and errors go to the log and to the console.
    shell:
        ": > {log:q}; rmeval corpus-prepare --settings {params.settings:q} 2>&1 >> {log:q} | tee -a {log:q} >&2"
