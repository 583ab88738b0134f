"""Read and check the fairness tables the figures are drawn from.

Each loader checks the columns it needs and names the file and row at fault, so that a
hand-made or stale table gives one clear message instead of a matplotlib traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.fairness.catalogue import made_by
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd

GROUP_MEANS_COLUMNS = ("model", "group", "n", "mean", "std", "sem", "ci_low", "ci_high")
GAP_COLUMNS = (
    "model",
    "max_group",
    "min_group",
    "scale_free_gap",
    "gap_ci_low",
    "gap_ci_high",
    "nmgd_percent",
    "nmgd_ci_low",
    "nmgd_ci_high",
    "perm_p_value",
)
ADJUSTED_COLUMNS = ("model", "group", "raw_mean", "adjusted_mean")
RANK_POINTS_COLUMNS = ("model", "rewardbench_rank", "nmgd_percent", "scale_free_gap")


def ordered_unique(values: pd.Series) -> list[str]:
    """Values in order of first appearance (the stats writer keeps the config's model and group order)."""
    return list(dict.fromkeys(str(value) for value in values))


def read_table(path: Path, columns: tuple[str, ...], numeric: tuple[str, ...]) -> pd.DataFrame:
    """Read one CSV, check that `columns` are present and `numeric` columns hold numbers (NaN allowed)."""
    import pandas as pd

    if not path.is_file():
        raise RmevalError(f"{path}: table not found (run `{made_by(path.name)}` first)")
    try:
        table = pd.read_csv(path, dtype={"model": str, "group": str, "max_group": str, "min_group": str})
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as error:
        raise RmevalError(f"{path}: not a readable CSV table ({error})") from None
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise RmevalError(f"{path}: missing column(s) {missing}; expected {list(columns)}")
    for column in numeric:
        converted = pd.to_numeric(table[column], errors="coerce")
        bad = table.index[converted.isna() & table[column].notna()]
        if len(bad):
            row = int(bad[0])
            raise RmevalError(
                f"{path}: row {row + 2} (model {table.at[row, 'model']!r}): "
                f"column {column!r} is not a number: {table.at[row, column]!r}"
            )
        table[column] = converted.astype("float64")
    if table["model"].isna().any():
        row = int(table.index[table["model"].isna()][0])
        raise RmevalError(f"{path}: row {row + 2}: empty model name")
    return table


def _require_rows(table: pd.DataFrame, path: Path) -> None:
    if table.empty:
        raise RmevalError(f"{path}: the table has no rows")


def _require_finite(table: pd.DataFrame, path: Path, columns: tuple[str, ...], allow_nan: bool = False) -> None:
    """Each value finite (or, with `allow_nan`, NaN: a statistic the table marks undefined)."""
    import numpy as np

    for column in columns:
        values = table[column].to_numpy(dtype="float64")
        bad = np.flatnonzero(~np.isfinite(values) & ~(allow_nan & np.isnan(values)))
        if len(bad):
            row = int(bad[0])
            raise RmevalError(
                f"{path}: row {row + 2} (model {table['model'].iloc[row]!r}): "
                f"{column} must be a finite number, got {values[row]!r}"
            )


def _require_unique(table: pd.DataFrame, path: Path, keys: list[str]) -> None:
    duplicated = table.duplicated(subset=keys, keep=False)
    if duplicated.any():
        row = int(table.index[duplicated][0])
        where = ", ".join(f"{key} {table.at[row, key]!r}" for key in keys)
        raise RmevalError(f"{path}: row {row + 2}: duplicate entry for {where}")


def read_group_means(path: Path) -> pd.DataFrame:
    numeric = ("n", "mean", "std", "sem", "ci_low", "ci_high")
    table = read_table(path, GROUP_MEANS_COLUMNS, numeric)
    _require_rows(table, path)
    _require_finite(table, path, ("mean",))
    _require_finite(table, path, ("ci_low", "ci_high"), allow_nan=True)  # a group of one has no CI: no error bar
    _require_unique(table, path, ["model", "group"])
    return table


def read_gap(path: Path) -> pd.DataFrame:
    numeric = GAP_COLUMNS[3:]
    table = read_table(path, GAP_COLUMNS, numeric)
    _require_rows(table, path)
    _require_finite(table, path, ("scale_free_gap",), allow_nan=True)  # NaN: no within-group variance, drawn so
    _require_unique(table, path, ["model"])
    return table


def read_adjusted(path: Path) -> pd.DataFrame:
    """Adjusted means may be empty or NaN when the score files carry no n_tokens (figure says so)."""
    table = read_table(path, ADJUSTED_COLUMNS, ("raw_mean", "adjusted_mean"))
    if not table.empty:
        _require_unique(table, path, ["model", "group"])
    return table


def read_rank_points(path: Path) -> pd.DataFrame:
    """Ranks may be empty (models without a `rewardbench_rank` in the registry)."""
    table = read_table(path, RANK_POINTS_COLUMNS, ("rewardbench_rank", "nmgd_percent", "scale_free_gap"))
    if not table.empty:
        _require_unique(table, path, ["model"])
    return table


def read_stats_record(path: Path) -> dict[str, Any]:
    """fairness_stats.json, the run record of `rmeval fairness-stats`: the figures mark significance at its
    `settings.alpha`, the level the tables used."""
    import json

    if not path.is_file():
        raise RmevalError(f"{path}: run record not found (run `{made_by(path.name)}` first)")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise RmevalError(f"{path}: not a readable JSON record ({error})") from None
    alpha = record.get("settings", {}).get("alpha") if isinstance(record, dict) else None
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha < 1.0:
        raise RmevalError(f"{path}: settings.alpha must be a number in (0, 1), got {alpha!r}")
    return record


CALIBRATION_COLUMNS = ("model", "test", "scenario", "n", "groups", "planted_effect", "rejection_rate", "ci_low",
                       "ci_high", "analytic_power")


def read_calibration(path: Path) -> pd.DataFrame:
    """calibration.csv; a model that could not be calibrated has empty rates (its note says why)."""
    table = read_table(path, CALIBRATION_COLUMNS, ("n", "groups", "planted_effect", "rejection_rate", "ci_low",
                                                   "ci_high", "analytic_power"))
    _require_rows(table, path)
    return table


# Catalogue key of a table -> the loader that checks it; a figure drawn from another table adds its loader here.
READERS: dict[str, Callable[[Path], Any]] = {
    "group_means": read_group_means,
    "table7": read_gap,
    "record": read_stats_record,
    "adjusted_group_means": read_adjusted,
    "rank_points": read_rank_points,
    "calibration": read_calibration,
}


def table_paths(tables: Path, keys: Iterable[str]) -> dict[str, Path]:
    """Where `rmeval fairness-stats` writes each of these tables under `tables` (file names from the catalogue)."""
    from rmeval.benchmarks.fairness.catalogue import BENCHMARK

    return {key: tables / Path(BENCHMARK.get(key).path).name for key in keys}
