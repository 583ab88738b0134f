"""The fairness benchmark's catalogue (rmeval.benchmarks.fairness.catalogue) and the run's
(rmeval.run_outputs.catalogue) against the rules Snakemake parses.

Every catalogued file must be the output of exactly the rule it names, every output of the fairness and run-level
rules must be catalogued, every caption must exist and every builder must import: then the CLI, the rule files,
the report and `rule all` cannot drift apart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rmeval.benchmarks import all_benchmarks, benchmark
from rmeval.benchmarks.catalogue import import_target
from rmeval.benchmarks.fairness.catalogue import BENCHMARK, CAPABILITY, RANKED
from rmeval.run_outputs.catalogue import RUN
from workflow_helpers import run_snakemake_process

REPO = Path(__file__).resolve().parents[1]
FAIRNESS_RULES = ("fairness_stats", "fairness_figures")
RUN_RULES = ("run_reproduction", "run_compare", "run_compare_figure", "run_summary")
HELD = (RANKED, CAPABILITY)  # the conditions that hold for the `parsed` fixture's config (not PAIRED)

# The rule files as the workflow includes them, then each rule's outputs (with their report captions) and
# `all_outputs()` dumped to JSON at parse time.
SNAKEFILE = f"""\
# As the Snakefile does: the schema's defaults filled in, so the rules read `config[...]` with no fallback.
from rmeval.config_check import config_schema, fill_defaults

fill_defaults(config, config_schema())


include: {str(REPO / "workflow/rules/common.smk")!r}
include: {str(REPO / "workflow/rules/fairness.smk")!r}
include: {str(REPO / "workflow/rules/run.smk")!r}

import json as _json
from rmeval.lock.lockfile import config_sha256 as _config_sha256

_outputs = {{
    job_rule.name: {{
        str(path): {{"caption": str(path.flags["report"].caption) if "report" in path.flags else None,
                    "category": path.flags["report"].category if "report" in path.flags else None}}
        for path in job_rule.output
    }}
    for job_rule in workflow.rules
}}
# The config is left as the lock's hash saw it: the report's sections go to a composed front page instead.
_hash_before = PLAN.config_sha256 == _config_sha256(config)
Path("parsed.json").write_text(_json.dumps({{"outputs": _outputs, "all": all_outputs(), "hash_before": _hash_before,
                                            "report_sections": list(RUN_OUTPUTS.report_sections),
                                            "report_text": str(workflow.report_text)}}))
"""


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    workdir = tmp_path_factory.mktemp("catalogue")
    config = {
        "groups": {"physics": ["physics"], "computer_science": ["cs"]},
        "arxiv": {"source": "snapshot", "snapshot": "unused.jsonl"},
        "registry": str(REPO / "config" / "models.yaml"),
        # two with a RewardBench rank: RANKED and CAPABILITY hold, every figure is drawn (HELD; the test of
        # skipped_figures has the other cases)
        "models": [{"name": "tiny-rm", "path": "local/tiny-rm", "rewardbench_rank": 1},
                   {"name": "tiny-rm-b", "path": "local/tiny-rm-b", "rewardbench_rank": 2}],
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    (workdir / "Snakefile").write_text(SNAKEFILE)
    result = run_snakemake_process(["-s", "Snakefile", "--configfile", "config.yaml", "--list-rules"], cwd=workdir,
                                   timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((workdir / "parsed.json").read_text())


def catalogued_files() -> dict[str, str]:
    """Every file the fairness and run catalogues declare (a table's .md and .tex, a figure's .pdf too) -> its
    rule."""
    files = {}
    for output in (*BENCHMARK.active(HELD), *RUN.outputs):
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


def test_the_fairness_and_run_rules_write_only_catalogued_files(parsed: dict) -> None:
    files = catalogued_files()
    for rule in (*FAIRNESS_RULES, *RUN_RULES):
        written = set(parsed["outputs"][rule])
        assert written == {path for path, owner in files.items() if owner == rule}, rule


def test_captioned_outputs_are_report_entries_with_an_existing_caption(parsed: dict) -> None:
    for output in (*BENCHMARK.active(HELD), *RUN.outputs):
        entry = parsed["outputs"][output.rule][output.path]
        if output.caption is None:
            assert entry["caption"] is None, output.key
            continue
        caption = REPO / "workflow" / "report" / output.caption
        assert caption.is_file(), f"{output.key}: caption {caption} is missing"
        assert Path(entry["caption"]) == caption and entry["category"] == output.category, output.key


def test_rule_all_asks_for_every_catalogued_file(parsed: dict) -> None:
    assert set(catalogued_files()) <= set(parsed["all"])
    assert set(RUN.targets()) == {
        *(f"results/tables/{stem}.{suffix}" for stem in ("reproduction", "comparisons", "leaderboard")
          for suffix in ("csv", "md", "tex")),
        "results/figures/fig_leaderboard.png", "results/figures/fig_leaderboard.pdf", "results/summary.md"}


def test_run_rules_read_what_the_enabled_benchmarks_declare(parsed: dict) -> None:
    """RewardMATH is off in this config: its report section is not on the front page, fairness's is; the config
    is not written to after its hash for the lock (the page is composed into the run's .snakemake folder)."""
    assert parsed["hash_before"] is True
    assert len(parsed["report_sections"]) == 1 and "2 disciplines" in parsed["report_sections"][0]
    page = Path(parsed["report_text"].removeprefix("file://"))
    assert page.name == "workflow.rst" and ".snakemake" in page.parts
    assert parsed["report_sections"][0] in page.read_text()


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
        "import rmeval.benchmarks.fairness.catalogue, rmeval.run_outputs.catalogue, rmeval.run_outputs.plan\n"
        "heavy = [m for m in ('pandas', 'numpy', 'scipy', 'matplotlib', 'torch') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr


def test_run_level_parts_name_their_own_inputs_and_files_that_exist() -> None:
    """Each benchmark's summary / reproduction / report parts: the provider imports, the tables it reads are its
    own catalogued outputs, its published-values files and report fragment exist in the repository."""
    for bench in all_benchmarks():
        for provider, keys in ((bench.summary_section, bench.summary_inputs),
                               (bench.reproduction, bench.reproduction_inputs)):
            if provider:
                assert callable(import_target(provider)), provider
            for key in keys:
                bench.get(key)  # a KeyError names a key the benchmark does not declare
        for path in bench.published:
            assert path.startswith("resources/published/") and (REPO / path).is_file(), (bench.name, path)
        assert bench.reproduction is None or bench.published, f"{bench.name}: compares with no published values"
        if bench.report_section:
            assert (REPO / "workflow" / "report" / bench.report_section).is_file(), bench.report_section
    published = [path for bench in all_benchmarks() for path in bench.published]
    assert len(published) == len(set(published)), "a published-values file belongs to one benchmark"
    assert [command.name for command in RUN.commands] == ["run-reproduction", "run-summary", "compare",
                                                           "compare-figure"]
    for bench in (bench for bench in all_benchmarks() if bench.compare):  # its comparison's parts (issue 40)
        for target in (bench.compare.provider, bench.compare.claims):
            assert target is None or callable(import_target(target)), target
        for key in bench.compare.claims_inputs:
            bench.get(key)
    for command in RUN.commands:
        assert callable(import_target(command.target)), command.target
    for output in RUN.outputs:
        assert callable(output.build()), output.builder


def test_optional_figures_are_skipped_only_when_they_would_show_nothing() -> None:
    """The fairness planner leaves out the figures with nothing to plot (their `when` does not hold), saying why."""
    from rmeval.benchmarks.fairness.planner import OPTIONAL_FIGURES, skipped_figures
    from rmeval.registry import spec_from_mapping

    def models(*ranks):
        return {f"m{i}": spec_from_mapping({"name": f"m{i}", "path": f"local/m{i}", "rewardbench_rank": rank}, "test")
                for i, rank in enumerate(ranks)}

    unranked = skipped_figures({}, models(None, None))
    assert set(unranked) == {"gap_vs_rank", "capability_figure"} == set(OPTIONAL_FIGURES)
    assert "0 of 2 model(s) have a `rewardbench_rank`" in unranked["gap_vs_rank"]
    assert set(skipped_figures({}, models(3, None))) == {"gap_vs_rank"}  # one rank: the capability figure has it
    assert skipped_figures({}, models(3, 5)) == {}
    assert {BENCHMARK.get(key).when for key in OPTIONAL_FIGURES} == {RANKED, CAPABILITY}
