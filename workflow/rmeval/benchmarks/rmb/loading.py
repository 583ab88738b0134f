"""An official `RMB_dataset` folder -> checked items, and the two tables the workflow scores and scores by.

Every problem is collected (not only the first), one line each naming the file, the item and the field, so that
preflight names them all before the first job (`problems`) and `rmb-prepare` stops on the same lines.

- texts: one row per distinct (conversation, response): id `t<16 hex of its sha256>`, prompt (the transcript),
  conversation (the turns, JSON), response. Each is scored once per model, however many items use it.
- items: one row per (item, response): kind (pairwise / bon), item_id (pair_uid / bon_uid), goal, scenario (its
  file's path under the set's folder, without `.json`: the official `category_path` less the set), file, k (0 the
  chosen / best response, then the reject / the losers in loser_list order), text_id.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rmb.layout import GOALS, KINDS, Kind
from rmeval.conversation import check_turns, transcript
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd

TEXT_COLUMNS = ("id", "prompt", "conversation", "response")
ITEM_COLUMNS = ("kind", "item_id", "goal", "scenario", "file", "k", "text_id")
MAX_LINES = 50  # problems listed in one message; the rest counted


@dataclass(frozen=True)
class Item:
    kind: str
    uid: str
    goal: str
    scenario: str
    file: str  # relative to the RMB_dataset folder
    turns: tuple[dict[str, str], ...]
    responses: tuple[str, ...]  # the chosen / best first


def literal(value: Any, where: str) -> Any:
    """A field as the files hold it: JSON already parsed, or a Python literal written as a string."""
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as error:
        raise RmevalError(f"{where}: not a Python literal ({type(error).__name__}: {error})") from None


def answer(value: Any, where: str) -> str:
    """A response's text: the `answer` of its {llm_name, answer} mapping (possibly empty, as published)."""
    parsed = literal(value, where)
    if not isinstance(parsed, dict) or "answer" not in parsed:
        raise RmevalError(f"{where}: expected a mapping with an 'answer', got {type(parsed).__name__}")
    if not isinstance(parsed["answer"], str):
        raise RmevalError(f"{where}.answer: {type(parsed['answer']).__name__}, not text")
    return parsed["answer"]


def set_files(root: Path, kind: Kind) -> list[Path]:
    return sorted((root / kind.folder).rglob("*.json"))


def _item(row: Any, kind: Kind, file: str, scenario: str, index: int) -> Item:
    if not isinstance(row, dict):
        raise RmevalError(f"{file}: item {index}: expected a mapping, got {type(row).__name__}")
    uid = row.get(kind.uid)
    at = f"{file}: item {index} ({kind.uid}={uid!r})" if uid is not None else f"{file}: item {index}"
    missing = [name for name in kind.fields if name not in row]
    if missing:
        raise RmevalError(f"{at}: missing field(s) {missing}")
    turns = check_turns(literal(row["conversation_input"], f"{at}: field 'conversation_input'"),
                        f"{at}: field 'conversation_input'")
    first = answer(row[kind.first], f"{at}: field {kind.first!r}")
    if kind.many:
        others = literal(row[kind.others], f"{at}: field {kind.others!r}")
        if not isinstance(others, list) or not others:
            raise RmevalError(f"{at}: field {kind.others!r}: expected a non-empty list of responses")
        rest = [answer(value, f"{at}: field {kind.others!r}[{i}]") for i, value in enumerate(others)]
    else:
        rest = [answer(row[kind.others], f"{at}: field {kind.others!r}")]
    goal = scenario.split("/", 1)[0]
    return Item(kind.name, str(uid), goal, scenario, file, tuple(turns), (first, *rest))


def read_folder(root: str | Path) -> tuple[list[Item], list[str]]:
    """Every item of both sets, in file order, and every problem (one line each)."""
    root = Path(root)
    items: list[Item] = []
    problems: list[str] = []
    if not root.is_dir():
        return [], [f"{root}: not a folder (the official RMB_dataset folder, with Pairwise_set/ and BoN_set/)"]
    for kind in KINDS.values():
        files = set_files(root, kind)
        seen: dict[str, str] = {}
        count = 0
        for path in files:
            file = path.relative_to(root).as_posix()
            scenario = path.relative_to(root / kind.folder).with_suffix("").as_posix()
            if scenario.split("/", 1)[0] not in GOALS:
                problems.append(f"{file}: not under {kind.folder}/{{{', '.join(GOALS)}}}/")
                continue
            try:
                rows = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as error:
                problems.append(f"{file}: not readable as JSON ({error})")
                continue
            if not isinstance(rows, list) or not rows:
                problems.append(f"{file}: expected a non-empty JSON list of items")
                continue
            for index, row in enumerate(rows):
                try:
                    item = _item(row, kind, file, scenario, index)
                except RmevalError as error:
                    problems.append(str(error))
                    continue
                if item.uid in seen:
                    problems.append(f"{file}: item {index} ({kind.uid}={item.uid!r}): field {kind.uid!r}: "
                                    f"duplicate of an item in {seen[item.uid]}")
                    continue
                seen[item.uid] = file
                items.append(item)
                count += 1
        if not count and not any(p.startswith(f"{kind.folder}/") for p in problems):
            problems.append(f"{root / kind.folder}: the {kind.folder} set is empty (no items in *.json below it)")
    return items, problems


def message(root: str | Path, problems: list[str]) -> str:
    shown = problems[:MAX_LINES]
    more = f"\n    ... and {len(problems) - MAX_LINES} more" if len(problems) > MAX_LINES else ""
    return f"{root}: {len(problems)} problem(s) in the RMB data:\n    " + "\n    ".join(shown) + more


def read_checked(root: str | Path) -> list[Item]:
    items, problems = read_folder(root)
    if problems:
        raise RmevalError(message(root, problems))
    return items


def text_id(turns: tuple[dict[str, str], ...], response: str) -> str:
    """One id per distinct model input (the turns and the response), whatever items share it."""
    payload = json.dumps([[dict(turn) for turn in turns], response], ensure_ascii=False, sort_keys=True)
    return "t" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def tables(items: list[Item]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(texts, items): the scoring engine's table of distinct inputs, and each item's responses by text id."""
    import pandas as pd

    texts: dict[str, dict[str, str]] = {}
    rows: list[dict[str, Any]] = []
    for item in items:
        conversation = json.dumps([dict(turn) for turn in item.turns], ensure_ascii=False)
        for k, response in enumerate(item.responses):
            tid = text_id(item.turns, response)
            texts.setdefault(tid, {"id": tid, "prompt": transcript(item.turns), "conversation": conversation,
                                   "response": response})
            rows.append({"kind": item.kind, "item_id": item.uid, "goal": item.goal, "scenario": item.scenario,
                         "file": item.file, "k": k, "text_id": tid})
    return (pd.DataFrame(list(texts.values()), columns=list(TEXT_COLUMNS)),
            pd.DataFrame(rows, columns=list(ITEM_COLUMNS)))
