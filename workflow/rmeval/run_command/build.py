"""The config `rmeval run` writes: the models, every benchmark on or off (`--benchmarks`), each one's models and its
run preset's sections (its catalogue's `RunPreset`, given `--data`), then the `--set` keys.

Nothing here names a benchmark: each declares what it needs in its catalogue.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmeval.benchmarks.catalogue import Benchmark, RunPreset, import_target
from rmeval.errors import RmevalError
from rmeval.run_command.models import Resolved
from rmeval.run_command.request import RunRequest

FILE_FORM = ":FILE"  # a `--data` form that takes a path (`snapshot:FILE`)


def selected(names: Sequence[str]) -> tuple[list[Benchmark], list[str]]:
    """The benchmarks `--benchmarks` names (catalogue order), and one line per unknown name."""
    from rmeval.benchmarks import all_benchmarks
    from rmeval.config_check import did_you_mean

    known = {bench.name: bench for bench in all_benchmarks()}
    problems = []
    for name in names:
        if name not in known:
            suggestion = did_you_mean(name, known)
            hint = f"did you mean `{suggestion}`? " if suggestion else ""
            problems.append(f"--benchmarks: unknown benchmark {name!r}; {hint}known: {', '.join(known)}")
    return [bench for bench in known.values() if bench.name in names], problems


def data_forms(benchmarks: Sequence[Benchmark]) -> dict[str, tuple[str, ...]]:
    """Benchmark -> the `--data` forms it takes, for those that take one."""
    return {bench.name: bench.run_preset.data for bench in benchmarks if bench.run_preset and bench.run_preset.data}


def data_problem(data: str | None, benchmarks: Sequence[Benchmark]) -> str | None:
    """Whether `--data` fits the run's benchmarks: a form one of them takes, a path where its form takes one."""
    if data is None:
        return None
    forms = data_forms(benchmarks)
    if not forms:
        from rmeval.benchmarks import all_benchmarks

        takers = [bench.name for bench in all_benchmarks() if bench.run_preset and bench.run_preset.data]
        return f"--data {data}: no benchmark of this run takes a data source ({', '.join(takers) or 'none'} does)"
    kind, colon, file = data.partition(":")
    for bench_forms in forms.values():
        for form in bench_forms:
            if form.removesuffix(FILE_FORM) == kind and (form.endswith(FILE_FORM) == bool(colon)):
                if colon and not file:
                    return f"--data {data}: name the file after `{kind}:`"
                return None
    allowed = ", ".join(dict.fromkeys(form for bench_forms in forms.values() for form in bench_forms))
    return f"--data {data}: expected one of {allowed}"


def _merge(into: dict[str, Any], sections: dict[str, Any]) -> None:
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


def _set_dotted(config: dict[str, Any], dotted: str, value: Any) -> None:
    *sections, last = dotted.split(".")
    node = config
    for part in sections:
        node = node.setdefault(part, {})
    node[last] = value


def build_config(models: Sequence[Resolved], benchmarks: Sequence[Benchmark], data: str | None, registry: str,
                 repository: Path) -> dict[str, Any]:
    """The run's config before `--set`: its models, every catalogued benchmark on (those of `benchmarks`) or off,
    each enabled one's models list and preset sections."""
    from rmeval.benchmarks import all_benchmarks

    names = tuple(model.name for model in models)
    config: dict[str, Any] = {"registry": registry, "models": [copy.deepcopy(model.entry) for model in models]}
    chosen = {bench.name for bench in benchmarks}
    for bench in all_benchmarks():
        on = bench.name in chosen
        if bench.enabled_by:
            _merge(config, {bench.enabled_by: {"enabled": on}})
        if not on:
            continue
        if bench.models_key != "models":
            _set_dotted(config, bench.models_key, list(names))
        if bench.run_preset:
            _merge(config, preset_sections(bench.run_preset, names, data, repository))
    return config


def preset_sections(preset: RunPreset, names: tuple[str, ...], data: str | None, repository: Path) -> dict[str, Any]:
    chosen = data if data is not None and preset.data else (preset.data[0] if preset.data else "")
    sections = import_target(preset.sections)(RunRequest(names, chosen, repository))
    if not isinstance(sections, dict):
        raise RmevalError(f"run preset {preset.sections}: returned {type(sections).__name__}, not a mapping")
    return sections
