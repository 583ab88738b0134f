"""`rmeval rewardmath-metrics` on the workflow's own score tables (hand-made here) and the figure drawn from them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks.rewardmath import cli_metrics, figures, prepare
from rmeval.errors import RmevalError

# problem_id -> (subject, level); four solutions each, the first one chosen.
PROBLEMS = {"10": ("Algebra", 1), "11": ("Algebra", 5), "12": ("Geometry", 3)}


def _prepared(tmp_path: Path) -> Path:
    records = []
    for problem_id, (subject, level) in PROBLEMS.items():
        for k in range(4):
            records.append({"problem": f"Problem {problem_id}", "answer": "1", "eval_solution": [f"s{k}a", f"s{k}b"],
                            "solution_reference": "human_to_GPT-4" if k == 0 else f"m{k}",
                            "solution_type": "chosen" if k == 0 else "rejected", "subject": subject,
                            "level": level, "problem_id": problem_id, "id": f"{problem_id}-{k}"})
    rm = tmp_path / "rm.jsonl"
    rm.write_text("".join(json.dumps(r) + "\n" for r in records))
    rb = tmp_path / "rb.jsonl"
    rb.write_text("".join(json.dumps({"problem_id": i, "problem": f"RB {i}", "subject": "Algebra", "level": 2,
                                      "chosen_steps": ["good"], "rejected_steps": ["bad", "worse"]}) + "\n"
                          for i in range(2)))
    data = tmp_path / "data"
    prepare.main(["--source", "local", "--path", str(rm), "--rewardbench-source", "local", "--rewardbench-path",
                  str(rb), "--out", str(data)])
    return data


# Scalar model: problem 10 solved; 11 tied with a rejected one (fails, rank 2); 12 ranked third.
SCALAR = {"10-0": 3.0, "10-1": 1.0, "10-2": 2.0, "10-3": 0.0,
          "11-0": 1.0, "11-1": 1.0, "11-2": 0.0, "11-3": -1.0,
          "12-0": 0.0, "12-1": 5.0, "12-2": 4.0, "12-3": -2.0}
# PRM: the chosen solutions have a weak first step and a strong last step.
STEPS = {sid: ([0.2, 0.99] if sid.endswith("-0") else [0.9, 0.5]) for sid in SCALAR}


def _write_scores(scores: Path, model: str, table: str, rows: list[dict], fmt: str = "parquet") -> None:
    folder = scores / model
    folder.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    if fmt == "csv":
        frame.to_csv(folder / f"{table}.csv", index=False)
    else:
        frame.to_parquet(folder / f"{table}.parquet")


def _scalar_rows(ids):
    return [{"id": i, "reward": SCALAR[i], "n_tokens": 10, "truncated": False} for i in ids]


def _prm_rows(ids, steps=STEPS):
    return [{"id": i, "reward": float(pd.Series(steps[i]).prod()), "n_tokens": 9, "truncated": False,
             "step_rewards": steps[i]} for i in ids]


def _ids(subject):
    return [i for i in SCALAR if PROBLEMS[i.split("-")[0]][0] == subject]


@pytest.fixture()
def scored(tmp_path):
    data = _prepared(tmp_path)
    scores = tmp_path / "scores"
    _write_scores(scores, "rm-scalar", "algebra", _scalar_rows(_ids("Algebra")))
    _write_scores(scores, "rm-scalar", "geometry", _scalar_rows(_ids("Geometry")), fmt="csv")
    _write_scores(scores, "rm-scalar", "rewardbench_math_prm", [
        {"id": "0:chosen", "reward": 1.0}, {"id": "0:rejected", "reward": 0.0},
        {"id": "1:chosen", "reward": 0.5}, {"id": "1:rejected", "reward": 0.5}])
    _write_scores(scores, "tiny-prm", "algebra", _prm_rows(_ids("Algebra")))
    _write_scores(scores, "tiny-prm", "geometry", _prm_rows(_ids("Geometry")))
    rb_steps = {"0:chosen": [0.9], "0:rejected": [0.95, 0.1], "1:chosen": [0.6], "1:rejected": [0.7, 0.8]}
    _write_scores(scores, "tiny-prm", "rewardbench_math_prm", _prm_rows(list(rb_steps), rb_steps))
    return data, scores


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_workflow_scores_metrics_and_figure(scored, tmp_path):
    data, scores = scored
    out = tmp_path / "tables"
    assert cli_metrics.main(["--scores", str(scores), "--data", str(data), "--out", str(out)]) == 0
    metrics = {(r["setup"], r["aggregation"]): r for r in _csv(out / "rewardmath_metrics.csv")}
    scalar = metrics["rm-scalar", "scalar"]
    assert scalar["n"] == "3"
    assert scalar["accuracy"] == "33.33"
    assert scalar["mrr"] == f"{100 * (1 + 1 / 2 + 1 / 3) / 3:.2f}"
    # PRM: prod 0.198 vs 0.45 (chosen last), min 0.2 vs 0.5 (last), last 0.99 vs 0.5 (first), for every problem.
    assert (metrics["tiny-prm", "prod"]["accuracy"], metrics["tiny-prm", "prod"]["mrr"]) == ("0.00", "25.00")
    assert (metrics["tiny-prm", "min"]["accuracy"], metrics["tiny-prm", "last"]["accuracy"]) == ("0.00", "100.00")
    assert {a for s, a in metrics if s == "tiny-prm"} == {"prod", "geo", "min", "mean", "last"}

    breakdown = _csv(out / "rewardmath_breakdown.csv")
    cells = {(r["setup"], r["by"], r["value"]): r for r in breakdown if r["aggregation"] in ("scalar", "last")}
    assert cells["rm-scalar", "subject", "Algebra"]["n"] == "2"
    assert cells["rm-scalar", "subject", "Algebra"]["accuracy"] == "50.00"
    assert cells["rm-scalar", "level", "3"]["mrr"] == "33.33"

    rewardbench = {(r["setup"], r["aggregation"]): r for r in _csv(out / "rewardbench_math_prm_accuracy.csv")}
    assert rewardbench["rm-scalar", "scalar"]["accuracy"] == "50.00"  # the second pair is a tie
    assert rewardbench["tiny-prm", "prod"]["accuracy"] == "100.00"  # 0.9 > 0.095, 0.6 > 0.56
    assert rewardbench["tiny-prm", "min"]["accuracy"] == "50.00"  # 0.9 > 0.1, 0.6 < 0.7
    side = {(r["model"], r["aggregation"]): r for r in _csv(out / "rewardmath_vs_rewardbench.csv")}
    assert side["tiny-prm", "last"]["rewardbench_accuracy"] == rewardbench["tiny-prm", "last"]["accuracy"]

    png, pdf = tmp_path / "fig" / "rm.png", tmp_path / "fig" / "rm.pdf"
    assert figures.main(["--table", str(out / "rewardmath_vs_rewardbench.csv"), "--png", str(png), "--pdf", str(pdf),
                         "--prm-aggregation", "min"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and pdf.read_bytes()[:5] == b"%PDF-"
    points = figures.plotted_points(figures.read_points(out / "rewardmath_vs_rewardbench.csv"), "min")
    models = [p for p in points if not p.is_baseline]
    assert sorted((p.model, p.kind, p.rewardbench) for p in models) == [("rm-scalar", "classifier", 50.0),
                                                                        ("tiny-prm", "PRM", 50.0)]
    # The baselines on the same prepared data are plotted too, as partial runs (4 pairs, 3 problems).
    assert {p.setup for p in points if p.is_baseline} == {"random", "fewest steps", "most steps",
                                                          "shortest solution", "longest solution"}
    assert not any(p.full_set for p in points)


def test_subject_selection_and_official_files_together(scored, tmp_path, shared_data):
    data, scores = scored
    out = tmp_path / "tables"
    official = shared_data / "rewardmath" / "results_rewardmath"
    cli_metrics.main(["--scores", str(scores), "--data", str(data), "--models", "rm-scalar", "--subjects", "algebra",
                      "--official", str(official), "--out", str(out)])
    metrics = {(r["setup"], r["aggregation"]): r for r in _csv(out / "rewardmath_metrics.csv")}
    assert metrics["rm-scalar", "scalar"]["n"] == "2"
    assert metrics["internlm2_reward", "scalar"]["accuracy"] == "37.27"
    assert ("tiny-prm", "prod") not in metrics


def test_missing_and_extra_scores_are_errors(scored, tmp_path):
    data, scores = scored
    args = ["--scores", str(scores), "--data", str(data), "--out", str(tmp_path / "t"), "--models", "rm-scalar"]
    (scores / "rm-scalar" / "geometry.csv").unlink()
    with pytest.raises(RmevalError, match=r"scores not found: .*rm-scalar/geometry"):
        cli_metrics.main(args)
    _write_scores(scores, "rm-scalar", "geometry", _scalar_rows(_ids("Geometry")[:-1]))
    with pytest.raises(RmevalError, match=r"1 solution\(s\) of .*geometry.parquet are not scored, e.g. \['12-3'\]"):
        cli_metrics.main(args)
    _write_scores(scores, "rm-scalar", "geometry", _scalar_rows(_ids("Geometry")) + [{"id": "zz", "reward": 1.0}])
    with pytest.raises(RmevalError, match=r"id\(s\) not in"):
        cli_metrics.main(args)
    rows = _scalar_rows(_ids("Geometry"))
    rows[1]["reward"] = float("nan")
    _write_scores(scores, "rm-scalar", "geometry", rows)
    with pytest.raises(RmevalError, match="id '12-1': reward: score nan"):
        cli_metrics.main(args)


def test_empty_step_list_and_missing_data(scored, tmp_path):
    data, scores = scored
    steps = dict(STEPS, **{"12-2": []})
    _write_scores(scores, "tiny-prm", "geometry", _prm_rows(_ids("Geometry"), steps))
    with pytest.raises(RmevalError, match="id '12-2': step_rewards: empty list"):
        cli_metrics.main(["--scores", str(scores), "--data", str(data), "--out", str(tmp_path / "t"),
                          "--models", "tiny-prm"])
    with pytest.raises(RmevalError, match="--scores needs --data"):
        cli_metrics.main(["--scores", str(scores), "--out", str(tmp_path / "t")])


def test_figure_without_rewardbench_scores_says_so(tmp_path):
    table = tmp_path / "side.csv"
    table.write_text("model,kind,aggregation,source,n_rewardmath,rewardmath_accuracy,rewardmath_mrr,n_rewardbench,"
                     "rewardbench_accuracy\njudge_pairwise,LLM judge,pairwise,workflow,483,20.00,40.00,,\n")
    assert len(figures.read_points(table)) == 1 and figures.plotted_points(figures.read_points(table), "prod") == []
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    assert figures.main(["--table", str(table), "--png", str(png), "--pdf", str(pdf)]) == 0
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0
    table.write_text("model,accuracy\nx,1\n")
    with pytest.raises(RmevalError, match="missing column"):
        figures.read_points(table)
