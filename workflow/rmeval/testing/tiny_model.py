"""`rmeval tiny-model OUTDIR [--seed N] [--kind classifier|prm|constant]`: a small offline reward model.

It is a real transformers checkpoint that loads with `from_pretrained`: a Llama-style
`LlamaForSequenceClassification` (or, with `--kind prm`, a `LlamaForCausalLM` process reward
model using Math-Shepherd's step tag), a byte-level BPE tokenizer trained locally on the text
shipped in `rmeval/data/tiny_corpus.txt`, and a Llama-3-style chat template. Weights are random
but seeded, so two seeds give two different "reward models". Users smoke-test a cluster with it;
the tests use it everywhere.
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path

from rmeval.built_models import TINY_CARD

BOS = "<|begin_of_text|>"
EOS = "<|end_of_text|>"
PAD = "<|pad|>"
START_HEADER = "<|start_header_id|>"
END_HEADER = "<|end_header_id|>"
EOT = "<|eot_id|>"
SPECIAL_TOKENS = [BOS, EOS, PAD, START_HEADER, END_HEADER, EOT]
# Math-Shepherd's step tag, kept as one token like in the real PRM's vocabulary.
PRM_STEP_TAG = "ки"

# Llama-3's template shape: BOS, then header/content/eot per message. ArmoRM's gating looks for the
# assistant header (eot, start_header, "assistant", end_header), which this template reproduces.
LLAMA3_STYLE_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)

VOCAB_SIZE = 640
MAX_POSITIONS = 2048
HEAD_DIM = 16  # 4 heads of 16: hidden 64. vLLM's CPU attention kernel refuses head_dim 16: its tests use 64.


def corpus_text() -> str:
    return resources.files("rmeval").joinpath("data/tiny_corpus.txt").read_text(encoding="utf-8")


def build_tokenizer():
    """A byte-level BPE tokenizer trained on the packaged corpus (deterministic)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus_text().splitlines(), trainer=trainer)
    tokenizer.add_tokens([PRM_STEP_TAG])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        additional_special_tokens=[START_HEADER, END_HEADER, EOT],
    )
    fast.chat_template = LLAMA3_STYLE_TEMPLATE
    return fast


def tiny_llama_config(tokenizer, head_dim: int = HEAD_DIM, **overrides):
    from transformers import LlamaConfig

    settings = dict(
        vocab_size=len(tokenizer),
        hidden_size=4 * head_dim,
        intermediate_size=8 * head_dim,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_POSITIONS,
        num_labels=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    settings.update(overrides)
    return LlamaConfig(**settings)


def build_tiny_model(outdir: str | Path, seed: int = 0, kind: str = "classifier", head_dim: int = HEAD_DIM) -> Path:
    """Write a tiny reward model to `outdir` and return the path (4 attention heads of `head_dim`)."""
    import torch
    from transformers import LlamaForCausalLM, LlamaForSequenceClassification

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    config = tiny_llama_config(tokenizer, head_dim)
    torch.manual_seed(seed)
    if kind in ("classifier", "constant"):
        model = LlamaForSequenceClassification(config)
        with torch.no_grad():
            # A larger head than the default init so seeds give clearly different reward scales; `constant`
            # zeroes it (the head has no bias): reward 0 for every input, a degenerate but legal model.
            model.score.weight.normal_(0.0, 1.0) if kind == "classifier" else model.score.weight.zero_()
    elif kind == "prm":
        model = LlamaForCausalLM(config)
    else:
        raise ValueError(f"unknown tiny model kind {kind!r}")
    model.eval()
    model.save_pretrained(outdir)
    tokenizer.save_pretrained(outdir)
    card = {"rmeval_tiny_model": {"seed": seed, "kind": kind, "corpus": "rmeval/data/tiny_corpus.txt"}}
    if head_dim != HEAD_DIM:
        card["rmeval_tiny_model"]["head_dim"] = head_dim
    (outdir / TINY_CARD).write_text(json.dumps(card, indent=2) + "\n")
    return outdir


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rmeval tiny-model", description=__doc__.splitlines()[0])
    parser.add_argument("outdir", help="directory to write the model into (created if missing)")
    parser.add_argument("--seed", type=int, default=0, help="weight seed; different seeds give different rewards")
    parser.add_argument("--kind", choices=("classifier", "prm", "constant"), default="classifier",
                        help="classifier: sequence-classification RM; prm: causal-LM process reward model; "
                             "constant: a classifier whose reward is 0 for every input")
    parser.add_argument("--head-dim", type=int, default=HEAD_DIM,
                        help=f"attention head size (default {HEAD_DIM}; vLLM's CPU kernel needs 64): hidden = 4 x this")
    args = parser.parse_args(argv)
    path = build_tiny_model(args.outdir, seed=args.seed, kind=args.kind, head_dim=args.head_dim)
    print(f"wrote tiny {args.kind} reward model (seed {args.seed}) to {path}")
    return 0
