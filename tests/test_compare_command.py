"""`rmeval compare` on score folders (no Snakemake run): the tables' exact columns, each benchmark's values equal to
its own tables' rules (recomputed here independently), pairing by id / row / problem, `--baseline` and `--pairs`,
and the extreme but legal inputs through to the summary: one model (nothing to compare), identical models
(difference 0, p = 1), a model that failed one benchmark, and a baseline alone."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.rewardbench.compare import resample_counts, ties_arrays, ties_scores
from rmeval.benchmarks.rewardbench.official import SECTIONS
from rmeval.benchmarks.rewardbench.scoring import TiesRow, best_of_n, section_scores, ties_components
from rmeval.cli import main as rmeval_main
from rmeval.run_outputs.compare.parts import COMPARISON_COLUMNS, LEADERBOARD_COLUMNS
from rmeval.run_outputs.summary import which_is_better
from workflow_helpers import REPO_ROOT

GROUPS = ("alpha", "beta", "gamma")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _header(path: Path) -> list[str]:
    return path.read_text().splitlines()[0].split(",")


def _fairness_folder(root: Path, models: dict[str, tuple[float, float, float]], n: int = 60, seed: int = 0) -> Path:
    """{model}/{group}.csv with ids p<group>-<i>, rows in a shuffled order per model (pairing is by id)."""
    rng = np.random.default_rng(seed)
    noise = {group: rng.standard_normal(n) for group in GROUPS}
    scores = root / "scores"
    for model, shifts in models.items():
        for group, shift in zip(GROUPS, shifts, strict=True):
            folder = scores / model
            folder.mkdir(parents=True, exist_ok=True)
            own = 0.6 * noise[group] + 0.8 * np.random.default_rng(abs(hash((model, group))) % 2**32).standard_normal(n)
            frame = pd.DataFrame({"id": [f"p{group}-{i}" for i in range(n)], "reward": own + shift})
            frame.sample(frac=1.0, random_state=1).to_csv(folder / f"{group}.csv", index=False)
    return scores


def _compare(*argv: str) -> int:
    return rmeval_main(["compare", *argv])


def test_fairness_on_a_plain_score_folder(tmp_path):
    scores = _fairness_folder(tmp_path, {"fair": (0, 0, 0), "unfair": (0, 0.8, 1.6), "mild": (0, 0.1, 0.2)})
    # `copy` is `fair` with its rows in another order: identical models
    (scores / "copy").mkdir()
    for group in GROUPS:
        pd.read_csv(scores / "fair" / f"{group}.csv").iloc[::-1].to_csv(scores / "copy" / f"{group}.csv", index=False)
    out = tmp_path / "out"
    assert _compare("--benchmark", "fairness", "--scores", str(scores), "--out", str(out)) == 0
    assert _header(out / "comparisons.csv") == COMPARISON_COLUMNS
    assert _header(out / "leaderboard.csv") == LEADERBOARD_COLUMNS
    rows = _rows(out / "comparisons.csv")
    assert len(rows) == 6 * 2 and {r["metric"] for r in rows} == {"scale_free_gap", "cohens_f"}
    same = [r for r in rows if {r["model_a"], r["model_b"]} == {"copy", "fair"}]
    assert all(float(r["difference"]) == 0 and float(r["p_value"]) == 1 for r in same)
    gap = {(r["model_a"], r["model_b"]): r for r in rows if r["metric"] == "scale_free_gap"}
    assert float(gap[("fair", "unfair")]["difference"]) < 0 and float(gap[("fair", "unfair")]["p_adjusted"]) < 0.05
    # value = the model's scale-free gap on its papers, as Table 7 defines it
    frames = {g: pd.read_csv(scores / "unfair" / f"{g}.csv")["reward"] for g in GROUPS}
    pooled = math.sqrt(sum(((f - f.mean()) ** 2).sum() for f in frames.values()) / (3 * 60 - 3))
    means = [f.mean() for f in frames.values()]
    assert float(gap[("fair", "unfair")]["value_b"]) == pytest.approx((max(means) - min(means)) / pooled, rel=1e-9)
    board = {(r["metric"], r["model"]): r for r in _rows(out / "leaderboard.csv")}
    assert board[("scale_free_gap", "unfair")]["rank"] == "4" and board[("scale_free_gap", "unfair")]["rank_low"] == "4"
    assert board[("scale_free_gap", "fair")]["baseline"] == "False"
    assert (out / "comparisons.tex").exists()
    assert rmeval_main(["compare-figure", "--leaderboard", str(out / "leaderboard.csv"), "--out", str(out)]) == 0
    assert (out / "fig_leaderboard.png").read_bytes()[:4] == b"\x89PNG" and (out / "fig_leaderboard.pdf").exists()


def test_baseline_and_pairs_choose_the_rows_and_unknown_models_are_errors(tmp_path, capsys):
    scores = _fairness_folder(tmp_path, {"ckpt-800": (0, 0.3, 0.6), "ckpt-1200": (0, 0.2, 0.4),
                                         "ckpt-1600": (0, 0.1, 0.2)})
    out = tmp_path / "out"
    assert _compare("--benchmark", "fairness", "--scores", str(scores), "--out", str(out),
                    "--pairs", "ckpt-1200:ckpt-800,ckpt-1600:ckpt-1200") == 0
    pairs = [(r["model_a"], r["model_b"]) for r in _rows(out / "comparisons.csv") if r["metric"] == "cohens_f"]
    assert pairs == [("ckpt-1200", "ckpt-800"), ("ckpt-1600", "ckpt-1200")]
    assert _compare("--benchmark", "fairness", "--scores", str(scores), "--out", str(out),
                    "--baseline", "ckpt-800") == 0
    pairs = [(r["model_a"], r["model_b"]) for r in _rows(out / "comparisons.csv") if r["metric"] == "cohens_f"]
    assert pairs == [("ckpt-1200", "ckpt-800"), ("ckpt-1600", "ckpt-800")]
    # the leaderboard ranks every model whatever is compared
    assert len(_rows(out / "leaderboard.csv")) == 6
    assert _compare("--benchmark", "fairness", "--scores", str(scores), "--out", str(out), "--baseline", "nope") == 2
    assert "no benchmark of this run has scores of nope" in capsys.readouterr().err
    assert _compare("--benchmark", "fairness", "--scores", str(scores), "--pairs", "a:a") == 2


def test_one_model_a_failed_model_and_a_baseline_alone_run_through_to_the_summary(tmp_path):
    scores = _fairness_folder(tmp_path, {"only": (0, 0.2, 0.4), "broken": (0, 0, 0)})
    (scores / "broken" / "gamma.csv").unlink()  # failed on one group: left out, with a note
    out = tmp_path / "results" / "tables"
    assert _compare("--benchmark", "fairness", "--scores", str(scores), "--out", str(out),
                    "--root", str(tmp_path)) == 0
    assert _rows(out / "comparisons.csv") == []
    board = _rows(out / "leaderboard.csv")
    assert [(r["model"], r["rank"], r["rank_low"], r["rank_high"]) for r in board] == [("only", "1", "1", "1")] * 2
    note = (out / "comparisons.md").read_text()
    assert "broken left out: no scores of group(s) gamma" in note and "nothing to compare" in note
    text = which_is_better(tmp_path, ["fairness"], 0.05, {})
    assert "Only one model (only) has scores here: nothing to compare." in text
    # the same model as a trivial length baseline, alone: no real model to beat it
    assert _compare("--benchmark", "fairness", "--scores", str(scores), "--out", str(out), "--root", str(tmp_path),
                    "--baseline-models", "only=length") == 0
    assert _rows(out / "leaderboard.csv")[0]["baseline"] == "True"
    text = which_is_better(tmp_path, ["fairness"], 0.05, {"only": "length"})
    assert "only (baseline)" not in text or "No real model is in this run" in text
    assert "No real model is in this run, only baselines: nothing to beat." in text


def _prepare_rewardbench(root: Path, version: str) -> pd.DataFrame:
    data = root / f"results/{version}/data/{version}.parquet"
    assert rmeval_main(["rewardbench-prepare", "--version", version, "--source", "local", "--path",
                        str(REPO_ROOT / f".test/rewardbench/data/{version}.jsonl"), "--out", str(data)]) == 0
    return pd.read_parquet(data)


def _score(root: Path, version: str, model: str, rewards) -> None:
    folder = root / f"results/scores/{version}/{model}"
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"id": rewards.index, "reward": rewards.to_numpy(dtype=float)}).to_parquet(folder / f"{version}.parquet")


def test_rewardbench_length_rewards_and_official_sections(tmp_path):
    """A reward = the response's characters (the length baseline): each subset's accuracy is the share of pairs with
    len(chosen) > len(rejected), a tie counting 0 as run_rm.py's `>`, computed here from the texts; sections and
    overall are the official weighted ones."""
    data = _prepare_rewardbench(tmp_path, "rewardbench")
    length = pd.Series(data["response"].str.len().to_numpy(), index=data["id"])
    rng = np.random.default_rng(3)
    _score(tmp_path, "rewardbench", "length", length)
    _score(tmp_path, "rewardbench", "random", pd.Series(rng.standard_normal(len(data)), index=data["id"]))
    assert _compare("--benchmark", "rewardbench", "--root", str(tmp_path), "--baseline-models", "length=length") == 0
    rows = _rows(tmp_path / "results/tables/comparisons.csv")
    by_metric = {r["metric"]: r for r in rows}
    chosen = data[data["is_chosen"]].set_index("row_id")["response"].str.len()
    rejected = data[~data["is_chosen"]].set_index("row_id")["response"].str.len()
    subsets = data.drop_duplicates("row_id").set_index("row_id")["subset"]
    expected = {}
    for subset in subsets.unique():
        ids = subsets.index[subsets == subset]
        expected[subset] = float((chosen[ids] > rejected[ids]).mean())
        assert float(by_metric[f"subset:{subset}"]["value_a"]) == pytest.approx(100 * expected[subset])
    official = section_scores(expected)
    for section in SECTIONS:
        if any(s in expected for s in SECTIONS[section]):
            assert float(by_metric[f"section:{section}"]["value_a"]) == pytest.approx(100 * official[section])
    assert float(by_metric["overall"]["value_a"]) == pytest.approx(100 * official["Overall"])
    assert by_metric["subset:alpacaeval-easy"]["test"] == "McNemar (score)"
    board = _rows(tmp_path / "results/tables/leaderboard.csv")
    assert [r["metric"] for r in board] == ["overall", "overall"]
    assert {r["model"]: r["baseline"] for r in board} == {"length": "True", "random": "False"}
    text = which_is_better(tmp_path, ["rewardbench"], 0.05, {"length": "length"})
    assert "### Against the length baseline (length)" in text
    assert (f"- random against length (Holm-adjusted p, significant below 0.05): rewardbench: significantly better "
            f"than length on 0 of its {len(expected)} subsets.") in text
    # 7 of the 23 official subsets: the Overall is marked as partial wherever it appears (issue 46)
    assert all(row["note"].startswith("† partial run: 7 of 23 subsets") for row in board)
    overall = next(line for line in text.splitlines() if line.startswith("- **overall**, best first:"))
    assert overall.count(" † (rank") == 2 and "† partial run: 7 of 23 subsets; its Overall is not the official" in overall


def test_rewardbench2_subsets_and_ties(tmp_path):
    data = _prepare_rewardbench(tmp_path, "rewardbench2")
    rng = np.random.default_rng(4)
    rewards = {m: pd.Series(rng.standard_normal(len(data)), index=data["id"]) for m in ("m1", "m2")}
    for model, series in rewards.items():
        _score(tmp_path, "rewardbench2", model, series)
    assert _compare("--benchmark", "rewardbench2", "--root", str(tmp_path), "--bootstrap", "300") == 0
    rows = {r["metric"]: r for r in _rows(tmp_path / "results/tables/comparisons.csv")}
    joined = data.assign(r=data["id"].map(rewards["m1"]))
    for subset, group in joined.groupby("subset"):
        prompts = [(i, list(g.sort_values("k")["r"]), int(g["n_correct"].iloc[0]))
                   for i, g in group.groupby("row_id", sort=False)]
        if subset == "Ties":
            value = ties_components([TiesRow(i, tuple(v), c) for i, v, c in prompts])["score"]
            assert rows["subset:Ties"]["test"] == "paired bootstrap (Ties)"
        else:
            value = float(np.mean([best_of_n(v, i) for i, v, _ in prompts]))
        assert float(rows[f"subset:{subset}"]["value_a"]) == pytest.approx(100 * value)
        if subset == "Ties":
            # the vectorised resamples: with every prompt number drawn once, the official score
            arrays = ties_arrays(prompts)
            assert ties_scores(arrays, np.ones((1, len(arrays.numbers))))[0] == pytest.approx(value)
            counts = resample_counts(len(arrays.numbers), 50, 0)
            assert (counts.sum(axis=1) == len(arrays.numbers)).all()
    assert "overall" in rows and rows["overall"]["test"].startswith("MOVER sum")


def _rewardmath(tmp_path: Path) -> tuple[Path, dict[str, dict[str, float]]]:
    records = []
    for problem in range(12):
        for k in range(5):
            records.append({"problem": f"Problem {problem}", "answer": "1", "eval_solution": [f"s{k}", "end"],
                            "solution_reference": "human" if k == 0 else f"m{k}",
                            "solution_type": "chosen" if k == 0 else "rejected", "subject": "Algebra",
                            "level": 1, "problem_id": str(problem), "id": f"{problem}-{k}"})
    source = tmp_path / "rm.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    data = tmp_path / "results/rewardmath/data"
    assert rmeval_main(["rewardmath-prepare", "--source", "local", "--path", str(source), "--rewardbench-source",
                        "none", "--out", str(data)]) == 0
    rng = np.random.default_rng(5)
    rewards = {model: {r["id"]: float(rng.standard_normal() + (1.5 if r["solution_type"] == "chosen" else 0))
                       for r in records} for model in ("x", "y")}
    for model, values in rewards.items():
        folder = tmp_path / "results/scores/rewardmath" / model
        folder.mkdir(parents=True)
        pd.DataFrame({"id": list(values), "reward": list(values.values())}).to_parquet(folder / "algebra.parquet")
    return data, rewards


def test_rewardmath_accuracy_and_mrr(tmp_path):
    _, rewards = _rewardmath(tmp_path)
    assert _compare("--benchmark", "rewardmath", "--root", str(tmp_path)) == 0
    rows = {r["metric"]: r for r in _rows(tmp_path / "results/tables/comparisons.csv")}
    for model, column in (("x", "value_a"), ("y", "value_b")):
        correct, reciprocal = [], []
        for problem in range(12):
            chosen = rewards[model][f"{problem}-0"]
            above = sum(rewards[model][f"{problem}-{k}"] >= chosen for k in range(1, 5))
            correct.append(above == 0)
            reciprocal.append(1 / (1 + above))
        assert float(rows["accuracy"][column]) == pytest.approx(100 * np.mean(correct))
        assert float(rows["mrr"][column]) == pytest.approx(100 * np.mean(reciprocal))
    assert rows["accuracy"]["test"] == "McNemar (score)" and rows["mrr"]["test"].startswith("Tango score")
    assert rows["accuracy"]["n"] == "12"


def test_rewardbench_items_are_the_metrics_stage_s_for_classifiers_and_direct_judges(tmp_path):
    """The vectorised per-item results (benchmarks/rewardbench/compare.py: Layout) equal the metrics stage's row
    by row (metrics.join, then best_of_n / rated_best_of_n / pair_won), for a classifier with ties at the top and a
    direct judge with unparsable ratings (run_generative_v2.py's -1; all unparsable earns 0.25)."""
    from rmeval.benchmarks.rewardbench.compare import Layout, rewards_of
    from rmeval.benchmarks.rewardbench.metrics import DIRECT_JUDGE, _subsets, join
    from rmeval.benchmarks.rewardbench.scoring import pair_won, rated_best_of_n

    for version in ("rewardbench", "rewardbench2"):
        data = _prepare_rewardbench(tmp_path / version, version)
        layout = Layout.of(data)
        rng = np.random.default_rng(6)
        ratings = rng.integers(1, 4, len(data)).astype(float)  # ties at the top are common
        ratings[rng.uniform(size=len(data)) < 0.3] = np.nan
        first = data.groupby("row_id", sort=False).head(100)["row_id"].iloc[0]
        ratings[(data["row_id"] == first).to_numpy()] = np.nan  # one prompt with every rating unparsable
        judge = pd.DataFrame({"id": data["id"], "reward": np.nan_to_num(ratings, nan=-1.0), "rating": ratings})
        classifier = pd.DataFrame({"id": data["id"], "reward": rng.integers(0, 3, len(data)).astype(float)})
        for scores in (classifier, judge):
            path = tmp_path / "scores.parquet"
            rewards, mode = rewards_of(data, scores, path)
            mine = layout.items(rewards, mode, "m", version == "rewardbench")
            scored = join(data, scores, "m", path)
            for subset, rows in _subsets(scored).items():
                if subset == "Ties":
                    assert [(r, v) for r, v, _ in mine.ties] == [(r, v) for r, v, _ in rows]
                    continue
                if version == "rewardbench":
                    expected = [pair_won(values[0], values[1]) for _, values, _ in rows]
                else:
                    rule = rated_best_of_n if mode == DIRECT_JUDGE else best_of_n
                    expected = [rule(values, row_id) for row_id, values, _ in rows]
                assert mine.results[subset].tolist() == pytest.approx(expected), (version, mode, subset)


def test_the_rule_s_plan_names_the_baselines_the_items_and_refuses_unknown_models():
    """rmeval.run_outputs.compare.plan at parse time on the quick start plus RewardBench and the length baseline:
    the baseline is found by its registry adapter, RewardBench's prepared items are inputs (its catalogue's
    `reads_items`) and fairness's are not, and compare.baseline / compare.pairs are checked against the models."""
    import copy

    import yaml
    from rmeval.config_check import check_config, config_schema
    from rmeval.errors import RmevalError
    from rmeval.io.paths import config_path
    from rmeval.run_outputs.compare.plan import ComparePlan
    from rmeval.run_plan import plan_run

    base = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())
    base["models"] = [*base["models"], "length-baseline"]
    base["rewardbench"] = {"enabled": True, "source": "local", "path": ".test/rewardbench/data/rewardbench.jsonl"}

    def planned(**compare):
        config = copy.deepcopy(base)
        config["compare"] = compare
        check_config(config, config_schema())
        return ComparePlan.from_run(config, plan_run(config, lambda value: config_path(value, REPO_ROOT)))

    plan = planned()
    settings = json.loads(plan.settings)
    assert settings["baseline_models"] == ["length-baseline=length"]
    assert settings["benchmarks"] == ["fairness", "rewardbench"] and settings["baseline"] is None
    assert "rewardbench_items" in plan.inputs and "fairness_items" not in plan.inputs
    assert plan.inputs["rewardbench_items"] == ["results/rewardbench/data/rewardbench.parquet"]
    assert all(path.startswith("results/scores/fairness/") for path in plan.inputs["fairness_scores"])
    assert json.loads(planned(baseline="length-baseline").settings)["baseline"] == "length-baseline"
    with pytest.raises(RmevalError, match="nope is not a model of a compared benchmark"):
        planned(pairs=["nope:length-baseline"])
    with pytest.raises(RmevalError, match="set one of them"):
        planned(baseline="length-baseline", pairs=["a:b"])
