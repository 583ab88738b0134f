"""Each default is written once, in workflow/schemas/config.schema.yaml: the schema fills it into the config (also
when validation is skipped), and every settings dataclass or command-line default that stands for a config key
equals the schema's value, so `rmeval <command>` run by hand behaves like the workflow."""

from __future__ import annotations

import copy
import importlib
from dataclasses import MISSING, fields
from typing import Any

import pytest
from rmeval.benchmarks.fairness.arxiv.api import ApiSettings
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.config_check import check_config, fill_defaults, load_schema
from rmeval.errors import RmevalError
from rmeval.scoring import cli as score_cli
from rmeval.scoring.engine import EngineSettings
from rmeval.scoring.job import JobRequest
from rmeval.scoring.settings import SCORING_DEFAULTS, ScoringSettings
from workflow_helpers import PAPER_GROUPS, REPO_ROOT

SCHEMA = load_schema(REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml")
# The fewest keys a config must set; everything else comes from the schema.
REQUIRED_ONLY = {"groups": PAPER_GROUPS, "arxiv": {"source": "api"}, "models": ["Skywork-Reward-V2-Qwen3-0.6B"]}


def schema_filled() -> dict[str, Any]:
    config = copy.deepcopy(REQUIRED_ONLY)
    check_config(config, SCHEMA)
    return config


def parser_default(module: str, flag: str) -> Any:
    parser = importlib.import_module(module).build_parser()
    action = next(a for a in parser._actions if flag in a.option_strings)
    return action.default


def test_defaults_fill_every_section_and_nested_mapping():
    config = schema_filled()
    assert config["scoring"] == {"compile": False, "threads": 2, "token_budget": None, "max_batch_rows": 64,
                                 "checkpoint_every": 500, "server": True}
    assert config["arxiv"]["api"]["page_size"] == 200 and config["arxiv"]["papers_per_group"] == 2000
    assert config["rewardmath"]["enabled"] is False and config["rewardmath"]["models"] == []
    assert config["lock"] is None and config["registry"] == "config/models.yaml"
    # a given value is kept; its section's other keys are filled around it
    config = copy.deepcopy(REQUIRED_ONLY) | {"scoring": {"max_batch_rows": 8}}
    check_config(config, SCHEMA)
    assert config["scoring"]["max_batch_rows"] == 8 and config["scoring"]["checkpoint_every"] == 500


def test_filling_copies_the_schema_defaults_instead_of_sharing_them():
    first, second = schema_filled(), schema_filled()
    first["scoring"]["threads"] = 9
    first["rewardmath"]["models"].append("x")
    assert second["scoring"]["threads"] == 2 and second["rewardmath"]["models"] == []
    assert SCHEMA["properties"]["scoring"]["default"] == {}
    assert SCHEMA["properties"]["rewardmath"]["default"] == {"enabled": False}


def test_fill_defaults_fills_without_judging_for_skip_validation():
    broken = copy.deepcopy(REQUIRED_ONLY) | {"scoring": {"threads": 0}, "unknown_key": 1}
    fill_defaults(broken, SCHEMA)  # no error: --skip-validation skips the judging, not the defaults
    assert broken["scoring"]["threads"] == 0 and broken["scoring"]["max_batch_rows"] == 64
    assert broken["stats"]["bootstrap"] == 2000


def test_scoring_settings_defaults_are_the_schemas():
    scoring = schema_filled()["scoring"]
    assert {f.name for f in fields(ScoringSettings)} == set(scoring)
    assert ScoringSettings.from_mapping(scoring) == SCORING_DEFAULTS == ScoringSettings()


def test_score_command_and_job_defaults_are_the_schemas():
    scoring = schema_filled()["scoring"]
    for flag, key in (("--max-batch-rows", "max_batch_rows"), ("--checkpoint-every", "checkpoint_every"),
                      ("--token-budget", "token_budget"), ("--compile", "compile")):
        assert parser_default("rmeval.scoring.cli", flag) == scoring[key], flag
    defaults = {f.name: f.default for f in fields(JobRequest)}
    assert defaults["max_batch_rows"] == scoring["max_batch_rows"]
    assert defaults["checkpoint_every"] == scoring["checkpoint_every"]
    # the engine gets the job's resolved values: no third copy
    assert {f.name for f in fields(EngineSettings) if f.default is MISSING} == {
        "token_budget", "max_batch_rows", "checkpoint_every"}


@pytest.mark.parametrize("settings", [
    SCORING_DEFAULTS,
    ScoringSettings(compile=True, threads=3, token_budget=1000, max_batch_rows=7, checkpoint_every=0, server=False),
])
def test_score_flags_parse_back_into_the_same_settings(settings):
    args = score_cli.build_parser().parse_args(
        ["--spec", "{}", "--task", "fairness", "--input", "x", "--output", "y", *settings.command_flags().split()])
    parsed = ScoringSettings(compile=args.compile, threads=settings.threads, token_budget=args.token_budget,
                             max_batch_rows=args.max_batch_rows, checkpoint_every=args.checkpoint_every,
                             server=args.server is not False)
    assert parsed == settings


def test_default_scoring_flags_are_the_ones_existing_outputs_were_made_with():
    # A rule param: a different string re-runs every scoring job of every existing results/ folder.
    assert SCORING_DEFAULTS.command_flags() == "--checkpoint-every 500 --max-batch-rows 64"


def test_scoring_settings_name_an_unknown_key():
    with pytest.raises(RmevalError, match=r"scoring: unknown key\(s\) max_rows; known: compile, threads"):
        ScoringSettings.from_mapping({"max_rows": 3})


def test_arxiv_settings_defaults_are_the_schemas():
    arxiv = schema_filled()["arxiv"]
    assert ArxivSettings.from_mapping(arxiv) == ArxivSettings.from_mapping({"source": "api"})
    assert ApiSettings(**arxiv["api"]) == ApiSettings()
    assert {f.name for f in fields(ApiSettings)} == set(arxiv["api"])
    assert {f.name for f in fields(ArxivSettings)} - {"snapshot"} == set(arxiv)


def test_fairness_stats_settings_defaults_are_the_schemas():
    from rmeval.benchmarks.fairness.stats.analysis import StatsSettings

    config = schema_filled()
    assert StatsSettings() == StatsSettings(**config["stats"], reference_model=config["reference_model"])


# Command-line defaults of the other stages that stand for a config key (module, flag, key path).
COMMAND_DEFAULTS = [
    ("rmeval.benchmarks.fairness.stats.cli", "--reference-model", ("reference_model",)),
    ("rmeval.benchmarks.fairness.stats.cli", "--alpha", ("stats", "alpha")),
    ("rmeval.benchmarks.fairness.stats.cli", "--bootstrap", ("stats", "bootstrap")),
    ("rmeval.benchmarks.fairness.stats.cli", "--permutations", ("stats", "permutations")),
    ("rmeval.benchmarks.fairness.stats.cli", "--seed", ("stats", "seed")),
    ("rmeval.benchmarks.fairness.figures.cli", "--dpi", ("figures", "dpi")),
    ("rmeval.benchmarks.rewardmath.cli_metrics", "--bootstrap", ("rewardmath", "bootstrap")),
    ("rmeval.benchmarks.rewardmath.cli_metrics", "--seed", ("rewardmath", "seed")),
    ("rmeval.benchmarks.rewardmath.cli_metrics", "--prm-aggregation", ("rewardmath", "prm_aggregation")),
    ("rmeval.benchmarks.rewardmath.figures", "--prm-aggregation", ("rewardmath", "prm_aggregation")),
    ("rmeval.benchmarks.rewardmath.summary", "--prm-aggregation", ("rewardmath", "prm_aggregation")),
    ("rmeval.benchmarks.rewardmath.summary", "--alpha", ("stats", "alpha")),
    ("rmeval.run_outputs.reproduction", "--alpha", ("stats", "alpha")),
    ("rmeval.run_outputs.summary", "--alpha", ("stats", "alpha")),
    ("rmeval.benchmarks.rewardmath.prepare", "--split", ("rewardmath", "split")),
    ("rmeval.benchmarks.rewardmath.prepare", "--revision", ("rewardmath", "revision")),
    ("rmeval.benchmarks.rewardmath.prepare", "--rewardbench-split", ("rewardmath", "rewardbench_split")),
    ("rmeval.benchmarks.rewardmath.prepare", "--rewardbench-revision", ("rewardmath", "rewardbench_revision")),
]


@pytest.mark.parametrize(("module", "flag", "key"), COMMAND_DEFAULTS, ids=[f"{m.rsplit('.', 1)[1]}{f}" for m, f, _ in
                                                                           COMMAND_DEFAULTS])
def test_command_defaults_are_the_schemas(module, flag, key):
    value: Any = schema_filled()
    for part in key:
        value = value[part]
    default = parser_default(module, flag)
    # A required flag (no default) has no second copy; one that has a default must be the schema's.
    assert default is None or default == value, f"{module} {flag}: {default!r}, schema {'.'.join(key)}: {value!r}"
