"""What the summary, the leaderboard figure and `rmeval run`'s answer say about which models are told apart: only
what the pairwise intervals say (issue 45). Not being separated does not carry from one pair to the next, so the
summary names pairs, never a group as one tie."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from rmeval.cli import main as rmeval_main
from rmeval.ranks import rank_intervals
from rmeval.run_command.answer import AnswerInputs, leaderboard_lines
from rmeval.run_outputs.compare.figure import separation_note
from rmeval.run_outputs.compare.summary import ordered_line, pair_relations, read_rows
from rmeval.run_outputs.summary import which_is_better


def _leaderboard_rows(values: dict[str, float], bounds: dict[tuple[str, str], tuple[float, float]]) -> list[dict]:
    """leaderboard.csv's rows as `rmeval compare` writes them (command.leaderboard_rows) from hand-made intervals."""
    ranks = rank_intervals(list(values), values, True, lambda a, b: bounds[(a, b)])
    return [{"model": r.model, "value": values[r.model], "rank": r.rank, "rank_low": r.rank_low,
             "rank_high": r.rank_high, "tied_with": "; ".join(r.tied_with), "baseline": False} for r in ranks]


def test_a_b_and_b_c_not_separated_while_a_is_better_than_c():
    values = {"A": 0.80, "B": 0.75, "C": 0.70}
    bounds = {("A", "B"): (-0.01, 0.11), ("B", "C"): (-0.02, 0.12), ("A", "C"): (0.03, 0.17)}
    rows = _leaderboard_rows(values, bounds)
    by_model = {row["model"]: row for row in rows}
    # tied_with keeps its meaning: the models this one is not separated from
    assert (by_model["A"]["tied_with"], by_model["B"]["tied_with"], by_model["C"]["tied_with"]) == ("B", "A; C", "B")
    assert pair_relations(rows) == ([("A", "B"), ("B", "C")], [("A", "C")])
    line = ordered_line("accuracy", rows)
    assert line == ("- **accuracy**, best first: A 0.800 (rank 1-2); B 0.750 (rank 1-3); C 0.700 (rank 2-3). "
                    "Pairs: A vs B, B vs C: not separated; A is better than C.")
    assert "cannot be told apart" not in line and "A, B, C" not in line
    assert separation_note(rows) == "not separated: A vs B, B vs C; every other pair separated"
    # `rmeval run`'s answer lists each model's own `tied_with` and says it is a relation of pairs
    text = [{**{key: str(value) for key, value in row.items()}, "benchmark": "b", "metric": "accuracy"}
            for row in rows]
    answer = leaderboard_lines(text, AnswerInputs(Path("."), [], list(values), "config.yaml", "snakemake"))
    assert answer[-1].endswith("pair by pair; two models tied with a third may still be separated from each other")
    assert [line.split()[0] for line in answer[-4:-1]] == ["A", "B", "C"]
    assert [line.endswith(tied) for line, tied in zip(answer[-4:-1], (" B", " A; C", " B"), strict=True)] == [True] * 3
    # every pair separated; a model without a value is in no pair
    apart = _leaderboard_rows({"A": 0.9, "B": 0.5, "C": 0.1},
                              {("A", "B"): (0.2, 0.6), ("B", "C"): (0.2, 0.6), ("A", "C"): (0.6, 1.0)})
    apart.append({"model": "D", "value": math.nan, "rank": math.nan, "rank_low": math.nan, "rank_high": math.nan,
                  "tied_with": "", "baseline": False})
    assert ordered_line("m", apart).endswith("D: no value. Pairs: every pair is separated: A is better than B, C; "
                                             "B is better than C.")
    assert separation_note(apart) == "every pair separated"


def _two_checkpoints(root: Path, problems: int = 100) -> None:
    """RewardMATH with two checkpoints whose rewards are equal except on one problem, which `late` gets right and
    `early` wrong: they disagree on one problem in a hundred."""
    records = []
    for problem in range(problems):
        for k in range(3):
            records.append({"problem": f"Problem {problem}", "answer": "1", "eval_solution": [f"s{k}", "end"],
                            "solution_reference": "human" if k == 0 else f"m{k}",
                            "solution_type": "chosen" if k == 0 else "rejected", "subject": "Algebra",
                            "level": 1, "problem_id": str(problem), "id": f"{problem}-{k}"})
    source = root / "rm.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert rmeval_main(["rewardmath-prepare", "--source", "local", "--path", str(source), "--rewardbench-source",
                        "none", "--out", str(root / "results/rewardmath/data")]) == 0
    rng = np.random.default_rng(11)
    late = {r["id"]: float(rng.standard_normal() + (0.8 if r["solution_type"] == "chosen" else 0)) for r in records}
    wrong = next(p for p in range(problems) if late[f"{p}-0"] > max(late[f"{p}-1"], late[f"{p}-2"]))
    early = {**late, f"{wrong}-0": min(late[f"{wrong}-1"], late[f"{wrong}-2"]) - 1.0}
    for model, rewards in (("early", early), ("late", late)):
        folder = root / "results/scores/rewardmath" / model
        folder.mkdir(parents=True)
        pd.DataFrame({"id": list(rewards), "reward": list(rewards.values())}).to_parquet(folder / "algebra.parquet")


def test_two_checkpoints_that_disagree_on_one_item_in_a_hundred(tmp_path):
    _two_checkpoints(tmp_path)
    assert rmeval_main(["compare", "--benchmark", "rewardmath", "--root", str(tmp_path)]) == 0
    tables = tmp_path / "results/tables"
    accuracy = next(r for r in read_rows(tables / "comparisons.csv") if r["metric"] == "accuracy")
    flipped = accuracy["model_a"] == "early"
    difference = -accuracy["difference"] if flipped else accuracy["difference"]
    assert difference == 1.0 and accuracy["note"].startswith("discordant")
    # McNemar on 1 vs 0 discordant: z = 1, p = 0.317; the interval holds both 0 and the 1 point seen (Newcombe's
    # method 10 gave (0, 0) on such checkpoints when no item was discordant)
    assert abs(accuracy["p_value"] - 0.3173) < 1e-4 and accuracy["ci_low"] < 0 < accuracy["ci_high"]
    board = [r for r in read_rows(tables / "leaderboard.csv") if r["metric"] == "accuracy"]
    assert {(r["model"], r["rank_low"], r["rank_high"]) for r in board} == {("late", 1, 2), ("early", 1, 2)}
    text = which_is_better(tmp_path, ["rewardmath"], 0.05, {})
    line = next(line for line in text.splitlines() if line.startswith("- **accuracy**"))
    assert line.endswith("(rank 1-2). Pairs: late vs early: not separated.")
    assert "cannot be told apart" not in text and "not carry from one pair to the next" in text
