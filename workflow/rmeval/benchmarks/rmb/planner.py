"""What RMB's rules run, planned once from its config section at Snakefile parse time: models, the one texts table
each model scores, preflight needs (the local folder's items checked, or the repository reachable), settings per rule
and the lock's input (the prepare stage's manifest). Light on purpose (no pandas, no torch)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rmb.layout import ARCHIVE_URL, NAME, REPOSITORY
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.run_plan import BenchmarkPlan, PlanContext

DATA = "results/rmb/data/texts.parquet"
ITEMS = "results/rmb/data/items.parquet"
MANIFEST = "results/rmb/data/manifest.json"
DOWNLOAD = "results/rmb/download"
TABLE = "texts"  # the one score table: results/scores/rmb/{model}/texts.parquet
PREPARE_RULE, METRICS_RULE, SCORE_RULE = "rmb_prepare", "rmb_metrics", "rmb_score"


def folder_problem(path: str, rules: frozenset[str]) -> Any:
    """Preflight's check of a local folder: every problem `rmb-prepare` would stop on, one line each, or None."""
    from rmeval.benchmarks.rmb.loading import message, read_folder
    from rmeval.preflight import Problem

    _, problems = read_folder(path)
    if not problems:
        return None
    return Problem("rmb.path", message(path, problems),
                   "fix the files (the official layout: config/README.md, `rmb`)", rules)


def json_files(path: str, workdir: Path) -> list[str]:
    """The local folder's data files, the prepare rule's inputs (a changed file reruns it), named as the config
    names the folder: relative to the working directory, or absolute."""
    folder = Path(path)
    if folder.is_absolute():
        return sorted(str(file) for file in folder.rglob("*.json"))
    return sorted(str(file.relative_to(workdir)) for file in (workdir / folder).rglob("*.json"))


def plan(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    from rmeval.benchmarks import benchmark
    from rmeval.preflight import Check, Needs, UrlNeed
    from rmeval.run_plan import BenchmarkPlan, ScoreJobs

    bench = benchmark(NAME)
    section = config[NAME]
    specs, keys = context.section_models(config, NAME, bench.models_key,
                                         direct_only="RMB rewards each response on its own")
    local = section["source"] == "local"
    if local and not section["path"]:
        raise RmevalError("config: rmb.source is local but rmb.path is not set")
    path = context.locate(section["path"]) if local else None
    rules = frozenset({PREPARE_RULE})
    needs = Needs(
        checks=(Check(rules, lambda: folder_problem(str(path), rules)),) if local else (),
        urls=() if local else (UrlNeed(
            key="rmb.source", what="'hub' (the authors' repository)",
            fix="offline, use `rmb.source: local` with `rmb.path` (config/README.md)", rules=rules,
            url=ARCHIVE_URL.format(repository=REPOSITORY, revision=section["revision"])),),
    )
    models = tuple(specs)
    prepare = {"source": section["source"], "revision": section["revision"], "download": DOWNLOAD,
               **({"path": path} if local else {}), **({"lock": context.lock_path} if context.lock_path else {})}
    return BenchmarkPlan(
        name=NAME,
        models=specs,
        model_keys=keys,
        score_jobs=(ScoreJobs(bench.stage(SCORE_RULE), models, (TABLE,), lambda model, table: DATA),),
        needs=needs,
        pending={PREPARE_RULE: [DATA]},
        settings={PREPARE_RULE: prepare, METRICS_RULE: {"scored_models": list(models), "average": section["average"]}},
        lock_inputs={"manifest": MANIFEST},
        lock_files=(MANIFEST,),
        own={"local_inputs": json_files(str(path), context.workdir) if local else []},
    )
