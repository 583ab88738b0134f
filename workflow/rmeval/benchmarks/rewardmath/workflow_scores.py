"""Read the workflow's own score tables (`rmeval score` output) against the prepared RewardMATH data.

Layout: `SCORES/{model}/{subject}.parquet` (or `.csv`) beside `DATA/{subject}.parquet`, for the seven
subject slugs, and `SCORES/{model}/rewardbench_math_prm.parquet` beside `DATA/rewardbench_math_prm.parquet`.
Score columns: id, reward; PRMs add step_rewards (a list per solution), aggregated here in all five ways.
LLM judges (`rmeval.models.judge`) add `rating` (direct; null when unparsable, the reward then being the lowest
rating) or `verdict` / `chosen_position` / `verdict_swapped` (pairwise: the chosen row has reward 0, each rejected
row -1 when the chosen solution won and +1 otherwise, a null verdict being a loss, as in the official evaluation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.rewardmath.aggregation import STEP_AGGREGATIONS, aggregate, check_step_scores
from rmeval.benchmarks.rewardmath.metrics import PairScores, ProblemScores, SetupScores, check_finite
from rmeval.benchmarks.rewardmath.official import PairSetup, ProblemInfo, normalise_problem
from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_STEM, SUBJECT_SLUGS
from rmeval.errors import RmevalError


def _read_table(path: Path):
    import pandas as pd

    if path.suffix == ".csv":
        return pd.read_csv(path)
    return pd.read_parquet(path)


def find_score_file(directory: Path, stem: str) -> Path | None:
    for suffix in (".parquet", ".csv"):
        candidate = directory / f"{stem}{suffix}"
        if candidate.is_file():
            return candidate
    return None


@dataclass(frozen=True)
class ScoredSolution:
    """One solution's score(s), joined to its prepared row."""

    row: dict[str, Any]
    reward: float | None
    steps: list[float] | None
    judge: dict[str, Any] | None = None  # rating / verdict, chosen_position, verdict_swapped of an LLM judge


def _join(data_path: Path, score_path: Path) -> list[ScoredSolution]:
    """Prepared rows with their scores; every prepared id must be scored exactly once, and nothing else."""
    data = _read_table(data_path)
    scores = _read_table(score_path)
    if "id" not in scores.columns:
        raise RmevalError(f"{score_path}: missing column 'id'")
    is_prm = "step_rewards" in scores.columns and scores["step_rewards"].notna().any()
    if not is_prm and "reward" not in scores.columns:
        raise RmevalError(f"{score_path}: needs a 'reward' column (or 'step_rewards' for a PRM)")
    score_ids = scores["id"].astype(str)
    duplicated = score_ids[score_ids.duplicated()]
    if len(duplicated):
        raise RmevalError(f"{score_path}: id {duplicated.iloc[0]!r} is scored more than once")
    by_id = dict(zip(score_ids, scores.to_dict("records"), strict=True))
    data_ids = data["id"].astype(str)
    missing = sorted(set(data_ids) - set(by_id))
    extra = sorted(set(by_id) - set(data_ids))
    if missing:
        raise RmevalError(f"{score_path}: {len(missing)} solution(s) of {data_path} are not scored, e.g. {missing[:3]}")
    if extra:
        raise RmevalError(f"{score_path}: {len(extra)} id(s) not in {data_path}, e.g. {extra[:3]}")
    joined = []
    for row in data.to_dict("records"):
        score = by_id[str(row["id"])]
        where = f"{score_path}: id {row['id']!r}"
        if is_prm:
            steps_value = score["step_rewards"]
            steps = check_step_scores(list(steps_value) if steps_value is not None else steps_value,
                                      f"{where}: step_rewards")
            joined.append(ScoredSolution(row, None, steps))
        else:
            judge = {key: _null(score[key]) for key in JUDGE_COLUMNS if key in score} or None
            joined.append(ScoredSolution(row, check_finite(score["reward"], f"{where}: reward"), None, judge))
    return joined


JUDGE_COLUMNS = ("rating", "verdict", "chosen_position", "verdict_swapped")


def _null(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and value != value) else value


def judge_mode(solutions: Sequence[ScoredSolution]) -> str:
    """classifier | PRM | judge (direct) | judge (pairwise), from the columns a model's score files carry."""
    first = solutions[0]
    if first.steps is not None:
        return "PRM"
    if first.judge is not None and "verdict" in first.judge:
        return "judge (pairwise)"
    if first.judge is not None and "rating" in first.judge:
        return "judge (direct)"
    return "classifier"


def _won(judge: dict[str, Any], both: bool) -> bool:
    position = judge.get("chosen_position")
    won = position is not None and judge.get("verdict") == position
    if both:
        other = {"A": "B", "B": "A"}.get(position)
        won = won and judge.get("verdict_swapped") == other
    return won


def _split_problem(problem_id: str, members: list[tuple[str, ScoredSolution]]
                   ) -> tuple[str, ScoredSolution, list[ScoredSolution]]:
    """(where, the chosen solution, the rejected ones) of one problem; exactly one solution must be chosen."""
    where = f"{members[0][0]}: problem_id {problem_id}"
    chosen = [solution for _, solution in members if solution.row["solution_type"] == "chosen"]
    if len(chosen) != 1:
        raise RmevalError(f"{where}: {len(chosen)} chosen solutions; expected exactly one")
    return where, chosen[0], [solution for _, solution in members if solution.row["solution_type"] != "chosen"]


def _pairwise_setups(model: str, by_problem: dict[str, list[tuple[str, ScoredSolution]]]) -> list[SetupScores]:
    """Chosen at 0, each rejected at -1 (beaten) or +1: the official pairwise accuracy and MRR. With both orders,
    a second row `pairwise-both` counts a comparison as won only when the chosen solution wins in both orders."""
    rejected_rows = [s for members in by_problem.values() for _, s in members if s.row["solution_type"] != "chosen"]
    both = any(s.judge and s.judge.get("verdict_swapped") is not None for s in rejected_rows)
    missing = sum(s.judge is None or s.judge.get("verdict") is None for s in rejected_rows)
    agreement = None
    if both:
        judged = [s.judge for s in rejected_rows if s.judge and s.judge.get("verdict") and s.judge.get("verdict_swapped")]
        agreement = 100.0 * sum(j["verdict"] != j["verdict_swapped"] for j in judged) / len(judged) if judged else None
    setups = []
    for aggregation, both_orders in [("pairwise", False), *([("pairwise-both", True)] if both else [])]:
        problems = []
        for problem_id, members in by_problem.items():
            where, chosen, others = _split_problem(problem_id, members)
            rejected = tuple(-1.0 if s.judge and _won(s.judge, both_orders) else 1.0 for s in others)
            problems.append(ProblemScores(where, 0.0, rejected, str(chosen.row["subject"]), _level(chosen.row["level"])))
        setups.append(SetupScores(model, aggregation, tuple(problems), n_missing_verdicts=missing,
                                  mode="judge (pairwise)", position_agreement=agreement))
    return setups


def _value(solution: ScoredSolution, aggregation: str, where: str) -> float:
    if aggregation == "scalar":
        assert solution.reward is not None
        return solution.reward
    assert solution.steps is not None
    return aggregate(solution.steps, aggregation, where)


def _level(value: Any) -> int | None:
    try:
        return None if value is None or value != value else int(value)
    except (TypeError, ValueError):
        return None


def read_model_rewardmath(model: str, scores_dir: Path, data_dir: Path,
                          subjects: Sequence[str] = SUBJECT_SLUGS) -> list[SetupScores]:
    """The given subjects of one model -> one SetupScores per aggregation (scalar, or the five PRM ones)."""
    solutions: list[tuple[str, ScoredSolution]] = []
    for slug in subjects:
        data_path = data_dir / f"{slug}.parquet"
        if not data_path.is_file():
            raise RmevalError(f"prepared data not found: {data_path} (run rmeval rewardmath-prepare)")
        score_path = find_score_file(scores_dir / model, slug)
        if score_path is None:
            if len(_read_table(data_path)) == 0:
                continue  # an empty subject needs no scores
            raise RmevalError(f"scores not found: {scores_dir / model / slug}.parquet (model {model!r})")
        solutions += [(str(score_path), solution) for solution in _join(data_path, score_path)]
    if not solutions:
        raise RmevalError(f"model {model!r}: no scored RewardMATH solutions under {scores_dir / model}")
    is_prm = solutions[0][1].steps is not None
    if any((solution.steps is not None) != is_prm for _, solution in solutions):
        raise RmevalError(f"model {model!r}: some subjects have step_rewards and some do not")
    by_problem: dict[str, list[tuple[str, ScoredSolution]]] = {}
    for source, solution in solutions:
        by_problem.setdefault(str(solution.row["problem_id"]), []).append((source, solution))
    mode = judge_mode([solution for _, solution in solutions])
    if any(judge_mode([solution]) != mode for _, solution in solutions):
        raise RmevalError(f"model {model!r}: its subjects were scored in different modes (judge columns differ)")
    if mode == "judge (pairwise)":
        return _pairwise_setups(model, by_problem)
    missing = sum(s.judge.get("rating") is None for _, s in solutions if s.judge) if mode == "judge (direct)" else 0
    setups = []
    for aggregation in STEP_AGGREGATIONS if is_prm else ("scalar",):
        problems = []
        for problem_id, members in by_problem.items():
            where, chosen, others = _split_problem(problem_id, members)
            rejected = tuple(_value(solution, aggregation, f"{where}: id {solution.row['id']!r}") for solution in others)
            problems.append(ProblemScores(
                where, _value(chosen, aggregation, f"{where}: chosen"), rejected,
                str(chosen.row["subject"]), _level(chosen.row["level"]),
            ))
        setups.append(SetupScores(model, aggregation, tuple(problems), n_missing_verdicts=missing, mode=mode))
    return setups


def read_model_rewardbench(model: str, scores_dir: Path, data_dir: Path) -> list[PairSetup]:
    """One model's RewardBench math-prm scores -> one PairSetup per aggregation; [] when not scored."""
    data_path = data_dir / f"{REWARDBENCH_STEM}.parquet"
    score_path = find_score_file(scores_dir / model, REWARDBENCH_STEM)
    if score_path is None or not data_path.is_file():
        return []
    solutions = _join(data_path, score_path)
    if not solutions:
        return []
    is_prm = solutions[0].steps is not None
    by_pair: dict[str, dict[str, ScoredSolution]] = {}
    for solution in solutions:
        roles = by_pair.setdefault(str(solution.row["pair_id"]), {})
        role = str(solution.row["role"])
        if role in roles:
            raise RmevalError(f"{data_path}: pair {solution.row['pair_id']!r} has two {role} rows")
        roles[role] = solution
    pairwise = judge_mode(solutions) == "judge (pairwise)"
    setups = []
    for aggregation in STEP_AGGREGATIONS if is_prm else ("pairwise",) if pairwise else ("scalar",):
        pairs = []
        for pair_id, roles in by_pair.items():
            where = f"{score_path}: pair {pair_id}"
            if set(roles) != {"chosen", "rejected"}:
                raise RmevalError(f"{where}: needs one chosen and one rejected row, has {sorted(roles)}")
            if pairwise:  # chosen 0 against -1 (beaten) / +1, as on RewardMATH
                pairs.append(PairScores(where, 0.0, -1.0 if _won(roles["rejected"].judge or {}, False) else 1.0))
                continue
            pairs.append(PairScores(where, _value(roles["chosen"], aggregation, where),
                                    _value(roles["rejected"], aggregation, where)))
        setups.append(PairSetup(model, aggregation, tuple(pairs)))
    return setups


def problem_info_from_data(data_dir: Path) -> dict[str, ProblemInfo]:
    """problem text -> subject/level from the prepared tables (used to break down official files)."""
    info: dict[str, ProblemInfo] = {}
    for slug in SUBJECT_SLUGS:  # all seven: official files cover every subject
        path = data_dir / f"{slug}.parquet"
        if path.is_file():
            for row in _read_table(path)[["prompt", "subject", "level"]].to_dict("records"):
                info[normalise_problem(row["prompt"])] = ProblemInfo(str(row["subject"]), _level(row["level"]))
    return info
