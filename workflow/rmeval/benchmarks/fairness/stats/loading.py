"""Read `{scores}/{model}/{group}.parquet|.csv` into validated per-model reward arrays.

Every check that could otherwise yield a NaN table happens here, so the statistics
modules can assume: >= 2 groups, >= 2 finite rewards per group, non-zero variance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rmeval.errors import RmevalError

SCORE_SUFFIXES = (".parquet", ".csv")


@dataclass(frozen=True)
class GroupScores:
    """Rewards (and token counts when the file has them) of one model on one group."""

    group: str
    source: Path
    rewards: np.ndarray  # float64, finite
    n_tokens: np.ndarray | None  # float64, >= 1, or None when the file has no n_tokens column
    truncated_share: float | None = None  # share of rows cut at the model's max_length; None: no `truncated` column
    ids: np.ndarray | None = None  # the rows' ids (str), in file order: what pairs two models' rows (rmeval compare)

    @property
    def n(self) -> int:
        return int(self.rewards.size)


@dataclass(frozen=True)
class ModelScores:
    model: str
    groups: tuple[GroupScores, ...]  # in the run's group order

    @property
    def group_names(self) -> list[str]:
        return [g.group for g in self.groups]

    @property
    def has_lengths(self) -> bool:
        return all(g.n_tokens is not None for g in self.groups)

    def labelled(self) -> tuple[np.ndarray, np.ndarray]:
        """All rewards concatenated and their integer group labels (0..k-1)."""
        rewards = np.concatenate([g.rewards for g in self.groups])
        labels = np.concatenate([np.full(g.n, i, dtype=np.int64) for i, g in enumerate(self.groups)])
        return rewards, labels


@dataclass
class ScoreSet:
    models: list[ModelScores]
    groups: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def model_names(self) -> list[str]:
        return [m.model for m in self.models]


def _score_file(model_dir: Path, group: str) -> Path | None:
    found = [model_dir / f"{group}{suffix}" for suffix in SCORE_SUFFIXES if (model_dir / f"{group}{suffix}").exists()]
    if len(found) > 1:
        raise RmevalError(f"{model_dir}: both {found[0].name} and {found[1].name} exist for group {group!r}; keep one")
    return found[0] if found else None


def _groups_in(model_dir: Path) -> set[str]:
    return {p.name[: -len(s)] for s in SCORE_SUFFIXES for p in model_dir.glob(f"*{s}") if p.name.endswith(s)}


def read_group_file(path: Path, model: str, group: str) -> GroupScores:
    """Read one score file and reject anything that would make a statistic undefined."""
    import pandas as pd

    try:
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except Exception as error:  # pyarrow / csv parser errors carry no file name
        raise RmevalError(f"{path}: cannot read score file ({error})") from error
    missing = [column for column in ("id", "reward") if column not in frame.columns]
    if missing:
        raise RmevalError(f"{path}: missing column(s) {missing}; a score file needs id and reward")
    ids = frame["id"].astype(str)
    duplicated = ids[ids.duplicated()]
    if not duplicated.empty:
        raise RmevalError(f"{path}: id {duplicated.iloc[0]!r} appears more than once (model {model}, group {group})")
    try:
        rewards = pd.to_numeric(frame["reward"], errors="raise").to_numpy(dtype=np.float64)
    except (ValueError, TypeError) as error:
        raise RmevalError(f"{path}: column reward is not numeric ({error})") from error
    bad = ~np.isfinite(rewards)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise RmevalError(
            f"{path}: reward is {rewards[row]} for id {ids.iloc[row]!r} (row {row}); model {model}, group {group} "
            f"has {int(bad.sum())} non-finite reward(s). Re-score or drop those rows."
        )
    if rewards.size == 0:
        raise RmevalError(f"{path}: model {model}, group {group} has no rewards (an empty score file)")
    # A group of one or a constant group is legal: the statistics it leaves undefined say so (oneway.undefined_note)
    n_tokens = None
    if "n_tokens" in frame.columns:
        tokens = pd.to_numeric(frame["n_tokens"], errors="coerce").to_numpy(dtype=np.float64)
        bad_tokens = ~np.isfinite(tokens) | (tokens < 1)
        if bad_tokens.any():
            row = int(np.flatnonzero(bad_tokens)[0])
            raise RmevalError(
                f"{path}: n_tokens is {frame['n_tokens'].iloc[row]!r} for id {ids.iloc[row]!r} (row {row}); "
                "token counts must be integers >= 1"
            )
        n_tokens = tokens
    truncated = None
    if "truncated" in frame.columns:
        truncated = float(frame["truncated"].fillna(False).astype(bool).mean())
    return GroupScores(group=group, source=path, rewards=rewards, n_tokens=n_tokens, truncated_share=truncated,
                       ids=ids.to_numpy(dtype=object))


def load_scores(
    scores_dir: str | Path,
    models: list[str] | None = None,
    groups: list[str] | None = None,
) -> ScoreSet:
    """Load every model folder (or the named ones) and check all share the same groups."""
    scores_dir = Path(scores_dir)
    if not scores_dir.is_dir():
        raise RmevalError(f"--scores: {scores_dir} is not a directory")
    if models is None:
        models = sorted(p.name for p in scores_dir.iterdir() if p.is_dir() and _groups_in(p))
        if not models:
            raise RmevalError(f"{scores_dir}: no {{model}}/{{group}}.parquet or .csv score files found")
    notes: list[str] = []
    if groups is None:
        found = {model: _groups_in(scores_dir / model) for model in models}
        union = sorted(set().union(*found.values()))
        for model, model_groups in found.items():
            lacking = sorted(set(union) - model_groups)
            if lacking:
                raise RmevalError(
                    f"{scores_dir / model}: no score file for group(s) {lacking} that other models have; "
                    "every model must be scored on the same groups (or pass --groups)"
                )
        groups = union
    if len(groups) < 2:
        raise RmevalError(
            f"{scores_dir}: only one group ({groups[0] if groups else 'none'}) has scores; "
            "group fairness needs at least two groups"
        )
    loaded: list[ModelScores] = []
    for model in models:
        model_dir = scores_dir / model
        if not model_dir.is_dir():
            raise RmevalError(f"--scores: no folder {model_dir} for model {model!r}")
        per_group = []
        for group in groups:
            path = _score_file(model_dir, group)
            if path is None:
                raise RmevalError(f"{model_dir}: no {group}.parquet or {group}.csv for model {model}, group {group}")
            per_group.append(read_group_file(path, model, group))
        loaded.append(ModelScores(model=model, groups=tuple(per_group)))
    return ScoreSet(models=loaded, groups=list(groups), notes=notes)
