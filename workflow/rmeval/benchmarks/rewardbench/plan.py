"""What a RewardBench version's rules run, planned once from its config section at Snakefile parse time: models,
the one score table each model scores, preflight needs (the local file, or the Hub dataset), settings per rule and
the lock's input (the prepare stage's manifest). Light on purpose (no pandas, no torch)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rewardbench.official import HF_IDS
from rmeval.benchmarks.rewardbench.versions import V1, Version
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.run_plan import BenchmarkPlan, PlanContext


def plan_version(version: Version, config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    from rmeval.benchmarks import benchmark
    from rmeval.preflight import Check, DatasetNeed, FileNeed, Needs
    from rmeval.run_plan import BenchmarkPlan, ScoreJobs, with_run_settings

    bench = benchmark(version.name)
    section = with_run_settings(config, version.name, ("bootstrap", "seed"))
    specs, keys = context.section_models(config, version.name, bench.models_key,
                                         direct_only="RewardBench rates each completion on its own")
    local = section["source"] == "local"
    if local and not section["path"]:
        raise RmevalError(f"config: {version.name}.source is local but {version.name}.path is not set")
    path = context.locate(section["path"]) if local else None
    rules = frozenset({version.prepare_rule})
    needs = Needs(
        files=(FileNeed(key=f"{version.name}.path", path=path, what=f"file not found: {path}",
                        fix="fix the path, or use `source: hf` where there is network", rules=rules),) if local else (),
        checks=(Check(rules, lambda: columns_problem(version, path, rules)),) if local else (),
        datasets=() if local else (
            DatasetNeed(key=f"{version.name}.source", dataset=HF_IDS[version.name], what="'hf'",
                        fix=f"offline, use `{version.name}.source: local` with `{version.name}.path` "
                            "(config/README.md)", rules=rules),),
    )
    models = tuple(specs)
    settings: dict[str, dict[str, Any]] = {
        version.prepare_rule: {"version": version.name, "source": section["source"],
                               "revision": section["revision"], **({"path": path} if local else {})},
        version.metrics_rule: {"version": version.name, "models": list(models), "scores": version.scores_dir,
                               **({} if version is V1 else {"bootstrap": section["bootstrap"],
                                                             "seed": section["seed"]})},
        version.export_rule: {"version": version.name},
    }
    return BenchmarkPlan(
        name=version.name,
        models=specs,
        model_keys=keys,
        score_jobs=(ScoreJobs(bench.stage(version.score_rule), models, (version.name,),
                              lambda model, table: version.data, settings=score_settings(version, section)),),
        needs=needs,
        pending={version.prepare_rule: [version.data]},
        settings=settings,
        lock_inputs={"manifest": version.manifest},
        lock_files=(version.manifest,),
        own={"local_inputs": {"path": path} if local else {}, "models": list(models)},
    )


def score_settings(version: Version, section: Mapping[str, Any]) -> dict[str, Any]:
    """`rmeval score` settings of the version's jobs: with `model_input: official`, the official script's input."""
    if section["model_input"] != "official":
        return {}
    return {"model_input": {"style": "text-pipeline", "max_length": int(section["max_length"]),
                            "truncation_side": version.truncation_side}}


def columns_problem(version: Version, path: str, rules: frozenset[str]) -> Any:
    """Preflight's format check of a present local file: the dataset's columns in its first row (None: fine)."""
    from pathlib import Path

    from rmeval.preflight import Problem

    file = Path(path)
    if not file.is_file():
        return None  # the FileNeed says so
    try:
        if file.suffix == ".parquet":
            import pyarrow.parquet as pq

            columns = pq.read_schema(file).names
        elif file.suffix == ".jsonl":
            import json

            with file.open(encoding="utf-8") as handle:
                columns = list(json.loads(handle.readline() or "{}"))
        else:
            return None  # a JSON array is checked by the prepare step, row by row
    except (OSError, ValueError) as error:
        return Problem(f"{version.name}.path", f"{path} is not readable ({error})",
                       "point it at a JSON / JSONL / Parquet file in the dataset's columns", rules)
    missing = [column for column in version.columns if column not in columns]
    if missing:
        return Problem(f"{version.name}.path", f"{path} lacks column(s) {missing}",
                       f"write the {version.title} dataset's own columns ({', '.join(version.columns)})", rules)
    return rows_problem(version, path, rules)


def rows_problem(version: Version, path: str, rules: frozenset[str]) -> Any:
    """What `rewardbench-prepare` would stop on in the file's rows (empty texts, counts, subsets), or None: its
    very checks, before the first job."""
    from rmeval.benchmarks.rewardbench.loading import Source, prepare, read_rows
    from rmeval.preflight import Problem

    try:
        prepare(read_rows(Source("local", path=path)), version, path)
    except RmevalError as error:
        return Problem(f"{version.name}.path", str(error), f"fix the file ({version.title}'s own rows and columns)",
                       rules)
    return None


def plan(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    return plan_version(V1, config, context)
