"""Tiny random-weight reward models whose tokenizers have the layouts of the published ones.

Each builder writes a `save_pretrained` folder (hidden size 64, 2 layers) whose tokenizer files are laid
out like the hub repository's, built offline with the `tokenizers` library on rmeval's packaged corpus.
Only facts are mirrored (special tokens, pre-tokenizer/normaliser layout, post-processor, pad token,
rendered template format); the chat templates are written here.

- Llama-3 byte-level BPE (FsfairX-LLaMA3-RM-v0.1): `<|begin_of_text|>`, header and `<|eot_id|>` tokens,
  a post-processor that adds BOS, `tokenizer_class: PreTrainedTokenizerFast`; the Llama-3-Instruct format.
- SentencePiece-style BPE of Llama-2 / Mistral (RM-Mistral-7B, Mistral-RM-for-RAFT-GSHF-v0, tulu-v2.5, the
  Math-Shepherd PRM), `tokenizer_class: LlamaTokenizer`, BOS post-processor, in both hub layouts (`LAYOUTS`):
  `legacy` (normaliser `Prepend("▁")` + `Replace(" ", "▁")`, `legacy: true`: every text segment, also the
  one after a special token, starts with `▁`) and `non-legacy` (Metaspace `prepend_scheme="first"`,
  `legacy: false`: only the start of the whole input gets `▁`). transformers 5 loads a `mistral` checkpoint's
  tokenizer.json as it is and rebuilds a `llama` one's as Metaspace "always"/"first" from the `legacy` flag,
  so the file and the flag agree here and both paths give the layout named.
- Qwen3 byte-level BPE (Skywork-Reward-V2-Qwen3-0.6B): no BOS, `<|im_start|>` / `<|im_end|>`, `<think>`.
"""

from __future__ import annotations

import json
from pathlib import Path

from rmeval.testing.tiny_model import corpus_text

# The ids that matter for the tests are spelled out in the tests themselves; these are the layouts.
LAYOUTS = ("legacy", "non-legacy")

# Llama-3-Instruct's rendered format: BOS, then per message a role header, the trimmed content, <|eot_id|>.
LLAMA3_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + (m['content'] | trim) + '<|eot_id|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)
# Mistral-7B-Instruct-v0.2's rendered format (the base of RLHFlow's Mistral RMs): `<s>[INST] u [/INST]a</s>`.
MISTRAL_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}{{ '[INST] ' + m['content'] + ' [/INST]' }}"
    "{% else %}{{ m['content'] + eos_token }}{% endif %}{% endfor %}"
)
# The Tulu 2 format the Tulu 2.5 tokenizers ship (allenai model cards: "we have included a chat template in the
# tokenizer"): no BOS, `<|user|>\nu\n<|assistant|>\na</s>` and a newline after every message, so the text
# ends in `</s>\n`.
TULU2_SHIPPED_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'user' %}{{ '<|user|>\\n' + m['content'] + '\\n' }}"
    "{% elif m['role'] == 'assistant' %}{{ '<|assistant|>\\n' + m['content'] + eos_token + '\\n' }}{% endif %}"
    "{% endfor %}"
)
# Qwen3's rendered format for a finished exchange: an empty think block before the last assistant turn.
QWEN3_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'assistant' and loop.last %}"
    "{{ '<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' + m['content'] + '<|im_end|>\\n' }}"
    "{% else %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# Text the tokenizers are trained on besides the corpus, so the format's pieces are whole tokens.
FORMAT_LINES = [
    "[INST] Write an abstract for a paper [/INST] We study",
    "<|user|>\nWrite an abstract\n<|assistant|>\nWe study",
    "Step 1: Let x = 3 + 2 ки\nStep 2: So x - 1 = 4 ки",
    "+ - + -",
]


def _training_lines() -> list[str]:
    # One line per text line: like SentencePiece, no learned piece spans a newline.
    return corpus_text().splitlines() + [line for text in FORMAT_LINES for line in text.splitlines()] * 20


def _sentencepiece_style(vocab_size: int, layout: str):
    """A Llama-2 / Mistral style BPE: `▁` marks word starts, <unk>=0, <s>=1, </s>=2, in the hub file layout."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    alphabet = sorted(set("".join(_training_lines())) - {" "}) + ["▁", "\n"]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"],
                                  initial_alphabet=alphabet, show_progress=False)
    tokenizer.train_from_iterator(_training_lines(), trainer=trainer)
    if layout == "legacy":  # no pre-tokenizer; the normaliser marks spaces and the start of every segment
        tokenizer.pre_tokenizer = None
        tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                               decoders.Strip(" ", 1, 0)])
    else:
        tokenizer.normalizer = None
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
        tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return tokenizer


def save_sentencepiece_tokenizer(outdir: Path, *, layout: str, chat_template: str | None,
                                 pad_token: str | None = None, vocab_size: int = 760) -> Path:
    """Write a Llama-2 / Mistral tokenizer folder in `layout` (one of LAYOUTS)."""
    from transformers import PreTrainedTokenizerFast

    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}")
    outdir.mkdir(parents=True, exist_ok=True)
    fast = PreTrainedTokenizerFast(tokenizer_object=_sentencepiece_style(vocab_size, layout), bos_token="<s>",
                                   eos_token="</s>", unk_token="<unk>")
    if pad_token:
        fast.add_special_tokens({"pad_token": pad_token})  # RLHFlow's mistral_7B_rm.py adds "[PAD]"
    fast.chat_template = chat_template
    fast.save_pretrained(outdir)
    config_path = outdir / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config.update(tokenizer_class="LlamaTokenizer", add_bos_token=True, add_eos_token=False, legacy=layout == "legacy")
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    return outdir


def save_llama3_tokenizer(outdir: Path) -> Path:
    """Llama-3 layout: byte-level BPE, BOS added by the post-processor, the Llama-3-Instruct template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(_training_lines(), trainer=trainer)
    bos_id = tokenizer.token_to_id("<|begin_of_text|>")
    tokenizer.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                      special_tokens=[("<|begin_of_text|>", bos_id)]),
    ])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<|begin_of_text|>",
                                   eos_token="<|eot_id|>")
    fast.add_special_tokens({"pad_token": "[PAD]"})  # RLHFlow's llama3_8B_rm.py adds "[PAD]"
    fast.chat_template = LLAMA3_TEMPLATE
    fast.save_pretrained(outdir)
    return outdir


def save_qwen3_tokenizer(outdir: Path) -> Path:
    """Qwen3 layout: byte-level BPE, no BOS, `<|endoftext|>` as pad, `<|im_end|>` as EOS."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(_training_lines(), trainer=trainer)
    tokenizer.add_tokens([AddedToken("<think>", special=False), AddedToken("</think>", special=False)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = QWEN3_TEMPLATE
    fast.save_pretrained(outdir)
    return outdir


def save_tiny_model(outdir: Path, family: str, *, seed: int, causal_lm: bool = False,
                    pad_token_id: int | None = None, head_dim: int = 16) -> Path:
    """Random weights for the tokenizer saved in `outdir`: `llama`, `mistral` or `qwen3`, 4 heads of `head_dim`
    (hidden 64 by default; vLLM's CPU attention needs head_dim 64), 2 layers."""
    import torch
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(outdir)
    common = dict(vocab_size=len(tokenizer), hidden_size=4 * head_dim, intermediate_size=8 * head_dim, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024, num_labels=1,
                  bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                  pad_token_id=pad_token_id, tie_word_embeddings=False)
    if family == "llama":
        from transformers import LlamaConfig as Config
        from transformers import LlamaForCausalLM as CausalLM
        from transformers import LlamaForSequenceClassification as Classifier
    elif family == "mistral":
        from transformers import MistralConfig as Config
        from transformers import MistralForCausalLM as CausalLM
        from transformers import MistralForSequenceClassification as Classifier
    elif family == "qwen3":
        from transformers import Qwen3Config as Config
        from transformers import Qwen3ForCausalLM as CausalLM
        from transformers import Qwen3ForSequenceClassification as Classifier

        common["head_dim"] = head_dim
    else:
        raise ValueError(f"unknown family {family!r}")
    torch.manual_seed(seed)
    model = (CausalLM if causal_lm else Classifier)(Config(**common))
    if not causal_lm:
        with torch.no_grad():
            model.score.weight.normal_(0.0, 1.0)  # rewards of order 1, so a wrong token shows
    model.eval().save_pretrained(outdir)
    return outdir
