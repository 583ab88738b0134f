"""The fairness benchmark's plan of a run (its catalogue's `planner`): groups, models, the arXiv stage's settings
and needs, the groups rebuilt from a followed lock. Light on purpose: read at Snakefile parse time."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmeval.benchmarks.fairness.arxiv.preflight import arxiv_needs
from rmeval.benchmarks.fairness.catalogue import BENCHMARK, DATA, MANIFEST, SCORE_RULE
from rmeval.errors import RmevalError
from rmeval.run_plan import BenchmarkPlan, Locate, PlanContext, ScoreJobs, model_keys

# allow_fewer only concerns select; select needs no more than these.
SELECT_KEYS = ("papers_per_group", "seed", "allow_fewer", "candidate_factor", "categories_table")


@dataclass(frozen=True)
class ArxivPlan:
    """The `arxiv:` settings each command gets as JSON (a rule param: a change re-runs the job)."""

    snapshot: str | None  # the located snapshot the fetch reads (source snapshot only)
    fetch_json: str
    select_json: str


def _settings_json(settings: Mapping[str, Any]) -> str:
    return json.dumps(dict(settings), sort_keys=True, default=str)


def arxiv_settings_json(arxiv: Mapping[str, Any], snapshot: str | None) -> str:
    """The `arxiv:` mapping for `--config-json` of the fetch (and of `arxiv-from-lock`), the snapshot located."""
    return _settings_json(
        {**{k: v for k, v in arxiv.items() if k != "allow_fewer"}, **({"snapshot": snapshot} if snapshot else {})}
    )


def plan_arxiv(arxiv: Mapping[str, Any], locate: Locate) -> ArxivPlan:
    snapshot = locate(arxiv["snapshot"]) if arxiv["source"] == "snapshot" and arxiv.get("snapshot") else None
    return ArxivPlan(
        snapshot=snapshot,
        fetch_json=arxiv_settings_json(arxiv, snapshot),
        select_json=_settings_json({k: arxiv[k] for k in SELECT_KEYS if k in arxiv}),
    )


@dataclass(frozen=True)
class ArxivFromLock:
    """`arxiv.source: lock`: the groups rebuilt from the papers of the followed lock (rule arxiv_from_lock)."""

    lock: str
    lock_sha256: str  # a different lock at the same path rebuilds the groups
    snapshot: list[str]  # the located snapshot, if the config names one: papers are read there, not fetched
    groups_json: str
    settings_json: str


def plan_arxiv_from_lock(config: Mapping[str, Any], lock_path: str, locate: Locate) -> ArxivFromLock:
    from rmeval.io.hashing import sha256_file

    arxiv = config["arxiv"]
    snapshot = locate(arxiv["snapshot"]) if arxiv.get("snapshot") else None
    return ArxivFromLock(
        lock=lock_path,
        lock_sha256=sha256_file(lock_path),
        snapshot=[snapshot] if snapshot else [],
        groups_json=json.dumps(config["groups"]),
        settings_json=arxiv_settings_json(arxiv, snapshot),
    )


def check_groups(config: Mapping[str, Any], locate: Locate) -> None:
    """Unknown categories, or one category in two groups, fail now rather than after every download."""
    from rmeval.benchmarks.fairness.arxiv.categories import check_disjoint, load_table, resolve_group

    table_path = config["arxiv"]["categories_table"]
    try:
        table = load_table(locate(table_path) if table_path else None)
        check_disjoint({name: resolve_group(name, entries, table) for name, entries in config["groups"].items()})
    except RmevalError as error:
        raise RmevalError(f"config: {error}") from error


@dataclass(frozen=True)
class FairnessPlan:
    """What fairness.smk and arxiv.smk read: the groups, the arXiv settings, the rebuild from a lock."""

    groups: tuple[str, ...]
    arxiv: ArxivPlan
    arxiv_from_lock: ArxivFromLock | None


def plan(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    check_groups(config, context.locate)
    models = context.resolve(config["models"], "models")
    groups = tuple(config["groups"])
    arxiv = config["arxiv"]
    if arxiv["source"] == "lock" and not context.lock_path:
        raise RmevalError("config: arxiv.source is 'lock' but no top-level `lock:` file is given")
    arxiv_plan = plan_arxiv(arxiv, context.locate)
    warnings = []
    reference = config["reference_model"]
    if reference is not None and reference not in models:
        # Table 4 needs the reference among the scored models; say so now, not after hours of scoring.
        warnings.append(
            f"config: reference_model {reference!r} is not in `models`; Table 4 (Pearson r) will be skipped"
        )
    data = {group: DATA.format(group=group) for group in groups}
    manifests = {group: MANIFEST.format(group=group) for group in groups}
    return BenchmarkPlan(
        name=BENCHMARK.name,
        models=models,
        model_keys=model_keys("models", config["models"]),
        score_jobs=(ScoreJobs(BENCHMARK.stage(SCORE_RULE), tuple(models), groups,
                              lambda model, table: data[table]),),
        needs=arxiv_needs(arxiv, arxiv_plan.snapshot),
        pending={"arxiv_fetch": list(data.values())},
        # The lock section (rmeval.benchmarks.fairness.lock): the group tables and manifests, in config order.
        lock_inputs={"groups": [{"name": group, "data": data[group], "manifest": manifests[group]}
                                for group in groups]},
        lock_files=(*data.values(), *manifests.values()),
        own=FairnessPlan(
            groups=groups,
            arxiv=arxiv_plan,
            arxiv_from_lock=(plan_arxiv_from_lock(config, context.lock_path, context.locate)
                             if context.lock_path and arxiv["source"] == "lock" else None),
        ),
        warnings=tuple(warnings),
    )
