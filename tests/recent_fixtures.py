"""Tiny random-weight copies of the 2025 reward models of config/models.yaml (issue 28), built offline.

Each builder writes a `save_pretrained` folder laid out like the hub repository (config, weight key names,
tokenizer layout, chat template format) and, where the model has its own class, a reference class written here
in the structure and behaviour of the authors' code (none of their text is copied). Only facts are mirrored:

- Llama-3.1 template (Skywork-Reward-V2-Llama-3.1-8B, INF-ORM-Llama3.1-70B, Llama-3.1-Nemotron-70B-Reward-HF,
  RLHFlow Llama3.1-8B-PRM-Deepseek-Data: all ship the Llama-3.1-Instruct tokenizer): `<|begin_of_text|>` written
  as text, then ALWAYS a system header "Cutting Knowledge Date: December 2023\\nToday Date: 26 Jul 2024\\n\\n" +
  the system message (empty if none), then each turn `<|start_header_id|>role<|end_header_id|>\\n\\n` +
  trimmed content + `<|eot_id|>`.
- INF-ORM: allenai/reward-bench rewardbench/models/inform.py (`INFORMForSequenceClassification`, the class the
  model card pastes): `score` = Linear(h, h), ReLU, Linear(h, 1); reward at `argmax(ids == pad) - 1` modulo L.
- Qwen2.5-Math-PRM: the hub's modeling_qwen2_rm.py (`Qwen2ForProcessRewardModel`): Qwen2 backbone, `score` =
  Linear(h, h), ReLU, Linear(h, 2) on every token; Qwen2.5 template (`<|im_start|>role\\n...<|im_end|>\\n`, no
  BOS); `<extra_0>` a special added token.
- Gemma-2 (Skywork-Reward-Gemma-2-27B-v0.2): Gemma tokenizer layout (`<bos>` added by the post-processor, spaces
  as `▁` by the normaliser, `<start_of_turn>` / `<end_of_turn>`), template `{{ bos_token }}` +
  `<start_of_turn>user\\n...<end_of_turn>\\n<start_of_turn>model\\n...<end_of_turn>\\n`; the checkpoint sets
  `attn_logit_softcapping` (50.0 in Gemma-2-27B), which SDPA cannot apply.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizer_layouts import _training_lines, save_llama3_tokenizer

LLAMA31_TEMPLATE = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set system = messages[0]['content'] | trim %}"
    "{% set turns = messages[1:] %}{% else %}{% set system = '' %}{% set turns = messages %}{% endif %}"
    "{{ '<|start_header_id|>system<|end_header_id|>\\n\\n' }}"
    "{{ 'Cutting Knowledge Date: December 2023\\nToday Date: 26 Jul 2024\\n\\n' + system + '<|eot_id|>' }}"
    "{% for m in turns %}"
    "{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + (m['content'] | trim) + '<|eot_id|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)
QWEN25_TEMPLATE = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% set role = 'model' if m['role'] == 'assistant' else m['role'] %}"
    "{{ '<start_of_turn>' + role + '\\n' + (m['content'] | trim) + '<end_of_turn>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)
HIDDEN = 64


def save_llama31_tokenizer(outdir: Path) -> Path:
    """The Llama-3 byte-level layout with the Llama-3.1 template (dated system header)."""
    from transformers import AutoTokenizer

    save_llama3_tokenizer(outdir)
    tokenizer = AutoTokenizer.from_pretrained(outdir)
    tokenizer.chat_template = LLAMA31_TEMPLATE
    tokenizer.save_pretrained(outdir)
    return outdir


def save_qwen25_tokenizer(outdir: Path) -> Path:
    """Qwen2.5 layout: byte-level BPE, no BOS, `<|endoftext|>` pad, `<|im_end|>` EOS, `<extra_0>` special."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(_training_lines(), trainer=trainer)
    tokenizer.add_special_tokens([AddedToken("<extra_0>", special=True, normalized=False)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = QWEN25_TEMPLATE
    fast.save_pretrained(outdir)
    return outdir


def save_gemma_tokenizer(outdir: Path) -> Path:
    """Gemma layout: BPE over `▁`-joined text (normaliser, no pre-tokenizer), `<bos>` added by the post-processor."""
    from tokenizers import Tokenizer, decoders, models, normalizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tokenizer.normalizer = normalizers.Replace(" ", "▁")
    alphabet = sorted(set("".join(_training_lines())) - {" "}) + ["▁", "\n"]
    trainer = trainers.BpeTrainer(vocab_size=760, special_tokens=specials, initial_alphabet=alphabet,
                                  show_progress=False)
    tokenizer.train_from_iterator(_training_lines(), trainer=trainer)
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B", special_tokens=[("<bos>", tokenizer.token_to_id("<bos>"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<bos>", eos_token="<eos>",
                                   pad_token="<pad>", unk_token="<unk>")
    fast.chat_template = GEMMA_TEMPLATE
    fast.save_pretrained(outdir)
    return outdir


def _common(tokenizer, pad_token_id: int | None) -> dict:
    return dict(vocab_size=len(tokenizer), hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=pad_token_id,
                tie_word_embeddings=False)


# --- INF-ORM ---------------------------------------------------------------------------------------
def inform_class():
    """A class in the structure of INFORMForSequenceClassification (reward-bench rewardbench/models/inform.py)."""
    import torch
    from torch import nn
    from transformers import LlamaModel, LlamaPreTrainedModel
    from transformers.modeling_outputs import SequenceClassifierOutputWithPast

    class INFORMForSequenceClassification(LlamaPreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.model = LlamaModel(config)
            self.score = nn.Sequential(nn.Linear(config.hidden_size, config.hidden_size), nn.ReLU(),
                                       nn.Linear(config.hidden_size, 1))
            self.post_init()

        def forward(self, input_ids=None, attention_mask=None, position_ids=None, **_):
            hidden = self.model(input_ids, attention_mask=attention_mask, position_ids=position_ids)[0]
            logits = self.score(hidden)
            if self.config.pad_token_id is None:
                last = -1
            else:  # upstream: first pad id - 1, modulo the length
                last = (torch.eq(input_ids, self.config.pad_token_id).int().argmax(-1) - 1) % input_ids.shape[-1]
            return SequenceClassifierOutputWithPast(logits=logits[torch.arange(input_ids.shape[0]), last])

    return INFORMForSequenceClassification


def save_inform(outdir: Path, seed: int) -> Path:
    import torch
    from transformers import AutoTokenizer, LlamaConfig

    save_llama31_tokenizer(outdir)
    tokenizer = AutoTokenizer.from_pretrained(outdir)
    config = LlamaConfig(**_common(tokenizer, tokenizer.pad_token_id), num_labels=1,
                         architectures=["INFORMForSequenceClassification"])
    torch.manual_seed(seed)
    model = inform_class()(config)
    with torch.no_grad():
        for layer in (model.score[0], model.score[2]):
            layer.weight.normal_(0.0, 0.5)
            layer.bias.normal_(0.0, 0.5)
    model.eval().save_pretrained(outdir)  # keys: model.*, score.0.*, score.2.*: the hub checkpoint's
    _drop_auto_map(outdir)
    return outdir


# --- Qwen2.5-Math-PRM ----------------------------------------------------------------------------------
def qwen_prm_class():
    """A class in the structure of Qwen2ForProcessRewardModel (the hub's modeling_qwen2_rm.py)."""
    from torch import nn
    from transformers import Qwen2Model, Qwen2PreTrainedModel
    from transformers.modeling_outputs import TokenClassifierOutput

    class Qwen2ForProcessRewardModel(Qwen2PreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.model = Qwen2Model(config)
            self.score = nn.Sequential(nn.Linear(config.hidden_size, config.hidden_size), nn.ReLU(),
                                       nn.Linear(config.hidden_size, config.num_labels))
            self.post_init()

        def forward(self, input_ids=None, attention_mask=None, **_):
            hidden = self.model(input_ids, attention_mask=attention_mask)[0]
            return TokenClassifierOutput(logits=self.score(hidden))  # [batch, L, 2] at every token

    return Qwen2ForProcessRewardModel


def save_qwen_prm(outdir: Path, seed: int) -> Path:
    import torch
    from transformers import AutoTokenizer, Qwen2Config

    save_qwen25_tokenizer(outdir)
    tokenizer = AutoTokenizer.from_pretrained(outdir)
    config = Qwen2Config(**_common(tokenizer, tokenizer.pad_token_id), num_labels=2,
                         architectures=["Qwen2ForProcessRewardModel"])
    torch.manual_seed(seed)
    model = qwen_prm_class()(config)
    with torch.no_grad():
        for layer in (model.score[0], model.score[2]):
            layer.weight.normal_(0.0, 0.5)
            layer.bias.normal_(0.0, 0.5)
    model.eval().save_pretrained(outdir)
    _drop_auto_map(outdir)
    return outdir


# --- causal LMs: Nemotron-70B-Reward-HF, RLHFlow's generative PRM; Gemma-2 sequence classifier ------------------
def save_llama31_causal_lm(outdir: Path, seed: int) -> Path:
    """A LlamaForCausalLM with the Llama-3.1 template and generation_config do_sample false (Nemotron-HF's)."""
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    save_llama31_tokenizer(outdir)
    tokenizer = AutoTokenizer.from_pretrained(outdir)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(LlamaConfig(**_common(tokenizer, None)))
    with torch.no_grad():
        # Logits of order 1: P("+") away from 0 and 1, so a step read at the wrong token shows.
        model.lm_head.weight.normal_(0.0, 0.1)
    model.generation_config = GenerationConfig(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id, do_sample=False)
    model.eval().save_pretrained(outdir)
    return outdir


def save_gemma2_classifier(outdir: Path, seed: int, softcapping: float = 5.0) -> Path:
    """Gemma2ForSequenceClassification with attention soft-capping (small here, so that its effect shows)."""
    import torch
    from transformers import AutoTokenizer, Gemma2Config, Gemma2ForSequenceClassification

    save_gemma_tokenizer(outdir)
    tokenizer = AutoTokenizer.from_pretrained(outdir)
    config = Gemma2Config(**_common(tokenizer, tokenizer.pad_token_id), head_dim=16, num_labels=1,
                          attn_logit_softcapping=softcapping, final_logit_softcapping=30.0, query_pre_attn_scalar=16,
                          sliding_window=512)
    torch.manual_seed(seed)
    model = Gemma2ForSequenceClassification(config)
    with torch.no_grad():
        # Rewards of a few units, like the real model's: Gemma scales its embeddings by sqrt(hidden), so unit
        # weights would give rewards near 20, where fp32 rounding alone reaches the 1e-5 tolerance.
        model.score.weight.normal_(0.0, 0.25)
        for layer in model.model.layers:  # sharp attention, so soft-capping matters at this size
            layer.self_attn.q_proj.weight.mul_(8.0)
    model.eval().save_pretrained(outdir)
    return outdir


def _drop_auto_map(outdir: Path) -> None:
    """Keep the published `architectures` but no auto_map: rmeval must not need the modeling file."""
    path = outdir / "config.json"
    config = json.loads(path.read_text())
    config.pop("auto_map", None)
    path.write_text(json.dumps(config, indent=2) + "\n")
