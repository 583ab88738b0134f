"""The run-level files, declared once (import-free: read at Snakefile parse time, like a benchmark's catalogue).

workflow/rules/run.smk takes its rules' `output:` from here (common.smk `run_rule_outputs`), `rule all` asks for
every file (common.smk `all_outputs`), and the commands that write them read their paths from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from rmeval.benchmarks.catalogue import Command, Output

TABLE_FORMATS = ("md", "tex")  # beside the table's CSV, as for every benchmark table
REPRODUCTION_RULE = "run_reproduction"
SUMMARY_RULE = "run_summary"
COMPARE_RULE = "run_compare"
COMPARE_FIGURE_RULE = "run_compare_figure"


@dataclass(frozen=True)
class RunCatalogue:
    """The run's own outputs (as `Output`s: key, path, rule, caption, formats, inputs = keys of run outputs they
    read) and the commands that write them."""

    outputs: tuple[Output, ...]
    commands: tuple[Command, ...]

    def of_rule(self, rule: str) -> tuple[Output, ...]:
        return tuple(output for output in self.outputs if output.rule == rule)

    def get(self, key: str) -> Output:
        for output in self.outputs:
            if output.key == key:
                return output
        raise KeyError(f"the run declares no output {key!r}")

    def targets(self) -> list[str]:
        """Every file of the run's outputs, other formats included (for `rule all`)."""
        return [path for output in self.outputs
                for path in (output.path, *(output.sibling(suffix) for suffix in output.formats))]


RUN = RunCatalogue(
    outputs=(
        Output(
            key="reproduction",
            path="results/tables/reproduction.csv",
            rule=REPRODUCTION_RULE,
            caption="reproduction.rst",
            category="Reproduction",
            builder="rmeval.run_outputs.reproduction:write",
            formats=TABLE_FORMATS,
        ),
        # Which model is better (rmeval compare): paired comparisons and the leaderboard, from every benchmark that
        # declares a comparison (its catalogue's `compare`), and the ranks' figure.
        Output(key="comparisons", path="results/tables/comparisons.csv", rule=COMPARE_RULE,
               caption="comparisons.rst", category="Comparisons", formats=TABLE_FORMATS,
               builder="rmeval.run_outputs.compare.tables:write_tables"),
        Output(key="leaderboard", path="results/tables/leaderboard.csv", rule=COMPARE_RULE,
               caption="leaderboard.rst", category="Comparisons", formats=TABLE_FORMATS,
               builder="rmeval.run_outputs.compare.tables:write_tables"),
        Output(key="compare_figure", path="results/figures/fig_leaderboard.png", rule=COMPARE_FIGURE_RULE,
               caption="fig_leaderboard.rst", category="Comparisons", formats=("pdf",),
               labels={"figure": "Leaderboard", "shows": "ranks with simultaneous intervals"},
               builder="rmeval.run_outputs.compare.figure:write_figure", inputs=("leaderboard",)),
        # A benchmark's section may cite the reproduction table (e.g. count its verdicts); "Which model is better"
        # reads the comparisons and the leaderboard.
        Output(key="summary", path="results/summary.md", rule=SUMMARY_RULE,
               builder="rmeval.run_outputs.summary:compose", inputs=("reproduction", "comparisons", "leaderboard")),
    ),
    commands=(
        Command("run-reproduction", "rmeval.run_outputs.reproduction",
                "Every enabled benchmark's statistics beside the published ones, with verdicts."),
        Command("run-summary", "rmeval.run_outputs.summary",
                "The run's plain-words summary: every enabled benchmark's section."),
        Command("compare", "rmeval.run_outputs.compare.command",
                "Which model is better: paired comparisons on every benchmark, ranks with intervals."),
        Command("compare-figure", "rmeval.run_outputs.compare.figure",
                "The leaderboard's ranks with their simultaneous intervals, as a figure."),
    ),
)
