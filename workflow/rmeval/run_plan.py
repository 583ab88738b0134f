"""What a workflow run will do, planned from its config before any rule is defined.

common.smk calls `plan_run` once: it reads the registry, asks every enabled benchmark's planner (its catalogue's
`planner`) for its `BenchmarkPlan` (models, score jobs, preflight needs, settings per rule), checks that one model
name means one model across benchmarks, and follows the lock. The shared layer names no benchmark: everything
benchmark-specific comes back in a `BenchmarkPlan`. The config has its defaults filled by the schema
(rmeval.config_check), so every key is read as `config[...]`. Problems raise RmevalError with the message the run
prints; `locate` turns a config path into one the run can open (common.smk's `config_path`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rmeval.benchmarks import all_benchmarks
from rmeval.benchmarks.catalogue import Benchmark, ScoreStage, import_target
from rmeval.built_models import BuiltModel, built_folder, built_models, random_models, random_weight_models
from rmeval.cli_settings import settings_json
from rmeval.errors import RmevalError
from rmeval.preflight import Needs
from rmeval.registry import ModelSpec, load_registry, resolve_models
from rmeval.scoring.settings import ScoringSettings

Locate = Callable[[str], str]
OWN_LOCK = "results/lock.yaml"  # this run's output, never a lock to follow
DOWNLOAD_RULE = "download_model"


def config_value(config: Mapping[str, Any], dotted_key: str) -> Any:
    """`config["rewardmath"]["models"]` for "rewardmath.models" (the schema filled every level)."""
    value: Any = config
    for part in dotted_key.split("."):
        value = value[part]
    return value


RUN_STATS = "stats"  # the run-level section: alpha, bootstrap, seed, one default each


def run_setting(config: Mapping[str, Any], section: str, key: str) -> Any:
    """A benchmark's own `bootstrap` / `seed` where its section sets one (not null), else the run's `stats.<key>`."""
    own = (config.get(section) or {}).get(key)
    return config[RUN_STATS][key] if own is None else own


def with_run_settings(config: Mapping[str, Any], section: str, keys: Iterable[str]) -> dict[str, Any]:
    """A copy of a config section with its null `keys` replaced by the run's (`run_setting`)."""
    return {**config[section], **{key: run_setting(config, section, key) for key in keys}}


# ----------------------------------------------------------------------------- what a benchmark plans
@dataclass(frozen=True)
class PlanContext:
    """What a benchmark's planner gets beside the config.

    defined: the models of the benchmarks planned before it (catalogue order), so that its model list may name a
    model defined inline in an earlier section. lock_path: the lock the run follows (`lock:`), located.
    """

    registry: Mapping[str, ModelSpec]
    defined: Mapping[str, ModelSpec]
    locate: Locate
    workdir: Path
    lock_path: str | None

    def resolve(self, entries: list[Any], models_key: str) -> dict[str, ModelSpec]:
        """A model list of the config (registry names or inline entries, at `models_key`) as specs, in config
        order; it may name the registry's models and those defined by the benchmarks planned before."""
        section = models_key.rpartition(".")[0]
        where = f"config: {section}" if section else "config"
        specs = resolve_models(entries, {**self.registry, **self.defined}, where=where)
        return {spec.name: spec for spec in specs}

    def section_models(self, config: Mapping[str, Any], section: str, models_key: str,
                       direct_only: str = "") -> tuple[dict[str, ModelSpec], dict[str, str]]:
        """A benchmark section's models, as specs and the config keys naming them (`model_keys`): its own list at
        `models_key`, or with `models: null` the run's top-level `models`. None is an error; so is a pairwise judge
        where `direct_only` says why the benchmark rates each response on its own."""
        own = config[section]["models"]
        key, entries = (models_key, own) if own is not None else ("models", config["models"])
        specs = self.resolve(entries, key)
        if not specs:
            raise RmevalError(f"config: {section}.enabled is true but {section}.models (or the top-level models) is "
                              "empty")
        pairwise = [name for name, spec in specs.items() if spec.judge_mode == "pairwise"]
        if direct_only and pairwise:
            raise RmevalError(f"config: {section}.models: {pairwise} are pairwise judges; {direct_only} (use "
                              "`judge_mode: direct`)")
        return specs, model_keys(key, entries)


@dataclass(frozen=True)
class ScoreJobs:
    """One score stage of a benchmark as planned: every model in `models` scores every table in `tables`.

    data: (model, table) -> the input table its job reads (a judge may read another folder than a classifier).
    settings: further `rmeval score` settings of the stage's jobs (e.g. RewardBench's `model_input`).
    """

    stage: ScoreStage
    models: tuple[str, ...]
    tables: tuple[str, ...]
    data: Callable[[str, str], str]
    settings: Mapping[str, Any] = field(default_factory=dict)

    def score_files(self, model: str | None = None) -> list[str]:
        models = self.models if model is None else [m for m in self.models if m == model]
        return [self.stage.score_file(m, table) for m in models for table in self.tables]

    def meta_files(self) -> list[str]:
        return [self.stage.meta_file(m, table) for m in self.models for table in self.tables]


@dataclass(frozen=True)
class BenchmarkPlan:
    """What one enabled benchmark will run, as its planner decided from the config.

    models: the models it scores (config order). model_keys: model -> the config key naming it (preflight lines).
    score_jobs: its score stages, planned. needs: what its stages need from this machine (rmeval.preflight).
    pending: rule -> the files whose absence means a job of that rule runs (the dry run's stand-in for the DAG).
    settings: rule -> that rule's `--settings` object (rmeval.cli_settings). lock_inputs: what its lock section
    (its catalogue's `lock_section`) is built from, as `rmeval lock write` gets it; lock_files: the files among them
    (the lock rule's inputs). own: the benchmark's own plan, for its rule file. warnings: to log at parse time.
    conditions: the `when` conditions of its catalogued outputs that hold in this run (fairness: "paired").
    per_model: output key -> the models its per-model file ({model} in its path) is written for (default: `models`).
    skipped: output key -> why this run does not write it (its `when` fails: a figure with nothing to show), for
    the report's front page.
    """

    name: str
    models: dict[str, ModelSpec] = field(default_factory=dict)
    model_keys: dict[str, str] = field(default_factory=dict)
    score_jobs: tuple[ScoreJobs, ...] = ()
    needs: Needs = field(default_factory=Needs)
    pending: Mapping[str, list[str]] = field(default_factory=dict)
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    lock_inputs: Mapping[str, Any] = field(default_factory=dict)
    lock_files: tuple[str, ...] = ()
    own: Any = None
    warnings: tuple[str, ...] = ()
    conditions: frozenset[str] = frozenset()
    per_model: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    skipped: Mapping[str, str] = field(default_factory=dict)

    def targets(self, bench: Benchmark) -> list[str]:
        """Every file of its catalogue this run writes, per-model ones for each of their models: what `rule all`
        asks of it beside the score files."""
        files: list[str] = []
        for output in bench.active(self.conditions):
            if output.per_model:
                models = self.per_model.get(output.key, tuple(self.models))
                files += [path.format(model=model) for model in models for path in output.files]
            else:
                files += output.files
        return files


Planner = Callable[[Mapping[str, Any], PlanContext], BenchmarkPlan]


def model_keys(section: str, entries: list[Any]) -> dict[str, str]:
    """Model name -> the config key that names it, e.g. "models[0] (Skywork-Reward-V2-Qwen3-0.6B)"."""
    keys: dict[str, str] = {}
    for index, entry in enumerate(entries):
        name = entry if isinstance(entry, str) else entry.get("name")
        keys.setdefault(name, f"{section}[{index}] ({name})")
    return keys


# ----------------------------------------------------------------------------- the whole run
@dataclass(frozen=True)
class RunPlan:
    benchmarks: dict[str, BenchmarkPlan]  # the enabled ones, catalogue order
    all_specs: dict[str, ModelSpec]  # every benchmark's models, with the lock's commits where a lock is followed
    locked_revisions: dict[str, str]  # model -> commit / fingerprint its jobs must load
    lock_path: str | None
    config_sha256: str  # recorded in results/lock.yaml
    scoring: ScoringSettings
    model_keys: dict[str, str]  # model -> the first config key naming it, for preflight lines
    warnings: tuple[str, ...]  # to log at parse time
    built: Mapping[str, BuiltModel] = field(default_factory=dict)  # folders the run builds (`tiny_models`)

    def built_folder(self, model: str) -> str | None:
        """The folder rule tiny_model builds for `model` (its `path` is one of `tiny_models`), else None."""
        found = built_folder(self.all_specs[model], self.built)
        return found.folder if found else None

    @property
    def random_models(self) -> list[str]:
        """The models whose weights this run builds at random: their rewards mean nothing."""
        return random_models(self.all_specs, self.built)

    @property
    def random_weight_models(self) -> list[str]:
        """Every model whose rewards mean nothing: the ones this run builds, and `rmeval tiny-model` folders."""
        return random_weight_models(self.all_specs, self.built)

    @property
    def skipped_outputs(self) -> dict[str, str]:
        """Every output left out, by file stem (what the report's front page names), and why."""
        from rmeval.benchmarks import benchmark as catalogued

        return {catalogued(name).get(key).stem: why for name, plan in self.benchmarks.items()
                for key, why in plan.skipped.items()}

    def own(self, benchmark: str) -> Any:
        """A benchmark's own plan (its rule file reads it); None when the benchmark is not enabled."""
        plan = self.benchmarks.get(benchmark)
        return plan.own if plan else None

    @property
    def score_jobs(self) -> list[ScoreJobs]:
        return [jobs for plan in self.benchmarks.values() for jobs in plan.score_jobs]

    @property
    def score_rules(self) -> frozenset[str]:
        """The rules that load or call a model: preflight's model checks concern them."""
        return frozenset({DOWNLOAD_RULE, *(jobs.stage.rule for jobs in self.score_jobs)})

    def score_files(self, benchmark: str | None = None) -> list[str]:
        plans = self.benchmarks.values() if benchmark is None else [self.benchmarks[benchmark]]
        return [path for plan in plans for jobs in plan.score_jobs for path in jobs.score_files()]

    def conditions(self, benchmark: str) -> frozenset[str]:
        return self.benchmarks[benchmark].conditions

    def targets(self, benchmark: str) -> list[str]:
        """A benchmark's catalogued files in this run, then its score files (`rule all`: a deleted score file is
        rebuilt by a plain rerun, not left "missing, no update" because the tables built from it are newer)."""
        from rmeval.benchmarks import benchmark as catalogued

        return self.benchmarks[benchmark].targets(catalogued(benchmark)) + self.score_files(benchmark)

    def model_meta_files(self, model: str) -> list[str]:
        """Every score sidecar a job of `model` writes, in every benchmark (its measured throughput is there)."""
        return [jobs.stage.meta_file(model, table) for jobs in self.score_jobs if model in jobs.models
                for table in jobs.tables]

    def meta_files(self, benchmark: str) -> list[str]:
        return [path for jobs in self.benchmarks[benchmark].score_jobs for path in jobs.meta_files()]

    def lock_settings(self) -> str:
        """`rmeval lock write --settings`: every benchmark's score sidecars (its models' records, keyed
        `<benchmark>/<table>`) and its lock section's inputs (rmeval.lock.section)."""
        return settings_json({
            "config_sha256": self.config_sha256,
            "metas": {name: self.meta_files(name) for name in self.benchmarks},
            "sections": {name: plan.lock_inputs for name, plan in self.benchmarks.items() if plan.lock_inputs},
        })

    def lock_files(self) -> list[str]:
        """What the lock is built from: each benchmark's lock section files, then every score sidecar."""
        files = [path for plan in self.benchmarks.values() for path in plan.lock_files]
        return files + [path for name in self.benchmarks for path in self.meta_files(name)]

    def settings(self, benchmark: str, rule: str) -> str:
        """The `--settings` JSON of one of a benchmark's rules."""
        return settings_json(self.benchmarks[benchmark].settings[rule])

    def score_settings(self, jobs: ScoreJobs, model: str) -> str:
        """The `--settings` JSON of one `rmeval score` job: the engine settings, the task, the locked revision."""
        expected = self.locked_revisions.get(model)
        return settings_json({"task": jobs.stage.task, **self.scoring.command_settings(), **jobs.settings,
                              **({"expect_revision": expected} if expected else {})})

    def pending_outputs(self, rules: Iterable[str], model: str | None) -> list[str]:
        """The dry run's stand-in for the DAG (rmeval.preflight): the outputs whose absence means a job of
        `rules` (for `model`) would run."""
        rules = set(rules)
        files: list[str] = []
        for plan in self.benchmarks.values():
            for rule, paths in plan.pending.items():
                if rule in rules:
                    files += paths
            for jobs in plan.score_jobs:
                if model is not None and model in jobs.models:
                    files += jobs.score_files(model)
        return files

    def preflight_plan(self) -> Any:
        """What the run needs from this machine, for rmeval.preflight."""
        from rmeval.preflight import Plan

        return Plan(models=self.all_specs, model_keys=self.model_keys, score_rules=self.score_rules,
                    needs=tuple(plan.needs for plan in self.benchmarks.values()),
                    built=frozenset(self.random_models))


def enabled_benchmarks(config: Mapping[str, Any]) -> list[Benchmark]:
    return [bench for bench in all_benchmarks() if bench.enabled(config)]


def locate_lock(config: Mapping[str, Any], locate: Locate, workdir: Path) -> str | None:
    """The lock to follow (`lock:`), located; refuses this run's own output."""
    lock_path = locate(config["lock"]) if config["lock"] else None
    if lock_path and (workdir / lock_path).resolve() == (workdir / OWN_LOCK).resolve():
        raise RmevalError(f"config: lock: {OWN_LOCK} is this run's own output; copy the lock elsewhere first")
    return lock_path


def _check_one_definition(defined: Mapping[str, ModelSpec], keys: Mapping[str, str], plan: BenchmarkPlan,
                          models_key: str) -> None:
    """One name, one model: scores of every benchmark live under .../{model}/ and share a download."""
    for name, spec in plan.models.items():
        if name in defined and defined[name] != spec:
            first = keys[name].split("[")[0]
            raise RmevalError(f"config: model {name!r} is defined differently in `{first}` and `{models_key}`")


def plan_run(config: dict[str, Any], locate: Locate, workdir: Path | None = None) -> RunPlan:
    """Everything common.smk needs: the registry, each enabled benchmark's plan (catalogue order), the lock."""
    from rmeval.lock.lockfile import config_sha256, load_lock
    from rmeval.lock.models import follow_lock
    from rmeval.published import plan as published_plan

    workdir = Path.cwd() if workdir is None else workdir
    registry = load_registry(locate(config["registry"]))
    # The run's `models:` (registry names or inline entries) may be named by every benchmark's model list, whether
    # or not a benchmark scores the top-level list itself.
    registry = {**registry, **{spec.name: spec for spec in resolve_models(config["models"], registry)}}
    lock_path = locate_lock(config, locate, workdir)
    plans: dict[str, BenchmarkPlan] = {}
    defined: dict[str, ModelSpec] = {}
    keys: dict[str, str] = {}
    for bench in enabled_benchmarks(config):
        if not bench.planner:
            raise RmevalError(f"benchmark {bench.name!r} declares no planner (its catalogue's `planner`)")
        planner: Planner = import_target(bench.planner)
        plan = planner(config, PlanContext(registry, dict(defined), locate, workdir, lock_path))
        published_checks = published_plan.checks_for(plan.models, plan.model_keys, bench, config, locate)
        if published_checks:  # its published models: checked now, their files by preflight
            plan = replace(plan, needs=replace(plan.needs, checks=(*plan.needs.checks, *published_checks)))
        _check_one_definition(defined, keys, plan, bench.models_key)
        for key in plan.skipped:
            if bench.get(key).when in (None, *plan.conditions):
                raise RmevalError(f"benchmark {bench.name!r}: its planner says {key!r} is not written, but its "
                                  "`when` holds in this run")
        plans[bench.name] = plan
        defined.update(plan.models)
        for name, key in plan.model_keys.items():
            keys.setdefault(name, key)
    try:
        all_specs, locked = follow_lock(defined, load_lock(lock_path) if lock_path else None)
    except RmevalError as error:
        raise RmevalError(f"config: lock: {error}") from error
    built = built_models(config)
    used = {built_folder(spec, built) for spec in all_specs.values()}
    for folder in sorted(set(built.values()) - used, key=lambda model: model.folder):
        raise RmevalError(f"config: tiny_models: {folder.folder} is no model's `path`; name it in a model entry "
                          f"(`path: {folder.folder}`) or remove it")
    return RunPlan(
        benchmarks=plans,
        all_specs=all_specs,
        locked_revisions=locked,
        lock_path=lock_path,
        config_sha256=config_sha256(config),
        scoring=ScoringSettings.from_mapping(config["scoring"]),
        model_keys=keys,
        warnings=tuple(warning for plan in plans.values() for warning in plan.warnings),
        built=built,
    )
