"""RewardBench's model input as its official scripts build it (rmeval.models.pipeline_input).

The reference is the official pipeline's own computation, re-done here in a few lines from the facts of
allenai/reward-bench (rewardbench 0.1.4): `scripts/run_rm.py` / `run_v2.py` render with the tokenizer's chat template
(`tokenize=False`), `RewardBenchPipeline.__call__` tokenises the batch with `truncation=True, max_length,
padding=True`, hides the first of two leading BOS ids from attention, and reads `logits` of the model.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from rmeval.models import load_scorer
from rmeval.models.base import Runtime
from rmeval.registry import spec_from_mapping
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.tasks import ModelInput, Pairs
from tokenizer_layouts import save_llama3_tokenizer, save_tiny_model

PROMPTS = ["What is the capital of France?", "Explain gradient descent in two sentences.",
           "Write a haiku about the sea and the wind over the harbour at night."]
RESPONSES = ["Paris is the capital of France, and it has been for a very long time.",
             "Gradient descent moves the parameters against the gradient of the loss, step by step.",
             "Waves fold the moonlight; salt wind hums through idle masts; the harbour breathes slow."]


@pytest.fixture(scope="module")
def llama3_classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Llama-3 layout: the template writes BOS text and the tokenizer adds BOS too (the official double BOS)."""
    folder = save_llama3_tokenizer(tmp_path_factory.mktemp("llama3-rb"))
    from transformers import AutoTokenizer

    return save_tiny_model(folder, "llama", seed=3, pad_token_id=AutoTokenizer.from_pretrained(folder).pad_token_id)


def _pairs(model_input: ModelInput | None) -> Pairs:
    return Pairs(ids=[f"r{i}" for i in range(len(PROMPTS))], prompts=list(PROMPTS), responses=list(RESPONSES),
                 steps=None, model_input=model_input)


def _official_rewards(folder: Path, max_length: int, side: str | None) -> tuple[list[list[int]], np.ndarray]:
    """The official computation: render, tokenise the batch (truncation, padding), hide a doubled BOS, forward."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    if side is not None:
        tokenizer.truncation_side = side
    texts = [tokenizer.apply_chat_template([{"role": "user", "content": p}, {"role": "assistant", "content": r}],
                                           tokenize=False) for p, r in zip(PROMPTS, RESPONSES, strict=True)]
    inputs = tokenizer(texts, truncation=True, max_length=max_length, padding=True, return_tensors="pt")
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    starts = mask.argmax(dim=1)
    rows = torch.arange(ids.size(0))
    second = torch.clamp(starts + 1, max=ids.size(1) - 1)
    double = (ids[rows, starts] == tokenizer.bos_token_id) & (ids[rows, second] == tokenizer.bos_token_id)
    mask[rows[double], starts[double]] = 0
    model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32).eval()
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits[:, 0].numpy()
    unpadded = [row[m.bool() | (torch.arange(len(row)) == s)].tolist()
                for row, m, s in zip(ids, inputs["attention_mask"], starts, strict=True)]
    return unpadded, logits.astype(np.float64)


@pytest.mark.parametrize(("max_length", "side"), [(2048, None), (30, "left"), (30, "right")])
def test_pipeline_input_matches_the_official_call(llama3_classifier: Path, max_length: int, side: str | None) -> None:
    spec = spec_from_mapping({"name": "l3", "path": str(llama3_classifier), "resources": {"gpu": 0}}, where="test")
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    model_input = ModelInput(style="text-pipeline", max_length=max_length, truncation_side=side)
    pairs = _pairs(model_input)
    prepared = scorer.prepare(pairs)
    expected_ids, expected = _official_rewards(llama3_classifier, max_length, side)
    got_ids = [scorer.encoded.row(i).tolist() for i in range(len(pairs))]
    assert got_ids == expected_ids
    assert scorer.tokenization["chat_template_source"] == "tokenizer"
    if max_length == 2048:
        assert scorer.encoded.hidden_first is not None and scorer.encoded.hidden_first.all(), "template + tokenizer BOS"
        assert not prepared.truncated.any()
    else:
        assert prepared.truncated.all() and (prepared.n_tokens == max_length).all()
    table, _ = score_rows(scorer, pairs, prepared, EngineSettings(4096, 64, 0), None, "l3")
    np.testing.assert_allclose(table["reward"].to_numpy(), expected, atol=1e-5)


def test_rmeval_input_keeps_the_registry_entry_s_truncation(llama3_classifier: Path) -> None:
    """Without a model_input, one BOS and rmeval's re-rendering truncation (the template's tokens survive)."""
    spec = spec_from_mapping({"name": "l3", "path": str(llama3_classifier), "resources": {"gpu": 0},
                              "max_length": 30}, where="test")
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    pairs = _pairs(None)
    scorer.prepare(pairs)
    assert scorer.encoded.hidden_first is None
    bos = scorer.tokenizer.bos_token_id
    assert all(scorer.encoded.row(i)[0] == bos and scorer.encoded.row(i)[1] != bos for i in range(len(pairs)))
    assert scorer.tokenization["model_input"] == "rmeval"
    official = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    official.prepare(replace(pairs, model_input=ModelInput("text-pipeline", 30, "left")))
    assert official.tokenization["model_input"] == "text-pipeline"
    assert [official.encoded.row(i).tolist() for i in range(3)] != [scorer.encoded.row(i).tolist() for i in range(3)]


def test_jobs_sharing_one_model_each_pad_with_their_own_id(tmp_path: Path) -> None:
    """A model server's jobs are copies of one scorer around one model: a job in rmeval's input mode may pad with
    another id than a text-pipeline job (a config without pad_token_id); each forward must use its own."""
    import copy

    from transformers import AutoTokenizer

    folder = save_tiny_model(save_llama3_tokenizer(tmp_path / "no-pad"), "llama", seed=4, pad_token_id=None)
    pad = AutoTokenizer.from_pretrained(folder).pad_token
    spec = spec_from_mapping({"name": "np", "path": str(folder), "resources": {"gpu": 0}}, where="test")
    base = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    pipeline_job, rmeval_job = copy.copy(base), copy.copy(base)
    pipeline_pairs = _pairs(ModelInput("text-pipeline", 2048, None))
    alone, _ = score_rows(pipeline_job, pipeline_pairs, pipeline_job.prepare(pipeline_pairs),
                          EngineSettings(4096, 64, 0), None, "np")
    other = Pairs(ids=["x"], prompts=[f"Say {pad} twice."], responses=[f"{pad} {pad}"], steps=None)
    rmeval_job.prepare(other)  # its rows hold the tokenizer's pad id: it pads with another one
    assert rmeval_job.pad_id != pipeline_job.pad_id
    again, _ = score_rows(pipeline_job, pipeline_pairs, pipeline_job.prepare(pipeline_pairs),
                          EngineSettings(4096, 64, 0), None, "np")
    assert again["reward"].tolist() == alone["reward"].tolist()
