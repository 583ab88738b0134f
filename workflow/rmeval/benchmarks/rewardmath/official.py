"""Read result files in the official RewardMATH repository's format (kimsh0507/RewardMATH_official).

RewardMATH files (`results/RewardMATH/*.json`): a JSON list with one row per problem (rows are counted as
given, duplicated problems included), each with `problem`, `solution_reference` (the source of each
solution; the chosen one is `human_to_GPT-4`) and `score`, whose entries are
- numbers (classifier reward models, direct LLM judges) -> aggregation `scalar`;
- lists of step scores (PRMs) -> one table row per aggregation in `STEP_AGGREGATIONS`;
- 'A' / 'B' verdicts with a `chosen_position` list (pairwise LLM judges; only the nine rejected solutions
  are listed, each compared with the chosen one) -> aggregation `pairwise`. A null verdict (the judge gave
  none) counts as a loss, as in the official evaluation, and is counted in `n_missing_verdicts`; any other
  value is an error.

RewardBench math-prm files (`results/Rewardbench/*.json`) come in two layouts: one row per pair with
`solution_reference` ([chosen, rejected], chosen labelled `human_to_GPT-4` or `chosen`) and two scalar
`score`s; or, for PRMs, one row per solution with `problem_id`, `solution_type` and `output.step_scores`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rewardmath.aggregation import STEP_AGGREGATIONS, aggregate, check_step_scores
from rmeval.benchmarks.rewardmath.metrics import PairScores, ProblemScores, SetupScores, check_finite
from rmeval.errors import RmevalError

CHOSEN_REFERENCE = "human_to_GPT-4"
# The official direct LLM-judge files (scripts/generative_reward.sh saves `{SAVE_NAME}_reward.json`); every other
# scalar file is a classifier's. Pairwise judge files are known by their chosen_position.
OFFICIAL_DIRECT_JUDGES = frozenset({"chatgpt", "gpt4", "gpt4o", "opus", "sonnet-3-5", "llama3_8B", "llama3_70B",
                                    "prometheus_7B", "prometheus_8x7B"})
REWARDBENCH_CHOSEN_LABELS = (CHOSEN_REFERENCE, "chosen")
VERDICTS = ("A", "B")


@dataclass(frozen=True)
class ProblemInfo:
    subject: str | None
    level: int | None


def normalise_problem(text: str) -> str:
    return " ".join(str(text).split())


def load_json_list(path: Path) -> list[dict[str, Any]]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RmevalError(f"{path}: not valid JSON ({error})") from error
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise RmevalError(f"{path}: expected a JSON list of objects (one per problem)")
    if not rows:
        raise RmevalError(f"{path}: no rows")
    return rows


def _row_kind(row: dict[str, Any], where: str) -> str:
    if "chosen_position" in row:
        return "pairwise"
    entries = [entry for entry in row["score"] if entry is not None]
    if entries and all(isinstance(entry, (list, tuple)) for entry in entries):
        return "steps"
    if any(isinstance(entry, str) for entry in entries):
        raise RmevalError(f"{where}: score holds verdicts {entries[:3]!r} but the row has no chosen_position")
    return "scalar"


def _check_row(row: dict[str, Any], where: str) -> None:
    for key in ("solution_reference", "score"):
        if not isinstance(row.get(key), list):
            raise RmevalError(f"{where}: missing or non-list field {key!r}")
    if len(row["solution_reference"]) != len(row["score"]):
        raise RmevalError(
            f"{where}: {len(row['score'])} scores for {len(row['solution_reference'])} solution_reference entries"
        )


def _chosen_index(references: list[Any], labels: tuple[str, ...], where: str) -> int:
    positions = [index for index, reference in enumerate(references) if reference in labels]
    if len(positions) != 1:
        found = "no" if not positions else f"{len(positions)}"
        raise RmevalError(f"{where}: {found} chosen solution(s) (solution_reference {' or '.join(labels)}); "
                          f"expected exactly one among {references}")
    return positions[0]


def _pairwise_problem(row: dict[str, Any], where: str, info: ProblemInfo) -> tuple[ProblemScores, int]:
    """Verdicts -> scores: the chosen solution sits at 0, each rejected one at -1 (beaten) or +1 (not beaten).

    This keeps the official definitions: accuracy when every comparison is won, MRR 1 / (1 + losses).
    """
    positions = row["chosen_position"]
    if not isinstance(positions, list) or len(positions) != len(row["score"]):
        raise RmevalError(f"{where}: chosen_position must be a list as long as score ({len(row['score'])})")
    rejected: list[float] = []
    missing = 0
    for index, (verdict, position) in enumerate(zip(row["score"], positions, strict=True)):
        if position not in VERDICTS:
            raise RmevalError(f"{where}: chosen_position[{index}] = {position!r} is not 'A' or 'B'")
        if verdict is None:
            missing += 1  # no verdict: a loss, as in the official evaluation
        elif verdict not in VERDICTS:
            raise RmevalError(f"{where}: verdict score[{index}] = {verdict!r} is not 'A', 'B' or null")
        rejected.append(-1.0 if verdict == position else 1.0)
    if not rejected:
        raise RmevalError(f"{where}: no pairwise comparisons")
    problem = ProblemScores(where, 0.0, tuple(rejected), info.subject, info.level)
    return problem, missing


def _direct_problem(row: dict[str, Any], where: str, info: ProblemInfo, aggregation: str) -> ProblemScores:
    chosen_at = _chosen_index(row["solution_reference"], (CHOSEN_REFERENCE,), where)
    values = []
    for index, entry in enumerate(row["score"]):
        entry_where = f"{where}: score[{index}]"
        if aggregation == "scalar":
            values.append(check_finite(entry, entry_where))
        else:
            values.append(aggregate(check_step_scores(entry, entry_where), aggregation, entry_where))
    rejected = tuple(value for index, value in enumerate(values) if index != chosen_at)
    return ProblemScores(where, values[chosen_at], rejected, info.subject, info.level)


def read_rewardmath_file(path: str | Path, problem_info: dict[str, ProblemInfo] | None = None) -> list[SetupScores]:
    """One official RewardMATH result file -> one SetupScores per aggregation (setup = the file's stem)."""
    path = Path(path)
    rows = load_json_list(path)
    kinds = set()
    for index, row in enumerate(rows):
        _check_row(row, f"{path}: row {index}")
        kinds.add(_row_kind(row, f"{path}: row {index}"))
    if len(kinds) != 1:
        raise RmevalError(f"{path}: rows mix score kinds {sorted(kinds)}")
    kind = kinds.pop()
    unknown = ProblemInfo(None, None)

    def info(row: dict[str, Any]) -> ProblemInfo:
        if problem_info is None:
            return unknown
        return problem_info.get(normalise_problem(row.get("problem", "")), unknown)

    if kind == "pairwise":
        problems, missing = [], 0
        for index, row in enumerate(rows):
            problem, n_missing = _pairwise_problem(row, f"{path}: row {index}", info(row))
            problems.append(problem)
            missing += n_missing
        return [SetupScores(path.stem, "pairwise", tuple(problems), n_missing_verdicts=missing,
                            mode="judge (pairwise)")]
    aggregations = ("scalar",) if kind == "scalar" else STEP_AGGREGATIONS
    if kind == "steps":
        mode = "PRM"
    else:
        mode = "judge (direct)" if path.stem.removesuffix("_reward") in OFFICIAL_DIRECT_JUDGES else "classifier"
    return [
        SetupScores(
            path.stem,
            aggregation,
            tuple(_direct_problem(row, f"{path}: row {index}", info(row), aggregation) for index, row in enumerate(rows)),
            mode=mode,
        )
        for aggregation in aggregations
    ]


@dataclass(frozen=True)
class PairSetup:
    setup: str
    aggregation: str
    pairs: tuple[PairScores, ...]


def _rewardbench_pair_rows(path: Path, rows: list[dict[str, Any]]) -> list[PairSetup]:
    pairs = []
    for index, row in enumerate(rows):
        where = f"{path}: row {index}"
        _check_row(row, where)
        if len(row["score"]) != 2:
            raise RmevalError(f"{where}: a RewardBench row holds exactly two scores (chosen, rejected)")
        chosen_at = _chosen_index(row["solution_reference"], REWARDBENCH_CHOSEN_LABELS, where)
        chosen = check_finite(row["score"][chosen_at], f"{where}: chosen score")
        rejected = check_finite(row["score"][1 - chosen_at], f"{where}: rejected score")
        pairs.append(PairScores(where, chosen, rejected))
    return [PairSetup(path.stem, "scalar", tuple(pairs))]


def _rewardbench_step_rows(path: Path, rows: list[dict[str, Any]]) -> list[PairSetup]:
    by_problem: dict[str, dict[str, tuple[str, list[float]]]] = {}
    for index, row in enumerate(rows):
        where = f"{path}: row {index}"
        role = row.get("solution_type")
        if role not in ("chosen", "rejected"):
            raise RmevalError(f"{where}: solution_type {role!r} is not 'chosen' or 'rejected'")
        output = row.get("output")
        if not isinstance(output, dict) or "step_scores" not in output:
            raise RmevalError(f"{where}: missing output.step_scores")
        problem = by_problem.setdefault(str(row.get("problem_id")), {})
        if role in problem:
            raise RmevalError(f"{where}: a second {role} solution for problem_id {row.get('problem_id')!r}")
        problem[role] = (where, check_step_scores(output["step_scores"], f"{where}: output.step_scores"))
    for problem_id, roles in by_problem.items():
        if set(roles) != {"chosen", "rejected"}:
            raise RmevalError(f"{path}: problem_id {problem_id!r} lacks a {'chosen' if 'chosen' not in roles else 'rejected'} solution")
    setups = []
    for aggregation in STEP_AGGREGATIONS:
        pairs = []
        for problem_id, roles in by_problem.items():
            (chosen_where, chosen_steps), (rejected_where, rejected_steps) = roles["chosen"], roles["rejected"]
            pairs.append(PairScores(
                f"{path}: problem_id {problem_id}",
                aggregate(chosen_steps, aggregation, chosen_where),
                aggregate(rejected_steps, aggregation, rejected_where),
            ))
        setups.append(PairSetup(path.stem, aggregation, tuple(pairs)))
    return setups


def read_rewardbench_file(path: str | Path) -> list[PairSetup]:
    """One official RewardBench math-prm result file -> one PairSetup per aggregation."""
    path = Path(path)
    rows = load_json_list(path)
    if "output" in rows[0] or "solution_type" in rows[0]:
        return _rewardbench_step_rows(path, rows)
    return _rewardbench_pair_rows(path, rows)


def official_files(directory: str | Path) -> list[Path]:
    directory = Path(directory)
    if not directory.is_dir():
        raise RmevalError(f"official results folder not found: {directory}")
    files = sorted(directory.glob("*.json"))
    if not files:
        raise RmevalError(f"{directory}: no *.json result files")
    return files


# The official repository names one model differently in its two result folders
# (`grm_gemma_reward.json` vs `rewardbench_GRM_Gemma_2B.json`); these keys join them.
_OFFICIAL_NAME_ALIASES = {"grmgemma2b": "grmgemma", "grmllama38b": "grmllama3", "skyworkllama318b": "skyworkllama3"}


def model_key(setup: str) -> str:
    """A name both folders agree on: 'rewardbench_Eurus-RM' and 'Eurus-RM_reward' -> 'eurusrm'."""
    name = re.sub(r"^rewardbench_", "", setup, flags=re.IGNORECASE)
    name = re.sub(r"_reward$", "", name, flags=re.IGNORECASE)
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    return _OFFICIAL_NAME_ALIASES.get(key, key)


def load_problem_info(path: str | Path) -> dict[str, ProblemInfo]:
    """problem text -> (subject, level), from any JSON / JSON-lines file with problem, subject and level.

    Rows whose subject is null are skipped; problems not found here are left out of the breakdowns only.
    """
    from rmeval.benchmarks.rewardmath.loading import canonical_subject, parse_level, read_json_records

    info: dict[str, ProblemInfo] = {}
    for index, record in enumerate(read_json_records(path)):
        where = f"{path}: row {index}"
        if "problem" not in record or "subject" not in record:
            raise RmevalError(f"{where}: needs fields problem and subject (and level)")
        if record["subject"] is None:
            continue  # an unmatched problem: it stays out of the breakdowns
        info[normalise_problem(record["problem"])] = ProblemInfo(
            canonical_subject(record["subject"], where), parse_level(record.get("level"), where)
        )
    return info
