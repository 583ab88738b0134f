"""Where RM-Bench's files go and its rules' names, as data (import-free; the plan, the commands and rmbench.smk read
them)."""

from __future__ import annotations

NAME = "rmbench"
DATA = "results/rmbench/data/rmbench.parquet"
MANIFEST = "results/rmbench/data/manifest.json"
TABLE = NAME  # each model's one score table: results/scores/rmbench/{model}/rmbench.parquet
PREPARE_RULE = "rmbench_prepare"
SCORE_RULE = "rmbench_score"
METRICS_RULE = "rmbench_metrics"
