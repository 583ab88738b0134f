"""The remote-code adapters (armorm, grm, eurus) on tiny models built with the real mechanism.

Each test model is a directory with `config.json` whose `auto_map` points at a local
`modeling_*.py` written here, loaded by `from_pretrained(..., trust_remote_code=True)` exactly like
the hub checkpoints. The modeling files mimic the real output structures: ArmoRM's `.score`
(gated sum, gating at the assistant header, last token = first pad - 1), GRM's
`(lm_logits, _, value)` tuple with the value read at the last attended token, and Eurus's
`AutoModel` whose forward returns the reward tensor. Rewards from the engine (batched, padded)
must match the model cards' one-conversation-at-a-time usage.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from rmeval.errors import RmevalError
from rmeval.models import load_scorer
from rmeval.models.base import Runtime
from rmeval.models.tiny import BOS, build_tokenizer, tiny_llama_config
from rmeval.registry import spec_from_mapping
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.tasks import Pairs

HEADER = '''import torch
from torch import nn
from transformers import LlamaModel, LlamaPreTrainedModel
'''

ARMORM_CODE = HEADER + '''from dataclasses import dataclass
from typing import Optional

from transformers.utils import ModelOutput


@dataclass
class CustomOutput(ModelOutput):
    rewards: Optional[torch.FloatTensor] = None
    hidden_state: Optional[torch.FloatTensor] = None
    score: Optional[torch.FloatTensor] = None
    gating_output: Optional[torch.FloatTensor] = None


def find_token_for_gating(ids, pattern):
    for start in range(len(ids) - len(pattern), -1, -1):
        if ids[start:start + len(pattern)] == pattern:
            return start
    raise ValueError("Token pattern not found in the list.")


class TinyArmoRM(LlamaPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = LlamaModel(config)
        self.regression_layer = nn.Linear(config.hidden_size, config.num_objectives, bias=False)
        self.gating = nn.Linear(config.hidden_size, config.num_objectives)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).last_hidden_state
        batch = torch.arange(input_ids.shape[0], device=input_ids.device)
        ends = (torch.eq(input_ids, self.config.pad_token_id).int().argmax(-1) - 1) % input_ids.shape[-1]
        rewards = self.regression_layer(hidden[batch, ends])
        pattern = list(self.config.gating_pattern)
        at = torch.tensor([find_token_for_gating(row.tolist(), pattern) for row in input_ids], device=input_ids.device)
        gates = torch.softmax(self.gating(hidden[batch, at]), dim=-1)
        return CustomOutput(rewards=rewards, hidden_state=hidden, score=(rewards * gates).sum(-1), gating_output=gates)
'''

GRM_CODE = HEADER + '''

class TinyGRM(LlamaPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.v_head = nn.Linear(config.hidden_size, 1, bias=False)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).last_hidden_state
        value = self.v_head(hidden).squeeze(-1)
        ends = attention_mask.cumsum(dim=1).argmax(dim=1).view(-1, 1)
        return (self.lm_head(hidden), None, torch.gather(value, 1, ends).squeeze(-1))
'''

EURUS_CODE = HEADER + '''

class TinyEurusRM(LlamaPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = LlamaModel(config)
        self.regression_head = nn.Linear(config.hidden_size, 1, bias=False)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).last_hidden_state
        rewards = self.regression_head(hidden).squeeze(-1)
        ends = attention_mask.cumsum(dim=1).argmax(dim=1).view(-1, 1)
        return torch.gather(rewards, 1, ends)
'''

KINDS = {
    # kind: (module, class, auto class, code, head to widen)
    "armorm": ("modeling_tiny_armorm", "TinyArmoRM", "AutoModelForSequenceClassification", ARMORM_CODE, "regression_layer"),
    "grm": ("modeling_tiny_grm", "TinyGRM", "AutoModelForSequenceClassification", GRM_CODE, "v_head"),
    "eurus": ("modeling_tiny_eurus", "TinyEurusRM", "AutoModel", EURUS_CODE, "regression_head"),
}


def build_remote_code_model(outdir: Path, kind: str, seed: int = 0) -> Path:
    import torch
    from tokenizers.processors import TemplateProcessing

    module_name, class_name, auto_class, code, head = KINDS[kind]
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / f"{module_name}.py").write_text(code)
    tokenizer = build_tokenizer()
    extra = {}
    if kind == "armorm":
        # ArmoRM gates on the Llama-3 assistant header: eot, start_header, "assistant", end_header.
        extra["gating_pattern"] = tokenizer.encode("<|eot_id|><|start_header_id|>assistant<|end_header_id|>",
                                                   add_special_tokens=False)
        extra["num_objectives"] = 19
    if kind == "eurus":
        # Like Eurus's Mistral tokenizer: the default encoding prepends BOS; no chat template.
        tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
            single=f"{BOS} $A", special_tokens=[(BOS, tokenizer.bos_token_id)])
        tokenizer.chat_template = None
    config = tiny_llama_config(tokenizer, **extra)
    config.auto_map = {auto_class: f"{module_name}.{class_name}"}
    config.architectures = [class_name]
    spec = importlib.util.spec_from_file_location(f"_rmeval_test_{module_name}", outdir / f"{module_name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    torch.manual_seed(seed)
    model = getattr(module, class_name)(config).eval()
    with torch.no_grad():
        getattr(model, head).weight.normal_(0.0, 1.0)
    model.save_pretrained(outdir)
    tokenizer.save_pretrained(outdir)
    saved = json.loads((outdir / "config.json").read_text())
    saved["auto_map"] = {auto_class: f"{module_name}.{class_name}"}
    (outdir / "config.json").write_text(json.dumps(saved, indent=2))
    return outdir


@pytest.fixture(scope="module")
def remote_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("remote-code")
    return {kind: build_remote_code_model(root / kind, kind) for kind in KINDS}


def _pairs(count: int = 12) -> Pairs:
    rng = np.random.default_rng(0)
    words = "we study reward models for scientific abstracts across eight groups with tensor networks".split()
    prompts = [f"Write an abstract for a paper with title {' '.join(rng.choice(words, 4))}" for _ in range(count)]
    responses = [" ".join(rng.choice(words, int(rng.integers(3, 60)))) for _ in range(count)]
    return Pairs(ids=[f"r{i}" for i in range(count)], prompts=prompts, responses=responses, steps=None)


def _engine_rewards(spec, pairs: Pairs, padding_side: str | None = None, budget: int = 300) -> np.ndarray:
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32", padding_side=padding_side))
    table, report = score_rows(scorer, pairs, scorer.prepare(pairs), EngineSettings(budget, 64, 0), None, spec.name)
    assert report.batches > 1, "the test must exercise multi-row padded batches"
    return table["reward"].to_numpy()


def _spec(kind: str, path: Path, **extra):
    return spec_from_mapping({"name": f"tiny-{kind}", "path": str(path), "adapter": kind, "trust_remote_code": True,
                              "resources": {"gpu": 0}, **extra}, where="test")


def _messages(prompt: str, response: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]


def _chat_ids(tokenizer, prompt: str, response: str):
    return tokenizer.apply_chat_template(_messages(prompt, response), return_dict=True, return_tensors="pt")["input_ids"]


def test_armorm_reads_the_gated_score(remote_models: dict[str, Path]) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = remote_models["armorm"]
    pairs = _pairs()
    engine = _engine_rewards(_spec("armorm", path), pairs)
    # The model card's usage: one conversation, chat template, `output.score`.
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=True).eval()
    assert type(model).__name__ == "TinyArmoRM"
    with torch.inference_mode():
        reference = [float(model(_chat_ids(tokenizer, p, r)).score[0]) for p, r in zip(pairs.prompts, pairs.responses, strict=True)]
    np.testing.assert_allclose(engine, reference, rtol=1e-4, atol=1e-6)
    assert np.std(engine) > 1e-3


def test_armorm_refuses_left_padding(remote_models: dict[str, Path]) -> None:
    with pytest.raises(RmevalError, match="supports padding \\['right'\\]"):
        load_scorer(_spec("armorm", remote_models["armorm"]), Runtime(device="cpu", dtype="float32", padding_side="left"))


def test_grm_value_head_with_left_and_right_padding(remote_models: dict[str, Path]) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = remote_models["grm"]
    pairs = _pairs()
    spec = _spec("grm", path)
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    assert scorer.padding_side == "left", "GRM's adapter pads on the left by default"
    left = _engine_rewards(spec, pairs)
    right = _engine_rewards(spec, pairs, padding_side="right")
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=True).eval()
    with torch.inference_mode():
        reference = []
        for prompt, response in zip(pairs.prompts, pairs.responses, strict=True):
            ids = _chat_ids(tokenizer, prompt, response)
            _, _, value = model(ids, attention_mask=torch.ones_like(ids))
            reference.append(float(value[0]))
    np.testing.assert_allclose(left, reference, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(right, reference, rtol=1e-4, atol=1e-6)


def test_eurus_inst_format_and_tokenizer_bos(remote_models: dict[str, Path]) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = remote_models["eurus"]
    pairs = _pairs()
    engine = _engine_rewards(_spec("eurus", path), pairs)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path, trust_remote_code=True).eval()
    assert type(model).__name__ == "TinyEurusRM"
    with torch.inference_mode():
        reference = []
        for prompt, response in zip(pairs.prompts, pairs.responses, strict=True):
            inputs = tokenizer(f"[INST] {prompt} [/INST] {response}", return_tensors="pt")  # the model card's way
            assert inputs["input_ids"][0, 0] == tokenizer.bos_token_id
            reference.append(float(model(**inputs).reshape(-1)[0]))
    np.testing.assert_allclose(engine, reference, rtol=1e-4, atol=1e-6)


def test_output_structure_mismatch_is_a_clear_error(remote_models: dict[str, Path]) -> None:
    # The GRM checkpoint loaded with the armorm adapter has no `.score`.
    spec = _spec("armorm", remote_models["grm"])
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    pairs = _pairs(2)
    scorer.prepare(pairs)
    with pytest.raises(RmevalError, match="expects an output with `.score`"):
        scorer.score(np.array([0, 1]))
