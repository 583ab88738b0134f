"""RewardBench 1 and 2's reader of the authors' published per-item results (both catalogues' `published_reader`).

The files are those `rewardbench/utils.py` `save_to_hub` writes to `eval-set-scores/<model>.json` in
allenai/reward-bench-results (v1, `scripts/run_rm.py`) and allenai/reward-bench-2-results (v2, `scripts/run_v2.py`):
`out_dataset.to_dict()` (one list per column, `json.dumps(..., indent=4, sort_keys=True)`) plus the scalars `model`,
`model_type` and `chat_template`.
- v1 (run_rm.py lines 336-394): per prompt `id` (the dataset's integer id), `subset`, `scores_chosen`,
  `scores_rejected`, `results` (1 when chosen > rejected), `text_chosen`, `text_rejected`. A custom pairwise
  classifier writes no file there ("Custom Classifier"); a DPO file (run_dpo.py) has the same columns.
- v2 (run_v2.py lines 336-415, utils.py `reroll_and_score_dataset`): per prompt `id`, `subset`, `num_correct`,
  `scores` (every completion's score, `chosen + rejected` order as `load_bon_dataset_v2` unrolls them), `results`
  (1/k for a k-way tie at the top; Ties rows rescored by `process_single_model`), `text`. A Ties score may be a
  one-element list (process_single_model reads `raw_score[0]`).
The `eval-set/<model>.json` files hold only the per-subset accuracies (`results_grouped`): refused, named as such.
Rows become the score contract's ids (`<id>#chosen` / `<id>#rejected`, `<id>#<k>`); items align by the prompt `id`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.published.reader import PublishedReader, PublishedScores, RunData, load_json_records

SCALARS = ("model", "model_type", "chat_template")
V1_COLUMNS = ("id", "subset", "scores_chosen", "scores_rejected")
V2_COLUMNS = ("id", "subset", "scores", "num_correct")
_LAYOUTS = {"rewardbench": ("RewardBench", V1_COLUMNS), "rewardbench2": ("RewardBench 2", V2_COLUMNS)}


def columns_of(document: Any, path: Path) -> dict[str, Any]:
    """The file's columns (a dict of lists as to_dict writes it; records, as the list branch writes them, too)."""
    if isinstance(document, list):
        if not document or not all(isinstance(record, dict) for record in document):
            raise RmevalError(f"{path}: not a RewardBench results file (a list, but not of records)")
        keys = list(dict.fromkeys(key for record in document for key in record))
        return {key: [record.get(key) for record in document] for key in keys}
    if not isinstance(document, dict):
        raise RmevalError(f"{path}: not a RewardBench results file (a JSON {type(document).__name__})")
    return document


def _layout_problem(columns: Mapping[str, Any], benchmark: str, path: Path) -> str | None:
    title, needed = _LAYOUTS[benchmark]
    if all(isinstance(columns.get(key), list) for key in needed):
        return None
    if not any(isinstance(value, list) for value in columns.values()):
        subsets = [key for key, value in columns.items() if key not in SCALARS and isinstance(value, (int, float))]
        if subsets:
            return (f"{path}: holds only aggregates (per-subset accuracies of {len(subsets)} subsets: an "
                    f"`eval-set/` file), no per-item scores; the per-prompt scores are in `eval-set-scores/` "
                    f"(rewardbench/utils.py save_to_hub)")
    for other, (other_title, other_needed) in _LAYOUTS.items():
        if other != benchmark and all(isinstance(columns.get(key), list) for key in other_needed):
            return (f"{path}: a {other_title} results file (columns {', '.join(other_needed)}), not {title}'s; "
                    f"set `options.benchmark: {other}`, or point the entry at the {title} file")
    lists = sorted(key for key, value in columns.items() if isinstance(value, list))
    return (f"{path}: not a {title} eval-set-scores file: expected columns {', '.join(needed)}; found "
            f"{', '.join(lists) or 'none'} (another benchmark's results?)")


def _score(value: Any, where: str) -> float:
    if isinstance(value, list) and len(value) == 1:  # a Ties score as process_single_model reads it
        value = value[0]
    if value is None:
        raise RmevalError(f"{where}: no score (null): the file has no per-item scores for it")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RmevalError(f"{where}: score {value!r} is not a finite number")
    return float(value)


def _read(path: Path, benchmark: str) -> PublishedScores:
    columns = columns_of(load_json_records(Path(path)), Path(path))
    problem = _layout_problem(columns, benchmark, Path(path))
    if problem:
        raise RmevalError(problem)
    ids = columns["id"]
    lengths = {key: len(columns[key]) for key in _LAYOUTS[benchmark][1]}
    if len(set(lengths.values())) != 1:
        raise RmevalError(f"{path}: columns of different lengths {lengths}")
    rewards: dict[str, float] = {}
    items: dict[str, tuple[str, ...]] = {}
    for index, raw_id in enumerate(ids):
        item = str(raw_id)
        where = f"{path}: row {index} (id {item!r})"
        if item in items:
            raise RmevalError(f"{where}: id is there twice")
        if benchmark == "rewardbench":
            keys = ("chosen", "rejected")
            values = [columns["scores_chosen"][index], columns["scores_rejected"][index]]
        else:
            values = columns["scores"][index]
            if not isinstance(values, list) or len(values) < 2:
                raise RmevalError(f"{where}: column 'scores': expected the scores of every completion, got "
                                  f"{values!r}")
            keys = tuple(str(k) for k in range(len(values)))
        rows = tuple(f"{item}#{key}" for key in keys)
        for row, key, value in zip(rows, keys, values, strict=True):
            rewards[row] = _score(value, f"{where}: score {key}")
        items[item] = rows
    if not items:
        raise RmevalError(f"{path}: no rows")
    model = columns.get("model")
    return PublishedScores(rewards, items, model if isinstance(model, str) else None,
                           {key: columns[key] for key in ("model_type", "chat_template") if key in columns
                            and not isinstance(columns[key], list)})


def item_of(row_id: str) -> str:
    """`<id>#chosen` -> `<id>`, `<id>#<k>` -> `<id>` (the score contract's ids: loading.py)."""
    return row_id.rsplit("#", 1)[0]


def _run_data(benchmark: str) -> Callable[[Mapping[str, Any], Callable[[str], str]], RunData]:
    def run_data(section: Mapping[str, Any], locate: Callable[[str], str]) -> RunData:
        from rmeval.benchmarks.rewardbench.official import HF_IDS

        if section.get("source") != "local":
            return RunData(f"{HF_IDS[benchmark]}@{section.get('revision') or 'main'}")
        from rmeval.benchmarks.rewardbench.loading import Source, prepare, read_rows
        from rmeval.benchmarks.rewardbench.versions import VERSIONS

        path = locate(str(section["path"]))
        words = f"local file {path}"
        if not Path(path).is_file():
            return RunData(words)
        try:
            rows = prepare(read_rows(Source("local", path=path)), VERSIONS[benchmark], path)
        except RmevalError:
            return RunData(words)  # the data's own check names it
        return RunData(words, tuple(rows["id"].astype(str)))

    return run_data


def input_words(table: Path) -> str:
    """The data a prepared table came from, from the prepare stage's manifest beside it (loading.py / lock.py)."""
    import json

    manifest = Path(table).parent / "manifest.json"
    if not manifest.is_file():
        return f"the prepared table {table}"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    if record.get("source") == "hf":
        return f"{record.get('dataset')}@{record.get('resolved_revision') or record.get('revision') or 'main'}"
    return f"local file {record.get('path')} (sha256 {str(record.get('sha256'))[:16]})"


def _reader(benchmark: str) -> PublishedReader:
    title = _LAYOUTS[benchmark][0]
    return PublishedReader(benchmark=benchmark, fmt=f"{title} eval-set-scores file (save_to_hub)",
                           id_name=f"{title} prompt `id`", read=lambda path: _read(path, benchmark),
                           item_of=item_of, run_data=_run_data(benchmark), input_words=input_words)


V1_READER = _reader("rewardbench")
V2_READER = _reader("rewardbench2")
