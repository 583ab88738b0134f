"""The workflow's own checks, run by `rmeval run` before it writes anything: the run's plan (rmeval.run_plan, as the
Snakefile plans it) and preflight (rmeval.preflight: local input files and their columns, a snapshot's format,
models in the cache or the hub reachable, endpoints, API keys), for the jobs a run would start (an output is
missing). Every problem is one line, reported with the command's other problems; a problem that needs network
this machine lacks names `--data demo`, the offline way. The Snakefile runs the same checks again (nothing is lost
if the machine changed in between).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError


def offline_route() -> str:
    """The way out of a network need for `rmeval run`: `--data demo` for the benchmarks whose preset takes it (their
    shipped data), a local file for the others."""
    from rmeval.benchmarks import all_benchmarks

    demo = [bench.name for bench in all_benchmarks() if bench.run_preset and "demo" in bench.run_preset.data]
    offline = f"`rmeval run --model PATH --data demo` runs {', '.join(demo)} offline now (shipped data); " if demo \
        else ""
    return (f"No network here? {offline}with your own data, a local file per benchmark: --set "
            "<benchmark>.source=local --set <benchmark>.path=FILE (README, \"Offline and air-gapped runs\").")


@dataclass(frozen=True)
class Checked:
    """What the checks found: one line per problem, the plan when the config could be planned, and the way out
    when the problems need network (offline_route)."""

    problems: list[str]
    plan: Any = None  # rmeval.run_plan.RunPlan
    advice: str = ""


def planned(config: Mapping[str, Any], repository: Path, workdir: Path) -> Any:
    """The run's plan, as the Snakefile makes it from this config (its defaults filled by the schema)."""
    from rmeval.config_check import config_schema, fill_defaults
    from rmeval.io.paths import config_path
    from rmeval.run_plan import plan_run

    filled = copy.deepcopy(dict(config))
    fill_defaults(filled, config_schema())
    return plan_run(filled, lambda value: config_path(value, repository, workdir), workdir)


def machine_problems(config: Mapping[str, Any], repository: Path, workdir: Path) -> Checked:
    """The plan's and preflight's problems for the jobs a run would start (RMEVAL_PREFLIGHT=off: the plan's
    only)."""
    from rmeval import preflight

    try:
        plan = planned(config, repository, workdir)
    except RmevalError as error:
        return Checked([str(error)])
    if preflight.mode() == "off":
        return Checked([], plan)

    def pending(rules: frozenset[str], model: str | None) -> bool:  # the Snakefile's dry-run stand-in
        return any(not (workdir / path).exists() for path in plan.pending_outputs(rules, model))

    needs = plan.preflight_plan()
    found = [*preflight.missing_inputs(needs, pending), *preflight.collect(needs, pending)]
    advice = offline_route() if any(problem.network for problem in found) else ""
    return Checked([problem.line() for problem in found], plan, advice)
