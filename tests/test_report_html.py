"""`snakemake --report`: every fairness figure is in the HTML with its caption, and renders in Chromium.

Two reports are checked. A small one from a workflow that includes the real `fairness_figures.smk`, fed
with hand-made tables (always runs; the Chromium part skips without Chromium), and the report of
the end-to-end run of the real workflow (needs the shared data and Chromium).
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from chromium import chromium_path, render_page_images, render_report
from rmeval.benchmarks.fairness.catalogue import BENCHMARK, RANKED
from rmeval.benchmarks.fairness.figures.cli import FIGURE_NAMES
from rmeval.run_outputs.report import front_page, report_sections
from test_figures import write_fixture_tables
from workflow_helpers import run_snakemake_process

REPO_ROOT = Path(__file__).resolve().parents[1]
REPORT_DIR = REPO_ROOT / "workflow" / "report"
TABLE_CAPTIONS = (
    "table1_anova",
    "table2_tukey",
    "table3_nmgd",
    "table4_pearson",
    "group_means",
    "table5_robust_anova",
    "table6_games_howell",
    "table7_gap",
    "table8_length",
    "table9_rank_agreement",
    "table10_rank_vs_fairness",
    "correlation_pearson",
    "correlation_spearman",
    "reproduction",
    "provenance",
    "comparisons",
    "leaderboard",
    "fig_leaderboard",
)
CONFIG = {
    "groups": {"physics": ["physics"], "computer_science": ["cs"]},
    "arxiv": {"source": "snapshot", "papers_per_group": 30, "seed": 3},
    "figures": {"dpi": 60},
}

needs_chromium = pytest.mark.skipif(
    chromium_path() is None,
    reason="headless Chromium not installed (/usr/bin/chromium; apt-get install chromium)",
)


@dataclass(frozen=True)
class BuiltReport:
    workdir: Path
    html: Path


def report_data(html: Path, variable: str):
    """One of the JSON blobs the report embeds (`var results = {...};`)."""
    text = html.read_text(encoding="utf-8")
    script_id = variable.replace("_", "-")  # e.g. <script id="workflow-desc"> var workflow_desc = ...
    match = re.search(rf'<script id="{script_id}">\s*var {variable} = (.*?);\s*</script>', text, re.S)
    assert match, f"{html} has no `var {variable}`"
    return json.loads(match.group(1))


def run(arguments: list[str], cwd: Path) -> None:
    completed = run_snakemake_process(arguments, cwd=cwd, timeout=300)
    assert completed.returncode == 0, f"{arguments}\n{completed.stdout[-3000:]}\n{completed.stderr[-5000:]}"


@pytest.fixture(scope="module")
def figures_report(tmp_path_factory: pytest.TempPathFactory) -> BuiltReport:
    """The real figures rule and report front page, in a workflow whose only other rule stages the tables."""
    workdir = tmp_path_factory.mktemp("figures-report")
    write_fixture_tables(workdir / "fixtures")
    # common.smk's helpers (rule_outputs, rule_inputs) read the config: two registry models with a published
    # RewardBench rank, so that the plan skips no optional figure (none is scored: the tables are fixtures).
    config = {**CONFIG, "models": ["ArmoRM-Llama3-8B-v0.1", "GRM-llama3-8B-sftreg"],
              "registry": str(REPO_ROOT / "config" / "models.yaml")}
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    (workdir / "Snakefile").write_text(
        f'configfile: "config.yaml"\n\n'
        # As the Snakefile does: the schema's defaults filled in (the rules read `config[...]`, no fallback).
        "from rmeval.config_check import config_schema, fill_defaults\n\n"
        "fill_defaults(config, config_schema())\n\n"
        # the front page as run.smk composes it: the shared page with the enabled benchmarks' sections
        "from pathlib import Path\nfrom rmeval.run_outputs.report import FRONT_PAGE, report_sections, write_front_page\n\n"
        f'report: str(write_front_page(report_sections(config, Path("{REPORT_DIR}")), Path("{REPORT_DIR}"), '
        'Path(FRONT_PAGE)))\n\n'
        f'include: "{REPO_ROOT / "workflow" / "rules" / "common.smk"}"\n'
        f'include: "{REPO_ROOT / "workflow" / "rules" / "fairness_figures.smk"}"\n\n\n'
        "rule all:\n"
        "    input:\n"
        "        rules.fairness_figures.output,\n"
        "    default_target: True\n\n\n"
        "rule stage_table:\n"  # the tables and the run record (fairness_stats.json: the gap forest's alpha)
        "    input:\n"
        '        "fixtures/{name}",\n'
        "    output:\n"
        '        "results/tables/{name}",\n'
        "    log:\n"
        '        "logs/stage_{name}.log",\n'
        "    shell:\n"
        '        "cp {input} {output} 2> {log}"\n'
    )
    snakemake = ["--directory", str(workdir), "-s", str(workdir / "Snakefile")]
    run([*snakemake, "--cores", "1"], cwd=workdir)
    html = workdir / "report.html"
    run([*snakemake, "--report", str(html)], cwd=workdir)
    return BuiltReport(workdir=workdir, html=html)


def caption_text(stem: str) -> str:
    return " ".join((REPORT_DIR / f"{stem}.rst").read_text().split())


def test_caption_files_are_valid_rst_of_one_or_two_sentences() -> None:
    from docutils.core import publish_parts
    from jinja2 import Template

    for stem in (*FIGURE_NAMES, *TABLE_CAPTIONS):
        path = REPORT_DIR / f"{stem}.rst"
        assert path.is_file(), f"missing caption {path}"
        text = caption_text(stem)
        sentences = re.findall(r"[.!?](?:\s+[A-Z]|$)", text)
        assert 1 <= len(sentences) <= 2, f"{path}: {len(sentences)} sentences"
        # halt_level 2: a docutils warning (bad markup) fails the test instead of leaking into the report.
        publish_parts(path.read_text(), writer="html", settings_overrides={"halt_level": 2})
    # The front page with every enabled benchmark's section, as workflow/rules/run.smk composes it.
    for rewardmath in (True, False):
        config = {**CONFIG, "rewardmath": {"enabled": rewardmath}}
        page = front_page(report_sections(config, REPORT_DIR), REPORT_DIR)  # as run.smk composes it
        front = Template(page).render(snakemake=type("Snakemake", (), {"config": config}))
        links = "\n".join(f".. _{stem}.png: #{stem}" for stem in FIGURE_NAMES)
        html = publish_parts(front + "\n\n" + links, writer="html", settings_overrides={"halt_level": 2})["body"]
        assert "2 disciplines" in html and "30 papers per group" in html
        assert ("The <strong>RewardMATH</strong> branch is enabled" in html) is rewardmath


def test_every_caption_and_section_is_rst_docutils_accepts() -> None:
    """Every file of workflow/report/ (captions of every benchmark, front-page sections): a docutils warning or
    error (e.g. `|NMGD|`, an undefined substitution) fails here instead of showing in the report."""
    from docutils.core import publish_parts
    from docutils.utils import SystemMessage

    for path in sorted(REPORT_DIR.glob("*.rst")):
        if path.name == "workflow.rst" or path.name.endswith("_section.rst"):
            continue  # the front page and its sections link the report's items: checked with them above
        try:
            publish_parts(path.read_text(), writer="html", settings_overrides={"halt_level": 2, "report_level": 5})
        except SystemMessage as error:
            raise AssertionError(f"{path.name}: {error}") from error


def test_figures_rule_wraps_every_png_in_report_with_its_caption() -> None:
    """The rule's outputs are the catalogue's figures: each PNG a report entry with its caption, and a PDF."""
    figures = BENCHMARK.of_rule("fairness_figures", (RANKED,))  # the figures of a run with two ranked models
    assert tuple(figure.stem for figure in figures) == FIGURE_NAMES
    for figure in figures:
        assert figure.path == f"results/figures/{figure.stem}.png"
        assert (figure.caption, figure.category) == (f"{figure.stem}.rst", "Fairness figures")
        assert figure.formats == ("pdf",) and figure.labels["figure"] and figure.labels["shows"]
    rules = (REPO_ROOT / "workflow" / "rules" / "fairness_figures.smk").read_text()
    assert 'output:\n        **rule_outputs("fairness", "fairness_figures"),' in rules


def test_report_embeds_every_figure_with_caption_and_front_page(figures_report: BuiltReport) -> None:
    results = report_data(figures_report.html, "results")
    categories = report_data(figures_report.html, "categories")
    expected = {f"results/figures/{stem}.png" for stem in FIGURE_NAMES}
    assert set(results) == expected
    assert {path for paths in categories["Fairness figures"].values() for path in paths} == expected
    for stem in FIGURE_NAMES:
        entry = results[f"results/figures/{stem}.png"]
        assert entry["mime_type"] == "image/png"
        png = base64.b64decode(entry["data_uri"].split("base64,", 1)[1])
        assert png == (figures_report.workdir / "results" / "figures" / f"{stem}.png").read_bytes()
        first_words = " ".join(caption_text(stem).split()[:6])
        assert first_words in " ".join(re.sub(r"<[^>]+>", " ", entry["caption"]).split()), stem
        assert entry["labels"]["figure"]
    front_page = report_data(figures_report.html, "workflow_desc")
    assert "2 disciplines" in front_page and "30 papers per group" in front_page and "seed\n3" in front_page
    for stem in FIGURE_NAMES:
        assert f"javascript:app.showResultInfo('results/figures/{stem}.png')" in front_page
    # figures.dpi from the config reached the command (a 200-dpi Figure 2 is over 1500 px wide).
    assert '\\"dpi\\":60' in results["results/figures/fig2_group_means.png"]["job_properties"]["params"]
    png = (figures_report.workdir / "results" / "figures" / "fig2_group_means.png").read_bytes()
    assert int.from_bytes(png[16:20], "big") < 800
    log = (figures_report.workdir / "logs" / "fairness_figures.log").read_text()
    assert "wrote results/figures/fig2_group_means.pdf" in log


@needs_chromium
def test_chromium_renders_every_figure_of_the_report(figures_report: BuiltReport, tmp_path: Path) -> None:
    rendered = render_report(figures_report.html, tmp_path)
    assert rendered.app_mounted and not rendered.errors, rendered.errors
    assert "Fairness figures" in rendered.nav_text and "Figure 2" in rendered.nav_text
    assert sorted(image.path for image in rendered.images) == sorted(
        f"results/figures/{stem}.png" for stem in FIGURE_NAMES
    )
    for image in rendered.images:
        assert image.error is None, (image.path, image.error)
        png = figures_report.workdir / image.path
        width, height = (
            int.from_bytes(png.read_bytes()[16:20], "big"),
            int.from_bytes(png.read_bytes()[20:24], "big"),
        )
        assert (image.natural_width, image.natural_height) == (width, height), image.path
        assert image.shown_width > 100 and image.shown_height > 50, image


@needs_chromium
def test_chromium_check_catches_a_figure_that_does_not_render(
    figures_report: BuiltReport, tmp_path: Path
) -> None:
    html = figures_report.html.read_text(encoding="utf-8")
    results = report_data(figures_report.html, "results")
    victim = results["results/figures/fig_gap_forest.png"]["data_uri"]
    truncated = (
        victim.split("base64,", 1)[0] + "base64," + base64.b64encode(b"\x89PNG\r\n\x1a\nnot a png").decode()
    )
    broken = tmp_path / "broken.html"
    broken.write_text(html.replace(victim, truncated), encoding="utf-8")
    rendered = {image.path: image for image in render_report(broken, tmp_path / "probe").images}
    assert rendered["results/figures/fig_gap_forest.png"].natural_width == 0
    assert rendered["results/figures/fig2_group_means.png"].natural_width > 0


@needs_chromium
def test_chromium_page_probe_tells_good_from_broken_images(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 1))
    figure.add_subplot().plot([0, 1], [1, 0])
    figure.savefig(tmp_path / "good.png", dpi=50)
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    page = tmp_path / "page.html"
    page.write_text('<html><body><img src="good.png"><img src="bad.png"></body></html>')
    images = {Path(image.path).name: image for image in render_page_images(page, tmp_path / "probe")}
    assert images["good.png"].natural_width == 100 and images["good.png"].natural_height == 50
    assert images["bad.png"].natural_width == 0


@dataclass(frozen=True)
class RunReport:
    html: Path
    output: str  # what `snakemake --report` printed


@pytest.fixture(scope="module")
def e2e_report(e2e_run, tmp_path_factory: pytest.TempPathFactory) -> RunReport:
    """`snakemake --report` of the end-to-end run (the demo)."""
    from workflow_helpers import run_snakemake

    html = tmp_path_factory.mktemp("e2e-report") / "report.html"
    built = run_snakemake(e2e_run.workdir, e2e_run.configfile, "--report", str(html))
    return RunReport(html, built.stdout + built.stderr)


def docutils_problems(text: str) -> list[str]:
    """docutils' complaints: `(ERROR/3) ...` lines and the "Docutils System Messages" a caption shows instead."""
    # No `.*` around the pattern: the report is one multi-megabyte line, and a leading `.*` scans it quadratically.
    return [text[max(0, m.start() - 80):m.end() + 80]
            for m in re.finditer(r"\((?:ERROR|SEVERE|WARNING)/\d\)|System Message", text)]


def test_docutils_problems_are_found() -> None:
    from docutils.core import publish_parts

    shown = publish_parts("The |NMGD| of a model.", writer="html")["html_body"]
    assert docutils_problems(shown) and docutils_problems('<string>:1: (ERROR/3) Undefined substitution "X".')
    assert not docutils_problems(publish_parts("The \\|NMGD\\| of a model.", writer="html")["html_body"])


@pytest.mark.e2e
def test_workflow_report_has_no_docutils_error(e2e_report: RunReport) -> None:
    """No caption of the report holds a docutils error or system message, and building it printed none."""
    assert not docutils_problems(e2e_report.output), docutils_problems(e2e_report.output)
    html = e2e_report.html.read_text(encoding="utf-8")
    assert not docutils_problems(html), docutils_problems(html)[:3]


@pytest.mark.e2e
def test_figures_with_nothing_to_show_are_not_written_and_the_report_says_why(e2e_run, e2e_report) -> None:
    """The demo's models have no RewardBench rank and it measures no capability: the two optional figures
    (catalogue `optional`) are neither written nor in the report, whose front page names them with the reason."""
    results = report_data(e2e_report.html, "results")
    front_page = report_data(e2e_report.html, "workflow_desc")
    assert "Not in this report" in front_page
    # the heading is the page's last part: the run-level items are in the report, so not under it (issue 39)
    in_report, not_in_report = front_page.split("Not in this report", 1)
    for item in ("Reproducibility", "Every figure and table is also written"):
        assert item in in_report and item not in not_in_report, item
    for stem, why in (("fig_gap_vs_rank", "0 of 3 model(s) have a"),
                      ("fig_fairness_vs_capability", "no model has a capability value")):
        assert not (e2e_run.results / "figures" / f"{stem}.png").exists()
        assert not (e2e_run.results / "figures" / f"{stem}.pdf").exists()
        assert f"results/figures/{stem}.png" not in results
        assert stem in front_page and why in front_page, stem


@pytest.mark.e2e
@needs_chromium
def test_workflow_report_renders_every_figure(e2e_run, e2e_report: RunReport, tmp_path: Path) -> None:
    """The report of the real end-to-end run: every image it wrote renders and every item has a caption."""
    html = e2e_report.html
    results = report_data(html, "results")
    written = [stem for stem in FIGURE_NAMES if (e2e_run.results / "figures" / f"{stem}.png").exists()]
    assert {"fig2_group_means", "fig3_standardized"} <= set(written)
    for stem in written:
        assert f"results/figures/{stem}.png" in results, stem
    for path, entry in results.items():
        assert re.sub(r"<[^>]+>", "", entry["caption"]).strip(), f"{path} has no caption"
    rendered = render_report(html, tmp_path / "probe")
    assert rendered.app_mounted and not rendered.errors, rendered.errors
    images = [path for path, entry in results.items() if entry["mime_type"].startswith("image/")]
    assert sorted(image.path for image in rendered.images) == sorted(images)
    for image in rendered.images:
        assert image.error is None and image.natural_width > 0 and image.shown_width > 0, image
