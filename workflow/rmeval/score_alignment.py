"""A score file's rewards in the order of the prepared table it scored, checked: every prepared row scored exactly
once, nothing else, every reward finite. What a benchmark's paired comparison reads (rmeval compare), vectorised:
its metrics stage joins row by row with the same checks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd


def aligned_rewards(prepared_ids: Sequence[str], scores: pd.DataFrame, path: Path, column: str = "reward",
                    missing_value: float | None = None) -> np.ndarray:
    """scores[column] for each of `prepared_ids`, in their order (a null value is `missing_value` when given, e.g. an
    LLM judge's unparsable rating); RmevalError naming the file and the first id that breaks the contract."""
    import pandas as pd

    for needed in ("id", column):
        if needed not in scores.columns:
            raise RmevalError(f"{path}: needs columns 'id' and {column!r}; found {list(scores.columns)}")
    ids = _strings(scores["id"])
    duplicated = ids[ids.duplicated()]
    if len(duplicated):
        raise RmevalError(f"{path}: id {duplicated.iloc[0]!r} is scored twice")
    values = pd.to_numeric(scores[column], errors="coerce").astype(float)
    if missing_value is not None:
        values = values.fillna(missing_value)
    series = pd.Series(values.to_numpy(), index=ids.to_numpy())
    prepared = _strings(pd.Series(prepared_ids))
    absent = prepared[~prepared.isin(series.index)]
    if len(absent):
        raise RmevalError(f"{path}: no score for id {absent.iloc[0]!r} ({len(absent)} missing)")
    extra = series.index.difference(prepared)
    if len(extra):
        raise RmevalError(f"{path}: id {extra[0]!r} is not in the prepared table")
    rewards = series.reindex(prepared.to_numpy()).to_numpy(dtype=float)
    bad = ~np.isfinite(rewards)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise RmevalError(f"{path}: id {prepared.iloc[at]!r}: column {column!r}: score {rewards[at]!r} is not a finite "
                          "number")
    return rewards


def _strings(column: pd.Series) -> pd.Series:
    """The ids as Python strings (object dtype): pandas' arrow-backed `astype(str)` iterates element by element."""
    import pandas as pd

    values = column.to_numpy(dtype=object)
    if not all(isinstance(value, str) for value in values[:1]) or not pd.api.types.is_string_dtype(column):
        values = column.astype(str).to_numpy(dtype=object)
    return pd.Series(values, dtype=object)
