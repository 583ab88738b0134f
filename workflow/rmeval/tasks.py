"""Input tables -> the (id, prompt, response[, steps]) pairs the scoring engine scores.

- `pairs` (built in): a table that already holds id, prompt, response and optionally `steps` (list[str]). Its
  tables may also say which rows compete: `problem_id` + `solution_type` or `pair_id` + `role`, and optionally
  `chosen_position` ('A' / 'B': where the chosen solution sits when a pairwise judge compares it with this
  rejected row); these become `Pairs.comparisons`.
- A benchmark may bring its own task (its catalogue's `tasks`: name -> "module:function", a `(table, where) ->
  Pairs` builder) for input tables in its own layout, e.g. the fairness benchmark's `fairness` (papers -> prompts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd


BUILT_IN_TASK = "pairs"
POSITIONS = ("A", "B")


@dataclass(frozen=True)
class Comparisons:
    """Which rows compete (pairwise judges): one chosen row per group against each rejected row."""

    groups: list[str]  # problem_id / pair_id per row
    is_chosen: list[bool]
    chosen_position: list[str | None]  # per rejected row: 'A' / 'B' as recorded, None when the table has none


@dataclass(frozen=True)
class ModelInput:
    """How a benchmark wants its rows made into model input (`Pairs.model_input`; None: the registry entry's own
    template, BOS policy, max_length and truncation). `style` "text-pipeline": as a text-classification pipeline
    builds it from rendered text (rmeval.models.pipeline_input; RewardBench's official scripts), for the adapters
    whose models such a pipeline scores upstream (`HFScorer.follows_text_pipeline`)."""

    style: str
    max_length: int
    truncation_side: str | None = None  # "left" / "right"; None: the tokenizer's own

    @classmethod
    def from_mapping(cls, raw: dict[str, Any], where: str) -> ModelInput:
        try:
            value = cls(**raw)
        except TypeError as error:
            raise RmevalError(f"{where}: {error}") from None
        if value.style not in MODEL_INPUT_STYLES or value.max_length < 1:
            raise RmevalError(f"{where}: style must be one of {MODEL_INPUT_STYLES} and max_length >= 1, got {raw}")
        return value


MODEL_INPUT_STYLES = ("text-pipeline",)


@dataclass(frozen=True)
class Pairs:
    """Rows to score, in input order."""

    ids: list[str]
    prompts: list[str]
    responses: list[str]
    steps: list[list[str]] | None  # None when the input has no `steps` column
    comparisons: Comparisons | None = None  # None when the table does not say which rows compete
    model_input: ModelInput | None = None  # the benchmark's way to build model input; None: the registry entry's

    def __len__(self) -> int:
        return len(self.ids)


def read_table(path: str | Path) -> pd.DataFrame:
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise RmevalError(f"input file not found: {path}")
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix in (".jsonl", ".json"):
        return pd.read_json(path, lines=path.suffix == ".jsonl")
    if path.suffix == ".csv":
        return pd.read_csv(path, dtype={"id": str})
    raise RmevalError(f"{path}: unsupported input format {path.suffix!r} (use .parquet, .jsonl or .csv)")


def _require_columns(table: pd.DataFrame, columns: tuple[str, ...], where: str) -> None:
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise RmevalError(f"{where}: missing column(s) {missing}; found {list(table.columns)}")


def _text_column(table: pd.DataFrame, column: str, ids: list[str], where: str) -> list[str]:
    values: list[str] = []
    for row_id, value in zip(ids, table[column].tolist(), strict=True):
        if not isinstance(value, str) or not value.strip():
            raise RmevalError(f"{where}: row id={row_id!r} has an empty {column!r}")
        values.append(value)
    return values


def _ids(table: pd.DataFrame, where: str) -> list[str]:
    ids = [str(value) for value in table["id"].tolist()]
    seen: set[str] = set()
    for row_id in ids:
        if row_id in seen:
            raise RmevalError(f"{where}: duplicate id {row_id!r}")
        seen.add(row_id)
    return ids


def id_and_texts(table: pd.DataFrame, first: str, second: str, where: str) -> tuple[list[str], list[str], list[str]]:
    """The ids and two required text columns of an input table, checked (present, unique ids, filled)."""
    _require_columns(table, ("id", first, second), where)
    ids = _ids(table, where)
    return ids, _text_column(table, first, ids, where), _text_column(table, second, ids, where)


def _as_steps(value: object, row_id: str, where: str) -> list[str]:
    if value is None:
        return []
    try:
        steps = [str(step) for step in list(value)]  # list, tuple or numpy array from parquet
    except TypeError:
        raise RmevalError(f"{where}: row id={row_id!r}: `steps` must be a list of strings") from None
    if any(not step.strip() for step in steps):
        raise RmevalError(f"{where}: row id={row_id!r} has an empty step")
    return steps


def pair_rows(table: pd.DataFrame, where: str) -> Pairs:
    ids, prompts, responses = id_and_texts(table, "prompt", "response", where)
    steps = None
    if "steps" in table.columns:
        steps = [_as_steps(value, row_id, where) for row_id, value in zip(ids, table["steps"].tolist(), strict=True)]
    return Pairs(ids=ids, prompts=prompts, responses=responses, steps=steps,
                 comparisons=_comparisons(table, ids, where))


def _comparisons(table: pd.DataFrame, ids: list[str], where: str) -> Comparisons | None:
    if {"problem_id", "solution_type"} <= set(table.columns):
        group_column, role_column = "problem_id", "solution_type"
    elif {"pair_id", "role"} <= set(table.columns):
        group_column, role_column = "pair_id", "role"
    else:
        return None
    roles = [str(value) for value in table[role_column].tolist()]
    bad = next((i for i, role in enumerate(roles) if role not in ("chosen", "rejected")), None)
    if bad is not None:
        raise RmevalError(f"{where}: row id={ids[bad]!r} has {role_column} {roles[bad]!r}, not chosen / rejected")
    positions: list[str | None] = [None] * len(ids)
    if "chosen_position" in table.columns:
        for index, value in enumerate(table["chosen_position"].tolist()):
            if roles[index] == "rejected" and isinstance(value, str) and value:
                if value not in POSITIONS:
                    raise RmevalError(f"{where}: row id={ids[index]!r} has chosen_position {value!r}, not A / B")
                positions[index] = value
    return Comparisons(groups=[str(v) for v in table[group_column].tolist()],
                       is_chosen=[role == "chosen" for role in roles], chosen_position=positions)


def task_builders() -> dict[str, Callable[[pd.DataFrame, str], Pairs]]:
    """Every task: the built-in `pairs`, then the benchmarks' own (imported when a job loads its input)."""
    from rmeval.benchmarks import all_benchmarks
    from rmeval.benchmarks.catalogue import import_target

    builders: dict[str, Callable[[pd.DataFrame, str], Pairs]] = {BUILT_IN_TASK: pair_rows}
    for bench in all_benchmarks():
        for name, target in bench.tasks.items():
            builders[name] = lambda table, where, target=target: import_target(target)(table, where)
    return builders


def task_names() -> list[str]:
    """The names `rmeval score --task` accepts (import-free: read from the catalogues)."""
    from rmeval.benchmarks import all_benchmarks

    return [BUILT_IN_TASK, *(name for bench in all_benchmarks() for name in bench.tasks)]


def load_pairs(path: str | Path, task: str) -> Pairs:
    """Read an input table and turn it into pairs for `task`."""
    builders = task_builders()
    if task not in builders:
        raise RmevalError(f"unknown task {task!r}; known tasks: {list(builders)}")
    table = read_table(path)
    if len(table) == 0:
        raise RmevalError(f"{path}: the input table is empty")
    return builders[task](table, str(path))
