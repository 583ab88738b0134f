"""RM-Bench (Liu et al., ICLR 2025; THU-KEG/RM-Bench): each prompt's three chosen and three rejected responses
(concise, detailed plain, detailed markdown) scored once each through the shared score rule, then the official 3 x 3
style matrix: easy / normal / hard per domain (chat, math, code, safety) and their means. Enabled by
`rmbench.enabled: true`.

Import-free (read at Snakefile parse time): builders and commands are "module:function" strings.
"""

from __future__ import annotations

from rmeval.benchmarks.catalogue import Benchmark, Command, ModelComparison, Output, ScoreStage, score_path

NAME = "rmbench"
CATEGORY = "RM-Bench"
METRICS_RULE = "rmbench_metrics"
TABLES = "rmeval.benchmarks.rmbench.tables"
FORMATS = ("md", "tex")

BENCHMARK = Benchmark(
    name=NAME,
    title="RM-Bench (Liu et al. 2025)",
    rule_file="workflow/rules/rmbench.smk",
    enabled_by=NAME,
    order=32,
    config_schema="rmeval.benchmarks.rmbench:config.schema.yaml",
    planner="rmeval.benchmarks.rmbench.plan:plan",
    models_key="rmbench.models",
    score_stages=(ScoreStage(rule="rmbench_score", scores=score_path(NAME), task="pairs",
                             log="logs/rmbench/score/{model}/{table}.log"),),
    commands=(
        Command("rmbench-prepare", "rmeval.benchmarks.rmbench.prepare",
                "RM-Bench's official JSON (Hub or local file) -> one row per response to score."),
        Command("rmbench-metrics", "rmeval.benchmarks.rmbench.cli_metrics",
                "RM-Bench scores (the official 3 x 3 style matrix) -> tables."),
    ),
    lock_section="rmeval.benchmarks.rmbench.lock:LOCK_SECTION",
    outputs=(
        Output("scores", "results/tables/rmbench.csv", METRICS_RULE, caption="rmbench.rst", category=CATEGORY,
               labels={"table": "RM-Bench accuracy"}, builder=f"{TABLES}:main_table", formats=FORMATS),
        Output("subsets", "results/tables/rmbench_subsets.csv", METRICS_RULE, caption="rmbench_subsets.rst",
               category=CATEGORY, labels={"table": "RM-Bench per domain and difficulty"},
               builder=f"{TABLES}:subsets_table", formats=FORMATS),
        # Each model's average, for the fairness benchmark's fairness_vs_capability (`capability` below).
        Output("capability", "results/tables/rmbench_capability.csv", METRICS_RULE,
               builder=f"{TABLES}:capability_table"),
    ),
    capability="capability",
    summary_section="rmeval.benchmarks.rmbench.summary:summary_section",
    summary_inputs=("scores", "subsets"),  # the averages and easy / hard; the modes (a baseline is named as one)
    report_section="rmbench_section.rst",
    # Which model is better on the same prompts (rmeval compare): domains, difficulties, average (rmbench/compare.py)
    compare=ModelComparison(provider="rmeval.benchmarks.rmbench.compare:comparison_part", reads_items=True),
)
