"""What RM-Bench's rules run, planned once from its config section at Snakefile parse time: models, the one score
table each model scores (six responses per prompt), preflight needs (the local file and every problem in it, or the
Hub dataset), settings per rule, the lock's input (the prepare stage's manifest) and, when the run follows a lock,
the locked commit and sha256. Light on purpose (no pandas, no torch)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rmbench.paths import (
    DATA,
    MANIFEST,
    METRICS_RULE,
    NAME,
    PREPARE_RULE,
    SCORE_RULE,
    TABLE,
)
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.preflight import Problem
    from rmeval.run_plan import BenchmarkPlan, PlanContext


def plan(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    from rmeval.benchmarks import benchmark
    from rmeval.benchmarks.rewardbench.plan import score_settings
    from rmeval.benchmarks.rewardbench.versions import V1
    from rmeval.benchmarks.rmbench.lock import locked_record
    from rmeval.benchmarks.rmbench.official import HF_ID
    from rmeval.preflight import Check, DatasetNeed, FileNeed, Needs
    from rmeval.run_plan import BenchmarkPlan, ScoreJobs

    bench = benchmark(NAME)
    section = config[NAME]
    specs, keys = context.section_models(config, NAME, bench.models_key,
                                         direct_only="RM-Bench rates each response on its own")
    local = section["source"] == "local"
    if local and not section["path"]:
        raise RmevalError(f"config: {NAME}.source is local but {NAME}.path is not set")
    path = context.locate(section["path"]) if local else None
    locked = locked_record(context.lock_path) or {}
    revision = section["revision"] or (locked.get("resolved_revision") if not local else None)
    rules = frozenset({PREPARE_RULE})
    needs = Needs(
        files=(FileNeed(key=f"{NAME}.path", path=path, what=f"file not found: {path}",
                        fix="fix the path, or use `source: hub` where there is network", rules=rules),) if local else (),
        checks=(Check(rules, lambda: file_problems(str(path), rules)),) if local else (),
        datasets=() if local else (
            DatasetNeed(key=f"{NAME}.source", dataset=HF_ID, what="'hub'",
                        fix=f"offline, use `{NAME}.source: local` with `{NAME}.path` (config/README.md)",
                        rules=rules),),
    )
    models = tuple(specs)
    prepare = {"source": section["source"], "revision": revision, **({"path": path} if local else {}),
               **({"expected_sha256": locked["sha256"]} if locked.get("sha256") else {})}
    return BenchmarkPlan(
        name=NAME,
        models=specs,
        model_keys=keys,
        # run_rm.py is a RewardBench fork: its input is RewardBench v1's (truncated from the left)
        score_jobs=(ScoreJobs(bench.stage(SCORE_RULE), models, (TABLE,), lambda model, table: DATA,
                              settings=score_settings(V1, section)),),
        needs=needs,
        pending={PREPARE_RULE: [DATA]},
        settings={PREPARE_RULE: prepare, METRICS_RULE: {"models": list(models)}},
        lock_inputs={"manifest": MANIFEST},
        lock_files=(MANIFEST,),
        own={"local_inputs": {"path": path} if local else {}},
    )


def file_problems(path: str, rules: frozenset[str]) -> list[Problem]:
    """Preflight's check of a present local file: every problem `rmbench-prepare` would stop on, one line each
    (file, item, field), before the first job ([]: fine; an absent file is the FileNeed's)."""
    from pathlib import Path

    from rmeval.benchmarks.rmbench.loading import problems, read_units
    from rmeval.preflight import Problem

    if not Path(path).is_file():
        return []
    fix = "fix the file (RM-Bench's official layout: total_dataset.json)"
    try:
        lines = problems(read_units(Path(path)), path)
    except RmevalError as error:
        lines = [str(error)]
    return [Problem(f"{NAME}.path", line, fix, rules) for line in lines]
