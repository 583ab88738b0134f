"""RMB (Zhou et al., ICLR 2025; Zhou-Zoey/RMB-Reward-Model-Benchmark): every distinct (conversation, response) of
its pairwise and best-of-N sets scored once through the shared score rule, then pairwise and BoN accuracy per
scenario, the four headline cells and their mean. Enabled by `rmb.enabled: true`.

Import-free (read at Snakefile parse time): builders and commands are "module:function" strings.
"""

from __future__ import annotations

from rmeval.benchmarks.catalogue import Benchmark, Command, ModelComparison, Output, ScoreStage, score_path

NAME = "rmb"
CATEGORY = "RMB"
METRICS_RULE = "rmb_metrics"
PACKAGE = "rmeval.benchmarks.rmb"
TABLES = f"{PACKAGE}.tables"
FORMATS = ("md", "tex")

BENCHMARK = Benchmark(
    name=NAME,
    title="RMB (Zhou et al. 2025)",
    rule_file="workflow/rules/rmb.smk",
    enabled_by=NAME,
    order=34,
    config_schema=f"{PACKAGE}:config.schema.yaml",
    planner=f"{PACKAGE}.planner:plan",
    models_key="rmb.models",
    score_stages=(ScoreStage(rule="rmb_score", scores=score_path(NAME), task="rmb",
                             log="logs/rmb/score/{model}/{table}.log"),),
    tasks={"rmb": f"{PACKAGE}.task:pairs"},
    commands=(
        Command("rmb-prepare", f"{PACKAGE}.prepare",
                "RMB_dataset folder (local, or the authors' repository at a commit) -> distinct texts, items, manifest."),
        Command("rmb-metrics", f"{PACKAGE}.cli_metrics",
                "RMB scores -> pairwise and best-of-N accuracy per scenario, the four headline cells, overall."),
    ),
    lock_section=f"{PACKAGE}.lock:LOCK_SECTION",
    outputs=(
        Output("main", "results/tables/rmb.csv", METRICS_RULE, caption="rmb.rst", category=CATEGORY,
               labels={"table": "RMB accuracy"}, builder=f"{TABLES}:main_table", formats=FORMATS),
        Output("scenarios", "results/tables/rmb_scenarios.csv", METRICS_RULE, caption="rmb_scenarios.rst",
               category=CATEGORY, labels={"table": "RMB accuracy per scenario"}, builder=f"{TABLES}:scenarios_table",
               formats=FORMATS),
        # Each model's overall, for the fairness benchmark's fairness_vs_capability (`capability` below).
        Output("capability", "results/tables/rmb_capability.csv", METRICS_RULE, builder=f"{TABLES}:capability_table"),
    ),
    capability="capability",
    summary_section=f"{PACKAGE}.summary:summary_section",
    summary_inputs=("main", "scenarios"),
    report_section="rmb_section.rst",
    compare=ModelComparison(provider=f"{PACKAGE}.compare:comparison_part", reads_items=True,
                            run_settings={"average": "rmb.average"}),
)
