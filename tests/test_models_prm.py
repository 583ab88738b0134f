"""The `prm` adapter: Math-Shepherd-style step scores on a tiny causal-LM PRM."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.errors import RmevalError
from rmeval.models import load_scorer
from rmeval.models.base import Runtime
from rmeval.registry import spec_from_mapping
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.scoring.job import JobRequest, run_job
from rmeval.tasks import Pairs
from rmeval.testing.tiny_model import PRM_STEP_TAG, build_tiny_model
from workflow_helpers import rmeval_in_process

STEPS = [
    ["Let x be the number of apples.", "Then 3x + 2 = 11, so 3x = 9.", "Therefore x = 3. The answer is 3."],
    ["The area is pi r squared.", "With r = 2 the area is 4 pi."],
    ["We factor the polynomial as (x - 1)(x + 2)."],
    ["Compute 7 * 8 = 56.", "Then 56 - 3 = 53.", "Add 10 to get 63.", "The answer is 63."],
]
PROBLEMS = ["How many apples?", "What is the area of a circle of radius 2?", "Factor x^2 + x - 2.", "Compute 7*8-6/2+10."]


@pytest.fixture(scope="module")
def prm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-prm"), seed=5, kind="prm")


def _spec(path: Path, **options):
    return spec_from_mapping({"name": "tiny-prm", "path": str(path), "adapter": "prm", "resources": {"gpu": 0},
                              "options": {"step_tag": PRM_STEP_TAG, "good_token": "+", "bad_token": "-", **options}},
                             where="test")


def _math_shepherd_reference(path: Path, problem: str, steps: list[str]) -> list[float]:
    """Math-Shepherd's reference recipe, one solution at a time, full-vocabulary logits."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    candidates = tokenizer.encode("+ -", add_special_tokens=False)
    tag_id = tokenizer.encode(PRM_STEP_TAG, add_special_tokens=False)[-1]
    output = "\n".join(f"{step} {PRM_STEP_TAG}" for step in steps)
    input_ids = torch.tensor([tokenizer.encode(f"{problem} {output}", add_special_tokens=False)])
    with torch.inference_mode():
        logits = model(input_ids).logits[:, :, candidates]
    scores = logits.softmax(dim=-1)[:, :, 0]
    return scores[input_ids == tag_id].tolist()


def _score(spec, pairs: Pairs, budget: int = 120) -> pd.DataFrame:
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    table, _ = score_rows(scorer, pairs, scorer.prepare(pairs), EngineSettings(budget, 64, 0), None, spec.name)
    return table


def test_step_scores_match_math_shepherd_recipe(prm_dir: Path) -> None:
    pairs = Pairs(ids=[f"s{i}" for i in range(4)], prompts=PROBLEMS, responses=["\n".join(s) for s in STEPS], steps=STEPS)
    table = _score(_spec(prm_dir), pairs)
    assert list(table.columns) == ["id", "reward", "n_tokens", "truncated", "step_rewards"]
    for row, (problem, steps) in enumerate(zip(PROBLEMS, STEPS, strict=True)):
        reference = _math_shepherd_reference(prm_dir, problem, steps)
        got = list(table["step_rewards"][row])
        assert len(got) == len(steps)
        np.testing.assert_allclose(got, reference, rtol=1e-4)
        assert table["reward"][row] == pytest.approx(float(np.prod(reference)), rel=1e-4)
        assert all(0.0 < value < 1.0 for value in got)


def test_response_without_steps_is_one_step(prm_dir: Path) -> None:
    pairs = Pairs(ids=["a"], prompts=[PROBLEMS[0]], responses=["x = 3, the answer is 3."], steps=None)
    table = _score(_spec(prm_dir), pairs)
    reference = _math_shepherd_reference(prm_dir, PROBLEMS[0], ["x = 3, the answer is 3."])
    np.testing.assert_allclose(list(table["step_rewards"][0]), reference, rtol=1e-4)


def test_step_tag_inside_the_text_is_an_error(prm_dir: Path) -> None:
    pairs = Pairs(ids=["bad"], prompts=["Q"], responses=["r"], steps=[[f"a step with {PRM_STEP_TAG} inside"]])
    with pytest.raises(RmevalError, match="row id='bad'.*2 step tags for 1 steps"):
        _score(_spec(prm_dir), pairs)


def test_truncation_drops_trailing_steps_and_flags_the_row(prm_dir: Path) -> None:
    long_steps = [f"Step {i}: we add {i} apples to the basket and count again." for i in range(40)]
    pairs = Pairs(ids=["long"], prompts=["Count."], responses=["\n".join(long_steps)], steps=[long_steps])
    spec = spec_from_mapping({"name": "p", "path": str(prm_dir), "adapter": "prm", "max_length": 120,
                              "truncation": "response-right", "resources": {"gpu": 0}}, where="test")
    table = _score(spec, pairs, budget=4096)
    assert bool(table["truncated"][0]) and table["n_tokens"][0] <= 120
    assert 0 < len(table["step_rewards"][0]) < 40


def test_ambiguous_good_bad_tokens_need_ids(prm_dir: Path) -> None:
    with pytest.raises(RmevalError, match="good_token_id"):
        load_scorer(_spec(prm_dir, good_token="positive", bad_token="negative"), Runtime(device="cpu", dtype="float32"))


def test_prm_and_classifier_score_the_shared_rewardmath_sample(
    shared_data: Path, prm_dir: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    import ast

    sample = json.loads((shared_data / "rewardmath" / "benchmark_samples" / "RewardMATH_direct.json").read_text())
    rows = []
    for item in sample:
        steps = item["eval_solution"]
        steps = ast.literal_eval(steps) if isinstance(steps, str) else steps
        rows.append({"id": str(item["id"]), "prompt": item["problem"], "response": "\n".join(steps), "steps": steps})
    table_path = tmp_path / "algebra.parquet"
    pd.DataFrame(rows).to_parquet(table_path)
    for name, path, adapter in (("prm", prm_dir, "prm"), ("clf", tiny_model_dir, "sequence-classification")):
        spec = {"name": name, "path": str(path), "adapter": adapter, "resources": {"gpu": 0}}
        out = tmp_path / name / "algebra.parquet"
        if adapter == "prm":  # the command line the RewardMATH rule runs (in this process: torch is loaded here)
            assert rmeval_in_process(["score", "--spec", json.dumps(spec), "--task", "pairs", "--input",
                                      str(table_path), "--output", str(out), "--threads", "1"]) == 0
        else:
            run_job(JobRequest(spec=spec_from_mapping(spec, where="test"), task="pairs", input=table_path,
                               output=out, meta=out.with_name("algebra.meta.json")))
        scores = pd.read_parquet(out)
        assert scores["id"].tolist() == [row["id"] for row in rows]
        assert np.isfinite(scores["reward"]).all() and scores["reward"].dtype == np.float64
        if adapter == "prm":
            assert [len(s) for s in scores["step_rewards"]] == [len(row["steps"]) for row in rows]
        else:
            assert "step_rewards" not in scores.columns
        meta = json.loads(out.with_name("algebra.meta.json").read_text())
        assert meta["rows"] == len(rows) and meta["task"] == "pairs"
