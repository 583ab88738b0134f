"""Bad config drills, through the real schema (`snakemake.utils.validate` on workflow/schemas/config.schema.yaml)
and the registry resolution common.smk runs at parse time; a few real `snakemake -n` runs prove the path end to end.

Every key of the schema is enumerated programmatically and, in turn, given a value of the wrong type, an
out-of-range value (where the schema has a range, enum, pattern or size), or left out. Each rejection must name
the key."""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from rmeval.config_check import config_schema
from rmeval.errors import RmevalError
from rmeval.registry import load_registry, resolve_models
from snakemake.utils import validate
from snakemake_interface_common.exceptions import WorkflowError
from workflow_helpers import PAPER_GROUPS, REPO_ROOT, merged_schema_file, run_snakemake_process, workflow_argv

SCHEMA = config_schema()  # the shared file and each benchmark's own sections
SCHEMA_PATH = merged_schema_file()  # the same as one file, for snakemake.utils.validate
REGISTRY = load_registry(REPO_ROOT / "config" / "models.yaml")

INLINE_MODEL = {"name": "tiny-inline", "path": "/models/tiny", "adapter": "sequence-classification",
                "resources": {"gpu": 0}}


def complete_config() -> dict[str, Any]:
    """A valid config that sets every section, so that each key can be broken on its own."""
    return {
        "fairness": {"enabled": None},  # on because groups is present; left out, groups turns it off
        "groups": copy.deepcopy(PAPER_GROUPS),
        "arxiv": {"source": "snapshot", "snapshot": "inputs/snapshot.json.gz", "papers_per_group": 30, "seed": 0,
                  "allow_fewer": False, "candidate_factor": 2.0, "date_from": "2020-01-01", "date_to": "2024-12-31",
                  "categories_table": None,
                  "api": {"base_url": "http://127.0.0.1:9/api/query", "page_size": 10, "delay_seconds": 0.1,
                          "retries": 2, "backoff_seconds": 0.1, "max_backoff_seconds": 1.0, "timeout_seconds": 5.0,
                          "max_results": 100, "cache_dir": "cache"}},
        "registry": "config/models.yaml",
        "models": ["Skywork-Reward-V2-Qwen3-0.6B", copy.deepcopy(INLINE_MODEL)],
        "reference_model": None,
        "scoring": {"threads": 1, "token_budget": 2048, "max_batch_rows": 8, "checkpoint_every": 10},
        "stats": {"alpha": 0.05, "bootstrap": 200, "permutations": 200, "seed": 0, "calibration": {"replicates": 50}},
        "figures": {"dpi": 100},
        "rewardmath": {"enabled": False, "source": "local", "path": "rm.jsonl", "split": None, "revision": None,
                       "rewardbench_source": "none", "rewardbench_path": "rb.jsonl", "rewardbench_split": "filtered",
                       "rewardbench_revision": None, "subjects": ["algebra"], "models": ["math-shepherd-mistral-7b-prm"],
                       "official_dir": None, "official_rewardbench_dir": None, "problems": None,
                       "prm_aggregation": "prod"},
        "rewardbench": {"enabled": False, "source": "local", "path": "rb1.jsonl", "revision": None,
                        "models": ["Skywork-Reward-V2-Qwen3-0.6B"]},
        "rewardbench2": {"enabled": False, "source": "local", "path": "rb2.jsonl", "revision": None,
                         "models": ["Skywork-Reward-V2-Qwen3-0.6B"], "bootstrap": 100, "seed": 0},
        "rmbench": {"enabled": False, "source": "local", "path": "total_dataset.json", "revision": None,
                    "model_input": "official", "max_length": 2048, "models": ["Skywork-Reward-V2-Qwen3-0.6B"]},
        "judgebench": {"enabled": False, "source": "local", "path": "judgebench", "revision": None,
                       "splits": ["gpt", "claude"], "models": ["Skywork-Reward-V2-Qwen3-0.6B"]},
        "rmb": {"enabled": False, "source": "local", "path": "RMB_dataset",
                "revision": "2be3180857f2190b7ffa929d43190835627f1f4d", "average": "items",
                "models": ["Skywork-Reward-V2-Qwen3-0.6B"]},
        "compare": {"baseline": "Skywork-Reward-V2-Qwen3-0.6B", "pairs": None},
    }


def complete_corpus_config() -> dict[str, Any]:
    """The same with a grouped corpus instead of arXiv (`corpus:` and `arxiv:` are the two data sources; the
    groups then map raw labels), every corpus key set."""
    config = complete_config()
    del config["arxiv"]
    config["groups"] = {"plain": ["v_plain"], "prefixed": ["v_prefix"]}
    config["corpus"] = {"source": "table", "path": "corpus.jsonl",
                        "hf": {"name": "org/corpus", "config": None, "split": "test", "revision": None},
                        "columns": {"id": "doc", "group": "field", "prompt": "question", "response": "answer",
                                    "pair": "pid"},
                        "prompt_template": None, "per_group": 4, "allow_fewer": False, "seed": 0}
    return config


def complete_config_for(path: tuple[str, ...]) -> dict[str, Any]:
    """The complete config in which the key at `path` is set (`corpus` itself left out: the arXiv config)."""
    return complete_corpus_config() if path[:1] == ("corpus",) and len(path) > 1 else complete_config()


def parse_like_the_snakefile(config: dict[str, Any]) -> None:
    """What the Snakefile and common.smk do with a config before any job runs."""
    config = copy.deepcopy(config)
    validate(config, str(SCHEMA_PATH))
    try:
        resolve_models(config["models"], REGISTRY, where="config")
        if config.get("rewardmath", {}).get("enabled"):
            resolve_models(config["rewardmath"].get("models", []), REGISTRY, where="config: rewardmath")
    except RmevalError as error:
        raise WorkflowError(str(error)) from error


def rejection(config: dict[str, Any]) -> str | None:
    try:
        parse_like_the_snakefile(config)
    except WorkflowError as error:
        return str(error)
    return None


# ----------------------------------------------------------------------------- schema enumeration
def _types(node: dict[str, Any]) -> set[str]:
    declared = node.get("type")
    if declared is None and "oneOf" in node:
        return set().union(*(_types(alt) for alt in node["oneOf"]))
    if declared is None:
        return set()
    return {declared} if isinstance(declared, str) else set(declared)


def schema_keys(node: dict[str, Any] = SCHEMA, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict, bool]]:
    """(path, schema node, required) for every property, depth first."""
    required = set(node.get("required", []))
    for name, child in node.get("properties", {}).items():
        yield path + (name,), child, name in required
        if "properties" in child:
            yield from schema_keys(child, path + (name,))


ALL_KEYS = list(schema_keys())
assert len(ALL_KEYS) > 40, "the schema walk found too few keys"


def wrong_type_value(node: dict[str, Any]) -> Any:
    allowed = _types(node)
    for kind, value in (("object", {"wrong": "type"}), ("array", [1, 2]), ("string", "wrong-type"),
                        ("number", 1.5), ("boolean", True)):
        if kind not in allowed and not (kind == "number" and "integer" in allowed):
            return value
    raise AssertionError(f"no wrong-type value for {node}")


def out_of_range_value(node: dict[str, Any]) -> Any | None:
    if "minimum" in node:
        return node["minimum"] - 1
    if "exclusiveMinimum" in node:
        return node["exclusiveMinimum"]
    if "maximum" in node:
        return node["maximum"] + 1
    if "exclusiveMaximum" in node:
        return node["exclusiveMaximum"]
    if "enum" in node:
        return "not-a-choice"
    if "pattern" in node:
        return "not a valid value!"
    if "minItems" in node:
        return []
    if "minProperties" in node:
        return {"only_one": ["math"]}
    for alternative in node.get("oneOf", []):
        if "enum" in alternative:
            return "not-a-choice"
    return None


def _set(config: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    target = config
    for part in path[:-1]:
        target = target.setdefault(part, {})
    target[path[-1]] = value


def _delete(config: dict[str, Any], path: tuple[str, ...]) -> None:
    target = config
    for part in path[:-1]:
        target = target[part]
    target.pop(path[-1], None)


def test_the_complete_config_is_valid() -> None:
    assert rejection(complete_config()) is None


def test_every_key_given_the_wrong_type_is_rejected_naming_it(drill) -> None:
    row = drill("config: every key, wrong type", "input",
                f"each of the schema's {len(ALL_KEYS)} keys in turn set to a value of a type it does not allow",
                "rejected; the message names the key", tried=len(ALL_KEYS))
    failures = []
    for path, node, _ in ALL_KEYS:
        config = complete_config()
        _set(config, path, wrong_type_value(node))
        message = rejection(config)
        if message is None or path[-1] not in message:
            failures.append(f"{'.'.join(path)}: {message!r}")
    row.detail = f"{len(ALL_KEYS) - len(failures)}/{len(ALL_KEYS)} rejected naming the key"
    assert not failures, "\n".join(failures)


RANGED = [(path, node) for path, node, _ in ALL_KEYS if out_of_range_value(node) is not None]


def test_every_ranged_key_given_an_out_of_range_value_is_rejected_naming_it(drill) -> None:
    row = drill("config: every key, out of range", "input",
                f"each of the {len(RANGED)} keys with a range, enum, pattern or size given a value outside it",
                "rejected; the message names the key", tried=len(RANGED))
    failures = []
    for path, node in RANGED:
        config = complete_config()
        _set(config, path, out_of_range_value(node))
        message = rejection(config)
        if message is None or path[-1] not in message:
            failures.append(f"{'.'.join(path)}={out_of_range_value(node)!r}: {message!r}")
    row.detail = f"{len(RANGED) - len(failures)}/{len(RANGED)} rejected naming the key"
    assert not failures, "\n".join(failures)


REQUIRED = [path for path, _, required in ALL_KEYS if required]
OPTIONAL = [path for path, _, required in ALL_KEYS if not required]


def test_every_required_key_left_missing_is_rejected_naming_it(drill) -> None:
    row = drill("config: every required key missing", "input",
                f"each of the {len(REQUIRED)} required keys ({', '.join('.'.join(p) for p in REQUIRED)}) left out",
                "rejected; the message names the key", tried=len(REQUIRED))
    failures = []
    for path in REQUIRED:
        config = complete_config_for(path)
        if path == ("arxiv", "snapshot"):
            config["arxiv"]["source"] = "snapshot"  # required only for the snapshot source
        _delete(config, path)
        message = rejection(config)
        if message is None or f"'{path[-1]}' is a required property" not in message:
            failures.append(f"{'.'.join(path)}: {message!r}")
    row.detail = f"{len(REQUIRED) - len(failures)}/{len(REQUIRED)} rejected naming the key"
    assert not failures, "\n".join(failures)


def test_every_optional_key_left_missing_takes_its_documented_default(drill) -> None:
    row = drill("config: every optional key missing", "input",
                f"each of the {len(OPTIONAL)} optional keys left out in turn",
                "accepted; the schema's default (where it has one) is filled in", tried=len(OPTIONAL),
                outcome="accept")
    failures = []
    for path in OPTIONAL:
        config = complete_config_for(path)
        if path == ("arxiv", "snapshot"):
            config["arxiv"]["source"] = "api"
        if path == ("corpus", "path"):
            config["corpus"]["source"] = "hf"  # the path is required only for a table source (as the snapshot)
        if path == ("corpus", "columns", "prompt"):
            config["corpus"]["prompt_template"] = "{question}"  # one of the two gives the prompt
        if path == ("arxiv",):
            # required exactly when there is no corpus: left out of an arXiv config it is rejected, naming it
            message = rejection({key: value for key, value in config.items() if key != "arxiv"})
            if message is None or "'arxiv' is a required property" not in message:
                failures.append(f"arxiv without corpus: {message!r}")
            config = complete_corpus_config()
        _delete(config, path)
        node = dict(ALL_KEYS_BY_PATH[path])
        try:
            validate(config, str(SCHEMA_PATH))
        except WorkflowError as error:
            failures.append(f"{'.'.join(path)}: rejected: {error}")
            continue
        if "default" in node and len(path) == 1 and path[0] not in config:
            failures.append(f"{'.'.join(path)}: default {node['default']!r} not filled in")
    row.detail = f"{len(OPTIONAL) - len(failures)}/{len(OPTIONAL)} accepted"
    assert not failures, "\n".join(failures)


ALL_KEYS_BY_PATH = {path: node for path, node, _ in ALL_KEYS}
OBJECT_SECTIONS = [path for path, node, _ in ALL_KEYS if "properties" in node]


UNKNOWN_KEY_SECTIONS = [
    pytest.param(section, id=".".join(section) or "top-level")
    for section in [(), *OBJECT_SECTIONS, ("models", "0")]
]


@pytest.mark.parametrize("section", UNKNOWN_KEY_SECTIONS)
def test_unknown_key_is_rejected_naming_it(section: tuple[str, ...], drill) -> None:
    where = ".".join(section) or "the top level"
    drill(f"config: unknown key in {where}", "input", f"`unknwon_setting: 1` added to {where}",
          "rejected; the message names the key")
    config = complete_corpus_config() if section[:1] == ("corpus",) else complete_config()
    if section == ("models", "0"):
        config["models"][1]["unknwon_setting"] = 1
    else:
        target = config
        for part in section:
            target = target[part]
        target["unknwon_setting"] = 1
    message = rejection(config)
    assert message is not None, f"an unknown key in {where} was accepted silently"
    assert "unknwon_setting" in message, message


def test_duplicate_model_names_are_rejected_naming_them(drill) -> None:
    cases = {
        "registry name twice": ["Skywork-Reward-V2-Qwen3-0.6B", "Skywork-Reward-V2-Qwen3-0.6B"],
        "inline entry named like a registry model": ["Skywork-Reward-V2-Qwen3-0.6B",
                                                     {**INLINE_MODEL, "name": "Skywork-Reward-V2-Qwen3-0.6B"}],
        "two inline entries with one name": [INLINE_MODEL, dict(INLINE_MODEL)],
    }
    drill("config: duplicate model names", "input", "; ".join(cases), "rejected; the message names the model",
          tried=len(cases))
    for case, models in cases.items():
        config = complete_config()
        config["models"] = copy.deepcopy(models)
        message = rejection(config)
        assert message is not None, f"{case}: accepted"
        assert "duplicate model name" in message and "models[1]" in message, (case, message)


def test_group_with_no_categories_is_rejected_naming_it(drill) -> None:
    drill("config: group with no categories", "input", "groups.economics: []", "rejected; the message names the group")
    config = complete_config()
    config["groups"]["economics"] = []
    message = rejection(config)
    assert message is not None and "economics" in message, message


def _snakemake_dry_run(tmp_path: Path, config: dict[str, Any]) -> subprocess.CompletedProcess:
    configfile = tmp_path / "bad.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False))
    return run_snakemake_process(workflow_argv(tmp_path, configfile, "-n"), timeout=300)


def _dry_run_config(tmp_path: Path) -> dict[str, Any]:
    config = complete_config()
    snapshot = tmp_path / "inputs" / "snapshot.json.gz"
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    snapshot.write_bytes(b"")
    config["arxiv"]["snapshot"] = str(snapshot)
    config["registry"] = str(REPO_ROOT / "config" / "models.yaml")
    return config


def test_snakemake_dry_run_rejects_duplicate_models(tmp_path: Path, drill) -> None:
    drill("snakemake -n: duplicate model names", "input", "models: [M, M] through a real `snakemake -n`",
          "rejected before any job; the message names the model")
    config = _dry_run_config(tmp_path)
    config["models"] = ["Skywork-Reward-V2-Qwen3-0.6B", "Skywork-Reward-V2-Qwen3-0.6B"]
    result = _snakemake_dry_run(tmp_path, config)
    assert result.returncode != 0
    assert "duplicate model name 'Skywork-Reward-V2-Qwen3-0.6B'" in result.stdout + result.stderr


def test_overlapping_groups_are_rejected_by_the_category_check(drill) -> None:
    from rmeval.benchmarks.fairness.arxiv.categories import check_disjoint, load_table, resolve_group

    cases = {"same category": ("eess.SY", ["eess.SY"]), "archive and one of its categories": ("math", ["math.PR"]),
             "alias of a category": ("eess.SY", ["cs.SY"])}
    drill("groups: one category in two groups (category check)", "input", "; ".join(cases),
          "rejected; the message names the category and both groups", tried=len(cases))
    table = load_table()
    for case, (first, second) in cases.items():
        groups = {"alpha": [first], "beta": second}
        with pytest.raises(RmevalError, match=r"a category may belong to one group only") as raised:
            check_disjoint({g: resolve_group(g, c, table) for g, c in groups.items()})
        assert "alpha and beta" in str(raised.value), (case, str(raised.value))


def test_snakemake_dry_run_rejects_overlapping_groups(tmp_path: Path, drill) -> None:
    drill("snakemake -n: one category in two groups", "input",
          "groups.mathematics: [math], groups.economics: [econ, math.PR] through a real `snakemake -n`",
          "rejected before any download; the message names the category and both groups")
    config = _dry_run_config(tmp_path)
    config["groups"]["economics"] = ["econ", "math.PR"]
    result = _snakemake_dry_run(tmp_path, config)
    assert result.returncode != 0, "a category in two groups passed `snakemake -n`"
    assert "math.PR" in result.stdout + result.stderr


def test_reference_model_null_gives_a_well_formed_stats_command(tmp_path: Path, drill) -> None:
    import shlex

    from rmeval import cli_settings
    from rmeval.benchmarks.fairness.stats.cli import build_parser

    drill("config: reference_model null", "input",
          "reference_model: null (the quick start's value) through `snakemake -n -p`",
          "accepted: fairness_stats gets a well-formed command and skips Table 4 with a note", outcome="accept")
    config = _dry_run_config(tmp_path)
    configfile = tmp_path / "null_reference.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False))
    result = run_snakemake_process(workflow_argv(tmp_path, configfile, "-n", "-p", "results/tables/table1_anova.csv"),
                                   timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    (line,) = [ln for ln in result.stdout.splitlines() if "rmeval fairness-stats" in ln]
    argv = shlex.split(line.split("rmeval fairness-stats", 1)[1].split(" > ")[0])
    try:
        args = cli_settings.parse_args(build_parser(), argv)
    except SystemExit as error:
        raise AssertionError(f"rule fairness_stats renders an unparseable command: {line.strip()}") from error
    assert args.reference_model == ""
