"""RewardBench rows (v1 pairs, v2 completion lists) -> the scoring engine's table: one row per completion.

Sources: the Hub through `datasets.load_dataset` at a revision (v1 split `filtered`, v2 split `test`), or a local
JSON / JSONL / Parquet file in the dataset's own columns. Every problem is one error naming the file, the row and
the column. Score ids follow the score contract: v1 `<id>#chosen` / `<id>#rejected`, v2 `<id>#<k>` with k the
completion's index in `chosen + rejected` (as run_v2.py unrolls them: chosen first).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rewardbench.versions import V1, Version
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd

PREPARED_COLUMNS = ("id", "prompt", "response", "row_id", "subset", "k", "is_chosen", "n_correct", "n_completions")


@dataclass(frozen=True)
class Source:
    """Where a version's rows come from: `hf` (dataset id, split, revision) or `local` (path)."""

    kind: str
    path: str | None = None
    dataset: str | None = None
    split: str | None = None
    revision: str | None = None

    @property
    def where(self) -> str:
        if self.kind == "local":
            return str(self.path)
        return f"{self.dataset}@{self.revision or 'main'} (split {self.split})"


def read_rows(source: Source) -> pd.DataFrame:
    """The raw rows, as the dataset holds them."""
    import pandas as pd

    if source.kind == "hf":
        import datasets

        return datasets.load_dataset(source.dataset, split=source.split, revision=source.revision).to_pandas()
    path = Path(str(source.path))
    if not path.is_file():
        raise RmevalError(f"{path}: file not found")
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix in (".json", ".jsonl"):
        try:
            return pd.read_json(path, lines=path.suffix == ".jsonl", dtype=False)
        except ValueError as error:
            raise RmevalError(f"{path}: not readable as {path.suffix[1:].upper()}: {error}") from error
    raise RmevalError(f"{path}: unsupported format {path.suffix!r} (use .json, .jsonl or .parquet)")


def _text(value: Any, where: str) -> str:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        raise RmevalError(f"{where}: a list of turns; the scoring engine takes one prompt string per completion "
                          "(a multi-turn prompt is not supported yet)")
    raise RmevalError(f"{where}: expected a non-empty string, got {value!r}")


def _texts(value: Any, where: str) -> list[str]:
    if isinstance(value, str) or not (isinstance(value, (list, tuple)) or hasattr(value, "tolist")):
        raise RmevalError(f"{where}: expected a list of completions, got {type(value).__name__}")
    items = list(value.tolist() if hasattr(value, "tolist") else value)
    if not items:
        raise RmevalError(f"{where}: empty list")
    return [_text(item, f"{where}[{index}]") for index, item in enumerate(items)]


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not float(value).is_integer():
        raise RmevalError(f"{where}: expected an integer, got {value!r}")
    return int(value)


def prepare(table: pd.DataFrame, version: Version, where: str) -> pd.DataFrame:
    """One row per completion (PREPARED_COLUMNS), in dataset order; raises on the first bad row."""
    import pandas as pd

    missing = [column for column in version.columns if column not in table.columns]
    if missing:
        raise RmevalError(f"{where}: missing column(s) {missing}; found {list(table.columns)}")
    seen: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for index, row in enumerate(table.to_dict("records")):
        row_id = str(row["id"])
        at = f"{where}: row {index} (id={row_id!r})"
        if row_id in seen:
            raise RmevalError(f"{at}: column 'id': duplicate of row {seen[row_id]}")
        seen[row_id] = index
        prompt = _text(row["prompt"], f"{at}: column 'prompt'")
        subset = _text(row["subset"], f"{at}: column 'subset'")
        if version is V1:
            completions = [_text(row["chosen"], f"{at}: column 'chosen'"),
                           _text(row["rejected"], f"{at}: column 'rejected'")]
            keys, n_correct = ["chosen", "rejected"], 1
        else:
            chosen = _texts(row["chosen"], f"{at}: column 'chosen'")
            rejected = _texts(row["rejected"], f"{at}: column 'rejected'")
            for column, expected in (("num_correct", len(chosen)), ("num_rejected", len(rejected)),
                                     ("total_completions", len(chosen) + len(rejected))):
                if _count(row[column], f"{at}: column {column!r}") != expected:
                    raise RmevalError(f"{at}: column {column!r} is {row[column]!r} but the lists hold {expected} "
                                      f"(chosen {len(chosen)}, rejected {len(rejected)})")
            completions, n_correct = chosen + rejected, len(chosen)
            keys = [str(k) for k in range(len(completions))]
        for k, (key, response) in enumerate(zip(keys, completions, strict=True)):
            out.append({"id": f"{row_id}#{key}", "prompt": prompt, "response": response, "row_id": row_id,
                        "subset": subset, "k": k, "is_chosen": k < n_correct, "n_correct": n_correct,
                        "n_completions": len(completions)})
    if not out:
        raise RmevalError(f"{where}: no rows")
    return pd.DataFrame(out, columns=list(PREPARED_COLUMNS))
