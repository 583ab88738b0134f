"""A loaded corpus -> one table per group (`results/data/{group}.parquet`: id, prompt, response, group, label[,
pair]) and its manifest, the same contract as the arXiv stage's, so the shared score rule, every table, figure,
the summary and the lock read it unchanged. Every check runs before the first file is written.

Labels: `groups:` maps a group to the raw labels it takes; a row's label (a string, or a list of strings) that no
group names is dropped and counted; a row whose labels fall in two groups is an error naming the row.
Sampling (`per_group: N`): the N rows (or, when paired, the N pair ids) with the smallest sha256(seed:id) key,
kept in the file's order, so that the sample depends only on the seed and the ids, never on the row order.
"""

from __future__ import annotations

import hashlib
import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError

BASE_COLUMNS = ["id", "prompt", "response", "group", "label"]
PAIR_COLUMN = "pair"


def data_columns(paired: bool) -> list[str]:
    return BASE_COLUMNS + ([PAIR_COLUMN] if paired else [])


def content_sha256(frame: Any, columns: list[str]) -> str:
    """Hash of the rows themselves (tab-separated lines, table order), as the arXiv stage's: stable across parquet
    writers; the lock's per-row hashes are over the same lines."""
    digest = hashlib.sha256()
    for row in frame[columns].itertuples(index=False):
        digest.update(("\t".join(str(v) for v in row) + "\n").encode("utf-8"))
    return digest.hexdigest()


@dataclass(frozen=True)
class Columns:
    id: str
    group: str
    response: str
    prompt: str | None = None
    pair: str | None = None

    @classmethod
    def from_config(cls, columns: Mapping[str, Any]) -> Columns:
        return cls(id=columns["id"], group=columns["group"], response=columns["response"],
                   prompt=columns.get("prompt"), pair=columns.get("pair"))


@dataclass
class Prepared:
    frames: dict[str, Any]  # group -> its table (data_columns order)
    counts: dict[str, dict[str, Any]]  # group -> counts for its manifest
    unmapped: dict[str, int]  # raw label -> rows dropped
    source_rows: int
    incomplete_pairs: int = 0
    pairs_seen: int = 0
    warnings: list[str] = field(default_factory=list)


def _template_fields(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def check_columns(frame: Any, columns: Columns, template: str | None, where: str) -> None:
    present = [str(c) for c in frame.columns]
    needed = [(f"columns.{key}", name) for key, name in (("id", columns.id), ("group", columns.group),
                                                         ("response", columns.response), ("prompt", columns.prompt),
                                                         ("pair", columns.pair)) if name]
    needed += [("prompt_template", name) for name in (_template_fields(template) if template else [])]
    for key, name in needed:
        if name not in present:
            raise RmevalError(f"{where}: column {name!r} ({key}) is missing; the columns there are: "
                              f"{', '.join(present) or '(none)'}")


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN
    except (TypeError, ValueError):
        return False


def _labels(value: Any) -> list[str]:
    if _missing(value):
        return []
    if isinstance(value, str):
        return [value]
    try:
        return [str(v) for v in list(value)]  # a list (JSON) or numpy array (parquet) of labels
    except TypeError:
        return [str(value)]


def _text(value: Any, row: int, row_id: str, column: str, where: str) -> str:
    if not isinstance(value, str):
        shown = "missing" if _missing(value) else f"a {type(value).__name__}, not a string"
        raise RmevalError(f"{where} row {row} (id {row_id!r}): column {column!r} is {shown}")
    if not value.strip():
        raise RmevalError(f"{where} row {row} (id {row_id!r}): column {column!r} is empty")
    return value


def _id(value: Any, row: int, column: str, where: str) -> str:
    if _missing(value) or (isinstance(value, str) and not value.strip()):
        raise RmevalError(f"{where} row {row}: column {column!r} (the id) is empty")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def label_index(groups: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """raw label -> the groups naming it (more than one is an error for the rows that carry it)."""
    index: dict[str, list[str]] = {}
    for group, labels in groups.items():
        for label in labels:
            index.setdefault(str(label), []).append(group)
    return index


def sample_key(seed: int, value: str) -> str:
    return hashlib.sha256(f"{seed}:{value}".encode()).hexdigest()


def map_rows(frame: Any, groups: Mapping[str, list[str]], columns: Columns, template: str | None,
             where: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The kept rows (dicts in data_columns order) and the dropped rows' labels; errors name the row (1-based)."""
    index = label_index(groups)
    kept: list[dict[str, Any]] = []
    unmapped: Counter[str] = Counter()
    first_row: dict[str, int] = {}
    records = frame.to_dict(orient="records")
    for number, record in enumerate(records, start=1):
        row_id = _id(record[columns.id], number, columns.id, where)
        if row_id in first_row:
            raise RmevalError(f"{where} rows {first_row[row_id]} and {number}: duplicate id {row_id!r} in column "
                              f"{columns.id!r}")
        first_row[row_id] = number
        labels = _labels(record[columns.group])
        hit = {group: label for label in labels for group in index.get(label, [])}
        if len(hit) > 1:
            raise RmevalError(f"{where} row {number} (id {row_id!r}): label(s) {labels} map to groups "
                              f"{sorted(hit)} (column {columns.group!r}); a row must fall in one group")
        if not hit:
            unmapped.update(labels or ["(missing)"])
            continue
        group, label = next(iter(hit.items()))
        response = _text(record[columns.response], number, row_id, columns.response, where)
        if template is not None:
            values = {key: "" if _missing(value) else str(value) for key, value in record.items()}
            prompt = template.format_map(values)
        else:
            prompt = _text(record[columns.prompt], number, row_id, columns.prompt, where)
        row = {"id": row_id, "prompt": prompt, "response": response, "group": group, "label": label,
               "_row": number}
        if columns.pair:
            row[PAIR_COLUMN] = _id(record[columns.pair], number, columns.pair, where)
        kept.append(row)
    return kept, dict(sorted(unmapped.items()))


def check_pairs(rows: list[dict[str, Any]], columns: Columns, where: str) -> None:
    seen: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row["group"], row[PAIR_COLUMN])
        if key in seen:
            raise RmevalError(f"{where} rows {seen[key]} and {row['_row']}: pair id {key[1]!r} (column "
                              f"{columns.pair!r}) appears twice in group {key[0]!r}; a pair holds one row per group")
        seen[key] = row["_row"]


def _cut(by_group: dict[str, list[dict[str, Any]]], per_group: int, allow_fewer: Any, where: str,
         warnings: list[str]) -> dict[str, list[dict[str, Any]]]:
    short = {group: len(rows) for group, rows in by_group.items() if len(rows) < per_group}
    if not short:
        return by_group
    shown = ", ".join(f"{group} {n}" for group, n in short.items())
    if allow_fewer is False:
        raise RmevalError(f"{where}: per_group is {per_group} but these groups have fewer rows: {shown}; lower "
                          "corpus.per_group or set corpus.allow_fewer (true/balanced or keep)")
    if allow_fewer == "keep":
        warnings.append(f"groups below per_group {per_group} kept as they are: {shown}")
        return by_group
    smallest = min(len(rows) for rows in by_group.values())
    warnings.append(f"every group cut to the smallest, {smallest} rows (allow_fewer): {shown}")
    return {group: rows[:smallest] for group, rows in by_group.items()}


def sample(by_group: dict[str, list[dict[str, Any]]], per_group: int | None, seed: int, paired: bool,
           allow_fewer: Any, where: str, warnings: list[str]) -> dict[str, list[dict[str, Any]]]:
    if per_group is None:
        return by_group
    if paired:
        pair_ids = sorted({row[PAIR_COLUMN] for rows in by_group.values() for row in rows},
                          key=lambda value: sample_key(seed, value))
        chosen = set(pair_ids[:per_group])
        picked = {group: [row for row in rows if row[PAIR_COLUMN] in chosen] for group, rows in by_group.items()}
    else:
        picked = {}
        for group, rows in by_group.items():
            ranked = sorted(rows, key=lambda row: sample_key(seed, row["id"]))[:per_group]
            picked[group] = sorted(ranked, key=lambda row: row["_row"])  # back in the file's order
    # rank order inside a group decides an allow_fewer cut: the same seeded keys, so the cut is seeded too
    ranked = {group: sorted(rows, key=lambda row: sample_key(seed, row.get(PAIR_COLUMN, row["id"])))
              for group, rows in picked.items()}
    cut = _cut(ranked, per_group, allow_fewer, where, warnings)
    return {group: sorted(rows, key=lambda row: row["_row"]) for group, rows in cut.items()}


def prepare(frame: Any, groups: Mapping[str, list[str]], corpus: Mapping[str, Any], where: str) -> Prepared:
    import pandas as pd

    columns = Columns.from_config(corpus["columns"])
    template = corpus.get("prompt_template")
    if template is None and columns.prompt is None:
        raise RmevalError("corpus: give columns.prompt or prompt_template (the prompt each response answers)")
    check_columns(frame, columns, template, where)
    rows, unmapped = map_rows(frame, groups, columns, template, where)
    paired = columns.pair is not None
    if paired:
        check_pairs(rows, columns, where)
    by_group: dict[str, list[dict[str, Any]]] = {group: [] for group in groups}
    for row in rows:
        by_group[row["group"]].append(row)
    for group, members in by_group.items():
        if not members:
            raise RmevalError(f"{where}: group {group!r} has no rows: no row's column {columns.group!r} holds one of "
                              f"its labels {list(groups[group])}; labels there, unmapped: "
                              f"{', '.join(list(unmapped)[:20]) or '(none)'}")
    in_group = {group: len(members) for group, members in by_group.items()}
    warnings: list[str] = []
    chosen = sample(by_group, corpus.get("per_group"), int(corpus.get("seed", 0)), paired,
                    corpus.get("allow_fewer", False), where, warnings)
    order = data_columns(paired)
    frames = {group: pd.DataFrame([{key: row[key] for key in order} for row in members], columns=order)
              for group, members in chosen.items()}
    prepared = Prepared(frames=frames, counts={}, unmapped=unmapped, source_rows=len(frame), warnings=warnings)
    for group in groups:
        prepared.counts[group] = {"source_rows": len(frame), "unmapped_rows": sum(unmapped.values()),
                                  "in_group": in_group[group], "sampled": len(frames[group])}
    if paired:
        members = [set(f[PAIR_COLUMN]) for f in frames.values()]
        union = set().union(*members)
        complete = set.intersection(*members)
        prepared.pairs_seen, prepared.incomplete_pairs = len(union), len(union - complete)
    return prepared


def write(prepared: Prepared, groups: Mapping[str, list[str]], corpus: Mapping[str, Any], source: dict[str, Any],
          out_dir: Path) -> dict[str, dict[str, Any]]:
    """The tables first, then the manifests (rmeval.io.atomic): a failed run leaves no table that looks done."""
    from rmeval import __version__
    from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
    from rmeval.io.clock import utc_now
    from rmeval.io.hashing import sha256_file

    paired = corpus["columns"].get("pair") is not None
    order = data_columns(paired)
    prepared_at = utc_now()
    written = {}
    for group, frame in prepared.frames.items():
        out = out_dir / f"{group}.parquet"
        write_parquet_atomic(frame, out)
        manifest = {
            "group": group,
            "labels": [str(label) for label in groups[group]],
            "source": source,
            "date": {"prepared_at": prepared_at},
            "seed": corpus.get("seed", 0),
            "per_group": corpus.get("per_group"),
            "allow_fewer": corpus.get("allow_fewer", False),
            "columns": dict(corpus["columns"]),
            "prompt_template": corpus.get("prompt_template"),
            "counts": prepared.counts[group],
            "unmapped_labels": prepared.unmapped,
            "pairs": ({"column": corpus["columns"]["pair"], "pair_ids": prepared.pairs_seen,
                       "incomplete": prepared.incomplete_pairs} if paired else None),
            "warnings": prepared.warnings,
            "output": {"path": str(out), "rows": len(frame), "sha256": sha256_file(out),
                       "content_sha256": content_sha256(frame, order), "columns": order},
            "rmeval_version": __version__,
        }
        written[group] = manifest
    for group, manifest in written.items():
        write_json_atomic(manifest, out_dir / f"{group}.manifest.json", sort_keys=False, ensure_ascii=False)
    return written
