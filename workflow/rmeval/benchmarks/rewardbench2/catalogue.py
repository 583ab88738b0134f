"""RewardBench 2 (Malik et al. 2025, arXiv:2506.01937): every completion of every prompt scored through the shared
score rule, then best-of-N per subset, the official Ties score and the overall mean. Enabled by
`rewardbench2.enabled: true`. Its code is the `rewardbench` package's (one code path for both versions).

Import-free (read at Snakefile parse time).
"""

from __future__ import annotations

from rmeval.benchmarks.catalogue import Benchmark, ModelComparison, Output, ScoreStage, score_path

NAME = "rewardbench2"
METRICS_RULE = "rewardbench2_metrics"
SCORE_RULE = "rewardbench2_score"

BENCHMARK = Benchmark(
    name=NAME,
    title="RewardBench 2 (Malik et al. 2025)",
    rule_file="workflow/rules/rewardbench.smk",
    enabled_by=NAME,
    order=31,
    config_schema="rmeval.benchmarks.rewardbench2:config.schema.yaml",
    planner="rmeval.benchmarks.rewardbench2.plan:plan",
    models_key="rewardbench2.models",
    score_stages=(ScoreStage(rule=SCORE_RULE, scores=score_path(NAME), task="pairs",
                             log="logs/rewardbench2/score/{model}/{table}.log"),),
    lock_section="rmeval.benchmarks.rewardbench.lock:V2_LOCK_SECTION",
    outputs=(
        Output("scores", "results/tables/rewardbench2_scores.csv", METRICS_RULE, caption="rewardbench2_scores.rst",
               category="RewardBench 2", labels={"table": "RewardBench 2 scores"},
               builder="rmeval.benchmarks.rewardbench.tables:v2_scores_table", formats=("md", "tex")),
        # One per model (rewardbench2.smk expands it): its subset scores in the official results layout.
        Output("export", "results/rewardbench2/official/{model}.json", "rewardbench2_export",
               builder="rmeval.benchmarks.rewardbench.cli_metrics:export_main"),
        # Each model's overall score, for the fairness benchmark's fairness_vs_capability (`capability` below).
        Output("capability", "results/tables/rewardbench2_capability.csv", METRICS_RULE,
               builder="rmeval.benchmarks.rewardbench.tables:capability_table"),
    ),
    capability="capability",
    summary_section="rmeval.benchmarks.rewardbench.summary:summary_section",
    summary_inputs=("scores",),  # its Overall rows, with their mode (a baseline is named as one)
    report_section="rewardbench2_section.rst",
    # Which model is better on the same prompts (rmeval compare): subsets, sections, overall (rewardbench/compare.py)
    compare=ModelComparison(provider="rmeval.benchmarks.rewardbench.compare:comparison_part", reads_items=True),
    # The authors' per-prompt results of the models they ran, as models (adapter `published`)
    published_reader="rmeval.benchmarks.rewardbench.published:V2_READER",
)
