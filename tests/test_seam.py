"""The benchmark catalogue is the only seam between a benchmark and the shared layer.

- The shared layer (workflow/rmeval outside benchmarks/<name>/, the shared rule files, the Snakefile) names no
  benchmark: it loops over the catalogues.
- CONTRIBUTING's "to add a benchmark" holds: a throwaway benchmark written by this test in a temporary folder (a
  package with a catalogue, a planner, two commands, a config section and a rule file, found through
  RMEVAL_BENCHMARKS) runs through the real workflow: its data stage, its score stage through the shared score
  rule with a local model, its metrics; its commands are on `rmeval`'s list, its config section is validated, its
  score sidecars reach the lock; and the repository is left untouched.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml
from workflow_helpers import REPO_ROOT

PACKAGE = REPO_ROOT / "workflow" / "rmeval"
# Benchmarks, their data sources and the papers' names. `rewardbench_rank` is a model's published leaderboard rank
# (registry metadata, rmeval.registry), not a benchmark of this workflow.
BENCHMARK_WORDS = re.compile(r"fairness|rewardmath|reward_math|arxiv|rewardbench(?!_rank)|song2025|kim2024", re.I)
SHARED_RULE_FILES = ("Snakefile", "workflow/rules/common.smk", "workflow/rules/scoring.smk",
                     "workflow/rules/download.smk", "workflow/rules/lock.smk", "workflow/rules/run.smk")


def shared_modules() -> list[Path]:
    """Every module of the package outside the benchmarks' own packages (benchmarks/__init__.py and
    benchmarks/catalogue.py are shared)."""
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if not (parts[0] == "benchmarks" and len(parts) > 2):
            modules.append(path)
    return modules


def names_in_code(source: str) -> list[tuple[int, str]]:
    """Identifiers, imported modules and every string of a module (keys, paths, module names, messages, help
    texts); docstrings alone are left out."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            text = node.name
        elif isinstance(node, ast.ImportFrom):
            text = node.module or ""
        elif isinstance(node, ast.alias):
            text = node.name
        else:
            continue
        if BENCHMARK_WORDS.search(text):
            found.append((getattr(node, "lineno", 0), text))
    return found


def test_the_shared_package_names_no_benchmark() -> None:
    found = [f"{path.relative_to(REPO_ROOT)}:{line}: {text}" for path in shared_modules()
             for line, text in names_in_code(path.read_text())]
    assert found == [], "\n".join(found)


def test_the_shared_rule_files_name_no_benchmark() -> None:
    found = []
    for name in SHARED_RULE_FILES:
        for number, line in enumerate((REPO_ROOT / name).read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if BENCHMARK_WORDS.search(code):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)


# ----------------------------------------------------------------------------- a throwaway fourth benchmark
CATALOGUE = '''
"""The echo benchmark: every model scores a few fixed (prompt, response) items; the table is the mean reward."""
from pathlib import Path

from rmeval.benchmarks.catalogue import Benchmark, Command, Output, ScoreStage, score_path

BENCHMARK = Benchmark(
    name="echo",
    title="Echo (a test's throwaway benchmark)",
    rule_file=str(Path(__file__).with_name("echo.smk")),
    enabled_by="echo",
    order=90,
    config_schema="echobench:config.schema.yaml",
    planner="echobench.planner:plan",
    models_key="echo.models",
    score_stages=(ScoreStage(rule="echo_score", scores=score_path("echo"), task="pairs",
                             log="logs/echo/score/{model}/{table}.log"),),
    commands=(Command("echo-prepare", "echobench.commands:prepare", "Write the echo items."),
              Command("echo-means", "echobench.commands:means", "Mean reward per model.")),
    outputs=(Output("means", "results/tables/echo_means.csv", "echo_means"),),
)
'''

PLANNER = '''
from rmeval.run_plan import BenchmarkPlan, ScoreJobs, model_keys

from echobench.catalogue import BENCHMARK

ITEMS = "results/echo/data/items.parquet"


def plan(config, context):
    section = config["echo"]
    models = context.resolve(section["models"], BENCHMARK.models_key)
    return BenchmarkPlan(
        name=BENCHMARK.name,
        models=models,
        model_keys=model_keys(BENCHMARK.models_key, section["models"]),
        score_jobs=(ScoreJobs(BENCHMARK.stage("echo_score"), tuple(models), ("items",), lambda model, table: ITEMS),),
        pending={"echo_prepare": [ITEMS]},
        settings={"echo_prepare": {"rows": section["rows"]}},
    )
'''

COMMANDS = '''
import argparse

from rmeval import cli_settings


def prepare(argv):
    parser = argparse.ArgumentParser(prog="rmeval echo-prepare")
    parser.add_argument("--out", required=True)
    parser.add_argument("--rows", type=int, default=2)
    cli_settings.add_settings_argument(parser)
    args = cli_settings.parse_args(parser, argv)
    import pandas as pd

    rows = [{"id": f"item-{i}", "prompt": f"Say {i}.", "response": f"{i} " * (i + 1)} for i in range(args.rows)]
    pd.DataFrame(rows).to_parquet(args.out)
    return 0


def means(argv):
    parser = argparse.ArgumentParser(prog="rmeval echo-means")
    parser.add_argument("--scores", nargs="+", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    import pandas as pd
    from pathlib import Path

    rows = [{"model": Path(p).parent.name, "mean_reward": pd.read_parquet(p)["reward"].mean()} for p in args.scores]
    pd.DataFrame(rows).to_csv(args.out, index=False)
    return 0
'''

SCHEMA = '''
properties:
  echo:
    type: object
    default: {enabled: false}
    additionalProperties: false
    properties:
      enabled: {type: boolean, default: false}
      rows: {type: integer, minimum: 1, default: 3}
      models:
        type: array
        default: []
        items: {$ref: "%s#/$defs/model"}
''' % (REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml")

RULES = '''
# The echo benchmark: prepare -> score (the shared score rule) -> means.


rule echo_prepare:
    output:
        table="results/echo/data/items.parquet",
    params:
        settings=stage_settings("echo", "echo_prepare"),
    log:
        "logs/echo/prepare.log",
    shell:
        "rmeval echo-prepare --out {output.table:q} --settings {params.settings:q} > {log:q} 2>&1"


rule echo_means:
    input:
        scores=PLAN.score_files("echo"),
    output:
        **rule_outputs("echo", "echo_means"),
    log:
        "logs/echo/means.log",
    shell:
        "rmeval echo-means --scores {input.scores:q} --out {output.means:q} > {log:q} 2>&1"
'''


def write_echo_benchmark(root: Path) -> Path:
    package = root / "echobench"
    package.mkdir(parents=True)
    files = {"__init__.py": '"""A throwaway benchmark (tests/test_seam.py)."""\n', "catalogue.py": CATALOGUE,
             "planner.py": PLANNER, "commands.py": COMMANDS, "config.schema.yaml": SCHEMA, "echo.smk": RULES}
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text).lstrip())
    return root


def repository_state() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO_ROOT,
                          capture_output=True, text=True, check=True).stdout


@pytest.mark.e2e
def test_a_fourth_benchmark_runs_through_the_workflow_without_touching_a_shared_file(tmp_path, tiny_model_dir):
    before = repository_state()
    plugins = write_echo_benchmark(tmp_path / "plugins")
    workdir = tmp_path / "run"
    workdir.mkdir()
    # The echo benchmark alone: no `groups:`, so no other benchmark is on.
    config = {
        "models": [{"name": "tiny", "path": str(tiny_model_dir), "dtype": "float32", "max_length": 128,
                    "resources": {"gpu": 0, "mem_mb": 2000, "runtime": 10}}],
        "scoring": {"threads": 1},
        "echo": {"enabled": True, "rows": 4, "models": ["tiny"]},  # the inline model of `models:`
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "RMEVAL_BENCHMARKS": "echobench.catalogue", "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(plugins), str(REPO_ROOT / "workflow"), os.environ.get("PYTHONPATH", "")])}

    listed = subprocess.run([sys.executable, "-m", "rmeval", "--help"], env=env, capture_output=True, text=True)
    assert "echo-prepare" in listed.stdout and "echo-means" in listed.stdout

    snakemake = [sys.executable, "-m", "snakemake", "-s", str(REPO_ROOT / "Snakefile"), "--directory", str(workdir),
                 "--configfile", str(workdir / "config.yaml")]
    (workdir / "bad.yaml").write_text(yaml.safe_dump({**config, "echo": {**config["echo"], "rows": 0}}))
    bad = subprocess.run([*snakemake[:-1], str(workdir / "bad.yaml"), "-n"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode != 0 and "echo.rows: got 0; expected an integer >= 1" in bad.stdout + bad.stderr

    run = subprocess.run([*snakemake, "--cores", "2", "results/tables/echo_means.csv"], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    scores = pd.read_parquet(workdir / "results/scores/echo/tiny/items.parquet")
    assert list(scores["id"]) == [f"item-{i}" for i in range(4)] and scores["reward"].notna().all()
    meta = json.loads((workdir / "results/scores/echo/tiny/items.meta.json").read_text())
    assert meta["rows"] == 4
    means = pd.read_csv(workdir / "results/tables/echo_means.csv")
    assert means["mean_reward"].iloc[0] == pytest.approx(scores["reward"].mean())
    assert "rule echo_score" in run.stdout + run.stderr  # the shared score rule, named by the stage

    plan = subprocess.run([*snakemake, "-n", "-p", "results/lock.yaml"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "results/scores/echo/tiny/items.meta.json" in plan.stdout + plan.stderr  # its sidecars reach the lock
    assert "rule score_fairness" not in plan.stdout + plan.stderr  # it ran alone: no other benchmark's job
    assert repository_state() == before  # nothing in the repository was touched
