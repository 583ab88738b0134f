"""Tiny random-weight copies of the published ArmoRM, GRM and Eurus checkpoints, built offline.

Each fixture is a model folder laid out like the hub repository: `config.json` with the published
head fields and an `auto_map` pointing at a modeling file, weights under the published key names in
safetensors (ArmoRM sharded with an index, like its hub checkpoint), and a tokenizer in the model's
layout (Llama-3: byte-level BPE with the header/eot specials and a post-processor that adds
`<|begin_of_text|>`; Mistral for Eurus: Metaspace `▁` pieces, `<s>` added by the post-processor, no
pad token, no chat template). The modeling files are written here, in the structure and behaviour of
the authors' files (none of their text is copied):

- ArmoRM follows the hub's `modeling_custom.py` (`LlamaForRewardModelWithGating`): it imports
  `LLAMA_INPUTS_DOCSTRING` from `transformers.models.llama.modeling_llama` (gone in transformers 5),
  reads rewards at "first pad id - 1", gates at the last assistant header, and scores
  `sum(gate * (rewards @ reward_transform_matrix))`.
- GRM follows Generalizable-Reward-Model `reward_models/grm_utils.py` (`ValueHead`,
  `AutoModelForCausalLMWithValueHead.forward`): returns `(lm_logits, loss, value)` with the value read
  at `attention_mask.sum(-1) - 1`.
- Eurus follows the hub's `EurusRewardModel` (Mistral backbone, `regression_head`, reward gathered at
  `attention_mask.cumsum(1).argmax(1)`), and like it never calls `post_init`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

HIDDEN = 64
N_OBJECTIVES = 19

ARMORM_CODE = '''"""Test fixture in the structure of ArmoRM's modeling_custom.py (written for rmeval's tests)."""
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn
from transformers import LlamaModel, LlamaPreTrainedModel
from transformers.models.llama.modeling_llama import LLAMA_INPUTS_DOCSTRING
from transformers.utils import ModelOutput, add_start_docstrings_to_model_forward

# The assistant header after the user turn, as ids of this fixture's tokenizer (the hub file
# hard-codes the Llama-3 ids).
HEADER_IDS = __HEADER_IDS__


class GatingMLP(nn.Module):
    def __init__(self, in_features, out_features, temperature=10.0, hidden_dim=1024, n_hidden=3):
        super().__init__()
        self.temperature = temperature
        self.logit_scale = nn.Parameter(torch.ones(1))
        sizes = [in_features] + [hidden_dim] * n_hidden + [out_features]
        self.layers = nn.ModuleList([nn.Linear(a, b, bias=True) for a, b in zip(sizes[:-1], sizes[1:])])

    def forward(self, x):
        for index, layer in enumerate(self.layers):
            x = layer(x)
            if index < len(self.layers) - 1:
                x = F.relu(x)
        return F.softmax(x / self.temperature, dim=1) * self.logit_scale[0]


def last_header(ids):
    width = len(HEADER_IDS)
    for start in range(len(ids) - width, -1, -1):
        if ids[start:start + width] == HEADER_IDS:
            return start
    raise ValueError("Token pattern not found in the list.")


@dataclass
class GatedOutput(ModelOutput):
    rewards: Optional[torch.FloatTensor] = None
    hidden_state: Optional[torch.FloatTensor] = None
    prompt_embedding: Optional[torch.FloatTensor] = None
    gating_output: Optional[torch.FloatTensor] = None
    score: Optional[torch.FloatTensor] = None
    logits: Optional[torch.FloatTensor] = None


class LlamaForRewardModelWithGating(LlamaPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = LlamaModel(config)
        settings = config.to_dict()
        n_objectives = settings.get("num_objectives", 19)
        self.regression_layer = nn.Linear(config.hidden_size, n_objectives, bias=False)
        self.post_init()
        self.reward_transform_matrix = nn.Parameter(torch.eye(n_objectives), requires_grad=False)
        self.gating = GatingMLP(config.hidden_size, config.num_objectives,
                                temperature=settings.get("gating_temperature", 10),
                                hidden_dim=settings.get("gating_hidden_dim", 1024),
                                n_hidden=settings.get("gating_n_hidden", 3))

    @add_start_docstrings_to_model_forward(LLAMA_INPUTS_DOCSTRING)
    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        states = self.model(input_ids, attention_mask=attention_mask, position_ids=position_ids)[0]
        batch = torch.arange(input_ids.shape[0], device=states.device)
        if self.config.pad_token_id is None:
            ends = -1
        else:
            ends = (torch.eq(input_ids, self.config.pad_token_id).int().argmax(-1) - 1) % input_ids.shape[-1]
        rewards = self.regression_layer(states[batch, ends])
        gate_at = [last_header(row.tolist()) for row in input_ids]
        prompt_embedding = states[batch, gate_at, :]
        gates = self.gating(prompt_embedding)
        score = torch.sum(gates * (rewards @ self.reward_transform_matrix), dim=1)
        return GatedOutput(rewards=rewards, hidden_state=states, prompt_embedding=prompt_embedding,
                           gating_output=gates, score=score, logits=score)
'''

GRM_CODE = '''"""Test fixture in the structure of GRM's grm_utils.py value-head model (written for rmeval's tests)."""
import torch
from torch import nn
from transformers import LlamaModel, LlamaPreTrainedModel


class ValueHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        dropout = getattr(config, "summary_dropout_prob", 0.1)
        self.dropout = nn.Dropout(dropout) if dropout else nn.Identity()
        self.layer_type = getattr(config, "vhead_layer_type", "mlp")
        width = getattr(config, "vhead_num_neurons", 1024)
        if self.layer_type == "linear":
            self.summary = nn.Linear(config.hidden_size, 1)
        else:
            layers, size = [], config.hidden_size
            for _ in range(getattr(config, "vhead_num_layers", 1)):
                layers += [nn.Linear(size, width), nn.ReLU()]
                size = width
            layers.append(nn.Linear(size, 1))
            self.summary = nn.Sequential(*layers)

    def forward(self, hidden_states):
        return self.summary(self.dropout(hidden_states))


class LlamaWithValueHead(LlamaPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.v_head = ValueHead(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        states = self.model(input_ids, attention_mask=attention_mask)[0]
        lm_logits = self.lm_head(states).float()
        # the last token's value as the reward
        last_index = attention_mask.sum(dim=-1) - 1
        value = self.v_head(states).squeeze(-1)[torch.arange(len(states)), last_index]
        return (lm_logits, None, value)
'''

EURUS_CODE = '''"""Test fixture in the structure of Eurus-RM-7b's EurusRewardModel (written for rmeval's tests)."""
import torch
from torch import nn
from transformers import MistralConfig, MistralModel, PreTrainedModel


class EurusRewardModel(PreTrainedModel):
    config_class = MistralConfig

    def __init__(self, config):
        super().__init__(config)
        self.model = MistralModel(config)
        self.regression_head = nn.Linear(self.config.hidden_size, 1, bias=False)
        # like the published class: no self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        states = self.model(input_ids, attention_mask=attention_mask, position_ids=position_ids)[0]
        rewards = self.regression_head(states).squeeze(-1)
        ends = attention_mask.cumsum(dim=1).argmax(dim=1).view(-1, 1)
        return torch.gather(rewards, 1, ends)
'''

# kind: (modeling module, class, auto class, code). ArmoRM's module/class and Eurus's class are the hub's
# (Eurus's module name is assumed); GRM's hub
# modeling file was not available to read, so its module/class names here are the fixture's own (the
# behaviour follows grm_utils.py and the model card's `_, _, reward = model(...)`).
KINDS = {
    "armorm": ("modeling_custom", "LlamaForRewardModelWithGating", "AutoModelForSequenceClassification", ARMORM_CODE),
    "grm": ("modeling_grm", "LlamaWithValueHead", "AutoModelForSequenceClassification", GRM_CODE),
    "eurus": ("modeling_eurus_rm", "EurusRewardModel", "AutoModel", EURUS_CODE),
}


def llama3_tokenizer():
    """The tiny byte-level tokenizer in Llama-3's layout: its post-processor adds <|begin_of_text|>."""
    from rmeval.testing.tiny_model import BOS, build_tokenizer
    from tokenizers import processors

    tokenizer = build_tokenizer()
    bos_id = tokenizer.convert_tokens_to_ids(BOS)
    tokenizer.backend_tokenizer.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single=f"{BOS}:0 $A:0", pair=f"{BOS}:0 $A:0 {BOS}:1 $B:1",
                                      special_tokens=[(BOS, bos_id)]),
    ])
    tokenizer.model_max_length = 512  # GRM's card pads to max_length
    return tokenizer


def mistral_tokenizer():
    """A small SentencePiece-style BPE in Mistral's layout: `▁` word pieces, <s> prepended, no pad."""
    from rmeval.testing.tiny_model import corpus_text
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    backend.train_from_iterator(corpus_text().splitlines(), trainer=trainer)
    backend.post_processor = processors.TemplateProcessing(single="<s>:0 $A:0", pair="<s>:0 $A:0 <s>:1 $B:1",
                                                           special_tokens=[("<s>", backend.token_to_id("<s>"))])
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def _config(kind: str, tokenizer):
    from transformers import LlamaConfig, MistralConfig

    shape = dict(vocab_size=len(tokenizer), hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                 bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False)
    if kind == "eurus":
        return MistralConfig(**shape, pad_token_id=None, sliding_window=None)
    config = LlamaConfig(**shape, pad_token_id=tokenizer.pad_token_id)
    if kind == "armorm":
        config.update({"num_objectives": N_OBJECTIVES, "gating_temperature": 10, "gating_hidden_dim": 1024,
                       "gating_n_hidden": 3})
    else:
        config.update({"vhead_layer_type": "mlp", "vhead_num_neurons": 1024, "vhead_num_layers": 1})
    return config


def _head_tensors(kind: str, config, generator) -> dict:
    import torch

    def normal(*shape, std=1.0):
        return torch.randn(*shape, generator=generator) * std

    if kind == "armorm":
        tensors = {"regression_layer.weight": normal(N_OBJECTIVES, HIDDEN, std=0.5),
                   "gating.logit_scale": torch.tensor([1.7])}
        sizes = [HIDDEN, 1024, 1024, 1024, N_OBJECTIVES]
        for index, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            tensors[f"gating.layers.{index}.weight"] = normal(b, a, std=1.0 / a**0.5)
            tensors[f"gating.layers.{index}.bias"] = normal(b, std=0.1)
        # stage-2 of ArmoRM: identity minus a verbosity penalty on one row
        transform = torch.eye(N_OBJECTIVES)
        transform[4, :] -= normal(N_OBJECTIVES, std=0.3)
        tensors["reward_transform_matrix"] = transform
        return tensors
    if kind == "grm":
        return {"v_head.summary.0.weight": normal(1024, HIDDEN, std=HIDDEN**-0.5),
                "v_head.summary.0.bias": normal(1024, std=0.1),
                "v_head.summary.2.weight": normal(1, 1024, std=1024**-0.5 * 4),
                "v_head.summary.2.bias": normal(1, std=0.1),
                "lm_head.weight": normal(config.vocab_size, HIDDEN, std=0.02)}
    return {"regression_head.weight": normal(1, HIDDEN, std=1.0)}


def build_published_fixture(outdir: Path, kind: str, seed: int = 0, extra_tensors: dict | None = None) -> Path:
    """Write the `kind` fixture (armorm | grm | eurus) to `outdir`."""
    import torch
    from safetensors.torch import save_file
    from transformers import LlamaModel, MistralModel

    module_name, class_name, auto_class, code = KINDS[kind]
    outdir.mkdir(parents=True, exist_ok=True)
    tokenizer = mistral_tokenizer() if kind == "eurus" else llama3_tokenizer()
    if kind == "armorm":
        header = tokenizer.encode("<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n", add_special_tokens=False)
        code = code.replace("__HEADER_IDS__", repr(header))
    (outdir / f"{module_name}.py").write_text(code)
    config = _config(kind, tokenizer)
    torch.manual_seed(seed)
    backbone = (MistralModel if kind == "eurus" else LlamaModel)(config)
    state = {f"model.{key}": value.contiguous() for key, value in backbone.state_dict().items()}
    generator = torch.Generator().manual_seed(seed + 1)
    state.update(_head_tensors(kind, config, generator))
    state.update(extra_tensors or {})
    if kind == "armorm":  # sharded with an index, like the hub checkpoint
        keys = sorted(state)
        shards = {"model-00001-of-00002.safetensors": keys[: len(keys) // 2],
                  "model-00002-of-00002.safetensors": keys[len(keys) // 2:]}
        for file, names in shards.items():
            save_file({k: state[k] for k in names}, str(outdir / file), metadata={"format": "pt"})
        index = {"metadata": {}, "weight_map": {k: f for f, names in shards.items() for k in names}}
        (outdir / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    else:
        save_file(state, str(outdir / "model.safetensors"), metadata={"format": "pt"})
    config.architectures = [class_name]
    config.save_pretrained(outdir)
    saved = json.loads((outdir / "config.json").read_text())
    saved["auto_map"] = {auto_class: f"{module_name}.{class_name}"}
    (outdir / "config.json").write_text(json.dumps(saved, indent=2))
    tokenizer.save_pretrained(outdir)
    return outdir


def import_fixture_module(path: Path, kind: str) -> ModuleType:
    """Import a fixture's modeling file directly (the test patches what transformers 5 removed first)."""
    module_name = KINDS[kind][0]
    spec = importlib.util.spec_from_file_location(f"_rmeval_fixture_{kind}_{abs(hash(str(path)))}", path / f"{module_name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def reference_model(path: Path, kind: str):
    """The fixture's own class, filled from its safetensors with strict key matching (fp32, eval)."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoConfig

    module = import_fixture_module(path, kind)
    config = AutoConfig.from_pretrained(path)
    model = getattr(module, KINDS[kind][1])(config)
    state = {}
    for file in sorted(path.glob("*.safetensors")):
        state.update(load_file(str(file)))
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, unexpected
    assert all("rotary" in key for key in missing), missing
    return model.to(torch.float32).eval()
