"""The tiny offline reward model: loads with from_pretrained, has a chat template, seeds differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rmeval.testing.tiny_model import BOS, PRM_STEP_TAG, build_tokenizer


def _reward(model_dir: Path, text_pairs: list[tuple[str, str]]) -> list[float]:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    rewards = []
    for prompt, response in text_pairs:
        messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
        ids = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            rewards.append(float(model(input_ids=ids).logits[0, 0]))
    return rewards


def test_tiny_model_loads_and_scores(tiny_model_dir: Path, tiny_model_dir_seed1: Path) -> None:
    from transformers import AutoConfig, AutoTokenizer

    config = AutoConfig.from_pretrained(tiny_model_dir)
    assert config.architectures == ["LlamaForSequenceClassification"]
    assert config.num_labels == 1
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    assert tokenizer.chat_template, "the tiny model must ship a chat template"
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}], tokenize=False
    )
    assert rendered.startswith(BOS) and rendered.count(BOS) == 1
    assert "<|start_header_id|>assistant<|end_header_id|>" in rendered
    pairs = [("Write an abstract for a paper with title Tensor networks", "We study tensor networks."),
             ("Write an abstract for a paper with title Auctions", "We analyze auctions with budgets.")]
    seed0 = _reward(tiny_model_dir, pairs)
    seed1 = _reward(tiny_model_dir_seed1, pairs)
    assert seed0[0] != seed0[1], "a reward model must tell two texts apart"
    assert all(abs(a - b) > 1e-3 for a, b in zip(seed0, seed1, strict=True)), "seeds must give different rewards"


def test_tokenizer_is_deterministic_and_keeps_step_tag_whole() -> None:
    first, second = build_tokenizer(), build_tokenizer()
    text = "Step 1: 3x + 2 = 11 ки\nStep 2: x = 3 ки"
    assert first(text)["input_ids"] == second(text)["input_ids"]
    tag_id = first.encode(PRM_STEP_TAG, add_special_tokens=False)
    assert len(tag_id) == 1
    assert first(text)["input_ids"].count(tag_id[0]) == 2


def test_tiny_model_cli_writes_a_prm(tmp_path: Path) -> None:
    out = tmp_path / "prm"
    from rmeval.cli import main
    from transformers import AutoConfig

    assert main(["tiny-model", str(out), "--seed", "3", "--kind", "prm"]) == 0
    assert AutoConfig.from_pretrained(out).architectures == ["LlamaForCausalLM"]
    assert (out / "tokenizer.json").exists()
    assert json.loads((out / "rmeval_tiny.json").read_text())["rmeval_tiny_model"]["seed"] == 3


def test_tiny_model_rejects_unknown_kind(tmp_path: Path) -> None:
    from rmeval.testing.tiny_model import build_tiny_model

    with pytest.raises(ValueError, match="unknown tiny model kind"):
        build_tiny_model(tmp_path, kind="bogus")
