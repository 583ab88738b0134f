"""RewardBench (Lambert et al. 2024): every pair's chosen and rejected completion scored through the shared score
rule, then the official per-subset accuracies and section scores. Enabled by `rewardbench.enabled: true`.

RewardBench 2 is its own benchmark (package `rewardbench2`, section `rewardbench2:`): discovery reads one
catalogue per package and a benchmark is enabled by one section, so the two versions are two benchmarks; the
loading, scoring and table code lives here and the `rewardbench2` package names it.

Import-free (read at Snakefile parse time): builders and commands are "module:function" strings.
"""

from __future__ import annotations

from rmeval.benchmarks.catalogue import Benchmark, Command, ModelComparison, Output, ScoreStage, score_path

NAME = "rewardbench"
CATEGORY = "RewardBench"
METRICS_RULE = "rewardbench_metrics"
SCORE_RULE = "rewardbench_score"
TABLES = "rmeval.benchmarks.rewardbench.tables"
FORMATS = ("md", "tex")

BENCHMARK = Benchmark(
    name=NAME,
    title="RewardBench (Lambert et al. 2024)",
    rule_file="workflow/rules/rewardbench.smk",
    enabled_by=NAME,
    order=30,
    config_schema="rmeval.benchmarks.rewardbench:config.schema.yaml",
    planner="rmeval.benchmarks.rewardbench.plan:plan",
    models_key="rewardbench.models",
    score_stages=(ScoreStage(rule=SCORE_RULE, scores=score_path(NAME), task="pairs",
                             log="logs/rewardbench/score/{model}/{table}.log"),),
    commands=(
        Command("rewardbench-prepare", "rmeval.benchmarks.rewardbench.prepare",
                "RewardBench 1 or 2 rows (Hub or local file) -> one row per completion to score."),
        Command("rewardbench-metrics", "rmeval.benchmarks.rewardbench.cli_metrics",
                "RewardBench 1 or 2 scores per subset (official rules) -> tables."),
        Command("rewardbench-export", "rmeval.benchmarks.rewardbench.cli_metrics:export_main",
                "One model's RewardBench 1 or 2 scores in the official results layout."),
    ),
    lock_section="rmeval.benchmarks.rewardbench.lock:V1_LOCK_SECTION",
    outputs=(
        Output("scores", "results/tables/rewardbench_scores.csv", METRICS_RULE, caption="rewardbench_scores.rst",
               category=CATEGORY, labels={"table": "RewardBench accuracy per subset"},
               builder=f"{TABLES}:v1_subsets_table", formats=FORMATS),
        Output("sections", "results/tables/rewardbench_sections.csv", METRICS_RULE,
               caption="rewardbench_sections.rst", category=CATEGORY,
               labels={"table": "RewardBench section scores"}, builder=f"{TABLES}:v1_sections_table",
               formats=FORMATS),
        # One per model (rewardbench.smk expands it): its subset scores in the official results layout.
        Output("export", "results/rewardbench/official/{model}.json", "rewardbench_export",
               builder="rmeval.benchmarks.rewardbench.cli_metrics:export_main"),
        # Each model's overall score, for the fairness benchmark's fairness_vs_capability (`capability` below).
        Output("capability", "results/tables/rewardbench_capability.csv", METRICS_RULE,
               builder="rmeval.benchmarks.rewardbench.tables:capability_table"),
    ),
    capability="capability",
    summary_section="rmeval.benchmarks.rewardbench.summary:summary_section",
    # its Overall rows, with their mode (a baseline is named as one); the subsets that ran (a partial run is marked)
    summary_inputs=("sections", "scores"),
    report_section="rewardbench_section.rst",
    # Which model is better on the same prompts (rmeval compare): subsets, sections, overall (rewardbench/compare.py)
    compare=ModelComparison(provider="rmeval.benchmarks.rewardbench.compare:comparison_part", reads_items=True),
    # The authors' per-prompt results of the models they ran, as models (adapter `published`)
    published_reader="rmeval.benchmarks.rewardbench.published:V1_READER",
)
