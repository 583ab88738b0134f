"""Each default is written once: run settings in workflow/schemas/config.schema.yaml, model entries in
workflow/schemas/models.schema.yaml. The schema fills the config (also when validation is skipped); the settings
dataclasses, ModelSpec and every command-line option that stands for a config key take their defaults from it,
so `rmeval <command>` run by hand behaves like the workflow. The options are found by walking each command's
parser, not listed here."""

from __future__ import annotations

import argparse
import copy
import json
from dataclasses import MISSING, asdict, fields
from typing import Any

import pytest
from rmeval import cli_settings
from rmeval.benchmarks.catalogue import import_target
from rmeval.benchmarks.fairness.arxiv.api import ApiSettings
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.cli import commands
from rmeval.config_check import (
    RUN_DEFAULT_MARK,
    check_config,
    config_schema,
    fill_defaults,
    load_schema,
    schema_default,
)
from rmeval.errors import RmevalError
from rmeval.models.catalogue import ADAPTERS
from rmeval.registry import MODELS_SCHEMA, ModelResources, ModelSpec
from rmeval.scoring import cli as score_cli
from rmeval.scoring.engine import EngineSettings
from rmeval.scoring.job import JobRequest
from rmeval.scoring.settings import SCORING_DEFAULTS, ScoringSettings
from workflow_helpers import PAPER_GROUPS

SCHEMA = config_schema()  # the shared file and each benchmark's own sections
# The fewest keys a config must set; everything else comes from the schema.
REQUIRED_ONLY = {"groups": PAPER_GROUPS, "arxiv": {"source": "api"}, "models": ["Skywork-Reward-V2-Qwen3-0.6B"]}

RUN_SECTIONS = ("stats", "scoring", "")  # the shared schema's sections ("" = the top level)


def _object_sections(properties: dict[str, Any], prefix: str = "") -> list[str]:
    """The dotted names of the mapping sections among `properties`, nested ones too (arxiv, arxiv.api)."""
    found = []
    for name, node in properties.items():
        if isinstance(node, dict) and "properties" in node:
            found.append(f"{prefix}{name}")
            found += _object_sections(node["properties"], f"{prefix}{name}.")
    return found


def sections_of(command: str) -> tuple[str, ...]:
    """The config sections a command's options may stand for, found from the catalogues: the run's (`stats` first:
    a `--seed` is the run's seed), its benchmark's own (its catalogue's `config_schema`), then the top level; a
    shared command has the run's alone."""
    from rmeval.benchmarks import all_benchmarks
    from rmeval.config_check import benchmark_schema_path

    for bench in all_benchmarks():
        if command in {c.name for c in bench.commands} and bench.config_schema:
            own = load_schema(benchmark_schema_path(bench.config_schema)).get("properties", {})
            return (*RUN_SECTIONS[:-1], *_object_sections(own), RUN_SECTIONS[-1])
    return RUN_SECTIONS


# Commands a rule never runs (nothing to hand them): by hand, or started by another command.
WITHOUT_SETTINGS = {"tiny-model": "by hand", "model-server": "started by `rmeval score`",
                    "lock": "its `write` takes --settings (tests/test_lock.py); diff and show are by hand",
                    "fairness-summary": "by hand: the run's summary is `run-summary`",
                    "models": "by hand: lists the registry",
                    "published": "by hand: lists the registry's published models",
                    "engine": "by hand (and .ci/run): builds the vLLM environment",
                    "run": "by hand: it writes the config the rules read, then starts Snakemake"}
# Options named like a config key whose default differs from the schema's on purpose, and why.
DIFFERENT_ON_PURPOSE = {
    ("score", "threads"): "None: torch's own thread count by hand; the rule passes its `threads:`",
    ("score", "server"): "None: decided by where the job runs (rmeval.scoring.cli.wants_server)",
    ("fairness-stats", "registry"): "None: config/models.yaml when it exists, else no ranks",
    ("rewardmath-prepare", "rewardbench_source"): "none: a run by hand downloads nothing it was not asked for",
    ("rewardmath-metrics", "models"): "another meaning: the score folders to read, not model entries",
    ("rewardbench-metrics", "models"): "another meaning: the scored models' names, not model entries",
    ("rewardmath-metrics", "registry"): "None: official files keep their own model names unless a registry is given",
}


def settings_commands() -> list[str]:
    """Every `rmeval` command a rule runs (all but WITHOUT_SETTINGS), found from the CLI: a new benchmark's
    commands are checked with no line added here."""
    return sorted(set(commands()) - set(WITHOUT_SETTINGS))


def schema_filled() -> dict[str, Any]:
    config = copy.deepcopy(REQUIRED_ONLY)
    check_config(config, SCHEMA)
    return config


class _Parsed(Exception):
    """Raised by the stand-in for cli_settings.parse_args: the command built its parser and stopped there."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser `rmeval <name>` hands to cli_settings.parse_args (a command that does not use it fails here)."""

    def stop(parser: argparse.ArgumentParser, argv: Any) -> argparse.Namespace:
        raise _Parsed(parser)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli_settings, "parse_args", stop)
        with pytest.raises(_Parsed) as parsed:
            import_target(commands()[name][0])([])
    return parsed.value.parser


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The first action of each option dest (`--server` / `--no-server` share one; the first gives the default),
    help and --settings aside."""
    unique = {action.dest: action for action in reversed(parser._actions)}
    return [action for dest, action in reversed(unique.items()) if dest not in ("help", "settings")]


def schema_node(sections: tuple[str, ...], dest: str) -> tuple[str, dict[str, Any]] | None:
    """(dotted key, schema node) of the first section that has a key named `dest`."""
    for section in sections:
        node: Any = SCHEMA
        for part in filter(None, section.split(".")):
            node = node["properties"][part]
        found = node.get("properties", {}).get(dest)
        if found is not None and "properties" not in found:  # an option stands for a key, never a whole section
            return f"{section}.{dest}".lstrip("."), found
    return None


# ----------------------------------------------------------------------------- the schema fills the config
def test_defaults_fill_every_section_and_nested_mapping():
    config = schema_filled()
    assert config["scoring"] == {"compile": False, "threads": 2, "token_budget": None, "max_batch_rows": 64,
                                 "checkpoint_every": 500, "server": True, "max_replicas": None,
                                 "slurm_grouping": "model"}
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


def test_model_entries_in_a_config_stay_as_written():
    inline = {"name": "mine", "path": "org/rm", "resources": {"gpu": 0}}
    config = copy.deepcopy(REQUIRED_ONLY) | {"models": [copy.deepcopy(inline)]}
    check_config(config, SCHEMA)  # models.schema.yaml: x-fill-defaults: false (the lock hashes the config)
    assert config["models"] == [inline]


# ----------------------------------------------------------------------------- settings dataclasses
def test_settings_dataclasses_take_the_schemas_defaults():
    config = schema_filled()
    assert {f.name for f in fields(ScoringSettings)} == set(config["scoring"])
    assert ScoringSettings.from_mapping(config["scoring"]) == SCORING_DEFAULTS == ScoringSettings()
    from rmeval.benchmarks.fairness.stats.analysis import StatsSettings

    # stats.calibration is rule fairness_calibrate's (rmeval fairness-calibrate), not fairness-stats'
    stats = {key: value for key, value in config["stats"].items() if key != "calibration"}
    assert StatsSettings() == StatsSettings(**stats, reference_model=config["reference_model"])
    from rmeval.benchmarks.fairness.stats.calibrate_cli import build_parser

    assert build_parser().parse_args(["--scores", "s", "--out", "o"]).replicates == \
        config["stats"]["calibration"]["replicates"]
    arxiv = {**config["arxiv"], "seed": config["stats"]["seed"]}  # null = the run's seed (run_plan.run_setting)
    assert ArxivSettings.from_mapping(arxiv) == ArxivSettings.from_mapping({"source": "api"})
    assert ApiSettings(**arxiv["api"]) == ApiSettings()
    assert {f.name for f in fields(ApiSettings)} == set(arxiv["api"])
    assert {f.name for f in fields(ArxivSettings)} - {"snapshot"} == set(arxiv)


def test_score_job_defaults_are_the_scoring_settings():
    defaults = {f.name: f.default for f in fields(JobRequest)}
    for key in ("token_budget", "max_batch_rows", "checkpoint_every", "compile", "max_replicas"):
        assert defaults[key] == getattr(SCORING_DEFAULTS, key), key
    # the engine gets the job's resolved values: no third copy
    assert {f.name for f in fields(EngineSettings) if f.default is MISSING} == {
        "token_budget", "max_batch_rows", "checkpoint_every"}


def test_model_spec_defaults_are_the_models_schemas():
    entry = load_schema(MODELS_SCHEMA)["$defs"]["entry"]["properties"]
    spec = asdict(ModelSpec(name="n", path="p"))
    assert set(spec) == set(entry)
    for name, node in entry.items():
        if name in ("name", "path"):
            assert "default" not in node, name
        elif name == "resources":
            assert node["default"] == {}
            assert spec[name] == {key: field["default"] for key, field in node["properties"].items()}
        else:
            assert spec[name] == node["default"], name
    assert ModelResources() == ModelSpec(name="n", path="p").resources and spec["adapter"] in ADAPTERS
    first, second = ModelSpec(name="a", path="p"), ModelSpec(name="b", path="p")
    first.options["x"] = 1
    assert second.options == {}, "a mapping default is a fresh copy per spec"


def test_the_spec_json_of_a_minimal_entry_is_the_one_existing_jobs_were_made_with():
    # A rule param: a different string re-runs every job of every existing results/ folder.
    assert ModelSpec(name="n", path="p").to_json() == (
        '{"adapter": "sequence-classification", "add_bos": null, "chat_template": null, "description": "", '
        '"dtype": "auto", "max_length": 4096, "name": "n", "options": {}, "path": "p", "resources": {"gpu": 1, '
        '"gpu_model": null, "mem_mb": 32000, "runtime": 240, "slurm_partition": null}, "revision": null, '
        '"rewardbench_rank": null, "truncation": "prompt-left", "trust_remote_code": false}')


# ----------------------------------------------------------------------------- command-line defaults
def test_every_option_standing_for_a_config_key_defaults_to_the_schemas():
    checked = set()
    for name in settings_commands():
        sections = sections_of(name)
        parser = command_parser(name)
        for action in options(parser):
            found = schema_node(sections, action.dest)
            if found is None or "default" not in found[1] or action.required:
                continue  # not a config key, a key without a default, or a required option: no second copy
            key, node = found
            default = action.default  # the first action of a dest gives its default (argparse)
            if (name, action.dest) in DIFFERENT_ON_PURPOSE:
                assert default != node["default"], f"{name} {action.dest}: now the schema's; drop it above"
                continue
            # a benchmark's own bootstrap / seed (null = the run's) defaults by hand to the run's value
            written = schema_default(node[RUN_DEFAULT_MARK]) if RUN_DEFAULT_MARK in node else node["default"]
            assert default == written == schema_default(key), (
                f"rmeval {name} --{action.dest.replace('_', '-')}: {default!r}, schema {key}: {node['default']!r}")
            checked.add((name, key))
    # the walk reaches the options it is about
    assert {("fairness-stats", "stats.alpha"), ("fairness-stats", "stats.bootstrap"),
            ("fairness-stats", "stats.permutations"), ("fairness-stats", "stats.seed"),
            ("fairness-stats", "reference_model"), ("fairness-figures", "figures.dpi"),
            ("score", "scoring.max_batch_rows"), ("score", "scoring.checkpoint_every"), ("score", "scoring.compile"),
            ("score", "scoring.token_budget"), ("score", "scoring.max_replicas"), ("arxiv-fetch", "arxiv.papers_per_group"),
            ("arxiv-fetch", "arxiv.api.page_size"), ("arxiv-fetch", "arxiv.api.cache_dir"),
            ("arxiv-select", "arxiv.allow_fewer"),
            ("rewardbench-metrics", "stats.bootstrap"), ("run-summary", "stats.alpha"),
            ("rewardmath-metrics", "rewardmath.prm_aggregation"),
            ("rewardmath-figures", "rewardmath.prm_aggregation"), ("rewardmath-prepare", "rewardmath.split"),
            ("rewardmath-prepare", "rewardmath.rewardbench_split")} <= checked


def _stand_in(action: argparse.Action) -> Any:
    """A value a required option accepts."""
    value = action.choices[0] if action.choices else "1"
    return [value] if action.nargs in ("+", "*") else value


@pytest.mark.parametrize("name", settings_commands())
def test_every_option_of_a_command_can_come_from_its_settings(name):
    """`--settings` alone sets every option, required ones included; its keys are the option dests."""
    parser = command_parser(name)
    assert "settings" in {action.dest for action in parser._actions}, f"rmeval {name} takes no --settings"
    settings = {action.dest: _stand_in(action) if action.required else action.default for action in options(parser)}
    parsed = cli_settings.parse_args(command_parser(name), ["--settings", cli_settings.settings_json(settings)])
    for dest, value in settings.items():
        assert getattr(parsed, dest) == value or str(getattr(parsed, dest)) == value, (name, dest)


def test_score_settings_parse_back_into_the_same_settings():
    for settings in (SCORING_DEFAULTS, ScoringSettings(compile=True, threads=3, token_budget=1000, max_batch_rows=7,
                                                       checkpoint_every=0, server=False, max_replicas=2)):
        handed = cli_settings.settings_json({"task": "fairness", **settings.command_settings()})
        args = cli_settings.parse_args(score_cli.build_parser(),
                                       ["--spec", "{}", "--input", "x", "--output", "y", "--settings", handed])
        parsed = ScoringSettings(compile=args.compile, threads=settings.threads, token_budget=args.token_budget,
                                 max_batch_rows=args.max_batch_rows, checkpoint_every=args.checkpoint_every,
                                 server=args.server is not False, max_replicas=args.max_replicas)
        assert parsed == settings


def test_the_commands_without_settings_exist():
    assert set(WITHOUT_SETTINGS) <= set(commands())


def test_scoring_settings_name_an_unknown_key():
    with pytest.raises(RmevalError, match=r"scoring: unknown key\(s\) max_rows; known: compile, threads"):
        ScoringSettings.from_mapping({"max_rows": 3})


def test_a_spec_from_settings_may_be_the_entry_itself():
    from rmeval.scoring.spec_argument import read_spec

    entry = {"name": "m", "path": "org/m", "max_length": 512}
    assert read_spec(entry) == read_spec(json.dumps(entry))
    with pytest.raises(RmevalError, match=r"--spec: model\.max_lenght: unknown key"):
        read_spec({"name": "m", "path": "org/m", "max_lenght": 512})


def test_the_device_token_budgets_are_written_once_in_the_schema():
    """scoring.token_budget: null -> the device's budget, whose numbers live in the schema (x-device-budget); the
    engine, the CLI's help and config/README.md read or state the same numbers."""
    from rmeval.config_check import schema_node
    from rmeval.scoring.request import DEFAULT_TOKEN_BUDGET
    from workflow_helpers import REPO_ROOT

    budget = schema_node("scoring.token_budget")["x-device-budget"]
    assert DEFAULT_TOKEN_BUDGET == budget and set(budget) == {"cpu", "cuda"}
    row = next(line for line in (REPO_ROOT / "config" / "README.md").read_text().splitlines()
               if line.startswith("| `token_budget` |"))
    assert all(str(tokens) in row for tokens in budget.values()), row
    assert all(f"{tokens} on {device}" in " ".join(score_cli.build_parser().format_help().split())
               for device, tokens in budget.items())
