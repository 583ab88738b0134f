"""JudgeBench split files -> the scoring engine's tables, every problem named by file, line, pair and field.

Sources: a local folder holding the official files (`dataset=judgebench,response_model=<model>.jsonl`, or the Hub's
`data/<split>-00000-of-00001.jsonl`), or the Hub dataset `ScalerLab/JudgeBench` at a revision (one file per split,
downloaded through huggingface_hub; the commit it resolved to is read from the cache path). Each file's sha256 is
recorded; a run that follows a lock stops when the bytes differ from the locked ones.

Two tables per split, both keyed by the official `pair_id`:
- `data/<split>.parquet` (reward models, direct judges, baselines): one row per response, id `<pair_id>#A` /
  `<pair_id>#B`; each response text is scored once, the second order reuses its reward;
- `pairwise/<split>.parquet` (pairwise LLM judges): the label's winner (`role` chosen, id `<pair_id>#chosen`) and the
  other response twice (`role` rejected): `<pair_id>#order1` with the winner at its own position (the pair as
  published) and `<pair_id>#order2` with the two swapped, so that a judge compares both orders, as run_judge.py does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.judgebench.official import FIELDS, HF_ID, LABELS, SPLITS, Split, category_of
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd

ITEM_COLUMNS = ("id", "prompt", "response", "pair_id", "position", "label", "source", "category")
PAIRWISE_COLUMNS = ("id", "prompt", "response", "pair_id", "role", "chosen_position", "order", "label", "source",
                    "category")
MAX_LISTED = 20  # problems listed per file; the count says how many more


@dataclass(frozen=True)
class Pair:
    pair_id: str
    source: str
    question: str
    response_a: str
    response_b: str
    label: str

    @property
    def category(self) -> str | None:
        return category_of(self.source)


@dataclass(frozen=True)
class SplitFile:
    """One split's file as read: its path, bytes' sha256, and where it came from (a Hub commit or None)."""

    split: Split
    path: Path
    sha256: str
    resolved_revision: str | None = None


def local_file(folder: str | Path, split: Split) -> Path:
    """The split's file in a local folder: the official GitHub name, else the Hub's layout; the GitHub name when
    neither is there (for the message)."""
    folder = Path(folder)
    for candidate in (folder / split.github_file, folder / split.hub_file, folder / Path(split.hub_file).name):
        if candidate.is_file():
            return candidate
    return folder / split.github_file


def hub_file(split: Split, revision: str | None) -> SplitFile:
    """Download (or find in the cache) the split's file at `revision`; the commit is the cache folder's name."""
    from huggingface_hub import hf_hub_download

    from rmeval.io.hashing import sha256_file

    path = Path(hf_hub_download(HF_ID, split.hub_file, repo_type="dataset", revision=revision))
    parts = path.parts
    commit = parts[parts.index("snapshots") + 1] if "snapshots" in parts else None
    return SplitFile(split, path, sha256_file(path), commit)


def _problem(where: str, field: str, what: str) -> str:
    return f"{where}: field {field!r}: {what}"


def read_pairs(path: Path) -> tuple[list[Pair], list[str]]:
    """The file's pairs and its problems (one line each: file, line and pair, field); an empty file is one problem."""
    if not path.is_file():
        return [], [f"{path}: file not found"]
    pairs: list[Pair] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}: line {number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                problems.append(f"{where}: not a JSON object ({error.msg})")
                continue
            if not isinstance(record, dict):
                problems.append(f"{where}: not a JSON object")
                continue
            if isinstance(record.get("pair_id"), str) and record["pair_id"]:
                where = f"{where} (pair_id {record['pair_id']})"
            bad = False
            for field in FIELDS:
                value = record.get(field)
                if field not in record:
                    problems.append(_problem(where, field, "missing"))
                    bad = True
                elif not isinstance(value, str) or not value.strip():
                    problems.append(_problem(where, field, f"expected a non-empty string, got {value!r}"))
                    bad = True
            if bad:
                continue
            if record["label"] not in LABELS:
                problems.append(_problem(where, "label", f"unknown label {record['label']!r} (expected A>B or B>A)"))
                continue
            if record["pair_id"] in seen:
                problems.append(_problem(where, "pair_id", f"duplicate of line {seen[record['pair_id']]}"))
                continue
            seen[record["pair_id"]] = number
            pairs.append(Pair(record["pair_id"], record["source"], record["question"], record["response_A"],
                              record["response_B"], record["label"]))
    if not pairs and not problems:
        problems.append(f"{path}: no pairs (an empty split)")
    return pairs, problems


def problems_text(problems: list[str]) -> str:
    listed = problems[:MAX_LISTED]
    more = len(problems) - len(listed)
    return "\n".join(listed + ([f"... and {more} more"] if more else []))


def load_split(path: Path) -> list[Pair]:
    """The file's pairs, or RmevalError listing every problem, one line each."""
    pairs, problems = read_pairs(path)
    if problems:
        raise RmevalError(problems_text(problems))
    return pairs


def item_rows(pairs: list[Pair]) -> list[dict[str, Any]]:
    """One row per response (ITEM_COLUMNS)."""
    rows = []
    for pair in pairs:
        for position, response in (("A", pair.response_a), ("B", pair.response_b)):
            rows.append({"id": f"{pair.pair_id}#{position}", "prompt": pair.question, "response": response,
                         "pair_id": pair.pair_id, "position": position, "label": pair.label,
                         "source": pair.source, "category": pair.category})
    return rows


def pairwise_rows(pairs: list[Pair]) -> list[dict[str, Any]]:
    """Per pair: the winner once, the other response once per order (PAIRWISE_COLUMNS). `chosen_position` is where
    the winner is shown: its own position in order 1 (the pair as published), the other one in order 2."""
    rows = []
    for pair in pairs:
        winner_at = pair.label[0]  # "A>B" -> A
        winner, other = (pair.response_a, pair.response_b) if winner_at == "A" else (pair.response_b, pair.response_a)
        common = {"prompt": pair.question, "pair_id": pair.pair_id, "label": pair.label, "source": pair.source,
                  "category": pair.category}
        rows.append({"id": f"{pair.pair_id}#chosen", "response": winner, "role": "chosen", "chosen_position": None,
                     "order": None, **common})
        for order, position in ((1, winner_at), (2, "B" if winner_at == "A" else "A")):
            rows.append({"id": f"{pair.pair_id}#order{order}", "response": other, "role": "rejected",
                         "chosen_position": position, "order": order, **common})
    return rows


def frame(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    table = pd.DataFrame(rows, columns=list(columns))
    if "order" in table.columns:
        table["order"] = table["order"].astype("Int64")
    return table


def split_names(values: list[str], where: str) -> list[Split]:
    unknown = [value for value in values if value not in SPLITS]
    if unknown:
        raise RmevalError(f"{where}: unknown split(s) {unknown}; known: {list(SPLITS)}")
    return [SPLITS[value] for value in dict.fromkeys(values)]
