"""The fairness benchmark's catalogue (rmeval.benchmarks.fairness.catalogue) against the rules Snakemake parses.

Every catalogued file must be the output of exactly the rule it names, every output of the fairness rules must be
catalogued, every caption must exist and every builder must import: then the CLI, the rule files, the report and
`rule all` cannot drift apart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rmeval.benchmarks import benchmark
from rmeval.benchmarks.fairness import plan
from rmeval.benchmarks.fairness.catalogue import BENCHMARK
from workflow_helpers import run_snakemake_process

REPO = Path(__file__).resolve().parents[1]
FAIRNESS_RULES = ("fairness_stats", "fairness_reproduction", "fairness_summary", "fairness_figures")

# The rule files as the workflow includes them, then each rule's outputs (with their report captions) and
# `all_outputs()` dumped to JSON at parse time.
SNAKEFILE = f"""\
# As the Snakefile does: the schema's defaults filled in, so the rules read `config[...]` with no fallback.
from rmeval.config_check import config_schema, fill_defaults

fill_defaults(config, config_schema())


include: {str(REPO / "workflow/rules/common.smk")!r}
include: {str(REPO / "workflow/rules/fairness.smk")!r}

import json as _json

_outputs = {{
    job_rule.name: {{
        str(path): {{"caption": str(path.flags["report"].caption) if "report" in path.flags else None,
                    "category": path.flags["report"].category if "report" in path.flags else None}}
        for path in job_rule.output
    }}
    for job_rule in workflow.rules
}}
Path("parsed.json").write_text(_json.dumps({{"outputs": _outputs, "all": all_outputs()}}))
"""


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    workdir = tmp_path_factory.mktemp("catalogue")
    config = {
        "groups": {"physics": ["physics"], "computer_science": ["cs"]},
        "arxiv": {"source": "snapshot", "snapshot": "unused.jsonl"},
        "registry": str(REPO / "config" / "models.yaml"),
        "models": [{"name": "tiny-rm", "path": "local/tiny-rm"}],
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    (workdir / "Snakefile").write_text(SNAKEFILE)
    result = run_snakemake_process(["-s", "Snakefile", "--configfile", "config.yaml", "--list-rules"], cwd=workdir,
                                   timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((workdir / "parsed.json").read_text())


def catalogued_files() -> dict[str, str]:
    """Every file the catalogue declares (a table's .md and .tex, a figure's .pdf too) -> its rule."""
    files = {}
    for output in BENCHMARK.outputs:
        for path in (output.path, *(output.sibling(suffix) for suffix in output.formats)):
            assert path not in files, f"{path} is declared twice"
            files[path] = output.rule
    return files


def test_every_catalogued_file_is_an_output_of_exactly_its_rule(parsed: dict) -> None:
    writers: dict[str, list[str]] = {}
    for rule, outputs in parsed["outputs"].items():
        for path in outputs:
            writers.setdefault(path, []).append(rule)
    for path, rule in catalogued_files().items():
        assert writers.get(path) == [rule], f"{path}: catalogued for {rule}, written by {writers.get(path)}"


def test_the_fairness_rules_write_only_catalogued_files(parsed: dict) -> None:
    files = catalogued_files()
    for rule in FAIRNESS_RULES:
        written = set(parsed["outputs"][rule])
        assert written == {path for path, owner in files.items() if owner == rule}, rule


def test_captioned_outputs_are_report_entries_with_an_existing_caption(parsed: dict) -> None:
    for output in BENCHMARK.outputs:
        entry = parsed["outputs"][output.rule][output.path]
        if output.caption is None:
            assert entry["caption"] is None, output.key
            continue
        caption = REPO / "workflow" / "report" / output.caption
        assert caption.is_file(), f"{output.key}: caption {caption} is missing"
        assert Path(entry["caption"]) == caption and entry["category"] == output.category, output.key


def test_rule_all_asks_for_every_catalogued_file(parsed: dict) -> None:
    assert set(catalogued_files()) <= set(parsed["all"])


def test_keys_are_unique_and_inputs_name_catalogued_outputs() -> None:
    keys = [output.key for output in BENCHMARK.outputs]
    assert len(keys) == len(set(keys)), keys
    assert benchmark("fairness") is BENCHMARK
    for output in BENCHMARK.outputs:
        for key in output.inputs:
            assert BENCHMARK.get(key).rule != output.rule, f"{output.key} reads {key} of its own rule"


def test_every_table_and_figure_names_a_builder_that_imports() -> None:
    for output in BENCHMARK.outputs:
        if output.suffix in {"csv", "png"}:
            assert output.builder, f"{output.key}: a table or figure needs a builder"
        if output.builder:
            assert callable(output.build()), output.builder
    with pytest.raises(LookupError, match="'record'.*names no builder"):
        BENCHMARK.get("record").build()
    with pytest.raises(KeyError, match="declares no output 'table11'"):
        BENCHMARK.get("table11")


def test_catalogue_imports_nothing_heavy() -> None:
    script = (
        "import sys\n"
        "import rmeval.benchmarks.fairness.catalogue, rmeval.benchmarks.fairness.plan\n"
        "heavy = [m for m in ('pandas', 'numpy', 'scipy', 'matplotlib', 'torch') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr


def test_optional_flag_is_empty_without_its_input_and_quotes_a_path() -> None:
    assert plan.optional_flag("--rewardmath", []) == ""
    assert plan.optional_flag("--rewardmath", ["results/tables/rewardmath_metrics.csv"]) == (
        "--rewardmath results/tables/rewardmath_metrics.csv"
    )
    assert plan.optional_flag("--table", ["my tables/x.csv"]) == "--table 'my tables/x.csv'"
    with pytest.raises(ValueError, match="--table: one path expected"):
        plan.optional_flag("--table", ["a.csv", "b.csv"])


def test_rewardmath_summary_step_runs_only_with_the_rewardmath_table() -> None:
    assert plan.rewardmath_summary_step([], "results/summary.md", "prod") == ""
    step = plan.rewardmath_summary_step(["results/tables/rewardmath_vs_rewardbench.csv"], "out dir/summary.md", "min")
    assert step == (" && rmeval rewardmath-summary --table results/tables/rewardmath_vs_rewardbench.csv"
                    " --append-to 'out dir/summary.md' --prm-aggregation min")


def test_published_values_exist_in_the_repository() -> None:
    for path in plan.PUBLISHED_VALUES:
        assert (REPO / path).is_file(), path
