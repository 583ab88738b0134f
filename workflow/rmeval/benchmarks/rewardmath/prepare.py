"""`rmeval rewardmath-prepare`: RewardMATH split into one scoring table per MATH subject, plus RewardBench math-prm.

Writes, under --out:
- `{subject}.parquet` for each of MATH's seven subjects (slugs such as `intermediate_algebra`), always all
  seven so that the workflow's job list is known from the config; a subject without rows gets an empty table;
  columns id, prompt, steps, response, problem_id, solution_type, solution_reference, subject, level, answer;
- `rewardbench_math_prm.parquet`: each pair as two rows (role chosen / rejected) sharing a pair_id;
- `manifest.json`: sources, row counts and sha256 of every table.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.benchmarks.rewardmath.loading import Pair, Solution, load_rewardbench_math_prm, load_rewardmath
from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_STEM, SLUG_TO_SUBJECT, SUBJECT_SLUGS
from rmeval.config_check import schema_default
from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
from rmeval.io.hashing import sha256_file


def _solution_schema():
    import pyarrow as pa

    return pa.schema([
        ("id", pa.string()), ("prompt", pa.string()), ("steps", pa.list_(pa.string())), ("response", pa.string()),
        ("problem_id", pa.string()), ("solution_type", pa.string()), ("solution_reference", pa.string()),
        ("subject", pa.string()), ("level", pa.int64()), ("answer", pa.string()),
    ])


def _pair_schema():
    import pyarrow as pa

    return pa.schema([
        ("id", pa.string()), ("pair_id", pa.string()), ("role", pa.string()), ("prompt", pa.string()),
        ("steps", pa.list_(pa.string())), ("response", pa.string()), ("problem_id", pa.string()),
        ("subject", pa.string()), ("level", pa.int64()),
    ])


def solution_rows(solutions: list[Solution]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id, "prompt": s.problem, "steps": s.steps, "response": "\n".join(s.steps),
            "problem_id": s.problem_id, "solution_type": s.solution_type,
            "solution_reference": s.solution_reference, "subject": s.subject, "level": s.level, "answer": s.answer,
        }
        for s in solutions
    ]


def pair_rows(pairs: list[Pair]) -> list[dict[str, Any]]:
    rows = []
    for pair in pairs:
        for role, steps in (("chosen", pair.chosen_steps), ("rejected", pair.rejected_steps)):
            rows.append({
                "id": f"{pair.pair_id}:{role}", "pair_id": pair.pair_id, "role": role, "prompt": pair.problem,
                "steps": steps, "response": "\n".join(steps), "problem_id": pair.problem_id,
                "subject": pair.subject, "level": pair.level,
            })
    return rows


def write_rows(rows: list[dict[str, Any]], schema, path: Path) -> str:
    """Write rows with a fixed schema (so empty tables keep their columns); return the file's sha256."""
    import pyarrow as pa

    write_parquet_atomic(pa.Table.from_pylist(rows, schema=schema), path)
    return sha256_file(path)


def _file_sha256(path: str | None) -> str | None:
    if not path or not Path(path).is_file():
        return None
    return sha256_file(path)


def prepare(args: argparse.Namespace) -> dict[str, Any]:
    solutions = load_rewardmath(args.source, args.path, args.split, args.revision)
    pairs = (
        []
        if args.rewardbench_source == "none"
        else load_rewardbench_math_prm(args.rewardbench_source, args.rewardbench_path, args.rewardbench_split,
                                       args.rewardbench_revision)
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    by_subject: dict[str, list[Solution]] = {slug: [] for slug in SUBJECT_SLUGS}
    subject_to_slug = {subject: slug for slug, subject in SLUG_TO_SUBJECT.items()}
    for solution in solutions:
        by_subject[subject_to_slug[solution.subject]].append(solution)
    tables: dict[str, dict[str, Any]] = {}
    for slug, members in by_subject.items():
        sha = write_rows(solution_rows(members), _solution_schema(), out / f"{slug}.parquet")
        tables[slug] = {"rows": len(members), "problems": len({s.problem_id for s in members}), "sha256": sha}
    sha = write_rows(pair_rows(pairs), _pair_schema(), out / f"{REWARDBENCH_STEM}.parquet")
    tables[REWARDBENCH_STEM] = {"rows": 2 * len(pairs), "pairs": len(pairs), "sha256": sha}
    manifest = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "rewardmath": {"source": args.source, "path": args.path, "split": args.split, "revision": args.revision,
                       "input_sha256": _file_sha256(args.path), "rows": len(solutions),
                       "problems": len({s.problem_id for s in solutions})},
        "rewardbench_math_prm": {"source": args.rewardbench_source, "path": args.rewardbench_path,
                                 "split": args.rewardbench_split, "revision": args.rewardbench_revision,
                                 "input_sha256": _file_sha256(args.rewardbench_path), "pairs": len(pairs)},
        "tables": tables,
    }
    write_json_atomic(manifest, out / "manifest.json", sort_keys=False)
    return manifest


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardmath-prepare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", choices=["hf", "local"], required=True, help="where RewardMATH comes from")
    parser.add_argument("--path", help="local RewardMATH JSON / JSON-lines file (source local)")
    parser.add_argument("--split", default=schema_default("rewardmath.split"),
                        help="hub split of RewardMATH/RewardMATH (default: its only split)")
    parser.add_argument("--revision", default=schema_default("rewardmath.revision"),
                        help="hub revision (commit) of RewardMATH/RewardMATH")
    # A run by hand skips RewardBench unless asked (no download); the workflow passes rewardmath.rewardbench_source.
    parser.add_argument("--rewardbench-source", choices=["hf", "local", "none"], default="none",
                        help="where RewardBench math-prm comes from; none (the default here) skips it (an empty "
                             "table is written)")
    parser.add_argument("--rewardbench-path", help="local step-split math-prm pairs (JSON-lines)")
    parser.add_argument("--rewardbench-split", default=schema_default("rewardmath.rewardbench_split"),
                        help="hub split of allenai/reward-bench (default: %(default)s)")
    parser.add_argument("--rewardbench-revision", default=schema_default("rewardmath.rewardbench_revision"),
                        help="hub revision of allenai/reward-bench")
    parser.add_argument("--out", required=True, help="output folder (results/rewardmath/data)")
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    for name in ("path", "split", "revision", "rewardbench_path", "rewardbench_split", "rewardbench_revision"):
        if getattr(args, name) == "":
            setattr(args, name, None)  # Snakemake passes unset config keys as empty strings
    manifest = prepare(args)
    counts = ", ".join(f"{name} {info['rows']}" for name, info in manifest["tables"].items())
    print(f"rewardmath-prepare: wrote {args.out}: {counts}")
    return 0
