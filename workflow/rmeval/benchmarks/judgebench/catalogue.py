"""JudgeBench (Tan et al., ICLR 2025; ScalerLab/JudgeBench): per split, every response pair judged in both orders
(reward models: each response scored once through the shared score rule; pairwise LLM judges: both orders), scored
by the official rule, per category (knowledge, reasoning, math, coding) and overall. Enabled by
`judgebench.enabled: true`.

Import-free (read at Snakefile parse time): builders and commands are "module:function" strings.
"""

from __future__ import annotations

from rmeval.benchmarks.catalogue import Benchmark, Command, ModelComparison, Output, ScoreStage, score_path

NAME = "judgebench"
CATEGORY = "JudgeBench"
PREPARE_RULE = "judgebench_prepare"
SCORE_RULE = "judgebench_score"
METRICS_RULE = "judgebench_metrics"
ROOT = "results/judgebench"
DATA = f"{ROOT}/data/{{split}}.parquet"  # reward models, direct judges, baselines: one row per response
PAIRWISE_DATA = f"{ROOT}/pairwise/{{split}}.parquet"  # pairwise judges: the winner, the other in both orders
MANIFEST = f"{ROOT}/manifest.json"
PKG = "rmeval.benchmarks.judgebench"
FORMATS = ("md", "tex")

BENCHMARK = Benchmark(
    name=NAME,
    title="JudgeBench (Tan et al. 2025)",
    rule_file="workflow/rules/judgebench.smk",
    enabled_by=NAME,
    order=33,
    config_schema=f"{PKG}:config.schema.yaml",
    planner=f"{PKG}.plan:plan",
    models_key="judgebench.models",
    score_stages=(ScoreStage(rule=SCORE_RULE, scores=score_path(NAME), task="pairs",
                             log="logs/judgebench/score/{model}/{table}.log"),),
    commands=(
        Command("judgebench-prepare", f"{PKG}.prepare",
                "JudgeBench split files (Hub or a local folder) -> the tables to score, and a manifest."),
        Command("judgebench-metrics", f"{PKG}.cli_metrics",
                "JudgeBench score files -> accuracy per category and split (official rule), per-pair results."),
    ),
    lock_section=f"{PKG}.lock:LOCK_SECTION",
    outputs=(
        Output("table", "results/tables/judgebench.csv", METRICS_RULE, caption="judgebench.rst", category=CATEGORY,
               labels={"table": "JudgeBench accuracy"}, builder=f"{PKG}.tables:main_table", formats=FORMATS),
        Output("subsets", "results/tables/judgebench_subsets.csv", METRICS_RULE, caption="judgebench_subsets.rst",
               category=CATEGORY, labels={"table": "JudgeBench accuracy per category and source"},
               builder=f"{PKG}.tables:subsets_table", formats=FORMATS),
        # Every model's decisions per pair, keyed by the official pair_id (a later comparison with published judges).
        Output("pairs", f"{ROOT}/pairs.csv", METRICS_RULE, builder=f"{PKG}.tables:pairs_file"),
        # Each model's overall score per split, for the fairness benchmark's fairness_vs_capability.
        Output("capability", "results/tables/judgebench_capability.csv", METRICS_RULE,
               builder=f"{PKG}.tables:capability_table"),
    ),
    capability="capability",
    summary_section=f"{PKG}.summary:summary_section",
    summary_inputs=("subsets",),  # its overall rows, with their mode (a baseline is named as one)
    report_section="judgebench_section.rst",
    # Which model is better on the same pairs (rmeval compare): per split, each category and overall (compare.py)
    compare=ModelComparison(provider=f"{PKG}.compare:comparison_part", reads_items=True,
                            run_settings={"splits": "judgebench.splits"}),
)
