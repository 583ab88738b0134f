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
from pathlib import Path

import pandas as pd
import pytest
import yaml
from workflow_helpers import REPO_ROOT

PACKAGE = REPO_ROOT / "workflow" / "rmeval"
# Benchmarks, their data sources and the papers' names. `rewardbench_rank` is a model's published leaderboard rank
# (registry metadata, rmeval.registry), not a benchmark of this workflow.
BENCHMARK_WORDS = re.compile(r"fairness|rewardmath|reward_math|arxiv|rewardbench(?!_rank)|judgebench|song2025|kim2024"
                             r"|rmb(?!ench)|rm-?bench|thu-keg",
                             re.I)
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
CONTRIBUTING = REPO_ROOT / "CONTRIBUTING.md"
RECIPE_FILE = re.compile(r"<!-- (echobench/[\w.]+) -->\n```\w*\n(.*?)```", re.S)


def recipe_files() -> dict[str, str]:
    """The `echo` benchmark of CONTRIBUTING's "Add a benchmark", file by file, as written there."""
    files = dict(RECIPE_FILE.findall(CONTRIBUTING.read_text()))
    assert set(files) == {f"echobench/{name}" for name in ("__init__.py", "catalogue.py", "config.schema.yaml",
                                                           "planner.py", "commands.py", "echo.smk")}, sorted(files)
    return files


def write_echo_benchmark(root: Path) -> Path:
    for name, text in recipe_files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
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
