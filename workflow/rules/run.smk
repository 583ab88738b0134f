# Run-level outputs: the files that belong to the whole run, each gathered from every enabled benchmark's own part
# (rmeval.run_outputs): the reproduction table (our numbers beside the published ones), the paired comparisons and
# the leaderboard (rmeval compare), results/summary.md and the report's front-page sections. Which files each benchmark's part reads and the rules' settings are planned once in
# rmeval.run_outputs.plan from the benchmarks' catalogues; the files written are declared in
# rmeval.run_outputs.catalogue. No benchmark is named here.
from rmeval.run_outputs.compare.plan import ComparePlan, baseline_models
from rmeval.run_outputs.plan import RunOutputsPlan
from rmeval.run_outputs.report import FRONT_PAGE, write_front_page
from rmeval.run_outputs.strays import not_from_this_run

# The files in results/ an earlier run wrote and this one does not: the summary and the report name them.
STRAYS = [stray.as_json() for stray in not_from_this_run(Path.cwd(), all_outputs())]
RUN_OUTPUTS = RunOutputsPlan.from_config(
    config, REPOSITORY, tuple(PLAN.random_weight_models), PLAN.skipped_outputs, baseline_models(PLAN.all_specs),
    STRAYS,
)
try:
    COMPARE = ComparePlan.from_run(config, PLAN)
except RmevalError as error:
    raise WorkflowError(str(error))


# The report's front page: workflow/report/workflow.rst with the enabled benchmarks' sections, composed into the
# run's .snakemake folder (rmeval.run_outputs.report); the config is left as it was hashed for the lock.
FRONT_PAGE_FILE = write_front_page(
    RUN_OUTPUTS.report_sections,
    REPOSITORY / "workflow" / "report",
    Path(FRONT_PAGE),
    RUN_OUTPUTS.report_skipped,
    RUN_OUTPUTS.report_tail,
)


report: str(FRONT_PAGE_FILE)


rule run_reproduction:
    input:
        **RUN_OUTPUTS.reproduction_inputs,
    output:
        **run_rule_outputs("run_reproduction"),
    params:
        # the enabled benchmarks, stats.alpha, the published-values files (the inputs above), their options
        settings=RUN_OUTPUTS.reproduction_settings,
    localrule: True
    log:
        "logs/run_reproduction.log",
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval run-reproduction --settings {params.settings:q} > {log:q} 2>&1"


# Which model is better: every pair of models (or each against `compare.baseline`, or `compare.pairs`) on every
# benchmark that declares a comparison, from its score files and prepared items; the leaderboard; then its figure.
rule run_compare:
    input:
        **COMPARE.inputs,
    output:
        **run_rule_outputs("run_compare"),
    params:
        # the benchmarks and their models, the trivial baselines, compare.baseline / pairs, stats alpha/bootstrap/seed
        settings=COMPARE.settings,
    localrule: True
    log:
        "logs/run_compare.log",
    benchmark:
        benchmark_file("run_compare.tsv")
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval compare --settings {params.settings:q} > {log:q} 2>&1"


rule run_compare_figure:
    input:
        leaderboard=RUN_CATALOGUE.get("leaderboard").path,
    output:
        **run_rule_outputs("run_compare_figure"),
    params:
        out=subpath(output.compare_figure, parent=True),
    localrule: True
    log:
        "logs/run_compare_figure.log",
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval compare-figure --leaderboard {input.leaderboard:q} --out {params.out:q} > {log:q} 2>&1"


rule run_summary:
    input:
        **RUN_OUTPUTS.summary_inputs,
    output:
        **run_rule_outputs("run_summary"),
    params:
        settings=RUN_OUTPUTS.summary_settings,
    localrule: True
    log:
        "logs/run_summary.log",
    benchmark:
        benchmark_file("run_summary.tsv")
    threads: 1
    resources:
        mem_mb=1000,
    conda:
        "../../envs/rmeval.yaml"
    shell:
        "rmeval run-summary --settings {params.settings:q} > {log:q} 2>&1"
