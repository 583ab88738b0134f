"""What a benchmark declares: its outputs, once, for the CLI, the rule file, the report and `rule all`.

Import-free on purpose (dataclasses only): the Snakefile reads every catalogue at parse time, before any job,
and a benchmark's heavy modules (scipy, matplotlib, torch) must not load there. Builders are named as
"module:function" strings and imported only by the command that writes the output.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Output:
    """One file a benchmark writes.

    key: the name of the file in its rule's `output:` (and in the CLI's catalogue lookups).
    path: where it goes, relative to the working directory (may hold the rule's wildcards).
    rule: the rule that writes it.
    caption: the report caption, a file under workflow/report/; None keeps the file out of the report.
    category / labels: how `snakemake --report` files it.
    builder: "module:function" that builds it (a table, a figure), for the command that writes it.
    formats: further files written beside `path` with these suffixes (a table's .md and .tex).
    inputs: keys of this benchmark's outputs it is built from (a figure's tables), in the order its builder takes
        them; the rule's `input:` comes from them.
    when: a condition its benchmark's plan decides (`BenchmarkPlan.conditions`, e.g. fairness's "paired"): the file
        is written, and asked for by `rule all`, only in runs where it holds. None: always.
    A path holding `{model}` is one file per model (`rule all` asks for it for each of the models its benchmark's
    plan names in `BenchmarkPlan.per_model`, by default all of its models).
    """

    key: str
    path: str
    rule: str
    caption: str | None = None
    category: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    builder: str | None = None
    formats: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    when: str | None = None

    @property
    def per_model(self) -> bool:
        return "{model}" in self.path

    @property
    def files(self) -> tuple[str, ...]:
        """The path and its siblings in the other formats."""
        return (self.path, *(self.sibling(suffix) for suffix in self.formats))

    @property
    def stem(self) -> str:
        return self.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]

    @property
    def suffix(self) -> str:
        """The file's format ("csv", "png"); `formats` are the others it is written in."""
        return self.path.rsplit(".", 1)[-1]

    def sibling(self, suffix: str) -> str:
        """The path of the same output in another format ("md" -> results/tables/x.md)."""
        return f"{self.path.rsplit('.', 1)[0]}.{suffix}"

    def build(self) -> Callable[..., Any]:
        """The builder function, imported now (never at Snakefile parse time)."""
        if not self.builder:
            raise LookupError(f"output {self.key!r} ({self.path}) names no builder")
        module_name, _, function = self.builder.partition(":")
        return getattr(importlib.import_module(module_name), function)


@dataclass(frozen=True)
class Command:
    """One `rmeval <name>` command a benchmark brings: `target` is "module" or "module:function", a
    `main(argv) -> int` imported only when the command runs."""

    name: str
    target: str
    help: str


SCORES_ROOT = "results/scores"


def scores_dir(benchmark: str) -> str:
    """A benchmark's score folder, `results/scores/<benchmark>` ({model}/{table}.parquet below it): namespaced, so
    that no table of one benchmark (a fairness group called `rewardbench`) can clash with another's."""
    return f"{SCORES_ROOT}/{benchmark}"


def score_path(benchmark: str) -> str:
    """A benchmark's score file of one (model, table) job: what its `ScoreStage.scores` must be."""
    return f"{scores_dir(benchmark)}/{{model}}/{{table}}.parquet"


@dataclass(frozen=True)
class ScoreStage:
    """Tables every model of a benchmark scores through the shared engine (`rmeval score`): one Snakemake job per
    (model, table), all from the one generic score rule (workflow/rules/scoring.smk).

    rule: the generated rule's name (Slurm `set-resources` and preflight read it).
    scores: the score file of one job, with the wildcards {model} and {table} (`score_path(benchmark)`:
        results/scores/<benchmark>/{model}/{table}.parquet); its sidecar is `meta`.
    task: `rmeval score --task` (how input rows become (prompt, response) pairs: rmeval.tasks).
    log: the job's log, with the same wildcards.
    """

    rule: str
    scores: str
    task: str
    log: str

    @property
    def meta(self) -> str:
        return self.scores.removesuffix(".parquet") + ".meta.json"

    @property
    def timings(self) -> str:
        """The job's Snakemake `benchmark:` file, under the run's perf folder (perf/stage_costs.py reads it)."""
        return f"{self.rule}/{{model}}/{{table}}.tsv"

    def score_file(self, model: str, table: str) -> str:
        return self.scores.format(model=model, table=table)

    def meta_file(self, model: str, table: str) -> str:
        return self.meta.format(model=model, table=table)


@dataclass(frozen=True)
class RunPreset:
    """What `rmeval run` (rmeval.run_command) writes into the config for this benchmark when it turns it on, beyond
    `<enabled_by>.enabled: true` and the run's models under `models_key`.

    sections: "module:function" -> (rmeval.run_command.request.RunRequest) -> dict: its config sections (the
        fairness benchmark: `groups`, `arxiv` from `--data`, `reference_model`).
    data: the `--data` forms it takes ("api", "demo", "snapshot:FILE": a form with `:FILE` takes a path), the first
        being the default; () when it takes none.
    data_help: one line on what `--data` chooses for it.
    by_default: on when `--benchmarks` is not given.
    """

    sections: str
    data: tuple[str, ...] = ()
    data_help: str = ""
    by_default: bool = False


@dataclass(frozen=True)
class ModelComparison:
    """How a benchmark compares two models scored on the same items (`rmeval compare`, results/tables/
    comparisons.csv and leaderboard.csv; rmeval.run_outputs.compare).

    provider: "module:function" -> (rmeval.run_outputs.compare.parts.CompareContext) -> ComparisonPart: its
        metrics, each model's value with its interval, and the paired comparison of two models, read from its score
        folder (and its prepared data). Imported only by the command.
    claims: "module:function" -> (rmeval.run_outputs.compare.parts.ClaimsContext) -> list[str]: sentences of the
        summary's "Which model is better" that only it can write (a paper's comparative claims tested on this run's
        models), from its rows of the two tables (adjusted p-values) and its own outputs `claims_inputs`.
    run_settings: option -> dotted config key, what its provider reads from the run's config (CompareContext.options;
        a mapping arrives as its keys in config order: `groups` -> the group names).
    lower_is_better: its metrics on which the smaller value is the better model (a fairness gap); on every other
        one a higher value is better. Read by the provider and by the summary (which model a difference favours).
    reads_items: the provider reads its score jobs' input tables (the prepared items: what a pair or a problem is)
        beside the score files; rule run_compare then takes them as inputs too.
    decimals: metric -> the decimals its values (and differences, intervals) are shown with everywhere: the console,
        the leaderboard, the summary, the figures (`show`); the others have DECIMALS.
    labels: metric -> its name in words (the console's and the summary's sentences); else the name itself.
    """

    provider: str
    claims: str | None = None
    claims_inputs: tuple[str, ...] = ()
    run_settings: Mapping[str, str] = field(default_factory=dict)
    lower_is_better: tuple[str, ...] = ()
    reads_items: bool = False
    decimals: Mapping[str, int] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)

    def higher_is_better(self, metric: str) -> bool:
        return metric not in self.lower_is_better

    def decimals_of(self, metric: str) -> int:
        return self.decimals.get(metric, DECIMALS)

    def show(self, metric: str, value: float | str | None) -> str:
        """One spelling of a value of `metric` (or a difference of two): its decimals; "-" when there is none."""
        return show_value(value, self.decimals_of(metric))

    def label_of(self, metric: str) -> str:
        return self.labels.get(metric, metric)


DECIMALS = 2  # a compared metric's decimals unless its catalogue says otherwise (percentages: 85.71)


def show_value(value: float | str | None, decimals: int) -> str:
    """`value` with `decimals` decimals ("-" when empty or not a number; "inf" / "-inf" as such)."""
    import math

    try:
        number = float(value) if value not in (None, "") else math.nan
    except (TypeError, ValueError):
        return "-"
    if math.isnan(number):
        return "-"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    return f"{number:.{decimals}f}"


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: everything the shared layer (run plan, scoring, preflight, lock, CLI, `rule all`, report, run
    summary) needs to know of it, declared once. The shared layer loops over `all_benchmarks()` and never names one.

    enabled_by: the config section whose `enabled: true` turns it on; None means always on.
    on_with: a config key whose presence turns it on while `<enabled_by>.enabled` is null (fairness: `groups`, so
        a config written before `fairness:` existed runs unchanged); None: off unless enabled.
    order: where it runs among the benchmarks (then by name): the order of its sections in the lock, the run
        summary and the report.
    config_schema: a YAML file beside the catalogue holding the JSON schema of its own config sections (merged
        into workflow/schemas/config.schema.yaml by rmeval.config_check.config_schema), or None.
    planner: "module:function" -> (config, rmeval.run_plan.PlanContext) -> rmeval.run_plan.BenchmarkPlan: its
        models, the tables each score stage scores, what preflight checks, its settings per rule. Imported at
        Snakefile parse time, so it stays light (no pandas, torch, scipy).
    models_key: the config key listing its models ("models", "rewardmath.models"), for messages and preflight.
    score_stages: what its models score (one generic rule each).
    commands: its `rmeval` commands.
    tasks: its own `rmeval score --task`s: name -> "module:function", a `(table, where) -> rmeval.tasks.Pairs`
        builder for input tables in its own layout (the built-in `pairs` task reads id, prompt, response).
    lock_section: "module:attribute", an rmeval.lock.section.LockSection (the records it adds to results/lock.yaml).
    summary_section: "module:function" -> (rmeval.run_outputs.parts.RunContext) -> str: its section of
        results/summary.md (Markdown, from its own tables); summary_inputs: keys of its outputs that section reads.
    reproduction: "module:function" -> (RunContext) -> rmeval.run_outputs.parts.ReproductionPart: its rows of
        results/tables/reproduction.*; reproduction_inputs: keys of its outputs they read; published: the
        published-values files (`resources/published/*.yaml`, relative to the repository) it compares with.
    report_section: an .rst fragment under workflow/report/, placed on the report's front page when it is enabled.
    run_settings: option -> dotted config key ("prm_aggregation": "rewardmath.prm_aggregation"): what its summary
        and reproduction providers read from the run's config (RunContext.options), beside the run's alpha.
    capability: the key of one of its outputs, a CSV with columns `model, measure, score` (percent, higher = more
        capable): what other benchmarks may set their results against (the fairness benchmark's
        fairness_vs_capability reads every enabled benchmark's), through the file alone.
    compare: how it compares two models on the same items (`ModelComparison`); None: it takes no part in the run's
        comparisons and leaderboard.
    run_preset: what `rmeval run` writes into the config for it (`RunPreset`); None: `enabled: true` and the models.
    published_reader: "module:attribute", an rmeval.published.reader.PublishedReader: how a results file its
        authors publish (per-item scores of a model they ran) becomes score rows of its score contract, and which
        id aligns its items (adapter `published`); None: no published model can be scored on it.
    """

    name: str
    title: str
    rule_file: str
    outputs: tuple[Output, ...]
    enabled_by: str | None = None
    on_with: str | None = None
    order: int = 100
    config_schema: str | None = None
    planner: str | None = None
    models_key: str = "models"
    score_stages: tuple[ScoreStage, ...] = ()
    commands: tuple[Command, ...] = ()
    tasks: Mapping[str, str] = field(default_factory=dict)
    lock_section: str | None = None
    summary_section: str | None = None
    summary_inputs: tuple[str, ...] = ()
    reproduction: str | None = None
    reproduction_inputs: tuple[str, ...] = ()
    published: tuple[str, ...] = ()
    report_section: str | None = None
    run_settings: Mapping[str, str] = field(default_factory=dict)
    capability: str | None = None
    compare: ModelComparison | None = None
    run_preset: RunPreset | None = None
    published_reader: str | None = None

    def __post_init__(self) -> None:
        for stage in self.score_stages:
            if stage.scores != score_path(self.name):
                raise ValueError(f"benchmark {self.name!r}: score stage {stage.rule!r} writes {stage.scores}; "
                                 f"a benchmark's scores go to {score_path(self.name)} (catalogue.score_path)")

    def enabled(self, config: Mapping[str, Any]) -> bool:
        if self.enabled_by is None:
            return True
        enabled = (config.get(self.enabled_by) or {}).get("enabled")
        if enabled is None:
            return self.on_with is not None and config.get(self.on_with) is not None
        return bool(enabled)

    def active(self, conditions: Iterable[str] = ()) -> tuple[Output, ...]:
        """Its outputs in a run where `conditions` hold: the unconditional ones and those whose `when` holds."""
        held = set(conditions)
        return tuple(output for output in self.outputs if output.when is None or output.when in held)

    def of_rule(self, rule: str, conditions: Iterable[str] = ()) -> tuple[Output, ...]:
        return tuple(output for output in self.active(conditions) if output.rule == rule)

    def inputs_of_rule(self, rule: str, conditions: Iterable[str] = ()) -> dict[str, str]:
        """key -> path of every output the rule's outputs are built from, in first-use order."""
        keys = dict.fromkeys(key for output in self.of_rule(rule, conditions) for key in output.inputs)
        return {key: self.get(key).path for key in keys}

    def get(self, key: str) -> Output:
        for output in self.outputs:
            if output.key == key:
                return output
        raise KeyError(f"benchmark {self.name!r} declares no output {key!r}")

    def stage(self, rule: str) -> ScoreStage:
        for stage in self.score_stages:
            if stage.rule == rule:
                return stage
        raise KeyError(f"benchmark {self.name!r} declares no score stage {rule!r}")


def import_target(target: str) -> Any:
    """The object a "module:attribute" string names (a planner, a lock section, a command's main)."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute or "main")
