"""Load RewardMATH and RewardBench math-prm from Hugging Face (`datasets`) or local JSON / JSON-lines files.

Every loader returns plain records (dicts) already checked against the schema, so that a bad row is
reported once, by file and row, before anything is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rewardmath.subjects import MATH_SUBJECTS, slugify_subject
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError

REWARDMATH_HF_ID = "RewardMATH/RewardMATH"
REWARDBENCH_HF_ID = "allenai/reward-bench"
REWARDBENCH_SUBSET = "math-prm"
REWARDMATH_FIELDS = ("problem", "eval_solution", "solution_reference", "solution_type", "subject", "level",
                     "problem_id", "id")
REWARDBENCH_LOCAL_FIELDS = ("problem_id", "problem", "subject", "level", "chosen_steps", "rejected_steps")
SOLUTION_TYPES = ("chosen", "rejected")
_SLUG_TO_SUBJECT = {slugify_subject(subject): subject for subject in MATH_SUBJECTS}


@dataclass(frozen=True)
class Solution:
    """One RewardMATH solution: a row of the benchmark, ready to be scored."""

    id: str
    problem_id: str
    problem: str
    answer: str
    steps: list[str]
    solution_type: str  # chosen | rejected
    solution_reference: str  # the model that wrote it; `human_to_GPT-4` for the chosen one
    subject: str
    level: int | None


@dataclass(frozen=True)
class Pair:
    """One RewardBench math-prm comparison: a chosen and a rejected step list for one problem."""

    pair_id: str
    problem_id: str
    problem: str
    chosen_steps: list[str]
    rejected_steps: list[str]
    subject: str
    level: int | None


def read_json_records(path: str | Path) -> list[dict[str, Any]]:
    """A JSON list of objects, or JSON lines (one object a line); `.jsonl` or content decides."""
    path = Path(path)
    if not path.is_file():
        raise RmevalError(f"data file not found: {path}")
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as error:
            raise RmevalError(f"{path}: not valid JSON ({error})") from error
    else:
        records = []
        for line_number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise RmevalError(f"{path}: line {line_number} is not valid JSON ({error})") from error
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise RmevalError(f"{path}: row {index} is a {type(record).__name__}, expected an object")
    return records


def canonical_subject(value: Any, where: str) -> str:
    """Map any spelling of a MATH subject ('counting_and_probability', 'Counting & Probability') to the dataset's."""
    subject = _SLUG_TO_SUBJECT.get(slugify_subject(str(value or "")))
    if subject is None:
        raise RmevalError(f"{where}: subject {value!r} is not one of MATH's subjects {list(MATH_SUBJECTS)}")
    return subject


def parse_level(value: Any, where: str) -> int | None:
    """MATH levels come as 3, '3' or 'Level 3'; '?' / None (a few MATH problems) stay unknown."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bool):
        raise RmevalError(f"{where}: level {value!r} is not a MATH level")
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"\s*(?:level\s*)?(\d+)\s*", str(value), flags=re.IGNORECASE)
    if match:
        return int(match.group(1))
    if str(value).strip() in {"", "?"}:
        return None
    raise RmevalError(f"{where}: level {value!r} is not a MATH level (expected 1-5 or 'Level N')")


def _steps(value: Any, where: str) -> list[str]:
    if not isinstance(value, (list, tuple)) or not value:
        raise RmevalError(f"{where}: expected a non-empty list of solution steps, got {type(value).__name__}")
    steps = [str(step) for step in value]
    if any(not step.strip() for step in steps):
        raise RmevalError(f"{where}: contains an empty step")
    return steps


def solutions_from_records(records: Iterable[dict[str, Any]], source: str) -> list[Solution]:
    """Check RewardMATH records (problem, eval_solution, solution_type, ...) and turn them into Solutions."""
    solutions: list[Solution] = []
    seen_ids: dict[str, int] = {}
    for index, record in enumerate(records):
        where = f"{source}: row {index}"
        missing = [name for name in REWARDMATH_FIELDS if name not in record]
        if missing:
            raise RmevalError(f"{where}: missing field(s) {missing}")
        solution_id = str(record["id"])
        if solution_id in seen_ids:
            raise RmevalError(f"{where}: duplicate id {solution_id!r} (first seen in row {seen_ids[solution_id]})")
        seen_ids[solution_id] = index
        solution_type = str(record["solution_type"])
        if solution_type not in SOLUTION_TYPES:
            raise RmevalError(f"{where}: solution_type {solution_type!r} is not one of {list(SOLUTION_TYPES)}")
        problem = str(record["problem"] or "")
        if not problem.strip():
            raise RmevalError(f"{where}: empty problem")
        solutions.append(
            Solution(
                id=solution_id,
                problem_id=str(record["problem_id"]),
                problem=problem,
                answer=str(record.get("answer") or ""),
                steps=_steps(record["eval_solution"], f"{where}: eval_solution"),
                solution_type=solution_type,
                solution_reference=str(record["solution_reference"]),
                subject=canonical_subject(record["subject"], f"{where}: subject"),
                level=parse_level(record["level"], f"{where}: level"),
            )
        )
    _check_one_chosen_per_problem(solutions, source)
    return solutions


def _check_one_chosen_per_problem(solutions: list[Solution], source: str) -> None:
    chosen: dict[str, int] = {}
    for solution in solutions:
        chosen.setdefault(solution.problem_id, 0)
        chosen[solution.problem_id] += solution.solution_type == "chosen"
    bad = {problem: count for problem, count in chosen.items() if count != 1}
    if bad:
        first = sorted(bad.items())[:5]
        raise RmevalError(
            f"{source}: every problem needs exactly one chosen solution; "
            f"{len(bad)} problem(s) do not, e.g. (problem_id, n_chosen) {first}"
        )


def pairs_from_local_records(records: Iterable[dict[str, Any]], source: str) -> list[Pair]:
    """RewardBench math-prm pairs in the step-split layout of `rewardbench_math_prm_pairs.jsonl`."""
    pairs: list[Pair] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        where = f"{source}: row {index}"
        missing = [name for name in REWARDBENCH_LOCAL_FIELDS if name not in record]
        if missing:
            raise RmevalError(f"{where}: missing field(s) {missing}")
        pair_id = str(record.get("pair_id", record["problem_id"]))
        if pair_id in seen:
            raise RmevalError(f"{where}: duplicate pair id {pair_id!r}")
        seen.add(pair_id)
        pairs.append(
            Pair(
                pair_id=pair_id,
                problem_id=str(record["problem_id"]),
                problem=str(record["problem"]),
                chosen_steps=_steps(record["chosen_steps"], f"{where}: chosen_steps"),
                rejected_steps=_steps(record["rejected_steps"], f"{where}: rejected_steps"),
                subject=canonical_subject(record["subject"], f"{where}: subject"),
                level=parse_level(record["level"], f"{where}: level"),
            )
        )
    return pairs


def split_into_steps(text: str) -> list[str]:
    """RewardBench stores whole solutions; its math-prm solutions (from PRM800K) put one step per line."""
    return [line.strip() for line in str(text).split("\n") if line.strip()]


def pairs_from_rewardbench_rows(rows: Iterable[dict[str, Any]], source: str) -> list[Pair]:
    """Rows of `allenai/reward-bench` (prompt, chosen, rejected, subset, id), keeping subset math-prm.

    The hub's rows carry neither MATH subject nor level; they are left unknown ('' / None).
    """
    pairs: list[Pair] = []
    for index, row in enumerate(rows):
        if row.get("subset") != REWARDBENCH_SUBSET:
            continue
        where = f"{source}: row {index} (id {row.get('id')!r})"
        chosen, rejected = split_into_steps(row.get("chosen", "")), split_into_steps(row.get("rejected", ""))
        pairs.append(
            Pair(
                pair_id=str(row.get("id", index)),
                problem_id=str(row.get("id", index)),
                problem=str(row.get("prompt", "")),
                chosen_steps=_steps(chosen, f"{where}: chosen"),
                rejected_steps=_steps(rejected, f"{where}: rejected"),
                subject="",
                level=None,
            )
        )
    if not pairs:
        raise RmevalError(f"{source}: no rows with subset {REWARDBENCH_SUBSET!r}")
    return pairs


def _hf_rows(dataset_id: str, split: str | None, revision: str | None) -> list[dict[str, Any]]:
    """All rows of one split of a hub dataset (the only split when `split` is None)."""
    import datasets

    try:
        loaded = datasets.load_dataset(dataset_id, split=split, revision=revision)
    except Exception as error:  # network, auth, unknown split: say which dataset failed
        raise RmevalError(f"could not load Hugging Face dataset {dataset_id!r} (split {split!r}): {error}") from error
    if isinstance(loaded, datasets.DatasetDict):
        if len(loaded) != 1:
            raise RmevalError(
                f"Hugging Face dataset {dataset_id!r} has splits {sorted(loaded)}; name one (rewardmath.*_split)"
            )
        loaded = next(iter(loaded.values()))
    return loaded.to_list()


def load_rewardmath(source: str, path: str | None = None, split: str | None = None,
                    revision: str | None = None) -> list[Solution]:
    """RewardMATH solutions from the hub (`source='hf'`) or a local JSON / JSON-lines file."""
    if source == "hf":
        return solutions_from_records(_hf_rows(REWARDMATH_HF_ID, split, revision), f"hf:{REWARDMATH_HF_ID}")
    if source == "local":
        if not path:
            raise RmevalError("rewardmath.path: required when rewardmath.source is 'local'")
        return solutions_from_records(read_json_records(path), str(path))
    raise RmevalError(f"rewardmath.source: {source!r} is not one of ['hf', 'local']")


def load_rewardbench_math_prm(source: str, path: str | None = None,
                              split: str | None = schema_default("rewardmath.rewardbench_split"),
                              revision: str | None = None) -> list[Pair]:
    """RewardBench's math-prm pairs from the hub (subset filter) or the local step-split JSON-lines file."""
    if source == "hf":
        rows = _hf_rows(REWARDBENCH_HF_ID, split, revision)
        return pairs_from_rewardbench_rows(rows, f"hf:{REWARDBENCH_HF_ID}")
    if source == "local":
        if not path:
            raise RmevalError("rewardmath.rewardbench_path: required when rewardmath.rewardbench_source is 'local'")
        return pairs_from_local_records(read_json_records(path), str(path))
    raise RmevalError(f"rewardmath.rewardbench_source: {source!r} is not one of ['hf', 'local']")
