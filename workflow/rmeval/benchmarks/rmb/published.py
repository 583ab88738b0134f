"""RMB's reader of the authors' published per-pair rewards (its catalogue's `published_reader`).

The files are those `eval/scripts/my_run_rm.py` writes (Zhou-Zoey/RMB-Reward-Model-Benchmark@2be3180, lines 403-425):
`json.dump(dataset_json, indent=2)` of one record per pair, the dataset's `pair_uid` and `category_path` with
`chosen_reward`, `reject_reward` and `is_correct` (`1 if chosen > rejected else 0`). The repository publishes one such
file, `eval/result/ArmoRM-Llama3-8B-v0.1_result.json`: ArmoRM-Llama3-8B-v0.1 on one scenario's pairwise set
(`Pairwise_set/Helpfulness/Brainstorming/Idea Development`, 849 pairs; 12 of them with equal rewards, a loss under
the rule); no best-of-N results. Its `rm_rank.json` holds only accuracies (refused, named as such).

Items align by `pair_uid`. rmeval scores distinct texts (`t<hex>`, shared by the items that use them), so the score
job maps each published pair's two rewards to its texts through the prepared `items.parquet` (`job_rows`); a text
given two different rewards by the file is refused (one reward per text could not reproduce its `is_correct`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rmb.layout import KINDS, PAIRWISE
from rmeval.errors import RmevalError
from rmeval.published.reader import PublishedReader, PublishedScores, RunData, finite_score

FORMAT = "RMB result file (eval/scripts/my_run_rm.py)"
FIELDS = ("pair_uid", "chosen_reward", "reject_reward")
ROLES = ("0", "1")  # the chosen response (k 0 of items.parquet), the rejected one (k 1)


def _records(document: Any, path: Path) -> list[dict[str, Any]]:
    if isinstance(document, dict):
        ranks = [key for key, value in document.items() if isinstance(value, dict) and "ACC" in value]
        if ranks or all(isinstance(value, (int, float)) for value in document.values()):
            return _refuse(f"{path}: holds only aggregates (accuracies of {len(ranks or document)} model(s) or "
                           "subsets: `rm_rank.json`), no per-pair rewards; they are in eval/result/<model>_result.json "
                           "(my_run_rm.py)")
        return _refuse(f"{path}: not an {FORMAT}: a JSON object with keys {', '.join(sorted(document)[:8])} "
                       "(another benchmark's results?)")
    if not isinstance(document, list) or not document or not all(isinstance(r, dict) for r in document):
        return _refuse(f"{path}: not an {FORMAT}: expected a non-empty JSON list of per-pair records")
    lacking = [key for key in FIELDS if key not in document[0]]
    if lacking:
        found = ", ".join(sorted(document[0])[:8])
        hint = (" (a BoN item: the authors publish no best-of-N results)" if KINDS["bon"].uid in document[0] else
                " (another benchmark's results?)")
        return _refuse(f"{path}: record 0: not an {FORMAT}: expected fields {', '.join(FIELDS)}; found {found}{hint}")
    return document


def _refuse(message: str) -> list[dict[str, Any]]:
    raise RmevalError(message)


def read(path: Path) -> PublishedScores:
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise RmevalError(f"{path}: not readable as JSON ({error}); not an {FORMAT}") from None
    rewards: dict[str, float] = {}
    items: dict[str, tuple[str, ...]] = {}
    scenarios: set[str] = set()
    for index, record in enumerate(_records(document, path)):
        uid = record.get("pair_uid")
        where = f"{path}: record {index} (pair_uid {uid!r})"
        missing = [key for key in FIELDS if key not in record]
        if missing:
            raise RmevalError(f"{where}: missing field(s) {missing}")
        item = str(uid)
        if item in items:
            raise RmevalError(f"{where}: pair_uid is there twice")
        chosen = finite_score(record["chosen_reward"], f"{where}: chosen_reward")
        rejected = finite_score(record["reject_reward"], f"{where}: reject_reward")
        if "is_correct" in record and record["is_correct"] != (1 if chosen > rejected else 0):
            raise RmevalError(f"{where}: is_correct {record['is_correct']!r}, but its rewards give "
                              f"{1 if chosen > rejected else 0} (my_run_rm.py: 1 if chosen > rejected else 0)")
        items[item] = tuple(f"{item}#{role}" for role in ROLES)
        rewards[items[item][0]], rewards[items[item][1]] = chosen, rejected
        if isinstance(record.get("category_path"), str):
            scenarios.add(record["category_path"])
    return PublishedScores(rewards, items, None, {"scenarios": sorted(scenarios)},
                           coverage=coverage(len(items), sorted(scenarios)))


def coverage(pairs: int, scenarios: list[str]) -> str:
    """What the file holds, in words, for the refusal when too few of a run's items match: my_run_rm.py scores
    pairwise files only (its `keep_columns` and `pair_uid`, lines 245-249), so a file never holds a best-of-N item."""
    shown = ", ".join(scenarios[:3]) + (f" and {len(scenarios) - 3} more" if len(scenarios) > 3 else "")
    where = f" of {len(scenarios)} scenario(s) ({shown})" if scenarios else ""
    return f"{pairs} pairwise items{where} and no best-of-N items"


def item_of(row_id: str) -> str:
    """`<pair_uid>#0` -> `<pair_uid>` (the file's rows; the job's are texts, mapped by `job_rows`)."""
    return row_id.rsplit("#", 1)[0]


def job_rows(scores: PublishedScores, table: Path) -> tuple[PublishedScores, dict[str, tuple[str, ...]]]:
    """The file's pairs as the job's texts, by the prepared `items.parquet` beside the texts table: the scores keyed
    by text id (a pair of this run with its two texts; one the run lacks keeps the file's rows) and this run's items
    (`pair_uid` / `bon_uid`) -> their texts."""
    import pandas as pd

    items_file = Path(table).with_name("items.parquet")
    if not items_file.is_file():
        raise RmevalError(f"{items_file}: the prepared RMB items are missing (rmeval rmb-prepare writes them beside "
                          f"{Path(table).name})")
    frame = pd.read_parquet(items_file, columns=["kind", "item_id", "k", "text_id"])
    frame = frame.sort_values("k", kind="stable")  # an item's texts by k; the items in the prepared order
    run_items: dict[str, tuple[str, ...]] = {}
    for (kind, uid), group in frame.groupby(["kind", "item_id"], sort=False):
        key = str(uid) if kind == PAIRWISE else f"{KINDS[str(kind)].uid}:{uid}"  # the two sets' uids apart
        run_items[key] = tuple(group["text_id"].astype(str))
    rewards: dict[str, float] = {}
    given_by: dict[str, str] = {}
    items: dict[str, tuple[str, ...]] = {}
    for item, rows in scores.items.items():
        texts = run_items.get(item)
        if texts is None or len(texts) != len(rows):
            items[item] = rows
            continue
        for row, text in zip(rows, texts, strict=True):
            value = scores.rewards[row]
            if text in rewards and rewards[text] != value:
                raise RmevalError(f"pair_uid {item}: its text {text} has reward {value!r} here and {rewards[text]!r} "
                                  f"in pair_uid {given_by[text]}; rmeval holds one reward per text and could not "
                                  "recompute the file's results")
            rewards[text], given_by[text] = value, item
        items[item] = texts
    return PublishedScores(rewards, items, scores.model, scores.details, scores.coverage), run_items


def run_data(section: Mapping[str, Any], locate: Callable[[str], str]) -> RunData:
    """This run's data in words (its items are known after `rmb-prepare`: the score job checks the 90 % rule)."""
    from rmeval.benchmarks.rmb.layout import REPOSITORY, REVISION

    if section.get("source") == "local" and section.get("path"):
        return RunData(f"local folder {locate(str(section['path']))}")
    return RunData(f"{REPOSITORY}@{section.get('revision') or REVISION}")


def input_words(table: Path) -> str:
    """The data a prepared texts table came from, from the manifest beside it (prepare.py)."""
    manifest = Path(table).with_name("manifest.json")
    if not manifest.is_file():
        return f"the prepared table {table}"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    if record.get("source") == "local":
        return f"local folder {record.get('path')}"
    return f"{record.get('repository') or 'RMB'}@{record.get('revision')}"


READER = PublishedReader(benchmark="rmb", fmt=FORMAT, id_name="RMB `pair_uid`", read=read, item_of=item_of,
                         run_data=run_data, input_words=input_words, job_rows=job_rows)
