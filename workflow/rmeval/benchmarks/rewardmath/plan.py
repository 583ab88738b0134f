"""What the RewardMATH rules run, planned once from the config's `rewardmath:` section at Snakefile parse time.

`plan` is the benchmark's planner (its catalogue names it): the run plan (rmeval.run_plan) calls it and
rewardmath.smk reads the `RewardMathPlan` it carries. Light on purpose (no pandas, no torch).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rewardmath.catalogue import (
    BENCHMARK,
    DATA,
    METRICS_RULE,
    PAIRWISE_DATA,
    SCORE_RULE,
    SCORES_DIR,
)
from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_STEM, SUBJECT_SLUGS
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.preflight import Needs
    from rmeval.registry import ModelSpec
    from rmeval.run_plan import BenchmarkPlan, PlanContext

# Every prepared table: `rmeval rewardmath-prepare` always writes all seven subjects and RewardBench math-prm.
ALL_TABLES: tuple[str, ...] = (*SUBJECT_SLUGS, REWARDBENCH_STEM)
# Optional official result files, ingested into the same tables: `rmeval rewardmath-metrics` option -> config key.
OFFICIAL_FILES = {"official": "official_dir", "official_rewardbench": "official_rewardbench_dir",
                  "problems": "problems"}
# Local data files, named after their `rmeval rewardmath-prepare` flag -> the source key that makes them local.
LOCAL_FILES = {"path": "source", "rewardbench_path": "rewardbench_source"}
# Hub split / revision keys of `rmeval rewardmath-prepare` (the config's values, its schema's defaults).
HUB_KEYS = ("split", "revision", "rewardbench_split", "rewardbench_revision")
# Where pairwise judges' chosen positions come from when no file is named.
NAMED_POSITIONS = ("hf", "seeded")


@dataclass(frozen=True)
class RewardMathPlan:
    """The RewardMATH branch of one run: what is prepared, scored, ingested and written.

    models: the models scored on RewardMATH (`rewardmath.models`, resolved); judges / pairwise: the LLM judges
    among them (all / pairwise ones). official: `rewardmath-metrics` option -> official result path. local_inputs:
    prepare option -> local data file. positions: hf, seeded, a file, or None (no pairwise judge needs any).
    """

    enabled: bool
    subjects: tuple[str, ...]
    models: tuple[str, ...]
    judges: tuple[str, ...]
    pairwise: tuple[str, ...]
    with_rewardbench: bool
    source: str
    rewardbench_source: str
    official: Mapping[str, str]
    local_inputs: Mapping[str, str]
    hub: Mapping[str, str | None]
    positions: str | None
    prm_aggregation: str

    @classmethod
    def from_config(cls, section: Mapping[str, Any], specs: Mapping[str, ModelSpec],
                    resolve_path: Callable[[str], str] = str) -> RewardMathPlan:
        """`section`: the config's `rewardmath:` with the schema's defaults filled in (the Snakefile fills them:
        no default is repeated here); `specs`: its resolved models (name -> spec); `resolve_path`: makes a user
        path usable (common.smk's config_path: the working directory, else the repository)."""
        enabled = bool(section["enabled"])
        source = section["source"]
        rewardbench_source = section["rewardbench_source"]
        official = {option: resolve_path(section[key]) for option, key in OFFICIAL_FILES.items() if section.get(key)}
        if enabled and not specs and "official" not in official:
            raise RmevalError("rewardmath.enabled is true but neither rewardmath.models nor rewardmath.official_dir "
                              "is set: nothing to evaluate")
        local_inputs = {key: resolve_path(section[key]) for key, source_key in LOCAL_FILES.items()
                        if section[source_key] == "local" and section.get(key)}
        pairwise = tuple(name for name, spec in specs.items() if spec.judge_mode == "pairwise")
        return cls(
            enabled=enabled,
            subjects=tuple(section.get("subjects") or SUBJECT_SLUGS),
            models=tuple(specs),
            judges=tuple(name for name, spec in specs.items() if spec.judge_mode),
            pairwise=pairwise,
            with_rewardbench=rewardbench_source != "none",
            source=source,
            rewardbench_source=rewardbench_source,
            official=official,
            local_inputs=local_inputs,
            hub={key: section[key] for key in HUB_KEYS},
            positions=_positions(section, source, {name: specs[name] for name in pairwise}, resolve_path),
            prm_aggregation=section["prm_aggregation"],
        )

    @property
    def scored_tables(self) -> tuple[str, ...]:
        """The tables every RewardMATH model scores: its subjects, and RewardBench math-prm unless turned off."""
        return (*self.subjects, *([REWARDBENCH_STEM] if self.with_rewardbench else []))

    @property
    def position_file(self) -> dict[str, str]:
        """The positions file as a named input of rule rewardmath_positions ({} for hf, seeded or none)."""
        return {"positions": self.positions} if self.positions not in (None, *NAMED_POSITIONS) else {}

    @property
    def exports(self) -> list[str]:
        """results/rewardmath/official/{model}.json of every LLM judge (rule rewardmath_export)."""
        return [BENCHMARK.get("export").path.format(model=name) for name in self.judges]

    @property
    def table_files(self) -> dict[str, str]:
        """The files of rule rewardmath_metrics by output key (`side_by_side`, `side_by_side_md`, ...)."""
        files = {}
        for output in BENCHMARK.of_rule(METRICS_RULE):
            files[output.key] = output.path
            files.update({f"{output.key}_{suffix}": output.sibling(suffix) for suffix in output.formats})
        return files

    def settings(self, registry: str, alpha: float) -> dict[str, dict[str, Any]]:
        """Each rule's `--settings` (rmeval.cli_settings): what the RewardMATH commands get besides their files."""
        scored = {"scores": SCORES_DIR, "models": list(self.models), "subjects": list(self.subjects)} if self.models else {}
        return {
            "rewardmath_prepare": {"source": self.source, "rewardbench_source": self.rewardbench_source,
                                   **self.local_inputs, **self.hub},
            "rewardmath_positions": {"positions": self.positions},
            "rewardmath_metrics": {**scored, **self.official, "registry": registry,
                                   "prm_aggregation": self.prm_aggregation},
            "rewardmath_export": {"subjects": list(self.subjects)},
            "rewardmath_figures": {"prm_aggregation": self.prm_aggregation},
            "rewardmath_summary": {"prm_aggregation": self.prm_aggregation, "alpha": alpha},
        }


def _positions(section: Mapping[str, Any], source: str, pairwise: Mapping[str, ModelSpec],
               resolve_path: Callable[[str], str]) -> str | None:
    """hf, seeded or a resolved file: where pairwise judges see the chosen solution (None: no judge needs it).

    With no `pairwise_positions` and a local source there are no recorded positions: seeded ones do, unless a
    judge asks for recorded ones (its `options.positions`, default recorded).
    """
    positions = section["pairwise_positions"] or ("hf" if source == "hf" else None)
    if positions is None and pairwise:
        recorded = [name for name, spec in pairwise.items()
                    if spec.adapter_entry.settings(spec.options)["positions"] == "recorded"]
        if recorded:
            raise RmevalError(
                f"pairwise judge(s) {recorded} show the chosen solution at its recorded position, but "
                "rewardmath.pairwise_positions is not set (a local RewardMATH_pairwise file or *_pairwise_reward.json, "
                "hf, or seeded)"
            )
        positions = "seeded"
    if positions in (None, *NAMED_POSITIONS):
        return positions
    return resolve_path(positions)


PREPARE_RULES = frozenset({"rewardmath_prepare"})
# Hub datasets of the prepare stage: source key -> (its local file key, a further way out).
HUB_SOURCES = {"source": ("path", ""), "rewardbench_source": ("rewardbench_path", " (or `none`)")}


def local_file_problem(key: str, path: str) -> Any:
    """Preflight's check of a present local file: what `rewardmath-prepare` would stop on in it (its fields, labels,
    one chosen solution per problem), or None."""
    from pathlib import Path

    from rmeval.benchmarks.rewardmath.loading import load_rewardbench_math_prm, load_rewardmath
    from rmeval.preflight import Problem

    if not Path(path).is_file():
        return None  # the FileNeed says so
    load = load_rewardmath if key == "path" else load_rewardbench_math_prm
    try:
        load("local", path)
    except RmevalError as error:
        return Problem(f"rewardmath.{key}", str(error), "fix the file (its format: config/README.md, \"rewardmath\")",
                       PREPARE_RULES)
    return None


def needs(section: Mapping[str, Any], local_inputs: Mapping[str, str]) -> Needs:
    """What `rewardmath-prepare` needs from this machine: its local files, or the Hub datasets it loads."""
    from rmeval.benchmarks.rewardmath.loading import REWARDBENCH_HF_ID, REWARDMATH_HF_ID
    from rmeval.preflight import Check, DatasetNeed, FileNeed, Needs

    datasets = {"source": REWARDMATH_HF_ID, "rewardbench_source": REWARDBENCH_HF_ID}
    return Needs(
        files=tuple(FileNeed(key=f"rewardmath.{key}", path=path, what=f"file not found: {path}",
                             fix="fix the path, or use the Hub source (`hf`) where there is network",
                             rules=PREPARE_RULES)
                    for key, path in local_inputs.items()),
        checks=tuple(Check(PREPARE_RULES, lambda key=key, path=path: local_file_problem(key, path))
                     for key, path in local_inputs.items()),
        datasets=tuple(
            DatasetNeed(key=f"rewardmath.{source_key}", dataset=datasets[source_key], what="'hf'",
                        fix=f"offline, use `rewardmath.{source_key}: local`{alternative} with "
                            f"`rewardmath.{local_key}` (config/README.md)", rules=PREPARE_RULES)
            for source_key, (local_key, alternative) in HUB_SOURCES.items() if section[source_key] == "hf"),
    )


def plan(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    """The benchmark's planner: `rewardmath.models` may name models defined under the top-level `models:`."""
    from rmeval.run_plan import BenchmarkPlan, ScoreJobs, model_keys

    section = config[BENCHMARK.enabled_by]
    specs = context.resolve(section["models"], BENCHMARK.models_key)
    try:
        own = RewardMathPlan.from_config(section, specs, context.locate)
    except RmevalError as error:
        raise RmevalError(f"config: {error}") from error
    pairwise = set(own.pairwise)

    def data(model: str, table: str) -> str:
        """A pairwise judge reads the tables that carry chosen positions (rule rewardmath_positions)."""
        return (PAIRWISE_DATA if model in pairwise else DATA).format(table=table)

    return BenchmarkPlan(
        name=BENCHMARK.name,
        models=specs,
        model_keys=model_keys(BENCHMARK.models_key, section["models"]),
        score_jobs=(ScoreJobs(BENCHMARK.stage(SCORE_RULE), own.models, own.scored_tables, data),),
        settings=own.settings(context.locate(config["registry"]), config["stats"]["alpha"]),
        needs=needs(section, own.local_inputs),
        pending={"rewardmath_prepare": ["results/rewardmath/data/manifest.json"]},
        own=own,
        per_model={"export": own.judges},  # every LLM judge's official export (rule rewardmath_export)
    )
