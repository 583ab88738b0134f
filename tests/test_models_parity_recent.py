"""Token and reward parity with the authors' usage code for the 2025 registry entries (issue 28).

As in test_models_parity.py: each registry entry (its own `config/models.yaml` settings, pointed at a tiny
random-weight folder of tests/recent_fixtures.py) is scored by rmeval in one padded batch, and compared with the
authors' one-row-at-a-time computation written here: identical token ids, rewards within 1e-5 in fp32.

Reference computations (upstream file each follows):
- Skywork-Reward-V2-Llama-3.1-8B / -Qwen3-8B: SkyworkAI/Skywork-Reward-V2 README.md (the model cards):
  `apply_chat_template(tokenize=False)`, a leading BOS text stripped, `tokenizer(text)`, `logits[0][0]`.
- INF-ORM-Llama3.1-70B: the model card / allenai/reward-bench rewardbench/models/inform.py:
  `apply_chat_template(conv, tokenize=True, return_tensors="pt")`, `INFORMForSequenceClassification(...)
  .logits[0][0]`.
- Llama-3.1-Nemotron-70B-Reward-HF: the model card: `apply_chat_template(messages, tokenize=True,
  add_generation_prompt=False, return_dict=True)`, `generate(max_new_tokens=1, return_dict_in_generate=True,
  output_scores=True)["scores"][0][0][0]`.
- Skywork-Reward-Gemma-2-27B-v0.2: its model card: `apply_chat_template(conv, tokenize=True)`, the model loaded
  with the attention its authors name (flash_attention_2; eager here, on CPU: both apply soft-capping).
- Qwen2.5-Math-PRM-7B: the model card (`make_step_rewards`) and the hub's modeling_qwen2_rm.py.
- Llama3.1-8B-PRM-Deepseek-Data: RLHFlow/RLHF-Reward-Modeling math/README.md and the model card: one
  conversation per step prefix, `logits[:, -3, candidate_tokens].softmax(-1)[:, 0]`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from recent_fixtures import (
    inform_class,
    qwen_prm_class,
    save_gemma2_classifier,
    save_inform,
    save_llama31_causal_lm,
    save_llama31_tokenizer,
    save_qwen_prm,
)
from rmeval.errors import RmevalError
from rmeval.tasks import Pairs
from test_models_parity import ROWS, TOLERANCE, _assert_parity, _rmeval, _spec, skywork_card
from tokenizer_layouts import save_qwen3_tokenizer, save_tiny_model


def _ids(encoded) -> list[int]:
    """`apply_chat_template(tokenize=True)`'s ids, whatever container this transformers returns."""
    if hasattr(encoded, "keys") and "input_ids" in encoded:
        encoded = encoded["input_ids"]
    if hasattr(encoded, "tolist"):
        encoded = encoded.tolist()
    return list(encoded[0]) if encoded and isinstance(encoded[0], list) else list(encoded)


@functools.cache
def _tokenizer(path: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


def _chat(prompt: str, response: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]


# --- Skywork-Reward-V2 (sequence classifiers) -------------------------------------------------------------------
@pytest.fixture(scope="module")
def skywork_llama_dir(tmp_path_factory) -> Path:
    path = save_llama31_tokenizer(tmp_path_factory.mktemp("skywork-v2-llama"))
    return save_tiny_model(path, "llama", seed=21, pad_token_id=_tokenizer(path).pad_token_id)


@pytest.fixture(scope="module")
def skywork_qwen_dir(tmp_path_factory) -> Path:
    path = save_qwen3_tokenizer(tmp_path_factory.mktemp("skywork-v2-qwen3"))
    return save_tiny_model(path, "qwen3", seed=22, pad_token_id=_tokenizer(path).pad_token_id)


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_skywork_v2_llama_matches_its_readme(skywork_llama_dir: Path, padding_side: str) -> None:
    table, ids, scorer = _rmeval(_spec("Skywork-Reward-V2-Llama-3.1-8B", skywork_llama_dir), padding_side)
    _assert_parity(table, ids, lambda p, r: skywork_card(skywork_llama_dir, p, r))
    tokenizer = _tokenizer(skywork_llama_dir)
    text = tokenizer.decode(ids[0])
    assert "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024" in text  # the dated system header
    # One BOS: tokenising the template's text with the tokenizer's own BOS would give two (the README strips one).
    assert ids[0][0] == tokenizer.bos_token_id != ids[0][1]
    doubled = tokenizer(tokenizer.apply_chat_template(_chat(ROWS.prompts[0], ROWS.responses[0]), tokenize=False))
    assert doubled["input_ids"][:2] == [tokenizer.bos_token_id] * 2
    assert scorer.describe()["attn_implementation"] == "sdpa"


def test_skywork_v2_qwen3_matches_its_readme(skywork_qwen_dir: Path) -> None:
    table, ids, _ = _rmeval(_spec("Skywork-Reward-V2-Qwen3-8B", skywork_qwen_dir), "left")
    _assert_parity(table, ids, lambda p, r: skywork_card(skywork_qwen_dir, p, r))


# --- INF-ORM (native MLP head) ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def inform_dir(tmp_path_factory) -> Path:
    return save_inform(tmp_path_factory.mktemp("inf-orm"), seed=23)


def inform_card(path: Path, prompt: str, response: str) -> tuple[list[int], float]:
    import torch

    model = _inform_reference(path)
    ids = _ids(_tokenizer(path).apply_chat_template(_chat(prompt, response), tokenize=True, return_tensors="pt"))
    with torch.inference_mode():
        return ids, float(model(torch.tensor([ids])).logits[0][0])


@functools.cache
def _inform_reference(path: Path):
    return inform_class().from_pretrained(path, dtype="float32").eval()


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_inform_native_head_matches_its_card(inform_dir: Path, padding_side: str) -> None:
    table, ids, scorer = _rmeval(_spec("INF-ORM-Llama3.1-70B", inform_dir), padding_side)
    _assert_parity(table, ids, lambda p, r: inform_card(inform_dir, p, r))
    assert "INFORMRewardModel" in scorer.describe()["implementation"]


def test_inform_rejects_a_checkpoint_with_another_head(inform_dir: Path, tmp_path: Path) -> None:
    import shutil

    from safetensors.torch import load_file, save_file

    broken = tmp_path / "broken"
    shutil.copytree(inform_dir, broken)
    weights = load_file(str(broken / "model.safetensors"))
    weights["score.1.weight"] = weights.pop("score.2.weight")
    save_file(weights, str(broken / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(RmevalError, match="score.2.weight"):
        _rmeval(_spec("INF-ORM-Llama3.1-70B", broken))


# --- Llama-3.1-Nemotron-70B-Reward-HF (first generated position) -----------------------------------------------
@pytest.fixture(scope="module")
def nemotron_dir(tmp_path_factory) -> Path:
    return save_llama31_causal_lm(tmp_path_factory.mktemp("nemotron-hf"), seed=24)


@functools.cache
def _causal_lm(path: Path):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path, dtype="float32").eval()


def nemotron_card(path: Path, prompt: str, response: str) -> tuple[list[int], float]:
    tokenized = _tokenizer(path).apply_chat_template(_chat(prompt, response), tokenize=True,
                                                     add_generation_prompt=False, return_tensors="pt",
                                                     return_dict=True)
    out = _causal_lm(path).generate(tokenized["input_ids"], attention_mask=tokenized["attention_mask"],
                                    max_new_tokens=1, return_dict_in_generate=True, output_scores=True)
    return tokenized["input_ids"][0].tolist(), float(out["scores"][0][0][0])


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_nemotron_hf_matches_its_card(nemotron_dir: Path, padding_side: str) -> None:
    table, ids, scorer = _rmeval(_spec("Llama-3.1-Nemotron-70B-Reward-HF", nemotron_dir), padding_side)
    _assert_parity(table, ids, lambda p, r: nemotron_card(nemotron_dir, p, r))
    assert scorer.describe()["reward_token_id"] == 0


# --- Skywork-Reward-Gemma-2-27B-v0.2 (attention implementation) ------------------------------------------------
@pytest.fixture(scope="module")
def gemma_dir(tmp_path_factory) -> Path:
    return save_gemma2_classifier(tmp_path_factory.mktemp("skywork-gemma2"), seed=25)


def gemma_card(path: Path, prompt: str, response: str, attn: str) -> tuple[list[int], float]:
    import torch

    ids = _ids(_tokenizer(path).apply_chat_template(_chat(prompt, response), tokenize=True, return_tensors="pt"))
    with torch.inference_mode():
        return ids, float(_gemma(path, attn)(torch.tensor([ids])).logits[0][0])


@functools.cache
def _gemma(path: Path, attn: str):
    from transformers import AutoModelForSequenceClassification

    return AutoModelForSequenceClassification.from_pretrained(path, dtype="float32", attn_implementation=attn).eval()


def test_skywork_gemma2_entry_asks_for_its_authors_attention() -> None:
    from test_models_parity import REGISTRY

    assert REGISTRY["Skywork-Reward-Gemma-2-27B-v0.2"]["attn_implementation"] == "flash_attention_2"


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_skywork_gemma2_matches_its_card_with_soft_capping_attention(gemma_dir: Path, padding_side: str) -> None:
    # flash_attention_2 (the card's) needs CUDA; eager applies the same soft-capping on CPU.
    spec = _spec("Skywork-Reward-Gemma-2-27B-v0.2", gemma_dir, attn_implementation="eager")
    table, ids, scorer = _rmeval(spec, padding_side)
    _assert_parity(table, ids, lambda p, r: gemma_card(gemma_dir, p, r, "eager"))
    assert scorer.describe()["attn_implementation"] == "eager"
    tokenizer = _tokenizer(gemma_dir)
    assert ids[0][:2] == [tokenizer.bos_token_id, tokenizer.convert_tokens_to_ids("<start_of_turn>")]


def test_gemma2_never_falls_back_silently_from_the_entrys_attention(gemma_dir: Path) -> None:
    """SDPA leaves out Gemma-2's soft-capping (RewardBench issue 169); this transformers refuses SDPA for the
    Gemma-2 classifier, and rmeval says so, naming the key, instead of loading another kernel (as it once did)."""
    with pytest.raises(RmevalError, match="attn_implementation='sdpa'.*registry entry's `attn_implementation`"):
        _rmeval(_spec("Skywork-Reward-Gemma-2-27B-v0.2", gemma_dir, attn_implementation="sdpa"))


def test_gemma2_soft_capping_changes_the_rewards(gemma_dir: Path) -> None:
    """The kernel matters: the same weights without soft-capping (what SDPA computed) give other rewards."""
    import torch

    model = _gemma(gemma_dir, "eager")
    ids = _ids(_tokenizer(gemma_dir).apply_chat_template(_chat(ROWS.prompts[1], ROWS.responses[1]), tokenize=True))
    with torch.inference_mode():
        capped = float(model(torch.tensor([ids])).logits[0][0])
        saved = model.config.attn_logit_softcapping
        model.config.attn_logit_softcapping = None
        for layer in model.model.layers:
            layer.self_attn.attn_logit_softcapping = None
        try:
            uncapped = float(model(torch.tensor([ids])).logits[0][0])
        finally:
            model.config.attn_logit_softcapping = saved
            for layer in model.model.layers:
                layer.self_attn.attn_logit_softcapping = saved
    assert abs(capped - uncapped) > 1e-3


# --- PRMs -----------------------------------------------------------------------------------------------------
STEPS = [
    ["Let x be the number of papers.", "Then 3x + 2 = 11, so 3x = 9.", "Therefore x = 3. The answer is 3."],
    ["The model is trained on the data."],
    ["We compute 7 + 8 = 15.", "Then 15 - 3 = 12.", "We add 10 to get 22.", "The answer is 22."],
    ["The reward is positive.", "So the answer is 1."],
]
PROBLEMS = ["How many papers are there?", "What is the model trained on?", "Compute 7 + 8 - 3 + 10.",
            "Is the reward positive?"]
PRM_ROWS = Pairs(ids=[f"s{i}" for i in range(len(STEPS))], prompts=PROBLEMS,
                 responses=["\n\n".join(steps) for steps in STEPS], steps=STEPS)


def _assert_step_parity(table, fed_ids, reference) -> float:
    worst = 0.0
    for row, (problem, steps) in enumerate(zip(PROBLEMS, STEPS, strict=True)):
        reference_ids, expected = reference(problem, steps)
        assert fed_ids[row] == reference_ids, f"row {row}: token ids differ"
        got = np.asarray(table["step_rewards"][row], dtype=np.float64)
        assert len(got) == len(steps)
        worst = max(worst, float(np.max(np.abs(got - np.asarray(expected)))))
        assert abs(float(table["reward"][row]) - float(np.prod(expected))) <= TOLERANCE
    assert worst <= TOLERANCE, worst
    return worst


@pytest.fixture(scope="module")
def qwen_prm_dir(tmp_path_factory) -> Path:
    return save_qwen_prm(tmp_path_factory.mktemp("qwen-prm"), seed=26)


def qwen_prm_card(path: Path, problem: str, steps: list[str]) -> tuple[list[int], list[float]]:
    import torch

    tokenizer = _tokenizer(path)
    model = _qwen_prm_reference(path)
    messages = [{"role": "system", "content": "Please reason step by step, and put your final answer within \\boxed{}."},
                {"role": "user", "content": problem},
                {"role": "assistant", "content": "<extra_0>".join(steps) + "<extra_0>"}]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)
    input_ids = tokenizer.encode(text, return_tensors="pt")
    with torch.inference_mode():
        logits = model(input_ids=input_ids).logits
    step_sep_id = tokenizer.encode("<extra_0>")[0]
    probabilities = torch.softmax(logits, dim=-1)[0]  # the card's make_step_rewards, one row
    return input_ids[0].tolist(), probabilities[input_ids[0] == step_sep_id][:, 1].tolist()


@functools.cache
def _qwen_prm_reference(path: Path):
    return qwen_prm_class().from_pretrained(path, dtype="float32").eval()


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_qwen_prm_native_head_matches_its_card(qwen_prm_dir: Path, padding_side: str) -> None:
    table, ids, scorer = _rmeval(_spec("Qwen2.5-Math-PRM-7B", qwen_prm_dir), padding_side, pairs=PRM_ROWS)
    _assert_step_parity(table, ids, lambda q, s: qwen_prm_card(qwen_prm_dir, q, s))
    assert scorer.has_steps and scorer.describe()["step_token_id"] == _tokenizer(qwen_prm_dir).encode("<extra_0>")[0]


def test_qwen_prm_refuses_a_step_containing_the_separator(qwen_prm_dir: Path) -> None:
    pairs = Pairs(ids=["bad"], prompts=["Q?"], responses=["a<extra_0>b"], steps=[["a<extra_0>b"]])
    with pytest.raises(RmevalError, match="id='bad'.*2 step markers for 1 steps"):
        _rmeval(_spec("Qwen2.5-Math-PRM-7B", qwen_prm_dir), pairs=pairs)


@pytest.fixture(scope="module")
def rlhflow_prm_dir(tmp_path_factory) -> Path:
    return save_llama31_causal_lm(tmp_path_factory.mktemp("rlhflow-prm"), seed=27)


def rlhflow_prm_card(path: Path, problem: str, steps: list[str]) -> tuple[list[int], list[float]]:
    import torch

    tokenizer, model = _tokenizer(path), _causal_lm(path)
    candidate_tokens = [tokenizer.encode("+")[-1], tokenizer.encode("-")[-1]]
    conversation: list[dict[str, str]] = []
    scores = []
    for k, step in enumerate(steps):
        conversation.append({"role": "user", "content": f"{problem} {step}" if k == 0 else step})
        conversation.append({"role": "assistant", "content": "+"})
        input_ids = _ids(tokenizer.apply_chat_template(conversation, return_tensors="pt"))
        with torch.inference_mode():
            logits = model(torch.tensor([input_ids])).logits[:, -3, candidate_tokens]
        scores.append(float(logits.softmax(dim=-1)[:, 0][0]))
    return input_ids, scores


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_rlhflow_generative_prm_matches_its_card(rlhflow_prm_dir: Path, padding_side: str) -> None:
    table, ids, scorer = _rmeval(_spec("Llama3.1-8B-PRM-Deepseek-Data", rlhflow_prm_dir), padding_side,
                                 pairs=PRM_ROWS)
    _assert_step_parity(table, ids, lambda q, s: rlhflow_prm_card(rlhflow_prm_dir, q, s))
    assert scorer.has_steps


def test_rlhflow_prm_drops_trailing_steps_beyond_max_length(rlhflow_prm_dir: Path) -> None:
    spec = _spec("Llama3.1-8B-PRM-Deepseek-Data", rlhflow_prm_dir)
    full, _, scorer = _rmeval(spec, pairs=PRM_ROWS)
    short_len = int(scorer.encoded.lengths[2]) - 5  # row 2 loses its last step
    import dataclasses

    short, _, _ = _rmeval(dataclasses.replace(spec, max_length=max(short_len, int(scorer.encoded.lengths.max()) - 5)),
                          pairs=PRM_ROWS)
    assert bool(short["truncated"][2]) and len(short["step_rewards"][2]) == len(STEPS[2]) - 1
    assert np.allclose(short["step_rewards"][2], full["step_rewards"][2][:-1], atol=TOLERANCE)


def test_both_prms_score_rewardmath_and_every_aggregation_reads_them(qwen_prm_dir: Path, rlhflow_prm_dir: Path,
                                                                      tmp_path: Path) -> None:
    """RewardMATH end to end for the two PRMs: prepared tables -> `rmeval score`'s job -> rewardmath-metrics."""
    import csv

    from rmeval.benchmarks.rewardmath import cli_metrics
    from rmeval.scoring.job import JobRequest, run_job
    from test_rewardmath_workflow_scores import _prepared

    data = _prepared(tmp_path)
    scores = tmp_path / "scores"
    import pandas as pd

    tables = sorted(path.stem for path in data.glob("*.parquet") if len(pd.read_parquet(path)))
    assert "rewardbench_math_prm" in tables and len(tables) >= 2
    for name, path in (("Qwen2.5-Math-PRM-7B", qwen_prm_dir), ("Llama3.1-8B-PRM-Deepseek-Data", rlhflow_prm_dir)):
        for table in tables:
            out = scores / name / f"{table}.parquet"
            run_job(JobRequest(spec=_spec(name, path), task="pairs", input=data / f"{table}.parquet", output=out,
                               meta=out.with_name(f"{table}.meta.json")))
    out = tmp_path / "tables"
    assert cli_metrics.main(["--scores", str(scores), "--data", str(data), "--out", str(out)]) == 0
    with (out / "rewardmath_metrics.csv").open() as handle:
        setups = {(row["setup"], row["aggregation"]) for row in csv.DictReader(handle)}
    for name in ("Qwen2.5-Math-PRM-7B", "Llama3.1-8B-PRM-Deepseek-Data"):
        assert {a for s, a in setups if s == name} == {"prod", "geo", "min", "mean", "last"}
        algebra = pd.read_parquet(scores / name / "algebra.parquet")  # each solution's two steps, read one by one
        assert [len(steps) for steps in algebra["step_rewards"]] == [2] * len(algebra)
