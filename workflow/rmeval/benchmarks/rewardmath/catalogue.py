"""The RewardMATH branch's outputs, declared once: `rmeval rewardmath-metrics` writes its tables from this list,
rewardmath.smk takes its rules' `output:` from it (common.smk `rule_outputs`), and `rule all` asks for every file.

Import-free (read at Snakefile parse time): builders are "module:function" strings, imported by the command.
"""

from __future__ import annotations

from rmeval.benchmarks.catalogue import (
    Benchmark,
    Command,
    ModelComparison,
    Output,
    ScoreStage,
    score_path,
    scores_dir,
)

CATEGORY = "RewardMATH"
METRICS_RULE = "rewardmath_metrics"
SCORE_RULE = "rewardmath_score"
SCORES_DIR = scores_dir("rewardmath")  # {model}/{table}.parquet below it
DATA = "results/rewardmath/data/{table}.parquet"  # the prepared tables: one per MATH subject, and math-prm
PAIRWISE_DATA = "results/rewardmath/pairwise/{table}.parquet"  # the same with the pairwise judges' positions
TABLES = "rmeval.benchmarks.rewardmath.metric_tables"
TABLE_FORMATS = ("md", "tex")  # beside each table's CSV: the human-readable versions


def _table(key: str, stem: str, caption: str, label: str, builder: str, formats: tuple[str, ...] = ()) -> Output:
    return Output(key, f"results/tables/{stem}.csv", METRICS_RULE, caption=caption, category=CATEGORY,
                  labels={"table": label}, builder=f"{TABLES}:{builder}", formats=formats)


BENCHMARK = Benchmark(
    name="rewardmath",
    title="RewardMATH (Kim et al. 2024) next to RewardBench math-prm",
    rule_file="workflow/rules/rewardmath.smk",
    enabled_by="rewardmath",
    order=20,
    config_schema="rmeval.benchmarks.rewardmath:config.schema.yaml",
    planner="rmeval.benchmarks.rewardmath.plan:plan",
    models_key="rewardmath.models",
    score_stages=(
        ScoreStage(rule=SCORE_RULE, scores=score_path("rewardmath"), task="pairs",
                   log="logs/rewardmath/score/{model}/{table}.log"),
    ),
    commands=(
        Command("rewardmath-prepare", "rmeval.benchmarks.rewardmath.prepare",
                "Load RewardMATH / RewardBench math-prm and split per subject."),
        Command("rewardmath-metrics", "rmeval.benchmarks.rewardmath.cli_metrics",
                "RewardMATH accuracy/MRR from official or workflow scores."),
        Command("rewardmath-positions", "rmeval.benchmarks.rewardmath.pairwise:positions_main",
                "Add recorded (or seeded) chosen positions for pairwise judges."),
        Command("rewardmath-export", "rmeval.benchmarks.rewardmath.pairwise:export_main",
                "One model's RewardMATH scores in the official result-file layout."),
        Command("rewardmath-figures", "rmeval.benchmarks.rewardmath.figures",
                "RewardBench-math vs RewardMATH accuracy figure."),
        Command("rewardmath-summary", "rmeval.benchmarks.rewardmath.summary",
                "Plain-words RewardMATH section."),
    ),
    outputs=(
        _table("metrics", "rewardmath_metrics", "rewardmath_metrics.rst", "RewardMATH accuracy and MRR",
               "metrics_table", TABLE_FORMATS),
        _table("metrics_ci", "rewardmath_metrics_ci", "rewardmath_metrics_ci.rst", "RewardMATH with Wilson CIs",
               "metrics_ci_table"),
        _table("breakdown", "rewardmath_breakdown", "rewardmath_breakdown.rst", "RewardMATH by subject and level",
               "breakdown_table"),
        _table("rewardbench", "rewardbench_math_prm_accuracy", "rewardbench_math_prm.rst",
               "RewardBench math-prm accuracy", "rewardbench_table", TABLE_FORMATS),
        _table("side_by_side", "rewardmath_vs_rewardbench", "rewardmath_vs_rewardbench.rst",
               "RewardMATH next to RewardBench math-prm", "side_by_side_table", TABLE_FORMATS),
        # Each workflow model's RewardMATH accuracy, for the fairness benchmark's fairness_vs_capability.
        Output("capability", "results/tables/rewardmath_capability.csv", METRICS_RULE,
               builder=f"{TABLES}:capability_table"),
        Output("figure", "results/figures/rewardmath_vs_rewardbench.png", "rewardmath_figures",
               caption="rewardmath_figure.rst", category=CATEGORY,
               labels={"figure": "RewardBench math vs RewardMATH"},
               builder="rmeval.benchmarks.rewardmath.figures:build_figure", formats=("pdf",)),
        Output("summary", "results/rewardmath/summary.md", "rewardmath_summary", caption="rewardmath_summary.rst",
               category=CATEGORY, labels={"summary": "RewardMATH in plain words"},
               builder="rmeval.benchmarks.rewardmath.summary:render"),
        # One per LLM judge (rewardmath.smk expands it): its scores in the official result-file layout.
        Output("export", "results/rewardmath/official/{model}.json", "rewardmath_export",
               builder="rmeval.benchmarks.rewardmath.pairwise:export_official"),
    ),
    # Its parts of the run-level outputs (rmeval.run_outputs): the summary's RewardMATH section (the text of
    # results/rewardmath/summary.md), its rows of the reproduction table beside Kim et al.'s official results,
    # and its paragraph on the report's front page.
    summary_section="rmeval.benchmarks.rewardmath.summary:summary_section",
    summary_inputs=("side_by_side",),
    reproduction="rmeval.benchmarks.rewardmath.reproduction:reproduction_part",
    reproduction_inputs=("metrics",),
    published=("resources/published/kim2024_rewardmath.yaml",),
    report_section="rewardmath_section.rst",
    run_settings={"prm_aggregation": "rewardmath.prm_aggregation"},
    capability="capability",
    # Which model is better on the same problems (rmeval compare): accuracy and MRR, compared by compare.py
    compare=ModelComparison(provider="rmeval.benchmarks.rewardmath.compare:comparison_part",
                            run_settings={"prm_aggregation": "rewardmath.prm_aggregation",
                                          "subjects": "rewardmath.subjects"}, reads_items=True),
)
