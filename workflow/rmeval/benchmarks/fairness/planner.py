"""The fairness benchmark's plan of a run (its catalogue's `planner`): groups, models, the arXiv stage's settings
and needs, the groups rebuilt from a followed lock. Light on purpose: read at Snakefile parse time."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.fairness.arxiv.preflight import arxiv_needs
from rmeval.benchmarks.fairness.catalogue import (
    BENCHMARK,
    CAPABILITY_RULE,
    DATA,
    DATA_DIR,
    FIGURES_RULE,
    MANIFEST,
    PAIRED,
    SCORE_RULE,
)
from rmeval.errors import RmevalError
from rmeval.preflight import Needs
from rmeval.registry import ModelSpec
from rmeval.run_plan import BenchmarkPlan, Locate, PlanContext, ScoreJobs, model_keys, with_run_settings

CORPUS_RULE = "corpus_prepare"


def arxiv_settings_json(arxiv: Mapping[str, Any], snapshot: str | None) -> str:
    """The `arxiv:` mapping for `rmeval arxiv-from-lock --config-json`, the snapshot located."""
    return json.dumps({**{k: v for k, v in arxiv.items() if k != "allow_fewer"},
                       **({"snapshot": snapshot} if snapshot else {})}, sort_keys=True, default=str)


def located_snapshot(arxiv: Mapping[str, Any], locate: Locate) -> str | None:
    """The snapshot the fetch reads (source snapshot only), located."""
    return locate(arxiv["snapshot"]) if arxiv["source"] == "snapshot" and arxiv.get("snapshot") else None


@dataclass(frozen=True)
class ArxivFromLock:
    """`arxiv.source: lock`: the groups rebuilt from the papers of the followed lock (rule arxiv_from_lock)."""

    lock: str
    lock_sha256: str  # a different lock at the same path rebuilds the groups
    snapshot: list[str]  # the located snapshot, if the config names one: papers are read there, not fetched


def plan_arxiv_from_lock(config: Mapping[str, Any], lock_path: str, locate: Locate) -> tuple[ArxivFromLock, dict]:
    """The rebuild's rule inputs and its `rmeval arxiv-from-lock --settings`."""
    from rmeval.io.hashing import sha256_file

    arxiv = with_run_settings(config, "arxiv", ("seed",))
    snapshot = locate(arxiv["snapshot"]) if arxiv.get("snapshot") else None
    settings = {"lock": lock_path, "groups_json": json.dumps(config["groups"]),  # JSON text: keeps config order
                "config_json": arxiv_settings_json(arxiv, snapshot), "out_dir": DATA_DIR}
    return ArxivFromLock(lock=lock_path, lock_sha256=sha256_file(lock_path), snapshot=[snapshot] if snapshot else []), \
        settings


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
class CorpusPlan:
    """`corpus:` set: the corpus stage's input file (none for an HF dataset) and whether the design is paired."""

    inputs: list[str]
    paired: bool


@dataclass(frozen=True)
class FairnessPlan:
    """What fairness.smk and its stage files read: the groups, the snapshot the fetch reads, the rebuild from a
    lock, or the grouped corpus that replaces arXiv (the rules' settings are the BenchmarkPlan's)."""

    groups: tuple[str, ...]
    snapshot: str | None
    arxiv_from_lock: ArxivFromLock | None
    corpus: CorpusPlan | None = None
    capability_files: tuple[str, ...] = ()  # the enabled benchmarks' capability files (fairness_capability's input)


def capability_files(config: Mapping[str, Any]) -> tuple[str, ...]:
    """Every enabled benchmark's declared capability file (its catalogue's `capability`), in catalogue order."""
    from rmeval.benchmarks import all_benchmarks

    return tuple(bench.get(bench.capability).path for bench in all_benchmarks()
                 if bench.capability and bench.enabled(config))


def group_tables_plan(config: Mapping[str, Any], models: dict[str, ModelSpec], groups: tuple[str, ...],
                      **source: Any) -> BenchmarkPlan:
    """The fairness plan around its group tables, whichever source writes them (`source`: the data stage's needs,
    pending outputs, the rules' settings, its own plan, warnings): every model scores every group table, and the
    lock section records the tables and manifests, in config order."""
    data = {group: DATA.format(group=group) for group in groups}
    manifests = {group: MANIFEST.format(group=group) for group in groups}
    skipped = skipped_figures(config, models)
    conditions = frozenset(source.pop("conditions", frozenset())) | {
        BENCHMARK.get(key).when for key in OPTIONAL_FIGURES if key not in skipped}
    settings = {**source.pop("settings")}
    drawn = [output.stem for output in BENCHMARK.of_rule(FIGURES_RULE, conditions) if output.when != PAIRED]
    settings[FIGURES_RULE] = {**settings[FIGURES_RULE], "figures": drawn}
    if "capability_figure" not in skipped:
        settings[CAPABILITY_RULE] = {**settings[CAPABILITY_RULE], "figure": BENCHMARK.get("capability_figure").path}
    return BenchmarkPlan(
        name=BENCHMARK.name,
        settings=settings,
        conditions=conditions,
        skipped=skipped,
        models=models,
        model_keys=model_keys(BENCHMARK.models_key, config["models"]),
        score_jobs=(ScoreJobs(BENCHMARK.stage(SCORE_RULE), tuple(models), groups,
                              lambda model, table: data[table]),),
        # The lock section (rmeval.benchmarks.fairness.lock): the group tables and manifests, in config order.
        lock_inputs={"groups": [{"name": group, "data": data[group], "manifest": manifests[group]}
                                for group in groups]},
        lock_files=(*data.values(), *manifests.values()),
        **source,
    )


# The figures that may have nothing to show (their `when`: RANKED, CAPABILITY): drawn only when it holds.
OPTIONAL_FIGURES = ("gap_vs_rank", "capability_figure")


def skipped_figures(config: Mapping[str, Any], models: Mapping[str, ModelSpec]) -> dict[str, str]:
    """The figures of OPTIONAL_FIGURES this run leaves out because they would show nothing, and why (the report's
    front page says it); the others' conditions hold."""
    from rmeval.benchmarks.fairness.figures.gap_vs_rank import MIN_RANKED_MODELS

    skipped = {}
    ranked = [name for name, spec in models.items() if spec.rewardbench_rank is not None]
    if len(ranked) < MIN_RANKED_MODELS:
        skipped["gap_vs_rank"] = (f"not drawn: {len(ranked)} of {len(models)} model(s) have a `rewardbench_rank` "
                                  f"in the registry, and the plot needs {MIN_RANKED_MODELS}")
    if not ranked and not capability_files(config):
        skipped["capability_figure"] = ("not drawn: no model has a capability value (enable rewardbench or "
                                        "rewardbench2, or give the models a `rewardbench_rank`)")
    return skipped


def capability_settings(config: Mapping[str, Any], models: Mapping[str, ModelSpec]) -> dict[str, Any]:
    """`rmeval fairness-capability --settings`: the capability files, every model's published rank (inline ones
    too, labelled as published where a model did not run a capability benchmark), the permutation stream."""
    return {"capability": list(capability_files(config)),
            "ranks": {name: spec.rewardbench_rank for name, spec in models.items()},
            "permutations": config["stats"]["permutations"], "seed": config["stats"]["seed"],
            "dpi": config["figures"]["dpi"]}


def stats_settings(config: Mapping[str, Any], models: Mapping[str, ModelSpec], groups: tuple[str, ...],
                   locate: Locate) -> dict[str, Any]:
    """`rmeval fairness-stats --settings`: the `stats:` section, the models and groups in config order, the
    reference model ("" skips Table 4 with a note), the registry and every model's rank (inline ones too)."""
    return {
        **{key: value for key, value in config["stats"].items() if key != "calibration"},
        "models": list(models),
        "groups": list(groups),
        "reference_model": config["reference_model"] or "",
        "registry": locate(config["registry"]),
        "ranks": {name: spec.rewardbench_rank for name, spec in models.items()},
        "manifests": DATA_DIR,  # the manifests arxiv_select wrote beside the data the scores were computed on
    }


def calibrate_settings(config: Mapping[str, Any], models: Mapping[str, ModelSpec],
                       groups: tuple[str, ...]) -> dict[str, Any]:
    """`rmeval fairness-calibrate --settings`: stats.calibration, alpha and seed, the models and groups in order."""
    return {"replicates": config["stats"]["calibration"]["replicates"], "alpha": config["stats"]["alpha"],
            "seed": config["stats"]["seed"], "models": list(models), "groups": list(groups),
            **({"corpus": True} if config.get("corpus") else {})}


def corpus_needs(corpus: Mapping[str, Any], located: str | None, groups: Mapping[str, list[str]]) -> Needs:
    from rmeval.benchmarks.fairness.corpus.preflight import corpus_problem
    from rmeval.preflight import Check, DatasetNeed, FileNeed

    rules = frozenset({CORPUS_RULE})
    if corpus["source"] == "hf":
        name = corpus["hf"]["name"]
        if Path(name).is_dir():
            return Needs()
        return Needs(datasets=(DatasetNeed(key="corpus.hf.name", dataset=name, what="'hf'", rules=rules,
                                           fix="offline, use `corpus.source: table` with a local file"),))
    return Needs(files=(FileNeed(key="corpus.path", path=located or "", rules=rules,
                                 what=f"file not found: {corpus['path']}", fix="fix corpus.path"),),
                 checks=(Check(rules, lambda: corpus_problem(corpus, groups, rules)),))


def plan_corpus(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    """`corpus:` set: rule corpus_prepare writes the group tables; arXiv's rules are not defined."""
    corpus = with_run_settings(config, "corpus", ("seed",))
    located = context.locate(corpus["path"]) if corpus["source"] == "table" else None
    if located:
        corpus["path"] = located
    paired = corpus["columns"].get("pair") is not None
    models = context.resolve(config["models"], BENCHMARK.models_key)
    groups = tuple(config["groups"])
    data = {group: DATA.format(group=group) for group in groups}
    stats = stats_settings(config, models, groups, context.locate)
    stats["corpus"] = True
    if paired:
        stats["pairs"] = DATA_DIR
    return group_tables_plan(
        config, models, groups,
        needs=corpus_needs(corpus, located, config["groups"]),
        pending={CORPUS_RULE: list(data.values())},
        settings={
            CORPUS_RULE: {"corpus_json": json.dumps(corpus, sort_keys=True),
                          "groups_json": json.dumps(config["groups"]), "out_dir": DATA_DIR},
            "fairness_stats": stats,
            "fairness_calibrate": calibrate_settings(config, models, groups),
            "fairness_figures": {"dpi": config["figures"]["dpi"], **({"paired": True} if paired else {})},
            "fairness_capability": capability_settings(config, models),
        },
        own=FairnessPlan(groups=groups, snapshot=None, arxiv_from_lock=None,
                         corpus=CorpusPlan(inputs=[located] if located else [], paired=paired),
                         capability_files=capability_files(config)),
        conditions=frozenset({PAIRED} if paired else ()),
    )


def plan(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    from rmeval.benchmarks.fairness.arxiv.cli_fetch import fetch_settings
    from rmeval.benchmarks.fairness.arxiv.cli_select import select_settings

    if config.get("corpus"):
        return plan_corpus(config, context)
    check_groups(config, context.locate)
    models = context.resolve(config["models"], BENCHMARK.models_key)
    groups = tuple(config["groups"])
    arxiv = with_run_settings(config, "arxiv", ("seed",))
    if arxiv["source"] == "lock" and not context.lock_path:
        raise RmevalError("config: arxiv.source is 'lock' but no top-level `lock:` file is given")
    snapshot = located_snapshot(arxiv, context.locate)
    warnings = []
    reference = config["reference_model"]
    if reference is not None and reference not in models:
        # Table 4 needs the reference among the scored models; say so now, not after hours of scoring.
        warnings.append(
            f"config: reference_model {reference!r} is not in `models`; Table 4 (Pearson r) will be skipped"
        )
    data = {group: DATA.format(group=group) for group in groups}
    settings: dict[str, dict[str, Any]] = {
        "arxiv_fetch": fetch_settings(arxiv, snapshot),
        "arxiv_select": {**select_settings(arxiv), "groups": list(groups)},
        "fairness_stats": stats_settings(config, models, groups, context.locate),
        "fairness_calibrate": calibrate_settings(config, models, groups),
        "fairness_figures": {"dpi": config["figures"]["dpi"]},
        "fairness_capability": capability_settings(config, models),
    }
    from_lock = None
    if context.lock_path and arxiv["source"] == "lock":
        from_lock, settings["arxiv_from_lock"] = plan_arxiv_from_lock(config, context.lock_path, context.locate)
    return group_tables_plan(
        config, models, groups,
        needs=arxiv_needs(arxiv, snapshot),
        pending={"arxiv_fetch": list(data.values())},
        settings=settings,
        own=FairnessPlan(groups=groups, snapshot=snapshot, arxiv_from_lock=from_lock,
                         capability_files=capability_files(config)),
        warnings=tuple(warnings),
    )
