"""What rule run_compare (workflow/rules/run.smk) passes, planned once at Snakefile parse time from the config and
the run plan: the score files and prepared items of every enabled benchmark that declares a comparison, and one
`--settings` JSON (benchmarks, their models, the trivial baselines, `compare.baseline` / `compare.pairs`, the run's
alpha, bootstrap and seed, each benchmark's comparison options). Light (no pandas): the Snakefile imports it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmeval.benchmarks import all_benchmarks
from rmeval.cli_settings import settings_json
from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec
from rmeval.run_plan import RunPlan, config_value


def baseline_kind(spec: ModelSpec) -> str | None:
    """The baseline's kind (length, random, constant) when the resolved entry is a trivial baseline
    (`rmeval.models.catalogue.is_baseline`, the one test of it), else None."""
    from rmeval.models.catalogue import BASELINE, is_baseline

    if not is_baseline(spec):
        return None
    return str(spec.options.get("kind") or BASELINE)


def baseline_models(specs: Mapping[str, ModelSpec]) -> dict[str, str]:
    """The trivial baselines among the run's models -> their kind, in the run's order."""
    return {name: kind for name, spec in specs.items() if (kind := baseline_kind(spec)) is not None}


def _value(config: Mapping[str, Any], key: str) -> Any:
    """A comparison option's config value; None for a key the schema gives no default and the config leaves out
    (`rewardmath.subjects`: all of them). A mapping gives its keys in config order (`groups`: the group names), since
    the settings JSON sorts a mapping's keys and would lose that order."""
    try:
        value = config_value(config, key)
    except KeyError:
        return None
    return list(value) if isinstance(value, Mapping) else value


@dataclass(frozen=True)
class ComparePlan:
    inputs: Mapping[str, list[str]]
    settings: str

    @classmethod
    def from_run(cls, config: Mapping[str, Any], plan: RunPlan) -> ComparePlan:
        section = config["compare"]
        compared = [bench for bench in all_benchmarks() if bench.name in plan.benchmarks and bench.compare]
        models = {bench.name: list(plan.benchmarks[bench.name].models) for bench in compared}
        everyone = {model for names in models.values() for model in names}
        baseline, pairs = section["baseline"], section["pairs"] or []
        if baseline and pairs:
            raise RmevalError("config: compare.baseline and compare.pairs: set one of them")
        named = [baseline] if baseline else [m for pair in pairs for m in pair.split(":")]
        unknown = [model for model in dict.fromkeys(named) if compared and model not in everyone]
        if unknown:
            raise RmevalError(f"config: compare: {', '.join(unknown)} is not a model of a compared benchmark "
                              f"({', '.join(sorted(everyone))})")
        inputs: dict[str, list[str]] = {}
        for bench in compared:
            inputs[f"{bench.name}_scores"] = plan.score_files(bench.name)
            if bench.compare.reads_items:
                inputs[f"{bench.name}_items"] = list(dict.fromkeys(
                    jobs.data(model, table) for jobs in plan.benchmarks[bench.name].score_jobs
                    for model in jobs.models for table in jobs.tables))
        options = {bench.name: {option: _value(config, key) for option, key in bench.compare.run_settings.items()}
                   for bench in compared if bench.compare.run_settings}
        baselines = baseline_models(plan.all_specs)
        settings = {
            "benchmarks": [bench.name for bench in compared] or [bench.name for bench in all_benchmarks()
                                                                  if bench.name in plan.benchmarks],
            "models": models,
            "baseline_models": [f"{model}={kind}" for model, kind in baselines.items()],
            "baseline": baseline, "pairs": ",".join(pairs) or None,
            "alpha": config_value(config, "stats.alpha"), "bootstrap": config_value(config, "stats.bootstrap"),
            "seed": config_value(config, "stats.seed"), "options": options,
        }
        return cls(inputs, settings_json(settings))
