"""The RewardMATH catalogue (rmeval.benchmarks.rewardmath.catalogue) against the rule file, the report captions,
the builders and what `rmeval rewardmath-metrics` really writes."""

from __future__ import annotations

import re
from pathlib import Path

from rmeval.benchmarks import benchmark
from rmeval.benchmarks.rewardmath import cli_metrics
from rmeval.benchmarks.rewardmath.catalogue import BENCHMARK, METRICS_RULE

REPO = Path(__file__).resolve().parents[1]

# The files the RewardMATH rules wrote before the catalogue existed: the paths must not move.
EXPECTED_FILES = {
    "rewardmath_metrics": [
        f"results/tables/{stem}.{suffix}"
        for stem, suffixes in (("rewardmath_metrics", "csv md tex"), ("rewardmath_metrics_ci", "csv"),
                               ("rewardmath_breakdown", "csv"), ("rewardbench_math_prm_accuracy", "csv md tex"),
                               ("rewardmath_vs_rewardbench", "csv md tex"), ("rewardmath_capability", "csv"))
        for suffix in suffixes.split()
    ],
    "rewardmath_figures": ["results/figures/rewardmath_vs_rewardbench.png",
                           "results/figures/rewardmath_vs_rewardbench.pdf"],
    "rewardmath_summary": ["results/rewardmath/summary.md"],
    "rewardmath_export": ["results/rewardmath/official/{model}.json"],
}


def _files(rule: str) -> list[str]:
    return [path for output in BENCHMARK.of_rule(rule)
            for path in (output.path, *(output.sibling(suffix) for suffix in output.formats))]


def test_the_benchmark_list_names_this_catalogue():
    assert benchmark("rewardmath") is BENCHMARK
    assert (REPO / BENCHMARK.rule_file).is_file() and BENCHMARK.enabled({"rewardmath": {"enabled": True}})
    assert not BENCHMARK.enabled({})


def test_every_file_of_the_rules_is_declared_once():
    assert {rule: _files(rule) for rule in EXPECTED_FILES} == EXPECTED_FILES
    assert {output.rule for output in BENCHMARK.outputs} == set(EXPECTED_FILES)
    keys = [output.key for output in BENCHMARK.outputs]
    assert len(keys) == len(set(keys)), keys


def test_the_rule_file_takes_its_outputs_from_the_catalogue():
    text = (REPO / BENCHMARK.rule_file).read_text(encoding="utf-8")
    for rule in EXPECTED_FILES:
        body = text.split(f"rule {rule}:", 1)[1].split("\nrule ", 1)[0]
        assert f'**rule_outputs("rewardmath", "{rule}")' in body, rule
    for path in (path for files in EXPECTED_FILES.values() for path in files):
        assert f'"{path}"' not in text, path  # spelled out in the catalogue only


def test_captions_exist_and_builders_import():
    for output in BENCHMARK.outputs:
        if output.caption:
            assert (REPO / "workflow" / "report" / output.caption).is_file(), output.caption
            assert output.category == "RewardMATH" and output.labels, output.key
        assert callable(output.build()), output.builder
    # every file in the report but the capability hand-over (read by fairness_vs_capability, which is reported)
    assert all(output.caption for output in BENCHMARK.outputs
               if "{" not in output.path and output.key != BENCHMARK.capability)


def test_metrics_writes_exactly_the_catalogued_tables(shared_data, tmp_path):
    rewardmath = shared_data / "rewardmath"
    out = tmp_path / "tables"
    assert cli_metrics.main(["--official", str(rewardmath / "results_rewardmath"), "--official-rewardbench",
                             str(rewardmath / "results_rewardbench"), "--out", str(out)]) == 0
    written = sorted(path.name for path in out.iterdir())
    assert written == sorted(Path(path).name for path in _files(METRICS_RULE))
    # Each LaTeX table is labelled after its catalogue stem.
    for output in BENCHMARK.of_rule(METRICS_RULE):
        if "tex" in output.formats:
            assert re.search(rf"\\label\{{tab:{output.stem}\}}", (out / f"{output.stem}.tex").read_text())
