"""Every file the group-fairness benchmark writes, declared once (import-free: read at Snakefile parse time).

The rules' `output:` and `report()` entries (workflow/rules/common.smk `rule_outputs`), the downstream rules'
`input:`, `rule all` and the commands that write the files (`rmeval fairness-stats`, `rmeval fairness-figures`)
all read this list; the run-level rules (workflow/rules/run.smk) read its summary and reproduction parts. Adding a table is a builder function in `stats/builders.py`, one `_table` line below and its
caption under workflow/report/; adding a figure is a module with `draw(*tables) -> Figure`, one `_figure` line and
its caption (and a loader in figures/inputs.py `READERS` when it reads a table no figure read before).
"""

from __future__ import annotations

from rmeval.benchmarks.catalogue import (
    Benchmark,
    Command,
    ModelComparison,
    Output,
    RunPreset,
    ScoreStage,
    score_path,
)

DATA_DIR = "results/data"
DATA = "results/data/{group}.parquet"  # one sampled table per group (the arXiv stage's output)
MANIFEST = "results/data/{group}.manifest.json"  # where it came from (source, counts, seed, versions, sha256)
SCORE_RULE = "score_fairness"
TABLES = "results/tables"
FIGURES = "results/figures"
STATS_RULE = "fairness_stats"
CALIBRATE_RULE = "fairness_calibrate"
CAPABILITY_RULE = "fairness_capability"
FIGURES_RULE = "fairness_figures"
TABLE_BUILDERS = "rmeval.benchmarks.fairness.stats.builders"
FIGURE_MODULES = "rmeval.benchmarks.fairness.figures"
TABLE_FORMATS = ("md", "tex")  # beside each table's CSV: for readers and for papers
PAIRED = "paired"  # the condition of the paired design's outputs (its planner sets it for a paired corpus)
# The conditions of the figures that may have nothing to show: two models with a RewardBench rank; some model with a
# capability value (a rank, or an enabled capability benchmark). Without them the planner says why (`skipped`).
RANKED = "ranked"
CAPABILITY = "capability"
PAIRED_TABLES = "rmeval.benchmarks.fairness.corpus.paired_tables:write_paired"  # all four paired tables at once


def _table(key: str, stem: str, in_report: bool = True) -> Output:
    """A table of `rmeval fairness-stats`, built by the function of `stats/builders.py` named like its file."""
    return Output(
        key=key,
        path=f"{TABLES}/{stem}.csv",
        rule=STATS_RULE,
        caption=f"{stem}.rst" if in_report else None,
        category="Fairness tables" if in_report else None,
        builder=f"{TABLE_BUILDERS}:{stem}",
        formats=TABLE_FORMATS,
    )


def _figure(key: str, stem: str, module: str, inputs: tuple[str, ...], figure: str, shows: str,
            when: str | None = None) -> Output:
    """A figure of `rmeval fairness-figures`: `module.draw(*inputs)` (the keys of the tables, or the run record, it
    is drawn from), saved as PNG (in the report) and PDF."""
    return Output(
        key=key,
        path=f"{FIGURES}/{stem}.png",
        rule=FIGURES_RULE,
        caption=f"{stem}.rst",
        category="Fairness figures",
        labels={"figure": figure, "shows": shows},
        builder=f"{FIGURE_MODULES}.{module}:draw",
        formats=("pdf",),
        inputs=inputs,
        when=when,
    )


BENCHMARK = Benchmark(
    name="fairness",
    title="Group fairness on arXiv abstracts (Song et al. 2025)",
    rule_file="workflow/rules/fairness.smk",
    enabled_by="fairness",
    on_with="groups",  # on while `fairness.enabled` is null and `groups:` is present: older configs run unchanged
    order=10,
    # its own sections: fairness, groups, arxiv or corpus, reference_model, figures, stats.permutations
    config_schema="rmeval.benchmarks.fairness:config.schema.yaml",
    planner="rmeval.benchmarks.fairness.planner:plan",
    models_key="models",
    score_stages=(
        ScoreStage(rule=SCORE_RULE, scores=score_path("fairness"), task="fairness",
                   log="logs/fairness/score/{model}/{table}.log"),
    ),
    tasks={"fairness": "rmeval.benchmarks.fairness.task:fairness_pairs"},
    commands=(
        Command("arxiv-fetch", "rmeval.benchmarks.fairness.arxiv.cli_fetch",
                "Collect single-group candidate papers for one group (API or snapshot)."),
        Command("arxiv-select", "rmeval.benchmarks.fairness.arxiv.cli_select",
                "Drop cross-group titles, sample each group, write data + manifests."),
        Command("arxiv-from-lock", "rmeval.benchmarks.fairness.lock.cli",
                "Rebuild the locked group tables (arxiv.source: lock) from the API's id_list or a snapshot."),
        Command("corpus-prepare", "rmeval.benchmarks.fairness.corpus.cli",
                "A grouped corpus (corpus:) -> one table per group + manifests, as the arXiv stage writes."),
        Command("fairness-stats", "rmeval.benchmarks.fairness.stats.cli",
                "Group-fairness statistics and Tables 1-4 from score files."),
        Command("fairness-calibrate", "rmeval.benchmarks.fairness.stats.calibrate_cli",
                "Test size, power and CI coverage on the run's own rewards (shuffled labels, planted shifts)."),
        Command("fairness-summary", "rmeval.benchmarks.fairness.summary",
                "Plain-words summary of the fairness results (its section alone)."),
        Command("fairness-figures", "rmeval.benchmarks.fairness.figures.cli",
                "Figures 2-3 and the extra fairness figures."),
        Command("fairness-capability", "rmeval.benchmarks.fairness.capability",
                "Fairness statistics against the run's capability scores and published ranks."),
    ),
    outputs=(
        _table("table1", "table1_anova"),
        _table("table2", "table2_tukey"),
        _table("tukey_pairs", "tukey_pairs", in_report=False),
        _table("table3", "table3_nmgd"),
        _table("table4", "table4_pearson"),
        _table("group_means", "group_means"),
        _table("table5", "table5_robust_anova"),
        _table("table6", "table6_games_howell"),
        _table("games_howell_pairs", "games_howell_pairs", in_report=False),
        _table("table7", "table7_gap"),
        _table("table8", "table8_length"),
        _table("adjusted_group_means", "adjusted_group_means", in_report=False),
        _table("correlation_pearson", "correlation_pearson"),
        _table("correlation_spearman", "correlation_spearman"),
        _table("table9", "table9_rank_agreement"),
        _table("table10", "table10_rank_vs_fairness"),
        _table("rank_points", "rank_vs_fairness_points", in_report=False),
        _table("power", "power"),
        # rmeval fairness-calibrate: the tests and the gap CI rerun on shuffled labels and planted shifts
        Output(key="calibration", path=f"{TABLES}/calibration.csv", rule=CALIBRATE_RULE, caption="calibration.rst",
               category="Fairness tables", formats=TABLE_FORMATS,
               builder="rmeval.benchmarks.fairness.stats.calibrate_cli:write_calibration"),
        Output(key="record", path=f"{TABLES}/fairness_stats.json", rule=STATS_RULE),
        Output(key="provenance", path=f"{TABLES}/provenance.md", rule=STATS_RULE, caption="provenance.rst",
               category="Provenance"),
        Output(key="provenance_json", path=f"{TABLES}/provenance.json", rule=STATS_RULE),
        _figure("fig2", "fig2_group_means", "group_means", ("group_means",), "Figure 2",
                "mean reward by group, 95% CI"),
        _figure("fig3", "fig3_standardized", "standardized", ("group_means",), "Figure 3",
                "z-scored group means, model x group"),
        # significance at the run's stats.alpha, from the run record
        _figure("gap_forest", "fig_gap_forest", "gap_forest", ("table7", "record"), "Gap forest plot",
                "scale-free gap per model, 95% CI"),
        _figure("calibration_figure", "fig_calibration", "calibration", ("calibration",), "Calibration",
                "rejection rate against planted effect, analytic power"),
        _figure("length_adjusted", "fig_length_adjusted", "length_adjusted", ("adjusted_group_means",),
                "Length adjustment", "length-adjusted vs raw group means"),
        # drawn only when two models have a RewardBench rank (the planner sets RANKED, or says why not)
        _figure("gap_vs_rank", "fig_gap_vs_rank", "gap_vs_rank", ("rank_points",), "Gap vs rank",
                "fairness gap against RewardBench rank", when=RANKED),
        # Fairness against capability (rmeval fairness-capability): the fairness tables beside the capability
        # files of the enabled benchmarks (their catalogues' `capability`) and the published ranks.
        Output("capability", f"{TABLES}/fairness_vs_capability.csv", CAPABILITY_RULE,
               caption="fairness_vs_capability.rst", category="Fairness tables", formats=TABLE_FORMATS,
               builder="rmeval.benchmarks.fairness.capability:write_tables",
               inputs=("table1", "table5", "table7", "record")),  # the record: which models are baselines
        Output("capability_correlations", f"{TABLES}/fairness_vs_capability_correlations.csv", CAPABILITY_RULE,
               caption="fairness_vs_capability_correlations.rst", category="Fairness tables",
               builder="rmeval.benchmarks.fairness.capability:write_tables", formats=TABLE_FORMATS),
        # A paired corpus (`corpus.columns.pair`): the paired design's tables (`rmeval fairness-stats --pairs`,
        # corpus/paired_tables.py) and figure (`rmeval fairness-figures --paired`, corpus/figure.py).
        Output("table_paired", f"{TABLES}/table_paired.csv", STATS_RULE, caption="table_paired.rst",
               category="Fairness tables", formats=TABLE_FORMATS, builder=PAIRED_TABLES, when=PAIRED),
        Output("paired_groups", f"{TABLES}/paired_groups.csv", STATS_RULE, formats=TABLE_FORMATS,
               builder=PAIRED_TABLES, when=PAIRED),
        Output("paired_posthoc", f"{TABLES}/paired_posthoc.csv", STATS_RULE, formats=TABLE_FORMATS,
               builder=PAIRED_TABLES, when=PAIRED),
        Output("paired_differences", f"{TABLES}/paired_differences.csv", STATS_RULE, builder=PAIRED_TABLES,
               when=PAIRED),
        Output("fig_paired", f"{FIGURES}/fig_paired_differences.png", FIGURES_RULE,
               caption="fig_paired_differences.rst", category="Fairness figures",
               labels={"figure": "Paired differences", "shows": "within-pair difference by group"},
               builder="rmeval.benchmarks.fairness.corpus.figure:draw", formats=("pdf",),
               inputs=("paired_differences",), when=PAIRED),
        Output("capability_figure", f"{FIGURES}/fig_fairness_vs_capability.png", CAPABILITY_RULE,
               caption="fig_fairness_vs_capability.rst", category="Fairness figures",
               labels={"figure": "Fairness vs capability", "shows": "|NMGD| against each capability measure"},
               builder="rmeval.benchmarks.fairness.capability:draw", formats=("pdf",), when=CAPABILITY),
    ),
    lock_section="rmeval.benchmarks.fairness.lock.provider:LOCK_SECTION",
    # Its parts of the run-level outputs (rmeval.run_outputs): the summary's fairness section and its rows of the
    # reproduction table, beside Song et al.'s published values.
    summary_section="rmeval.benchmarks.fairness.summary:summary_section",
    summary_inputs=("table1", "table2", "table4", "group_means", "table5", "table6", "games_howell_pairs", "table7",
                    "table8", "table10", "record", "capability", "capability_correlations", "power",
                    "calibration"),
    reproduction="rmeval.benchmarks.fairness.reproduction:reproduction_part",
    reproduction_inputs=("table1", "table2", "table3", "table4", "table7", "power", "capability"),
    published=("resources/published/song2025_fairness.yaml",),
    report_section="fairness_section.rst",
    # Which model is fairer, on the same papers (rmeval compare): the scale-free gap and Cohen's f of two models,
    # compared by compare.py; its claims test Song et al.'s comparative claims, the top-2 one on `capability`.
    compare=ModelComparison(provider="rmeval.benchmarks.fairness.compare:comparison_part",
                            claims="rmeval.benchmarks.fairness.compare:claims", claims_inputs=("capability",),
                            run_settings={"groups": "groups"},  # config order: a model's gap interval is Table 7's
                            lower_is_better=("scale_free_gap", "cohens_f"),
                            decimals={"scale_free_gap": 3, "cohens_f": 3},
                            labels={"scale_free_gap": "scale-free gap", "cohens_f": "Cohen's f"}),
    # `rmeval run`: the config it writes for this benchmark (run_preset.py)
    run_preset=RunPreset(
        sections="rmeval.benchmarks.fairness.run_preset:sections",
        data=("api", "demo", "snapshot:FILE"),
        data_help="fairness's arXiv papers: api (export.arxiv.org, network; the quick start's 50 per group), demo "
                  "(the sample shipped in resources/demo/, offline: the demo's 30 per group), snapshot:FILE (a "
                  "Kaggle arxiv-metadata-oai-snapshot file, offline)",
        by_default=True,
    ),
)


def made_by(file_name: str) -> str:
    """The command that writes one of this benchmark's files (by its file name), for a "run ... first" message:
    each rule `fairness_x` runs `rmeval fairness-x`."""
    for output in BENCHMARK.outputs:
        if file_name in {name.rsplit("/", 1)[-1] for name in output.files}:
            return f"rmeval {output.rule.replace('_', '-')}"
    return f"rmeval {STATS_RULE.replace('_', '-')}"
