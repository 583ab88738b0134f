"""rmeval.config_check: one line per config problem (key path, bad value, what is allowed), defaults filled in
as snakemake.utils.validate fills them, never a schema dump; and the console of a real `snakemake -n`."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from rmeval.config_check import ConfigError, check_config, config_problems, config_schema
from snakemake.utils import validate
from workflow_helpers import REPO_ROOT, merged_schema_file, run_snakemake_process, workflow_argv

SCHEMA = config_schema()  # the shared file and each benchmark's own sections
SCHEMA_PATH = merged_schema_file()  # the same as one file, for snakemake.utils.validate
QUICKSTART = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())


def quickstart() -> dict[str, Any]:
    return copy.deepcopy(QUICKSTART)


def problems_after(mutate) -> list[str]:
    config = quickstart()
    mutate(config)
    return config_problems(config, SCHEMA)


def test_shipped_configs_are_valid_and_defaults_match_snakemake_validate():
    for name in ("config.yaml", "quickstart.yaml", "offline.yaml"):
        ours = yaml.safe_load((REPO_ROOT / "config" / name).read_text())
        theirs, written = copy.deepcopy(ours), copy.deepcopy(ours)
        check_config(ours, SCHEMA)
        validate(theirs, str(SCHEMA_PATH))
        # Model entries stay as written (models.schema.yaml's x-fill-defaults: false; the lock hashes the config),
        # where snakemake fills their defaults too; everything else is filled alike.
        assert ours["models"] == written["models"], name
        theirs["models"] = written["models"]
        assert ours == theirs, name
        assert ours["arxiv"]["api"]["page_size"] == 200 and ours["stats"]["bootstrap"] == 2000


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda c: c["arxiv"].update(papers_per_grup=c["arxiv"].pop("papers_per_group")),
         ["arxiv.papers_per_grup: unknown key; did you mean `papers_per_group`?"]),
        (lambda c: c.update(modles=c.pop("models")),
         ["modles: unknown key; did you mean `models`?", "models: missing; required"]),
        (lambda c: c.update(papers_per_group=10),
         ["papers_per_group: unknown key here; did you mean `arxiv.papers_per_group`?"]),
        (lambda c: c["groups"].update({"computer science": c["groups"].pop("computer_science")}),
         ["groups: group name 'computer science' has a space; use `_`: `computer_science`"]),
        # Issue 36: the suggestion for a refused name was itself refused (`women's;touch${ifs}x;#`).
        (lambda c: c["groups"].update({"women's;touch${IFS}x;#": c["groups"].pop("computer_science")}),
         ["groups: group name \"women's;touch${IFS}x;#\" must be lower-case letters, digits and `_`, e.g. "
          "`women_s_touch_ifs_x`"]),
        (lambda c: c["arxiv"].update(papers_per_group="many"),
         ["arxiv.papers_per_group: got 'many' (a string); expected an integer >= 1"]),
        (lambda c: c["arxiv"].update(source="snapshott"),
         ["arxiv.source: got 'snapshott'; allowed: snapshot, api, lock; did you mean `snapshot`?"]),
        (lambda c: c["arxiv"].update(source="snapshot"),
         ["arxiv.snapshot: missing; required when arxiv.source is 'snapshot'"]),
        (lambda c: c["arxiv"].update(allow_fewer="balancd"),
         ["arxiv.allow_fewer: got 'balancd' (a string); expected true or false, or one of balanced, keep; "
          "did you mean `balanced`?"]),
        (lambda c: c["arxiv"].update(date_to="2024/12/31"),
         ['arxiv.date_to: got \'2024/12/31\'; expected a string (a quoted date "YYYY-MM-DD"), or null']),
        (lambda c: c["scoring"].update(threads=0), ["scoring.threads: got 0; expected an integer >= 1"]),
        (lambda c: c["groups"]["physics"].append("Astro Ph"),
         ["groups.physics[13]: got 'Astro Ph'; expected a string (an arXiv archive (`math`) or category (`eess.SY`))"]),
        (lambda c: c["models"].append({"name": "my-rm"}), ["models[1].path: missing; required"]),
        (lambda c: c["models"].append(5),
         ["models[1]: got 5 (an integer); expected a string, or a mapping with `name`"]),
        (lambda c: c.update(rewardmath={"enabled": True, "subjects": ["geometri"]}),
         ["rewardmath.subjects[0]: got 'geometri'; allowed: algebra, counting_and_probability, geometry, "
          "intermediate_algebra, number_theory, prealgebra, precalculus; did you mean `geometry`?"]),
    ],
    ids=["typo-in-section", "top-level-typo", "key-in-wrong-section", "group-with-space", "group-with-shell-chars",
         "wrong-type",
         "enum-typo", "conditional-required", "oneOf-typo", "date-pattern", "minimum", "category-pattern",
         "inline-model-missing-path", "model-entry-type", "nested-enum"],
)
def test_each_problem_is_one_line_naming_key_value_and_what_is_allowed(mutate, expected):
    problems = problems_after(mutate)
    for line in expected:
        assert any(problem.startswith(line) for problem in problems), (line, problems)
    assert len(problems) == len(expected), problems


def _types(node: dict[str, Any]) -> set[str]:
    declared = node.get("type")
    if declared is None and "oneOf" in node:
        return set().union(*(_types(alt) for alt in node["oneOf"]))
    return {declared} if isinstance(declared, str) else set(declared or [])


def _schema_keys(node: dict[str, Any], path: tuple[str, ...] = ()):
    for name, child in node.get("properties", {}).items():
        yield (*path, name), child
        if "properties" in child:
            yield from _schema_keys(child, (*path, name))


def test_every_schema_key_with_a_wrong_type_gives_one_short_line_with_its_full_path():
    checked = 0
    for path, node in _schema_keys(SCHEMA):
        allowed = _types(node)
        wrong = next(value for kind, value in (("object", {"x": 1}), ("array", [1]), ("string", "text"),
                                                ("boolean", True)) if kind not in allowed)
        config = quickstart()
        config.setdefault("rewardmath", {})
        target = config
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = wrong
        problems = config_problems(config, SCHEMA)
        dotted = ".".join(path)
        assert any(problem.startswith(f"{dotted}: ") for problem in problems), (dotted, problems)
        assert all(len(problem) < 400 and "\n" not in problem for problem in problems), problems
        checked += 1
    assert checked > 40


def test_config_error_lists_problems_under_one_header():
    config = quickstart()
    config["arxiv"]["papers_per_grup"] = 5
    config["scoring"]["threads"] = 0
    with pytest.raises(ConfigError) as raised:
        check_config(config, SCHEMA, source="my.yaml")
    assert str(raised.value).splitlines() == [
        "my.yaml: 2 problems (see config/README.md for every key):",
        "  arxiv.papers_per_grup: unknown key; did you mean `papers_per_group`?",
        "  scoring.threads: got 0; expected an integer >= 1",
    ]


def _dry_run(tmp_path: Path, config: dict[str, Any]) -> subprocess.CompletedProcess:
    configfile = tmp_path / "typo.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False))
    return run_snakemake_process(workflow_argv(tmp_path, configfile, "-n"), timeout=300)


@pytest.mark.parametrize(
    ("mutate", "line"),
    [
        (lambda c: c["arxiv"].update(papers_per_grup=c["arxiv"].pop("papers_per_group")),
         "  arxiv.papers_per_grup: unknown key; did you mean `papers_per_group`?"),
        (lambda c: c.update(arxv=c.pop("arxiv")), "  arxv: unknown key; did you mean `arxiv`?"),
    ],
    ids=["papers_per_grup", "top-level"],
)
def test_snakemake_dry_run_console_shows_the_lines_and_no_schema_dump(tmp_path, mutate, line):
    config = quickstart()
    mutate(config)
    result = _dry_run(tmp_path, config)
    console = result.stdout + result.stderr
    assert result.returncode != 0
    assert line in console.splitlines(), console
    # Before: 159 (section typo) and 719 (top-level typo) lines of schema dump.
    assert len(console.splitlines()) <= 8, console
    for dump_marker in ("$schema", "additionalProperties", "On instance", "Failed validating"):
        assert dump_marker not in console, console


def test_every_suggested_group_name_is_itself_valid() -> None:
    import re

    from rmeval.config_check import valid_group_name

    for name in ("women's;touch${IFS}x;#", "Computer Science", "q-bio", "__", "a--b", "Ünïcode", "x" * 3):
        assert re.fullmatch(r"[a-z0-9_]+", valid_group_name(name)), name
