"""Published RewardBench results files, built from our own numbers in exactly the layout the authors' code writes
(allenai/reward-bench `rewardbench/utils.py` save_to_hub: `json.dumps(results_dict, indent=4, sort_keys=True)` of
`out_dataset.to_dict()` plus `model`, `model_type`, `chat_template`):

- v1 `eval-set-scores/<org>/<model>.json` (scripts/run_rm.py lines 336-394): columns `text_chosen`,
  `text_rejected`, `results` (1 if chosen > rejected else 0, line 265), `subset`, `id` (the dataset's id),
  `scores_chosen`, `scores_rejected`.
- v2 (scripts/run_v2.py lines 336-415, utils.py reroll_and_score_dataset): per prompt `text` and `scores` (lists in
  `chosen + rejected` order), `results` (1/k when the chosen one is among k at the top, else 0; the Ties rows None,
  process_single_model), `subset`, `id`, `num_correct`.
- v1 `eval-set/<org>/<model>.json` (line 373): only the per-subset accuracies (`results_grouped`).
Nothing here is copied from the authors' files; the scores are the caller's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

Score = Callable[[str], float]  # a row id of rmeval's score contract (`<id>#chosen`, `<id>#<k>`) -> its score


def dataset_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _text(prompt: str, response: str) -> str:
    return f"<|user|>\n{prompt}\n<|assistant|>\n{response}"


def v1_columns(rows: Sequence[Mapping[str, Any]], score: Score) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {key: [] for key in ("text_chosen", "text_rejected", "results", "subset", "id",
                                                         "scores_chosen", "scores_rejected")}
    for row in rows:
        chosen, rejected = score(f"{row['id']}#chosen"), score(f"{row['id']}#rejected")
        columns["text_chosen"].append(_text(row["prompt"], row["chosen"]))
        columns["text_rejected"].append(_text(row["prompt"], row["rejected"]))
        columns["results"].append(1 if chosen > rejected else 0)
        columns["subset"].append(row["subset"])
        columns["id"].append(row["id"])
        columns["scores_chosen"].append(chosen)
        columns["scores_rejected"].append(rejected)
    return columns


def v2_columns(rows: Sequence[Mapping[str, Any]], score: Score) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {key: [] for key in ("text", "scores", "results", "subset", "id", "num_correct")}
    for row in rows:
        completions = [*row["chosen"], *row["rejected"]]
        scores = [score(f"{row['id']}#{k}") for k in range(len(completions))]
        top = max(scores)
        result = (1 / sum(value == top for value in scores)) if scores[0] == top else 0
        columns["text"].append([_text(row["prompt"], c) for c in completions])
        columns["scores"].append(scores)
        columns["results"].append(None if row["subset"] == "Ties" else result)
        columns["subset"].append(row["subset"])
        columns["id"].append(row["id"])
        columns["num_correct"].append(row["num_correct"])
    return columns


def write_scores_file(path: Path, columns: Mapping[str, Any], model: str, model_type: str = "Seq. Classifier",
                      chat_template: str = "tokenizer") -> Path:
    """save_to_hub's dict branch: the columns plus the three scalars, indent=4, sort_keys=True."""
    document = {**columns, "model": model, "model_type": model_type, "chat_template": chat_template}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=4, sort_keys=True), encoding="utf-8")
    return path


def write_aggregates_file(path: Path, columns: Mapping[str, Any], model: str) -> Path:
    """run_rm.py's `results_grouped` (eval-set/): per subset num_correct / num_total, no per-item scores."""
    subsets: dict[str, list[int]] = {}
    for subset, result in zip(columns["subset"], columns["results"], strict=True):
        subsets.setdefault(subset, []).append(result)
    document = {"model": model, "model_type": "Seq. Classifier", "chat_template": "tokenizer",
                **{subset: sum(values) / len(values) for subset, values in subsets.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=4, sort_keys=True), encoding="utf-8")
    return path


def seeded_score(seed: int) -> Score:
    """A deterministic score per row id (no ties unless asked): our own numbers."""
    import hashlib

    def score(row_id: str) -> float:
        digest = hashlib.blake2b(f"{seed}:{row_id}".encode(), digest_size=8).digest()
        return round(int.from_bytes(digest, "little") / 2**64 * 8 - 4, 6)

    return score
