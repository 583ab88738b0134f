"""An earlier rmeval run as an opponent (`rmeval run --against FOLDER`, adapter `published` with `source: run`):
its score files serve as a model's per-item results; its lock says which model, data and settings produced them.

The folder is the earlier run's `results/` (or the run directory holding it). For a job, the score file of the
model (`scores/<benchmark>/<model>/<table>.parquet`) whose ids cover this job's rows is read; its sidecar and the
earlier lock are recorded, and where this job's rows or their input formatting differ from the earlier run's, that
is named (the texts of matched items compared with the earlier run's prepared table where it is there).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.published.reader import PublishedScores


def results_folder(path: str | Path) -> Path:
    """The earlier run's results/ folder: `path` itself, or its `results/`."""
    folder = Path(path).expanduser()
    if (folder / "results" / "scores").is_dir():
        return folder / "results"
    if (folder / "scores").is_dir():
        return folder
    raise RmevalError(f"{folder}: not an rmeval results folder (no scores/ in it, nor in its results/)")


def score_files(folder: Path, model: str | None = None) -> dict[tuple[str, str], list[Path]]:
    """(benchmark, model) -> its score files in the folder (`scores/<benchmark>/<model>/<table>.parquet`)."""
    found: dict[tuple[str, str], list[Path]] = {}
    for path in sorted(folder.glob("scores/*/*/*.parquet")):
        if model is None or path.parent.name == model:
            found.setdefault((path.parent.parent.name, path.parent.name), []).append(path)
    return found


def read_lock(folder: Path) -> dict[str, Any]:
    from rmeval.io.yaml_io import load_yaml

    lock = folder / "lock.yaml"
    if not lock.is_file():
        return {}
    document = load_yaml(lock.read_text(encoding="utf-8")) or {}
    return document if isinstance(document, dict) else {}


@dataclass(frozen=True)
class EarlierScores:
    benchmark: str
    path: Path
    scores: PublishedScores
    notes: tuple[str, ...] = ()
    record: dict[str, Any] = field(default_factory=dict)


def _sidecar(path: Path) -> dict[str, Any]:
    meta = path.with_name(path.name.removesuffix(".parquet") + ".meta.json")
    return json.loads(meta.read_text(encoding="utf-8")) if meta.is_file() else {}


def read_earlier(folder_path: str | Path, model: str, pairs: Any) -> EarlierScores:
    """The earlier run's scores of `model` for this job's rows (`pairs`: rmeval.tasks.Pairs)."""
    import pandas as pd

    from rmeval.published.align import group_rows
    from rmeval.published.reader import reader_for

    folder = results_folder(folder_path)
    files = [path for paths in score_files(folder, model).values() for path in paths]
    if not files:
        models = sorted({name for _, name in score_files(folder)})
        raise RmevalError(f"{folder}: no score files of model {model!r}; its models: {', '.join(models) or 'none'}")
    wanted = set(pairs.ids)
    tables = {path: pd.read_parquet(path, columns=["id", "reward"]) for path in files}
    overlap = {path: len(wanted & set(table["id"].astype(str))) for path, table in tables.items()}
    best = max(overlap.values())
    chosen = [path for path, count in overlap.items() if count == best]
    if best == 0:
        raise RmevalError(f"{folder}: none of model {model!r}'s score files ({', '.join(map(str, files))}) holds an "
                          f"id of this job's rows (first: {pairs.ids[0]!r}): another benchmark's results")
    if len(chosen) > 1:
        raise RmevalError(f"{folder}: model {model!r}: {', '.join(map(str, chosen))} hold as many of this job's ids")
    path = chosen[0]
    benchmark = path.parent.parent.name
    try:
        item_of = reader_for(benchmark).item_of
    except RmevalError:
        def item_of(row_id: str) -> str:
            return row_id
    table = tables[path]
    rewards = dict(zip(table["id"].astype(str), table["reward"].astype(float), strict=True))
    items = group_rows(rewards, item_of)
    meta = _sidecar(path)
    lock = read_lock(folder)
    notes = list(_data_notes(folder, meta, pairs, rewards))
    notes += _format_notes(meta, pairs)
    data = {key: value for key, value in lock.items() if key.startswith(f"{benchmark}_")}
    record = {"results_folder": str(folder.resolve()), "score_file": str(path),
              "model_lock": (lock.get("models") or {}).get(model), "data_lock": data,
              "input_sha256": meta.get("input_sha256")}
    details = {"earlier_run": record}
    return EarlierScores(benchmark, path, PublishedScores(rewards, items, str(meta.get("model") or model), details),
                         tuple(notes), record)


def data_words(record: dict[str, Any]) -> str:
    data = record.get("data_lock") or {}
    if data:
        return "; ".join(f"{key}: {value.get('dataset') or value.get('path')}@"
                         f"{value.get('resolved_revision') or value.get('revision') or value.get('sha256', '')[:16]}"
                         for key, value in data.items() if isinstance(value, dict))
    return f"the earlier run's input sha256 {str(record.get('input_sha256'))[:16]} (no lock beside its scores)"


def _data_notes(folder: Path, meta: dict[str, Any], pairs: Any, rewards: dict[str, float]) -> list[str]:
    """Matched rows whose texts differ from the earlier run's prepared rows (when that table is there)."""
    import pandas as pd

    earlier_input = meta.get("input")
    if not earlier_input:
        return []
    table_path = folder.parent / earlier_input
    if not table_path.is_file():
        return [f"the earlier run's input table {earlier_input} is not beside its results: its texts were not "
                "compared with this run's"]
    earlier = pd.read_parquet(table_path, columns=["id", "prompt", "response"])
    texts = {str(i): (p, r) for i, p, r in zip(earlier["id"], earlier["prompt"], earlier["response"], strict=True)}
    differ = [row for row, prompt, response in zip(pairs.ids, pairs.prompts, pairs.responses, strict=True)
              if row in rewards and row in texts and texts[row] != (prompt, response)]
    if not differ:
        return []
    return [f"data revision differs: {len(differ)} matched rows have other texts in the earlier run "
            f"(first {differ[0]!r}); its data: {earlier_input}"]


def _format_notes(meta: dict[str, Any], pairs: Any) -> list[str]:
    """The earlier run's input formatting (its sidecar's `model_input`, `max_length`, `truncation_side`) against what
    this job asks of a model (`Pairs.model_input`; None: the registry entry's own, `rmeval`)."""
    details = meta.get("adapter_details") or {}
    earlier = details.get("model_input")
    if earlier is None:
        return []  # a published or baseline score file: no model input
    current = getattr(pairs, "model_input", None)
    here = {"model_input": current.style if current is not None else "rmeval",
            **({"max_length": current.max_length, "truncation_side": current.truncation_side}
               if current is not None else {})}
    there = {"model_input": str(earlier).split(" ")[0], "max_length": details.get("max_length"),
             "truncation_side": details.get("truncation_side")}
    differ = [f"{key} {there[key]!r} there, {here[key]!r} here" for key in here
              if here[key] is not None and there.get(key) != here[key]]
    return [f"input formatting differs from the earlier run: {'; '.join(differ)}"] if differ else []
