"""The run-level layer (rmeval.run_outputs) gathers each enabled benchmark's part and names none: two fake
benchmarks stand in for the real ones (catalogue order: zeta, then eta, which a config turns on), so that the
order, the enabled check and the settings are those of the catalogue, not of any real benchmark."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
import rmeval.benchmarks
from rmeval.benchmarks.catalogue import Benchmark, Output
from rmeval.cli import main as rmeval_main
from rmeval.errors import RmevalError
from rmeval.run_outputs import context as run_context
from rmeval.run_outputs.comparison import SAME, Comparison, Published, ReproductionPart, Statistic
from rmeval.run_outputs.plan import RunOutputsPlan
from rmeval.run_outputs.report import report_sections
from rmeval.run_outputs.reproduction import gather
from rmeval.run_outputs.summary import compose

ZETA = Benchmark(
    name="zeta", title="Zeta", rule_file="workflow/rules/zeta.smk",
    outputs=(Output("table", "results/tables/zeta.csv", "zeta_rule"),),
    summary_section=f"{__name__}:zeta_section", summary_inputs=("table",),
    reproduction=f"{__name__}:zeta_part", reproduction_inputs=("table",), published=("zeta.yaml",),
    report_section="zeta.rst",
)
ETA = Benchmark(
    name="eta", title="Eta", rule_file="workflow/rules/eta.smk", enabled_by="eta",
    outputs=(Output("scores", "results/eta/scores.csv", "eta_rule"),),
    summary_section=f"{__name__}:eta_section", summary_inputs=("scores",),
    report_section="eta.rst", run_settings={"level": "eta.level"},
)


def zeta_section(context: run_context.RunContext) -> str:
    return f"# Zeta\n\n{context.path('table').read_text().strip()} at alpha = {context.alpha:g}.\n\n"


def eta_section(context: run_context.RunContext) -> str:
    return f"## Eta\n\nlevel {context.options['level']}; {context.path('scores').read_text().strip()}\n"


def zeta_part(context: run_context.RunContext) -> ReproductionPart:
    raise AssertionError("not called in these tests")


@pytest.fixture
def fake_catalogue(monkeypatch: pytest.MonkeyPatch):
    """The catalogue holds only the two fakes, in the order zeta, eta."""
    for bench in (ZETA, ETA):
        module = types.ModuleType(f"fake_{bench.name}_catalogue")
        module.BENCHMARK = bench
        monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(rmeval.benchmarks, "catalogue", lambda: {"zeta": ZETA, "eta": ETA})
    yield


def _config(eta: bool) -> dict:
    return {"stats": {"alpha": 0.01}, "eta": {"enabled": eta, "level": 3}}


def _report_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "repo" / "workflow" / "report"
    folder.mkdir(parents=True)
    (folder / "zeta.rst").write_text("Zeta always runs.\n")
    (folder / "eta.rst").write_text("\n{% if snakemake.config['eta']['level'] > 2 %}\nEta at level "
                                    "{{ snakemake.config['eta']['level'] }}.\n{% endif %}\n\n")
    return folder


def test_plan_gathers_the_enabled_benchmarks_in_catalogue_order(fake_catalogue, tmp_path: Path) -> None:
    _report_dir(tmp_path)
    plan = RunOutputsPlan.from_config(_config(eta=True), tmp_path / "repo")
    assert [bench.name for bench in plan.benchmarks] == ["zeta", "eta"]
    assert plan.summary_inputs == {"zeta_table": "results/tables/zeta.csv", "eta_scores": "results/eta/scores.csv",
                                   "reproduction": "results/tables/reproduction.csv",
                                   "comparisons": "results/tables/comparisons.csv",
                                   "leaderboard": "results/tables/leaderboard.csv"}
    assert json.loads(plan.summary_settings) == {"alpha": 0.01, "benchmarks": ["zeta", "eta"],
                                                 "options": {"eta": {"level": 3}}}
    # only zeta compares with published values: eta is in neither the inputs nor the settings of that rule
    assert plan.reproduction_inputs == {"zeta_table": "results/tables/zeta.csv",
                                        "zeta_published": [str(tmp_path / "repo" / "zeta.yaml")]}
    assert json.loads(plan.reproduction_settings) == {
        "alpha": 0.01, "benchmarks": ["zeta"], "options": {}, "published": [f"zeta={tmp_path / 'repo' / 'zeta.yaml'}"]}
    assert plan.report_sections == ("Zeta always runs.", "Eta at level 3.")

    off = RunOutputsPlan.from_config(_config(eta=False), tmp_path / "repo")
    assert [bench.name for bench in off.benchmarks] == ["zeta"]
    assert "eta_scores" not in off.summary_inputs
    assert json.loads(off.summary_settings) == {"alpha": 0.01, "benchmarks": ["zeta"], "options": {}}
    assert off.report_sections == ("Zeta always runs.",)


def test_run_summary_writes_each_enabled_section_in_catalogue_order(fake_catalogue, tmp_path: Path) -> None:
    _report_dir(tmp_path)
    run = tmp_path / "run"
    (run / "results" / "tables").mkdir(parents=True)
    (run / "results" / "eta").mkdir(parents=True)
    (run / "results" / "tables" / "zeta.csv").write_text("zeta's table\n")
    (run / "results" / "eta" / "scores.csv").write_text("eta's scores\n")
    for eta in (True, False):
        plan = RunOutputsPlan.from_config(_config(eta), tmp_path / "repo")
        assert rmeval_main(["run-summary", "--settings", plan.summary_settings, "--root", str(run)]) == 0
        text = (run / "results" / "summary.md").read_text()
        zeta = "# Zeta\n\nzeta's table at alpha = 0.01."
        assert text == (f"{zeta}\n\n## Eta\n\nlevel 3; eta's scores\n" if eta else f"{zeta}\n")
    assert compose(["a\n", "b\n\n\n", "c"]) == "a\n\nb\n\nc\n"
    # Random tiny models (`tiny_models`, the demo): the first line says their rewards mean nothing.
    plan = RunOutputsPlan.from_config(_config(eta=False), tmp_path / "repo", random_models=("tiny-a", "tiny-b"))
    assert rmeval_main(["run-summary", "--settings", plan.summary_settings, "--root", str(run)]) == 0
    first, rest = (run / "results" / "summary.md").read_text().split("\n\n", 1)
    assert first.startswith("**These rewards come from random tiny models (tiny-a, tiny-b") and "mean nothing" in first
    assert rest == "# Zeta\n\nzeta's table at alpha = 0.01.\n"


def test_run_options_are_the_declared_ones(fake_catalogue, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = ["run-summary", "--root", str(tmp_path), "--benchmarks", "zeta", "eta"]
    assert rmeval_main([*argv, "--options", '{"eta": {"levle": 1}}']) == 2
    assert "--options: eta: unknown option(s) levle; known: level" in capsys.readouterr().err
    assert rmeval_main([*argv[:-1], "--options", '{"eta": {"level": 1}}']) == 2
    assert "--options: eta is not among --benchmarks (zeta)" in capsys.readouterr().err
    with pytest.raises(RmevalError, match="zeta: unknown option"):
        run_context.benchmark_options(ZETA, {"level": 1})


def test_report_sections_are_the_enabled_ones_rendered_with_the_config(fake_catalogue, tmp_path: Path) -> None:
    folder = _report_dir(tmp_path)
    assert report_sections(_config(eta=True), folder) == ["Zeta always runs.", "Eta at level 3."]
    assert report_sections(_config(eta=False), folder) == ["Zeta always runs."]
    (folder / "zeta.rst").unlink()
    with pytest.raises(RmevalError, match="'zeta': report_section .*zeta.rst cannot be read"):
        report_sections(_config(eta=False), folder)


def test_not_in_this_report_comes_last_and_holds_only_what_the_report_lacks() -> None:
    """Issue 39: the shipped front page put the heading "Not in this report" before the run-level items
    (Reproduction, Reproducibility, where the files are), filing them under it although the report holds them."""
    from rmeval.run_outputs.report import front_page

    report_dir = Path(__file__).resolve().parents[1] / "workflow" / "report"
    page = front_page(["Section of a benchmark."], report_dir, {"fig_x": "nothing to show"})
    before, heading, after = page.partition("Not in this report\n------------------")
    assert heading, page
    assert "Section of a benchmark." in before
    for item in ("**Reproduction**", "**Reproducibility**", "Every figure and table is also written"):
        assert item in before and item not in after, item
    assert after.strip() == "* ``fig_x``: nothing to show."
    assert "Not in this report" not in front_page(["Section of a benchmark."], report_dir, {})


def test_reproduction_rows_go_by_model_then_aggregation_then_statistic() -> None:
    """Models in the order the parts give them (the first part's first), a model's scalar rows before its
    aggregations, statistics in the parts' order; a model no part has published values of is named once."""
    first, second, third = (Statistic(f"s{i}", f"S{i}", "rule", 2) for i in (1, 2, 3))
    paper = Published(1.0, False)

    def row(model: str, statistic: Statistic, aggregation: str = "scalar") -> Comparison:
        return Comparison(model, aggregation, statistic, 1.0, paper, SAME, "")

    zeta = ReproductionPart((first,), (row("m2", first), row("m1", first)), ("m2", "m1", "m4"),
                            frozenset({"m1", "m2"}), ("Zeta 2024",))
    eta = ReproductionPart((second, third), (row("m1", second, "geo"), row("m3", third), row("m1", third)),
                           ("m1", "m3", "m4", "m5"), frozenset({"m1", "m3", "m4"}), ("Eta 2025",), ("Eta's note.",))
    comparisons, notes, papers = gather([zeta, eta])
    assert [(c.model, c.aggregation, c.statistic.key) for c in comparisons] == [
        ("m2", "scalar", "s1"), ("m1", "scalar", "s1"), ("m1", "scalar", "s3"), ("m1", "geo", "s2"),
        ("m3", "scalar", "s3")]
    assert notes == ["Left out (no published values): m5.", "Eta's note."]  # m4: published by eta
    assert papers == ["Zeta 2024", "Eta 2025"]
    assert comparisons[3].row()["aggregation"] == "geo" and comparisons[0].row()["aggregation"] == ""
