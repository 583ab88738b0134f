"""`rmeval run --against NAME_OR_FOLDER` (repeatable): opponents the run's models are compared with, not run here.

- A registry entry of published results (adapter `published`, `rmeval published` lists them), by its name or as
  `published:<benchmark>/<model>` (the published model's name, with or without its organisation, e.g.
  `published:rewardbench/infly/INF-ORM-Llama3.1-70B` or `published:rewardbench/INF-ORM-Llama3.1-70B`):
  added to its benchmark's models list.
- An earlier run's folder (its `results/`, or the run directory): each model with score files there joins the
  benchmarks of this run it has scores of, under its own name, as `adapter: published, source: run`; the earlier
  lock says which model, data and settings produced them. Where the earlier run's config section of a benchmark
  differs from this run's (data source, revision, input formatting), that is said before the run starts.

Every problem is one line before anything is written: an unknown name, a registry model that is not published
results, a benchmark this run does not run, a folder without score files, a name that clashes with a model of this
run (both named), and what each file's benchmark reader finds (rmeval.published.plan.problems: another benchmark's
file, only aggregates, ids that do not match).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.catalogue import Benchmark
from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec

PREFIX = "published:"
RUN_RESOURCES = {"gpu": 0, "mem_mb": 2000, "runtime": 10}  # reading a score file: no GPU, little memory


@dataclass(frozen=True)
class Opponent:
    """One model `--against` adds: its name, its config entry (a registry name or an inline entry), the
    benchmarks whose model lists it joins, and how it was found."""

    name: str
    entry: str | dict[str, Any]
    benchmarks: tuple[str, ...]
    given: str
    how: str


def _registry_opponent(value: str, registry: Mapping[str, ModelSpec]) -> tuple[Opponent | None, str | None]:
    from rmeval.models.catalogue import is_published

    published = {name: spec for name, spec in registry.items() if is_published(spec)}
    name = value
    if value.startswith(PREFIX):
        bench, _, model = value.removeprefix(PREFIX).partition("/")
        # the published model's name, its entry's, or the model's name without its organisation
        found = [n for n, spec in published.items() if spec.options.get("benchmark") == bench
                 and model in (spec.options.get("model"), n, str(spec.options.get("model")).rsplit("/", 1)[-1])]
        if len(found) != 1:
            what = "no" if not found else f"{len(found)}"
            return None, (f"--against {value}: {what} published model of {bench!r} named {model!r} in the registry "
                          "(`rmeval published` lists them)")
        name = found[0]
    spec = registry.get(name)
    if spec is None:
        close = difflib.get_close_matches(name, list(published), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return None, (f"--against {value}: unknown name, and no such folder; {hint}`rmeval published` lists the "
                      "registry's published models")
    if not is_published(spec):
        return None, (f"--against {value}: registry model {name!r} is run by this machine (adapter {spec.adapter}), "
                      f"not published results; add it with --model {name}")
    bench = str(spec.options.get("benchmark"))
    return Opponent(name, name, (bench,), f"--against {value}",
                    f"published {bench} results of {spec.options.get('model')} ({spec.options.get('source')})"), None


def _folder_opponents(value: str, chosen: Sequence[str]) -> tuple[list[Opponent], list[str]]:
    from rmeval.published.earlier import results_folder, score_files

    try:
        folder = results_folder(value)
    except RmevalError as error:
        return [], [f"--against {value}: {error}"]
    by_model: dict[str, list[str]] = {}
    for bench, model in score_files(folder):
        if bench in chosen:
            by_model.setdefault(model, []).append(bench)
    if not by_model:
        found = sorted({bench for bench, _ in score_files(folder)})
        return [], [f"--against {value}: {folder} has no scores of this run's benchmarks ({', '.join(chosen)}); "
                    f"it has {', '.join(found) or 'none'}"]
    absolute = str(folder.resolve())
    return [Opponent(model, {"name": model, "adapter": "published", "resources": dict(RUN_RESOURCES),
                             "options": {"source": "run", "path": absolute, "model": model}},
                     tuple(benches), f"--against {value}", f"scores of an earlier run in {absolute}")
            for model, benches in by_model.items()], []


def resolve_against(values: Sequence[str], registry: Mapping[str, ModelSpec], benchmarks: Sequence[Benchmark],
                    run_models: Mapping[str, str]) -> tuple[list[Opponent], list[str]]:
    """The opponents, and one line per problem. `run_models`: this run's model names -> how each was given."""
    chosen = [bench.name for bench in benchmarks]
    opponents: list[Opponent] = []
    problems: list[str] = []
    for value in values:
        if Path(value).expanduser().is_dir():
            found, lines = _folder_opponents(value, chosen)
        else:
            one, line = _registry_opponent(value, registry)
            found, lines = ([one] if one else []), ([line] if line else [])
            for opponent in found:
                if not set(opponent.benchmarks) & set(chosen):
                    lines.append(f"--against {value}: published {opponent.benchmarks[0]} results, but this run's "
                                 f"benchmarks are {', '.join(chosen)}; add --benchmarks {opponent.benchmarks[0]}")
                    found = []
        problems += lines
        for opponent in found:
            if opponent.name in run_models:
                problems.append(f"{opponent.given}: model {opponent.name!r} has the name of this run's "
                                f"{run_models[opponent.name]}; a folder's models keep their names: give this run's "
                                "model another (--name)")
                continue
            earlier = next((o.given for o in opponents if o.name == opponent.name), None)
            if earlier:
                problems.append(f"{opponent.given}: model {opponent.name!r} has the name of {earlier}'s; give one "
                                "of them")
                continue
            opponents.append(opponent)
    return opponents, problems


def add_to_config(config: dict[str, Any], opponents: Sequence[Opponent]) -> None:
    """Each opponent into the model list of every benchmark of the run it joins (config written by build.py)."""
    from rmeval.benchmarks import benchmark

    for opponent in opponents:
        for name in opponent.benchmarks:
            bench = benchmark(name)
            if not bench.enabled(config):
                continue
            node: Any = config
            *sections, last = bench.models_key.split(".")
            for part in sections:
                node = node.setdefault(part, {})
            node[last] = [*(node.get(last) or []), opponent.entry]


def file_problems(config: dict[str, Any], opponents: Sequence[Opponent], registry: Mapping[str, ModelSpec],
                  locate: Any) -> list[str]:
    """What each opponent's file says before any job (rmeval.published.plan.problems), one line each."""
    from rmeval.benchmarks import benchmark
    from rmeval.published.plan import problems
    from rmeval.registry import spec_from_mapping

    lines = []
    for opponent in opponents:
        spec = registry[opponent.entry] if isinstance(opponent.entry, str) else spec_from_mapping(
            opponent.entry, f"{opponent.given}")
        for name in opponent.benchmarks:
            bench = benchmark(name)
            if not bench.enabled(config):
                continue
            try:
                found = problems(spec, bench, config.get(bench.enabled_by or "", {}) or {}, locate)
            except RmevalError as error:
                found = [str(error)]
            lines += [f"{opponent.given}: {line}" for line in found]
    return lines


def _filled(config: Mapping[str, Any]) -> dict[str, Any]:
    """A config with the schema's defaults filled in (a copy), so that a key left at its default compares equal."""
    import copy

    from rmeval.config_check import config_schema, fill_defaults

    filled = copy.deepcopy(dict(config))
    try:
        fill_defaults(filled, config_schema())
    except Exception:  # noqa: BLE001 - an earlier run's config of another rmeval version: compared as written
        return dict(config)
    return filled


def mismatch_notes(config: Mapping[str, Any], opponents: Sequence[Opponent]) -> list[str]:
    """For an earlier run's models: each benchmark section key (data source, revision, input formatting) whose value
    differs between the earlier run's config (its results/run_config.yaml) and this run's, named."""
    from rmeval.benchmarks import benchmark
    from rmeval.io.yaml_io import load_yaml

    notes: list[str] = []
    seen: set[tuple[str, str]] = set()
    for opponent in opponents:
        if not isinstance(opponent.entry, dict):
            continue
        folder = Path(opponent.entry["options"]["path"])
        earlier_config = folder / "run_config.yaml"
        for name in opponent.benchmarks:
            if (str(folder), name) in seen:
                continue
            seen.add((str(folder), name))
            section_key = benchmark(name).enabled_by or ""
            if not earlier_config.is_file():
                notes.append(f"{opponent.given}: {name}: no run_config.yaml beside its scores: its data and settings "
                             "are not compared with this run's (its lock and sidecars still record them)")
                continue
            theirs = _filled(load_yaml(earlier_config.read_text(encoding="utf-8")) or {}).get(section_key) or {}
            ours = _filled(config).get(section_key) or {}
            differ = [f"{section_key}.{key}: {theirs.get(key)!r} there, {ours.get(key)!r} here"
                      for key in sorted(set(theirs) | set(ours)) if key not in ("models", "enabled")
                      and theirs.get(key) != ours.get(key)]
            if differ:
                notes.append(f"{opponent.given}: {name}: the earlier run differs: {'; '.join(differ)}")
    return notes
