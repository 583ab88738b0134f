"""`rmeval run` end to end, offline as on a fresh clone (the closed proxy, an empty Hugging Face cache): issue 42's
"Done when". ONE full Snakemake run (the module fixture) carries every assertion: two `rmeval tiny-model` folders
through the demo data with `rmeval run --model A --model B --data demo --cores 2`, then the same command again, plain
Snakemake on the config it wrote, a dry run that adds a model (a copy of A: one warning), then `--model A --baseline
length` (it scores the baseline alone; B is left out, said first, and its files are named as not from this run), and
that command again with `--clean` (issue 46). The bad-input tests stop before any job and live in
tests/test_run_command.py."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from scenarios import NO_NETWORK_PROXY, TinyModels
from workflow_helpers import REPO_ROOT, run_snakemake_process, tree_state

pytestmark = pytest.mark.e2e

COMMAND = ["--model", "A", "--model", "B", "--data", "demo", "--cores", "2"]
GROUPS = tuple(yaml.safe_load((REPO_ROOT / "config" / "demo.yaml").read_text())["groups"])


@dataclass(frozen=True)
class FrontDoorRun:
    workdir: Path
    env: dict[str, str]
    first: subprocess.CompletedProcess
    second: subprocess.CompletedProcess
    after_first: dict[str, tuple[str, int]]
    after_second: dict[str, tuple[str, int]]
    config_text: str  # results/run_config.yaml after the first command
    leaderboard: list[dict[str, str]]  # results/tables/leaderboard.csv after it
    comparisons: list[dict[str, str]]  # results/tables/comparisons.csv after it

    @property
    def results(self) -> Path:
        return self.workdir / "results"


BASELINE_COMMAND = ["--model", "A", "--baseline", "length", "--data", "demo", "--cores", "2"]


@dataclass(frozen=True)
class BaselineAdded:
    """`--model A --baseline length` after the front door's run (B left out), then the same with `--clean`."""

    run: subprocess.CompletedProcess
    before: dict[str, tuple[str, int]]
    after: dict[str, tuple[str, int]]
    summary: str  # results/summary.md after it
    front_page: str  # the report's front page after it
    cleaned: subprocess.CompletedProcess
    after_clean: dict[str, tuple[str, int]]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def printed_answer(result: subprocess.CompletedProcess) -> str:
    """What `rmeval run` printed after Snakemake ended (its own lines before it: the models and the command)."""
    return result.stdout.split("\n\n", 1)[1]


def rmeval_run(workdir: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "rmeval", "run", *argv], cwd=workdir, env=env, capture_output=True,
                            text=True, timeout=900, check=False)
    assert result.returncode == 0, f"{result.stdout[-6000:]}\n--- stderr ---\n{result.stderr[-6000:]}"
    return result


@pytest.fixture(scope="module")
def front_door(tmp_path_factory: pytest.TempPathFactory, tiny_models: TinyModels) -> FrontDoorRun:
    workdir = tmp_path_factory.mktemp("rmeval-run")
    for name, seed in (("A", 0), ("B", 1), ("C", 0)):  # C: a third checkpoint (a copy of A: a dry run reads no weights)
        tiny_models.copy_to(workdir / name, seed, "classifier")
    env = {**os.environ, **NO_NETWORK_PROXY, "HF_HOME": str(workdir / "empty-hf-home")}
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # offline by the network, as on a fresh clone
        env.pop(variable, None)
    first = rmeval_run(workdir, env, *COMMAND)
    after_first = tree_state(workdir / "results")
    config_text = (workdir / "results" / "run_config.yaml").read_text()
    tables = workdir / "results" / "tables"
    leaderboard, comparisons = read_csv(tables / "leaderboard.csv"), read_csv(tables / "comparisons.csv")
    second = rmeval_run(workdir, env, *COMMAND)
    return FrontDoorRun(workdir, env, first, second, after_first, tree_state(workdir / "results"), config_text,
                        leaderboard, comparisons)


@pytest.fixture(scope="module")
def baseline_added(front_door: FrontDoorRun) -> BaselineAdded:
    before = tree_state(front_door.results)
    run = rmeval_run(front_door.workdir, front_door.env, *BASELINE_COMMAND)
    after = tree_state(front_door.results)
    summary = (front_door.results / "summary.md").read_text()
    front_page = (front_door.workdir / ".snakemake/rmeval/report/workflow.rst").read_text()
    cleaned = rmeval_run(front_door.workdir, front_door.env, *BASELINE_COMMAND, "--clean")
    return BaselineAdded(run, before, after, summary, front_page, cleaned, tree_state(front_door.results))


def test_it_writes_tables_1_to_4_and_the_config_it_ran(front_door):
    tables = front_door.results / "tables"
    for stem in ("table1_anova", "table2_tukey", "table3_nmgd", "table4_pearson"):
        for suffix in ("csv", "md", "tex"):
            assert (tables / f"{stem}.{suffix}").is_file(), f"{stem}.{suffix}"
    with (tables / "table4_pearson.csv").open() as handle:  # Table 4 against the first model
        assert [row["model"] for row in csv.DictReader(handle)][0] == "B"
    text = front_door.config_text
    lines = text.splitlines()
    assert lines[2] == f"#   snakemake -s {REPO_ROOT / 'Snakefile'} --configfile results/run_config.yaml --cores 2"
    assert lines[3] == f"# Written by: rmeval run {' '.join(COMMAND)}"
    config = yaml.safe_load(text)
    assert [(entry["name"], entry["path"], entry["dtype"], entry["resources"]["gpu"]) for entry in config["models"]] \
        == [("A", str(front_door.workdir / "A"), "float32", 0), ("B", str(front_door.workdir / "B"), "float32", 0)]
    assert config["reference_model"] == "A" and config["arxiv"]["snapshot"] == "resources/demo/arxiv-sample.jsonl"
    assert (front_door.results / "summary.md").is_file() and (front_door.results / "lock.yaml").is_file()


def printed_rows(answer: str) -> list[list[str]]:
    return [line.split() for line in answer.splitlines()]


def interval(row: dict[str, str], low: str, high: str) -> list[str]:
    return [f"[{float(row[low]):.3f},", f"{float(row[high]):.3f}]"]


def test_it_writes_the_comparisons_and_prints_headlines_ranks_and_comparisons(front_door):
    for stem in ("comparisons", "leaderboard"):
        for suffix in ("csv", "md", "tex"):
            assert (front_door.results / "tables" / f"{stem}.{suffix}").is_file(), f"{stem}.{suffix}"
    answer = printed_answer(front_door.first)
    rows = printed_rows(answer)
    headlines = [row for row in front_door.leaderboard if row["benchmark"] == "fairness"]
    assert {row["model"] for row in headlines} == {"A", "B"}
    assert "  Group fairness on arXiv abstracts (Song et al. 2025): scale_free_gap (lower is better)" in answer
    for row in headlines:  # the leaderboard's numbers, as printed: value, interval, rank and its interval
        assert [row["model"], f"{float(row['value']):.3f}", *interval(row, "ci_low", "ci_high"), row["rank"],
                f"{row['rank_low']}-{row['rank_high']}"] in [printed[:6] for printed in rows], answer
    gap = next(row for row in front_door.comparisons if row["metric"] == "scale_free_gap")
    assert (gap["model_a"], gap["model_b"]) == ("A", "B")
    assert ["fairness", "scale_free_gap", "A", "B", f"{float(gap['difference']):.3f}",
            *interval(gap, "ci_low", "ci_high")] in [printed[:7] for printed in rows], answer
    shown = {(row["benchmark"], row["metric"]) for row in front_door.leaderboard}
    more = sum((row["benchmark"], row["metric"]) not in shown for row in front_door.comparisons)
    assert (f"  {more} more (subsets, sections, other measures) in results/tables/comparisons.csv" in answer) == \
        (more > 0)
    assert "  tables       results/tables/  table1_anova.md, table2_tukey.md, table3_nmgd.md, table4_pearson.md" in answer
    figures = sorted(path.name for path in (front_door.results / "figures").glob("*.png"))
    assert "fig_leaderboard.png" in figures  # the run's own figure counts among them
    listed = next(line for line in answer.splitlines() if line.startswith("  figures      results/figures/  "))
    assert listed.endswith(f"and {len(figures) - 4} more") and "  summary      results/summary.md" in answer
    assert f"  report       snakemake -s {REPO_ROOT / 'Snakefile'} --configfile results/run_config.yaml --report " \
           "results/report.html" in answer
    assert "A  --model A: local folder, config.json: LlamaForSequenceClassification, 1 label -> " \
           "sequence-classification, the CPU, fp32 (this machine)" in front_door.first.stdout
    # issue 46, try 9: `rmeval tiny-model` folders (their card says so): the demo's line in console, summary, report
    assert answer.startswith("These rewards come from random tiny models (A, B, built by `rmeval tiny-model`) and "
                             "mean nothing")
    summary = (front_door.results / "summary.md").read_text()
    assert summary.startswith("**These rewards come from random tiny models (A, B, built by `rmeval tiny-model`)")
    assert "These rewards come from random tiny models (A, B" in \
        (front_door.workdir / ".snakemake/rmeval/report/workflow.rst").read_text()
    assert "## Not from this run" not in summary  # a first run in a fresh folder: every file is its own
    # issue 46, try 10: each headline comparison in words, with the leaderboard's digits
    relation = "smaller than" if float(gap["difference"]) < 0 else "larger than"
    assert (f"    A's scale-free gap is {relation} B's (difference {float(gap['difference']):.3f}, p (Holm) "
            in answer)


def test_the_same_command_again_does_no_work(front_door):
    assert "Nothing to be done (all requested files are present and up to date)." in front_door.second.stderr
    assert front_door.after_second == front_door.after_first  # every file's bytes and modification time
    assert printed_answer(front_door.second) == printed_answer(front_door.first)


def test_plain_snakemake_on_the_written_config_plans_nothing(front_door):
    result = run_snakemake_process(["-s", str(REPO_ROOT / "Snakefile"), "--configfile", "results/run_config.yaml",
                                    "-n"], cwd=front_door.workdir, env=front_door.env, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "Nothing to be done (all requested files are present and up to date)." in result.stdout + result.stderr


def test_adding_a_model_plans_only_that_models_scores_and_a_dry_run_changes_nothing(front_door):
    before = tree_state(front_door.results)
    result = rmeval_run(front_door.workdir, front_door.env, *COMMAND[:4], "--model", "C", *COMMAND[4:], "-n")
    planned = re.findall(r"rule (\w+):\n(?:    .*\n)*?    wildcards: ([^\n]*)", result.stdout)
    scored = sorted(wildcards for rule, wildcards in planned if rule == "score_fairness")
    assert scored == sorted(f"model=C, table={group}" for group in GROUPS)
    assert [wildcards for rule, wildcards in planned if rule == "download_model"] == ["model=C"]
    # a dry run leaves results/ as it was: its config goes to .snakemake/rmeval/
    assert tree_state(front_door.results) == before
    assert "- name: C" in (front_door.workdir / ".snakemake/rmeval/run_config.dry-run.yaml").read_text()
    # issue 46, try 11: C is a copy of A's folder: one warning, and C is planned all the same
    assert "rmeval run: warning: A (--model A), C (--model C) load the same folder contents: the same weights are " \
           "scored twice (meant? then nothing is wrong)" in result.stdout.splitlines()


def test_a_length_baseline_added_is_the_only_model_scored_and_the_answer_marks_it(front_door, baseline_added):
    scores = "scores/fairness/"
    changed = {path for path, state in baseline_added.after.items() if baseline_added.before.get(path) != state}
    assert {path for path in changed if path.startswith(scores) and path.endswith(".parquet")} == \
        {f"{scores}length-baseline/{group}.parquet" for group in GROUPS}
    kept = [path for path in baseline_added.before if path.startswith((f"{scores}A/", f"{scores}B/"))]
    assert kept and all(baseline_added.after[path] == baseline_added.before[path] for path in kept)
    assert "length-baseline  --baseline length: the registry's length-baseline (baseline, baseline:length)" in \
        baseline_added.run.stdout
    answer = printed_answer(baseline_added.run)
    leaderboard = read_csv(front_door.results / "tables" / "leaderboard.csv")
    row = next(row for row in leaderboard if row["model"] == "length-baseline" and row["metric"] == "scale_free_gap")
    assert row["baseline"].lower() == "true"
    assert ["length-baseline", "(baseline)", f"{float(row['value']):.3f}"] in [line[:3] for line in printed_rows(answer)]
    assert ["fairness", "scale_free_gap", "A", "length-baseline"] in [line[:4] for line in printed_rows(answer)]
    config = yaml.safe_load((front_door.results / "run_config.yaml").read_text())
    assert config["models"][1] == "length-baseline" and config["reference_model"] == "A"


def test_a_rerun_without_b_says_so_first_and_covers_only_its_own_models(front_door, baseline_added):
    """Issue 46, try 2: the command's models are the run's. B is left out of the leaderboard and the comparisons, and
    the console's first lines say so, with the two ways to keep it."""
    first = baseline_added.run.stdout.splitlines()[:3]
    assert first[0].startswith("rmeval run: earlier models in results/ that are not in this run: B "
                               "(results/scores/fairness/B/)")
    assert first[2] == "  To keep B: add `--model` for it again, or `--keep` (carries the previous run's models forward)."
    board = read_csv(front_door.results / "tables" / "leaderboard.csv")
    assert {row["model"] for row in board} == {"A", "length-baseline"}
    compared = {(row["model_a"], row["model_b"]) for row in read_csv(front_door.results / "tables/comparisons.csv")}
    assert compared == {("A", "length-baseline")}


def test_files_of_the_earlier_run_are_named_as_not_from_this_run_and_clean_moves_them(front_door, baseline_added):
    """Issue 46, try 3: B's score folder and figures, written by the first command (its record names it), are listed
    in the summary and on the report's front page; `--clean` moves them to results/.previous/<UTC time>/ (nothing
    deleted), and the summary, rewritten, no longer lists them."""
    first_command = f"`rmeval run {' '.join(COMMAND)}` (started 20"
    section = baseline_added.summary.split("## Not from this run", 1)[1]
    listed = [line for line in section.splitlines() if line.startswith("- `results/")]
    assert "- `results/scores/fairness/B/`: written " in section and all(first_command in line for line in listed)
    assert not any("length-baseline" in line or "/A/" in line for line in listed)
    assert "Not from this run\n-----------------" in baseline_added.front_page
    assert "* ``results/scores/fairness/B/``: written " in baseline_added.front_page
    moved = [line for line in baseline_added.cleaned.stdout.splitlines() if line.startswith("rmeval run: --clean")]
    previous = next((front_door.results / ".previous").iterdir())
    assert moved == [f"rmeval run: --clean moved what this run does not write ({len(listed)} of results/'s files and "
                     f"folders) to results/.previous/{previous.name}/ (nothing deleted)"]
    assert (previous / "scores/fairness/B").is_dir() and not (front_door.results / "scores/fairness/B").exists()
    gone = [path for path in baseline_added.after if path not in baseline_added.after_clean]
    assert gone and all(any(f"results/{path}".startswith(line.split("`")[1]) for line in listed) for path in gone)
    for path in gone:  # moved with its bytes, not deleted
        assert baseline_added.after_clean[f".previous/{previous.name}/{path}"][0] == baseline_added.after[path][0]
    assert "## Not from this run" not in (front_door.results / "summary.md").read_text()
