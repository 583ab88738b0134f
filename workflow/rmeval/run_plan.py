"""What a workflow run will do, planned from its config before any rule is defined.

The rule files call one function each: `plan_run` (common.smk: models of both branches, the lock, the groups'
check, the scoring settings) and `plan_arxiv` (arxiv.smk: the settings each arXiv command gets). The config has
its defaults filled by the schema (rmeval.config_check), so every key is read as `config[...]`. Problems raise
RmevalError with the message the run prints; `locate` turns a config path into one the run can open
(common.smk's `config_path`).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec, load_registry, resolve_models
from rmeval.scoring.settings import ScoringSettings

Locate = Callable[[str], str]
OWN_LOCK = "results/lock.yaml"  # this run's output, never a lock to follow


def config_path(value: str, repo: Path, workdir: Path | None = None) -> str:
    """A user path from the config: relative to the working directory if it exists there, else to the repo."""
    path = Path(value)
    if path.is_absolute() or (path if workdir is None else workdir / path).exists():
        return str(path)
    return str(repo / value)


# ----------------------------------------------------------------------------- arXiv stage
@dataclass(frozen=True)
class ArxivPlan:
    """The `--settings` JSON each arXiv command gets (a rule param: a change re-runs the job)."""

    snapshot: str | None  # the located snapshot the fetch reads (source snapshot only)
    fetch_json: str
    select_json: str


def _settings_json(settings: Mapping[str, Any]) -> str:
    return json.dumps(dict(settings), sort_keys=True, default=str)


def arxiv_settings_json(arxiv: Mapping[str, Any], snapshot: str | None) -> str:
    """The `arxiv:` mapping for `rmeval lock rebuild --config-json`, the snapshot located (the fetch and select get
    `--settings`: plan_arxiv)."""
    return _settings_json(
        {**{k: v for k, v in arxiv.items() if k != "allow_fewer"}, **({"snapshot": snapshot} if snapshot else {})}
    )


def plan_arxiv(arxiv: Mapping[str, Any], locate: Locate) -> ArxivPlan:
    from rmeval.benchmarks.fairness.arxiv.cli_fetch import fetch_settings
    from rmeval.benchmarks.fairness.arxiv.cli_select import select_settings
    from rmeval.cli_settings import settings_json

    snapshot = locate(arxiv["snapshot"]) if arxiv["source"] == "snapshot" and arxiv.get("snapshot") else None
    return ArxivPlan(
        snapshot=snapshot,
        fetch_json=settings_json(fetch_settings(arxiv, snapshot)),
        select_json=settings_json(select_settings(arxiv)),
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


# ----------------------------------------------------------------------------- the whole run
@dataclass(frozen=True)
class RunPlan:
    groups: list[str]
    model_specs: dict[str, ModelSpec]  # the fairness branch (`models:`), config order
    rewardmath_enabled: bool
    rewardmath_specs: dict[str, ModelSpec]  # `rewardmath.models`, when the branch is enabled
    all_specs: dict[str, ModelSpec]  # both branches, with the lock's commits where a lock is followed
    locked_revisions: dict[str, str]  # model -> commit / fingerprint its jobs must load
    lock_path: str | None
    config_sha256: str  # recorded in results/lock.yaml
    scoring: ScoringSettings
    model_keys: dict[str, str]  # model -> the config key naming it, for preflight lines
    arxiv_from_lock: ArxivFromLock | None
    warnings: tuple[str, ...]  # to log at parse time

    def pending_outputs(self, rules: Iterable[str], model: str | None, rewardmath_tables: list[str]) -> list[str]:
        """The dry run's stand-in for the DAG (rmeval.preflight): the outputs whose absence means a job of
        `rules` (for `model`) would run."""
        files = []
        if "arxiv_fetch" in rules:
            files += [f"results/data/{group}.parquet" for group in self.groups]
        if "rewardmath_prepare" in rules and self.rewardmath_enabled:
            files.append("results/rewardmath/data/manifest.json")
        if model in self.model_specs:
            files += [f"results/scores/{model}/{group}.parquet" for group in self.groups]
        if model in self.rewardmath_specs:
            files += [f"results/rewardmath/scores/{model}/{table}.parquet" for table in rewardmath_tables]
        return files

    def locked_revision_flag(self, name: str) -> str:
        """`--expect-revision <commit>` for `rmeval score` when a lock pins the model, else nothing."""
        expected = self.locked_revisions.get(name)
        return f"--expect-revision {shlex.quote(expected)}" if expected else ""


def check_groups(config: Mapping[str, Any], locate: Locate) -> None:
    """Unknown categories, or one category in two groups, fail now rather than after every download."""
    from rmeval.benchmarks.fairness.arxiv.categories import check_disjoint, load_table, resolve_group

    table_path = config["arxiv"]["categories_table"]
    try:
        table = load_table(locate(table_path) if table_path else None)
        check_disjoint({name: resolve_group(name, entries, table) for name, entries in config["groups"].items()})
    except RmevalError as error:
        raise RmevalError(f"config: {error}") from error


def resolve_branches(
    config: Mapping[str, Any], registry: dict[str, ModelSpec]
) -> tuple[dict[str, ModelSpec], dict[str, ModelSpec]]:
    """(fairness specs, RewardMATH specs); `rewardmath.models` may also name the models defined under `models:`."""
    specs = {spec.name: spec for spec in resolve_models(config["models"], registry, where="config")}
    rewardmath = config["rewardmath"]
    rm_specs = (
        {
            spec.name: spec
            for spec in resolve_models(rewardmath["models"], {**registry, **specs}, where="config: rewardmath")
        }
        if rewardmath["enabled"]
        else {}
    )
    # One name, one model: scores of both branches live under results/.../{model}/ and share a download.
    for name in set(specs) & set(rm_specs):
        if specs[name] != rm_specs[name]:
            raise RmevalError(f"config: model {name!r} is defined differently in `models` and `rewardmath.models`")
    return specs, rm_specs


def locate_lock(config: Mapping[str, Any], locate: Locate, workdir: Path) -> str | None:
    """The lock to follow (`lock:`), located; refuses this run's own output and `source: lock` without one."""
    lock_path = locate(config["lock"]) if config["lock"] else None
    if lock_path and (workdir / lock_path).resolve() == (workdir / OWN_LOCK).resolve():
        raise RmevalError(f"config: lock: {OWN_LOCK} is this run's own output; copy the lock elsewhere first")
    if config["arxiv"]["source"] == "lock" and not lock_path:
        raise RmevalError("config: arxiv.source is 'lock' but no top-level `lock:` file is given")
    return lock_path


def model_keys(sections: Iterable[tuple[str, list[Any]]]) -> dict[str, str]:
    """Model name -> the config key that names it, e.g. "models[0] (Skywork-Reward-V2-Qwen3-0.6B)"."""
    keys: dict[str, str] = {}
    for section, entries in sections:
        for index, entry in enumerate(entries):
            name = entry if isinstance(entry, str) else entry.get("name")
            keys.setdefault(name, f"{section}[{index}] ({name})")
    return keys


def plan_run(config: dict[str, Any], locate: Locate, workdir: Path | None = None) -> RunPlan:
    """Everything common.smk needs, in the order its checks ran: registry, groups, models, lock."""
    from rmeval.lock.lockfile import config_sha256, load_lock
    from rmeval.lock.models import follow_lock

    workdir = Path.cwd() if workdir is None else workdir
    registry = load_registry(locate(config["registry"]))
    check_groups(config, locate)
    specs, rm_specs = resolve_branches(config, registry)
    lock_path = locate_lock(config, locate, workdir)
    try:
        all_specs, locked = follow_lock({**specs, **rm_specs}, load_lock(lock_path) if lock_path else None)
    except RmevalError as error:
        raise RmevalError(f"config: lock: {error}") from error
    warnings = []
    reference = config["reference_model"]
    if reference is not None and reference not in specs:
        # Table 4 needs the reference among the scored models; say so now, not after hours of scoring.
        warnings.append(
            f"config: reference_model {reference!r} is not in `models`; Table 4 (Pearson r) will be skipped"
        )
    rewardmath = config["rewardmath"]
    return RunPlan(
        groups=list(config["groups"]),
        model_specs=specs,
        rewardmath_enabled=bool(rewardmath["enabled"]),
        rewardmath_specs=rm_specs,
        all_specs=all_specs,
        locked_revisions=locked,
        lock_path=lock_path,
        config_sha256=config_sha256(config),
        scoring=ScoringSettings.from_mapping(config["scoring"]),
        model_keys=model_keys([("models", config["models"]), ("rewardmath.models", rewardmath["models"] or [])]),
        arxiv_from_lock=(
            plan_arxiv_from_lock(config, lock_path, locate) if lock_path and config["arxiv"]["source"] == "lock" else None
        ),
        warnings=tuple(warnings),
    )
