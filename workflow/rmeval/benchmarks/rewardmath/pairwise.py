"""Inputs and outputs of pairwise LLM judges on RewardMATH.

`rmeval rewardmath-positions`: the prepared tables plus a `chosen_position` column ('A' / 'B' on each rejected
row: where the chosen solution is shown when a pairwise judge compares the two). The official protocol
(kimsh0507/RewardMATH_official, `dataset/benchmark/RewardMATH_pairwise.json`; the hub's RewardMATH/RewardMATH_pairwise)
records one position per (problem, rejected solution); they are joined here by problem text and
`solution_reference`. Sources: a local file in that layout (one row per comparison) or in the official result
layout (`*_pairwise_reward.json`: per problem, lists of solution_reference and chosen_position), `hf`, or
`seeded` (A / B from a hash of the row id). RewardBench math-prm has no recorded positions: its pairs are always
seeded. `positions.json` says how many positions were recorded and how many seeded.

`rmeval rewardmath-export`: one model's workflow scores in the official result-file layout (`results/RewardMATH/
*.json`): per problem, `problem`, `solution_reference` and `score` (a number, a list of step scores, or for a
pairwise judge the nine verdicts with `chosen_position`), so that `rmeval rewardmath-metrics --official` reads them
unchanged.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.benchmarks.rewardmath.official import normalise_problem
from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_STEM, SUBJECT_SLUGS
from rmeval.errors import RmevalError

PAIRWISE_HF_ID = "RewardMATH/RewardMATH_pairwise"


def recorded_positions(records: list[dict[str, Any]], source: str) -> dict[tuple[str, str], str]:
    """(normalised problem, solution_reference) -> chosen_position, from either official layout."""
    positions: dict[tuple[str, str], str] = {}
    for index, record in enumerate(records):
        where = f"{source}: row {index}"
        if not {"problem", "solution_reference", "chosen_position"} <= set(record):
            raise RmevalError(f"{where}: needs problem, solution_reference and chosen_position")
        references, chosen = record["solution_reference"], record["chosen_position"]
        if isinstance(references, list) != isinstance(chosen, list):
            raise RmevalError(f"{where}: solution_reference and chosen_position must both be lists or both not")
        if not isinstance(references, list):
            references, chosen = [references], [chosen]
        if len(references) != len(chosen):
            raise RmevalError(f"{where}: {len(chosen)} chosen_position entries for {len(references)} solutions")
        problem = normalise_problem(record["problem"])
        for reference, position in zip(references, chosen, strict=True):
            if position not in ("A", "B"):
                raise RmevalError(f"{where}: chosen_position {position!r} is not A or B")
            positions.setdefault((problem, str(reference)), position)  # a duplicated problem keeps its first
    return positions


def _load_positions(source: str) -> tuple[dict[tuple[str, str], str], str]:
    if source == "seeded":
        return {}, "seeded"
    if source == "hf":
        from rmeval.benchmarks.rewardmath.loading import _hf_rows

        return recorded_positions(_hf_rows(PAIRWISE_HF_ID, None, None), f"hf:{PAIRWISE_HF_ID}"), f"hf:{PAIRWISE_HF_ID}"
    from rmeval.benchmarks.rewardmath.loading import read_json_records

    return recorded_positions(read_json_records(source), source), source


def add_positions(data_dir: Path, out_dir: Path, source: str, tables: list[str]) -> dict[str, Any]:
    import pandas as pd

    from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
    from rmeval.models.judge import seeded_position

    positions, described = _load_positions(source)
    counts: dict[str, dict[str, int]] = {}
    for stem in tables:
        path = data_dir / f"{stem}.parquet"
        if not path.is_file():
            raise RmevalError(f"prepared data not found: {path} (run rmeval rewardmath-prepare)")
        table = pd.read_parquet(path)
        column: list[str | None] = []
        recorded = seeded = 0
        missing: list[str] = []
        rewardmath = stem != REWARDBENCH_STEM
        for row in table.to_dict("records"):
            role = row.get("solution_type") if rewardmath else row.get("role")
            if role != "rejected":
                column.append(None)
                continue
            found = positions.get((normalise_problem(row["prompt"]), str(row.get("solution_reference"))))
            if found is not None and rewardmath:
                column.append(found)
                recorded += 1
            elif source == "seeded" or not rewardmath:
                column.append(seeded_position(str(row["id"])))
                seeded += 1
            else:
                missing.append(str(row["id"]))
                column.append(None)
        if missing:
            raise RmevalError(f"{described}: no recorded chosen_position for {len(missing)} rejected solution(s) of "
                              f"{path}, e.g. {missing[:3]}; give the matching pairwise file, or "
                              f"rewardmath.pairwise_positions: seeded")
        write_parquet_atomic(table.assign(chosen_position=column), out_dir / f"{stem}.parquet")
        counts[stem] = {"recorded": recorded, "seeded": seeded}
    summary = {"source": described, "tables": counts}
    write_json_atomic(summary, out_dir / "positions.json")
    return summary


# --- export in the official layout --------------------------------------------------------------------
def export_official(model: str, scores_dir: Path, data_dir: Path, subjects: list[str]) -> list[dict[str, Any]]:
    """One model's RewardMATH scores as the official result file's rows (one per problem)."""
    import pandas as pd

    from rmeval.benchmarks.rewardmath.workflow_scores import find_score_file

    rows: list[dict[str, Any]] = []
    for slug in subjects:
        data = pd.read_parquet(data_dir / f"{slug}.parquet")
        path = find_score_file(scores_dir / model, slug)
        if path is None:
            if len(data) == 0:
                continue
            raise RmevalError(f"scores not found: {scores_dir / model / slug}.parquet (model {model!r})")
        scores = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
        by_id = {str(r["id"]): r for r in scores.to_dict("records")}
        missing = sorted(set(data["id"].astype(str)) - set(by_id))
        if missing:
            raise RmevalError(f"{path}: {len(missing)} solution(s) of the prepared table are not scored, e.g. {missing[:3]}")
        pairwise = "verdict" in scores.columns
        for problem_id, members in data.groupby("problem_id", sort=False):
            members = members.to_dict("records")
            if pairwise:
                rejected = [m for m in members if m["solution_type"] != "chosen"]
                rows.append({
                    "problem": members[0]["prompt"],
                    "solution_reference": [m["solution_reference"] for m in rejected],
                    "score": [_verdict(by_id[str(m["id"])]["verdict"]) for m in rejected],
                    "chosen_position": [by_id[str(m["id"])]["chosen_position"] for m in rejected],
                    "problem_id": str(problem_id),
                })
                continue
            score_of = (lambda r: [float(v) for v in r["step_rewards"]]) if "step_rewards" in scores.columns and \
                scores["step_rewards"].notna().any() else (lambda r: float(r["reward"]))
            rows.append({
                "problem": members[0]["prompt"],
                "solution_reference": [m["solution_reference"] for m in members],
                "score": [score_of(by_id[str(m["id"])]) for m in members],
                "problem_id": str(problem_id),
            })
    if not rows:
        raise RmevalError(f"model {model!r}: nothing to export under {scores_dir / model}")
    return rows


def _verdict(value: Any) -> str | None:
    return value if isinstance(value, str) and value in ("A", "B") else None


# --- command lines --------------------------------------------------------------------------------------
def positions_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardmath-positions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the prepared data folder of rmeval rewardmath-prepare")
    parser.add_argument("--positions", required=True,
                        help="hf, seeded, or a local pairwise file (benchmark or result layout)")
    parser.add_argument("--tables", nargs="+", default=[*SUBJECT_SLUGS, REWARDBENCH_STEM],
                        help="table stems to write (default: all seven subjects and RewardBench math-prm)")
    parser.add_argument("--out", required=True, help="output folder")
    cli_settings.add_settings_argument(parser)
    return parser


def positions_main(argv: list[str]) -> int:
    args = cli_settings.parse_args(positions_parser(), argv)
    summary = add_positions(Path(args.data), Path(args.out), args.positions, list(args.tables))
    totals = {k: sum(t[k] for t in summary["tables"].values()) for k in ("recorded", "seeded")}
    print(f"rewardmath-positions: {summary['source']}: {totals['recorded']} recorded, {totals['seeded']} seeded "
          f"-> {args.out}")
    return 0


def export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardmath-export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--scores", required=True, help="the workflow's score folder: {model}/{subject}.parquet")
    parser.add_argument("--data", required=True, help="the prepared data folder")
    parser.add_argument("--subjects", nargs="+", default=list(SUBJECT_SLUGS), choices=list(SUBJECT_SLUGS),
                        metavar="SUBJECT")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    cli_settings.add_settings_argument(parser)
    return parser


def export_main(argv: list[str]) -> int:
    args = cli_settings.parse_args(export_parser(), argv)
    from rmeval.io.atomic import write_json_atomic

    rows = export_official(args.model, Path(args.scores), Path(args.data), list(args.subjects))
    out = Path(args.out)
    write_json_atomic(rows, out)
    print(f"rewardmath-export: {args.model}: {len(rows)} problems -> {out}")
    return 0
