"""What JudgeBench's rules run, planned once from its config section at Snakefile parse time: the models (pairwise
LLM judges read the pairwise tables), one score table per split, preflight needs (the local files and their rows,
or the Hub dataset), settings per rule, the lock's input, and the locked bytes when the run follows a lock. Light
on purpose (no pandas, no torch)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.judgebench.catalogue import (
    BENCHMARK,
    DATA,
    MANIFEST,
    METRICS_RULE,
    PAIRWISE_DATA,
    PREPARE_RULE,
    ROOT,
    SCORE_RULE,
)
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.preflight import Needs, Problem
    from rmeval.registry import ModelSpec
    from rmeval.run_plan import BenchmarkPlan, PlanContext

RULES = frozenset({PREPARE_RULE})


@dataclass(frozen=True)
class JudgeBenchPlan:
    """What judgebench.smk reads: the splits, the local split files (rule inputs), the models, the pairwise
    judges among them."""

    splits: tuple[str, ...]
    local_inputs: Mapping[str, str]
    models: tuple[str, ...]
    pairwise: tuple[str, ...]

    def tables(self, kind: str) -> list[str]:
        pattern = PAIRWISE_DATA if kind == "pairwise" else DATA
        return [pattern.format(split=split) for split in self.splits]


def pairwise_judges(specs: Mapping[str, ModelSpec]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The pairwise judges; warnings. A judge at seeded positions would not show the two recorded orders: refused."""
    pairwise = tuple(name for name, spec in specs.items() if spec.judge_mode == "pairwise")
    warnings = []
    for name in pairwise:
        options = specs[name].adapter_entry.settings(specs[name].options)
        if options["positions"] != "recorded":
            raise RmevalError(f"config: judgebench.models: {name!r} shows the answers at seeded positions; JudgeBench "
                              "judges every pair in both orders (set its options.positions: recorded)")
        if options["both_orders"]:
            warnings.append(f"judgebench: judge {name!r} has options.both_orders: true; JudgeBench's table already "
                            "holds both orders, so each is judged twice (only the first verdict counts)")
    return pairwise, tuple(warnings)


def published_splits(specs: Mapping[str, ModelSpec], splits: tuple[str, ...]) -> None:
    """A published model whose file names its response model (run_judge.py's `response_model=<model>` in the file
    name) holds that split's pairs only: scored on another split, it would match none. A config error naming both."""
    import re

    from rmeval.benchmarks.judgebench.official import SPLITS
    from rmeval.models.catalogue import is_published

    by_model = {split.response_model: split.name for split in SPLITS.values()}
    for name, spec in specs.items():
        found = re.search(r"response_model=([^,/]+?)(?:,|\.jsonl$)", str(spec.options.get("path") or ""))
        if not is_published(spec) or spec.options.get("source") == "run" or not found:
            continue
        held = by_model.get(found.group(1))
        others = [split for split in splits if split != held]
        if held and others:
            raise RmevalError(f"config: judgebench.splits: {list(splits)}, but published model {name!r} holds the "
                              f"{held} split's pairs only (its file {spec.options.get('path')}); run its split alone "
                              f"(`judgebench.splits: [{held}]`), or score the other split(s) in another run")


def locked_files(context: PlanContext) -> tuple[dict[str, str], str | None]:
    """split -> sha256 and the Hub commit of the lock the run follows ({} and None when it follows none, or the
    lock has no JudgeBench record)."""
    if not context.lock_path:
        return {}, None
    from rmeval.lock.lockfile import load_lock

    record = load_lock(context.lock_path).sections.get(BENCHMARK.name)
    if record is None:
        return {}, None
    return record.split_sha256(), record.resolved_revision()


def file_problems(split: str, path: str, locked: str | None) -> list[Problem]:
    """Preflight's check of a present local split file: every problem `judgebench-prepare` would stop on, one line
    each (file, line and pair, field), or a sha256 other than the locked one ([] when fine)."""
    from pathlib import Path

    from rmeval.benchmarks.judgebench.loading import MAX_LISTED, read_pairs
    from rmeval.io.hashing import sha256_file
    from rmeval.preflight import Problem

    if not Path(path).is_file():
        return []  # the FileNeed says so
    if locked and sha256_file(path) != locked:
        return [Problem("judgebench.path", f"{path}: sha256 differs from the lock's ({locked[:16]}...)",
                        "give the locked file, or leave `lock:` out", RULES)]
    _, problems = read_pairs(Path(path))
    fix = f"fix the {split} file (JudgeBench's own fields: config/README.md)"
    found = [Problem("judgebench.path", problem, fix, RULES) for problem in problems[:MAX_LISTED]]
    if len(problems) > MAX_LISTED:
        found.append(Problem("judgebench.path", f"{path}: {len(problems) - MAX_LISTED} more problems", fix, RULES))
    return found


def needs(local: Mapping[str, str], locked: Mapping[str, str]) -> Needs:
    from rmeval.benchmarks.judgebench.official import HF_ID
    from rmeval.preflight import Check, DatasetNeed, FileNeed, Needs

    if not local:
        return Needs(datasets=(DatasetNeed(key="judgebench.source", dataset=HF_ID, what="'hub'",
                                           fix="offline, use `judgebench.source: local` with `judgebench.path` "
                                               "(config/README.md)", rules=RULES),))
    return Needs(
        files=tuple(FileNeed(key="judgebench.path", path=path, what=f"file not found: {path} (split {split})",
                             fix="put the official .jsonl files in the folder, or use `source: hub` where there is "
                                 "network", rules=RULES) for split, path in local.items()),
        checks=tuple(Check(RULES, lambda split=split, path=path: file_problems(split, path, locked.get(split)) or None)
                     for split, path in local.items()),
    )


def plan(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    from rmeval.benchmarks.catalogue import scores_dir
    from rmeval.benchmarks.judgebench.loading import local_file, split_names
    from rmeval.benchmarks.judgebench.official import SPLITS
    from rmeval.run_plan import BenchmarkPlan, ScoreJobs

    section = config[BENCHMARK.enabled_by]
    specs, keys = context.section_models(config, BENCHMARK.enabled_by, BENCHMARK.models_key)
    pairwise, warnings = pairwise_judges(specs)
    splits = tuple(split.name for split in split_names(list(section["splits"]), "config: judgebench.splits"))
    published_splits(specs, splits)
    local = section["source"] == "local"
    if local and not section["path"]:
        raise RmevalError("config: judgebench.source is local but judgebench.path is not set")
    folder = context.locate(section["path"]) if local else None
    local_inputs = {split: str(local_file(folder, SPLITS[split])) for split in splits} if local else {}
    locked, locked_revision = locked_files(context)
    revision = section["revision"] if section["revision"] or local else locked_revision
    own = JudgeBenchPlan(splits, local_inputs, tuple(specs), pairwise)
    judges = set(pairwise)

    def data(model: str, table: str) -> str:
        return (PAIRWISE_DATA if model in judges else DATA).format(split=table)

    return BenchmarkPlan(
        name=BENCHMARK.name,
        models=specs,
        model_keys=keys,
        score_jobs=(ScoreJobs(BENCHMARK.stage(SCORE_RULE), own.models, splits, data),),
        needs=needs(local_inputs, locked),
        pending={PREPARE_RULE: [MANIFEST]},
        settings={
            PREPARE_RULE: {"source": section["source"], "revision": revision, "splits": list(splits),
                           "locked": {split: locked[split] for split in splits if split in locked} or None,
                           **({"path": folder} if local else {})},
            METRICS_RULE: {"data": ROOT, "scores": scores_dir(BENCHMARK.name), "scored_models": list(own.models),
                           "splits": list(splits)},
        },
        lock_inputs={"manifest": MANIFEST},
        lock_files=(MANIFEST,),
        own=own,
        warnings=warnings,
    )

