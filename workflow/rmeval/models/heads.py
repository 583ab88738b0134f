"""Native reward heads for ArmoRM, GRM and Eurus: the published checkpoints, no hub code.

Each class is a transformers backbone (`LlamaModel` / `MistralModel`, loaded with its own
`from_pretrained`) plus the model's head written here, filled from the checkpoint's own
safetensors (or `.bin` read with `weights_only=True`). Nothing from the model repository is
imported or executed, so these models need no `trust_remote_code` and do not break when the
hub's modeling files stop importing on a newer transformers (ArmoRM's `modeling_custom.py` imports
`LLAMA_INPUTS_DOCSTRING`, which transformers 5 removed; Eurus's `EurusRewardModel` never calls
`post_init`, so transformers 5's `from_pretrained` fails on `all_tied_weights_keys`).

Every head reads its token from the attention mask, never from "the last column" or "the
mask's sum", so a row scores the same alone, right-padded or left-padded.

Facts taken from the authors' code (read, not copied):
- ArmoRM (hub `RLHFlow/ArmoRM-Llama3-8B-v0.1`, `modeling_custom.py`, class
  `LlamaForRewardModelWithGating`): keys `model.*`, `regression_layer.weight` [n_obj, h] (no bias),
  `gating.layers.{0..n_hidden}.{weight,bias}` (ReLU between, the last layer also has a bias),
  `gating.logit_scale` [1], `reward_transform_matrix` [n_obj, n_obj]; config `num_objectives`
  (19), `gating_temperature` (10), `gating_hidden_dim` (1024), `gating_n_hidden` (3). Rewards are
  read at "first pad token - 1" (the last token when the row holds no pad id); the gate reads the
  hidden state at the last occurrence of `<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n`
  (ids 128009 128006 78191 128007 271 in Llama-3); gate = softmax(mlp(x) / T) * logit_scale;
  score = sum(gate * (rewards @ reward_transform_matrix)).
- GRM (YangRui2015/Generalizable-Reward-Model `reward_models/grm_utils.py`, `ValueHead`):
  keys `model.*`, `lm_head.weight` (the SFT-regularisation head, unused for the reward),
  `v_head.summary.weight/bias` (`vhead_layer_type: linear`) or `v_head.summary.{0,2,..}.weight/bias`
  (`mlp`: Linear+ReLU x `vhead_num_layers`, then Linear to 1); value read at the last attended token
  (upstream: `attention_mask.sum(-1) - 1`, which is that token only under right padding).
- Eurus (hub `openbmb/Eurus-RM-7b`, `EurusRewardModel`, a Mistral backbone): keys `model.*`,
  `regression_head.weight` [1, h] (no bias); reward read at `attention_mask.cumsum(1).argmax(1)`,
  the last attended token.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from rmeval.errors import RmevalError
from rmeval.hub import looks_local

# ArmoRM gates on the assistant header that follows the user turn (its modeling file hard-codes
# these ids for the Llama-3 tokenizer; rmeval re-derives them from the loaded tokenizer).
ARMORM_GATING_TEXT = "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
ARMORM_LLAMA3_GATING_IDS = (128009, 128006, 78191, 128007, 271)


# --- checkpoint files ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Checkpoint:
    """Where each tensor of a checkpoint lives: key -> local file."""

    model_name: str
    files: dict[str, Path]  # key -> file

    def read(self, keys: list[str]) -> dict[str, torch.Tensor]:
        by_file: dict[Path, list[str]] = {}
        for key in keys:
            by_file.setdefault(self.files[key], []).append(key)
        tensors: dict[str, torch.Tensor] = {}
        for file, wanted in by_file.items():
            if file.suffix == ".safetensors":
                from safetensors import safe_open

                with safe_open(str(file), framework="pt") as handle:
                    for key in wanted:
                        tensors[key] = handle.get_tensor(key)
            else:
                state = torch.load(file, map_location="cpu", weights_only=True, mmap=True)
                for key in wanted:
                    tensors[key] = state[key]
        return tensors


def _fetch(path: str, filename: str, revision: str | None) -> Path | None:
    """A checkpoint file from a local folder or the hub cache (downloaded unless offline); None if absent."""
    if looks_local(path):
        candidate = Path(path).expanduser() / filename
        return candidate if candidate.is_file() else None
    from transformers.utils import cached_file

    try:
        found = cached_file(path, filename, revision=revision, _raise_exceptions_for_missing_entries=False)
    except OSError:
        return None
    return Path(found) if found else None


def open_checkpoint(model_name: str, path: str, revision: str | None) -> Checkpoint:
    """Index the weights of `path`: sharded or single safetensors, else PyTorch `.bin` files."""
    for index_name, single_name in (
        ("model.safetensors.index.json", "model.safetensors"),
        ("pytorch_model.bin.index.json", "pytorch_model.bin"),
    ):
        index = _fetch(path, index_name, revision)
        if index is not None:
            try:
                weight_map = json.loads(index.read_text())["weight_map"]
            except (ValueError, KeyError) as error:
                raise RmevalError(f"model {model_name!r}: {index}: not a weight index ({error})") from None
            files: dict[str, Path] = {}
            for shard in sorted(set(weight_map.values())):
                local = _fetch(path, shard, revision)
                if local is None:
                    raise RmevalError(f"model {model_name!r}: {index} names shard {shard!r}, which is missing")
                files.update({key: local for key, value in weight_map.items() if value == shard})
            return Checkpoint(model_name, files)
        single = _fetch(path, single_name, revision)
        if single is not None:
            if single.suffix == ".safetensors":
                from safetensors import safe_open

                with safe_open(str(single), framework="pt") as handle:
                    keys = list(handle.keys())
            else:
                keys = list(torch.load(single, map_location="cpu", weights_only=True, mmap=True))
            return Checkpoint(model_name, dict.fromkeys(keys, single))
    raise RmevalError(f"model {model_name!r}: no model.safetensors(.index.json) or pytorch_model.bin in {path!r}")


# --- token positions ----------------------------------------------------------------------------
def last_attended(mask: torch.Tensor) -> torch.Tensor:
    """Index of each row's last attended token, for either padding side."""
    positions = torch.arange(mask.shape[1], device=mask.device)
    return (mask.bool() * positions).amax(dim=1)


def first_attended(mask: torch.Tensor) -> torch.Tensor:
    positions = torch.arange(mask.shape[1], device=mask.device)
    big = torch.full_like(positions, mask.shape[1])
    return torch.where(mask.bool(), positions, big).amin(dim=1)


def positions_from_mask(mask: torch.Tensor) -> torch.Tensor:
    return (mask.long().cumsum(dim=1) - 1).clamp(min=0)


def first_pad_minus_one(input_ids: torch.Tensor, mask: torch.Tensor, pad_id: int | None) -> torch.Tensor:
    """Where transformers-4.4x-style heads read a one-row, unpadded input: `argmax(ids == pad) - 1` modulo the
    length, so the last token when the row holds no pad id, and the token before a pad id inside the text.
    Computed on the attended tokens only, so padding (either side) does not move it."""
    last = last_attended(mask)
    if pad_id is None:
        return last
    is_pad = (input_ids == pad_id) & mask.bool()
    start = first_attended(mask)
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    first_pad = torch.where(is_pad, positions, torch.full_like(positions, input_ids.shape[1])).amin(dim=1)
    inside = is_pad.any(dim=1) & (first_pad > start)
    return torch.where(inside, first_pad - 1, last)


# --- models -------------------------------------------------------------------------------------
class NativeRewardModel(nn.Module):
    """A backbone plus a reward head; `forward` returns one reward per row (shape [batch])."""

    backbone_class = "LlamaModel"
    model_type = "llama"
    # checkpoint keys of the head (exact names or prefixes ending in "."), and keys known but unused
    head_keys: tuple[str, ...] = ()
    unused_keys: tuple[str, ...] = ()

    def __init__(self, config: Any, backbone: nn.Module, name: str) -> None:
        super().__init__()
        self.config = config
        self.model = backbone
        self.name = name

    # subclasses: build the head from config + the head tensors, and compute rewards
    def build_head(self, tensors: dict[str, torch.Tensor], source: str) -> None:
        raise NotImplementedError

    def head(self, hidden: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def get_input_embeddings(self) -> nn.Module:
        return self.model.get_input_embeddings()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if position_ids is None:
            position_ids = positions_from_mask(attention_mask)
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).last_hidden_state
        head_device = next(self.head_parameters()).device
        return self.head(hidden.to(head_device), input_ids.to(head_device), attention_mask.to(head_device))

    def head_parameters(self):
        return (p for n, p in self.named_parameters() if not n.startswith("model."))

    @classmethod
    def is_head_key(cls, key: str) -> bool:
        return any(key == k or (k.endswith(".") and key.startswith(k)) for k in cls.head_keys)


class ArmoRMRewardModel(NativeRewardModel):
    head_keys = ("regression_layer.weight", "gating.", "reward_transform_matrix")

    def build_head(self, tensors: dict[str, torch.Tensor], source: str) -> None:
        config = self.config
        hidden = config.hidden_size
        n_obj = int(getattr(config, "num_objectives", 19))
        n_hidden = int(getattr(config, "gating_n_hidden", 3))
        width = int(getattr(config, "gating_hidden_dim", 1024))
        self.temperature = float(getattr(config, "gating_temperature", 10))
        self.regression_layer = nn.Linear(hidden, n_obj, bias=False)
        sizes = [hidden] + [width] * n_hidden + [n_obj]
        self.gating_layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True))
        self.logit_scale = nn.Parameter(torch.ones(1))
        self.reward_transform_matrix = nn.Parameter(torch.eye(n_obj))
        state = {"regression_layer.weight": "regression_layer.weight", "gating.logit_scale": "logit_scale",
                 "reward_transform_matrix": "reward_transform_matrix"}
        for index in range(len(sizes) - 1):
            for part in ("weight", "bias"):
                state[f"gating.layers.{index}.{part}"] = f"gating_layers.{index}.{part}"
        _load_head(self, tensors, state, source)
        # ArmoRM reads rewards at "first pad - 1": keep the checkpoint's own pad id (None: last token).
        self.reward_pad_id = config.pad_token_id
        self.gating_pattern: tuple[int, ...] | None = None

    def set_gating_pattern(self, tokenizer: Any) -> None:
        ids = tuple(tokenizer.encode(ARMORM_GATING_TEXT, add_special_tokens=False))
        if not ids:
            raise RmevalError(f"model {self.name!r}: its tokenizer encodes ArmoRM's gating header to no tokens")
        if ids[0] == ARMORM_LLAMA3_GATING_IDS[0] and ids != ARMORM_LLAMA3_GATING_IDS:
            raise RmevalError(f"model {self.name!r}: a Llama-3 tokenizer should encode ArmoRM's gating header as "
                              f"{list(ARMORM_LLAMA3_GATING_IDS)} (its modeling file's ids), got {list(ids)}")
        self.gating_pattern = ids

    def reward_positions(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return first_pad_minus_one(input_ids, mask, self.reward_pad_id)

    def gating_positions(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.gating_pattern is None:
            raise RmevalError(f"model {self.name!r}: the gating pattern is unset (set_gating_pattern)")
        pattern = torch.tensor(self.gating_pattern, device=input_ids.device)
        width = len(self.gating_pattern)
        if input_ids.shape[1] < width:
            raise RmevalError(f"model {self.name!r}: a row is shorter than ArmoRM's gating header")
        windows = input_ids.unfold(1, width, 1)  # [batch, L - width + 1, width]
        inside = mask.bool().unfold(1, width, 1).all(dim=-1)
        found = (windows == pattern).all(dim=-1) & inside
        if not bool(found.any(dim=1).all()):
            raise RmevalError(
                f"model {self.name!r}: a row lacks ArmoRM's gating header {ARMORM_GATING_TEXT!r} "
                f"(ids {list(self.gating_pattern)}); render rows with the Llama-3 chat template"
            )
        positions = torch.arange(found.shape[1], device=input_ids.device)
        return torch.where(found, positions, torch.full_like(positions, -1)).amax(dim=1)

    def head(self, hidden: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        rewards = self.regression_layer(hidden[rows, self.reward_positions(input_ids, mask)])
        x = hidden[rows, self.gating_positions(input_ids, mask)]
        for index, layer in enumerate(self.gating_layers):
            x = layer(x)
            if index < len(self.gating_layers) - 1:
                x = torch.relu(x)
        gate = torch.softmax(x / self.temperature, dim=1) * self.logit_scale[0]
        return torch.sum(gate * (rewards @ self.reward_transform_matrix), dim=1)


class GRMRewardModel(NativeRewardModel):
    head_keys = ("v_head.",)
    unused_keys = ("lm_head.weight",)

    def build_head(self, tensors: dict[str, torch.Tensor], source: str) -> None:
        config = self.config
        layer_type = getattr(config, "vhead_layer_type", None)
        if layer_type is None:  # upstream's default is 'mlp'; the tensors say which one was saved
            layer_type = "linear" if "v_head.summary.weight" in tensors else "mlp"
        if layer_type == "linear":
            self.summary = nn.Linear(config.hidden_size, int(getattr(config, "vhead_num_output", 1)))
            state = {"v_head.summary.weight": "summary.weight", "v_head.summary.bias": "summary.bias"}
        elif layer_type == "mlp":
            width = int(getattr(config, "vhead_num_neurons", 1024))
            n_layers = int(getattr(config, "vhead_num_layers", 1))
            modules: list[nn.Module] = []
            size = config.hidden_size
            for _ in range(n_layers):
                modules += [nn.Linear(size, width), nn.ReLU()]
                size = width
            modules.append(nn.Linear(size, int(getattr(config, "vhead_num_output", 1))))
            self.summary = nn.Sequential(*modules)
            state = {}
            for index, module in enumerate(modules):
                if isinstance(module, nn.Linear):
                    for part in ("weight", "bias"):
                        state[f"v_head.summary.{index}.{part}"] = f"summary.{index}.{part}"
        else:
            raise RmevalError(f"model {self.name!r}: {source}: vhead_layer_type {layer_type!r} is not 'linear' or 'mlp'")
        _load_head(self, tensors, state, source)
        if int(getattr(config, "vhead_num_output", 1)) != 1:
            raise RmevalError(f"model {self.name!r}: {source}: vhead_num_output must be 1 for a scalar reward")

    def head(self, hidden: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        return self.summary(hidden[rows, last_attended(mask)])[:, 0]


class EurusRewardModel(NativeRewardModel):
    backbone_class = "MistralModel"
    model_type = "mistral"
    head_keys = ("regression_head.weight",)

    def build_head(self, tensors: dict[str, torch.Tensor], source: str) -> None:
        self.regression_head = nn.Linear(self.config.hidden_size, 1, bias=False)
        _load_head(self, tensors, {"regression_head.weight": "regression_head.weight"}, source)

    def head(self, hidden: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        return self.regression_head(hidden[rows, last_attended(mask)])[:, 0]


class INFORMRewardModel(NativeRewardModel):
    """INF-ORM-Llama3.1-70B: a Llama backbone and a two-layer MLP score head (Linear h->h, ReLU, Linear h->1).

    Follows allenai/reward-bench rewardbench/models/inform.py (`INFORMForSequenceClassification`, the class the
    model card pastes): keys `score.0.{weight,bias}`, `score.2.{weight,bias}`; the reward is read where
    transformers' sequence classifiers read it, `argmax(ids == config.pad_token_id) - 1` modulo the length.
    """

    head_keys = ("score.",)

    def build_head(self, tensors: dict[str, torch.Tensor], source: str) -> None:
        hidden = self.config.hidden_size
        self.score = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        state = {f"score.{index}.{part}": f"score.{index}.{part}" for index in (0, 2) for part in ("weight", "bias")}
        _load_head(self, tensors, state, source)
        self.reward_pad_id = self.config.pad_token_id

    def head(self, hidden: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        return self.score(hidden[rows, first_pad_minus_one(input_ids, mask, self.reward_pad_id)])[:, 0]


class QwenPRMModel(NativeRewardModel):
    """Qwen2.5-Math-PRM: a Qwen2 backbone and a two-class MLP head (Linear h->h, ReLU, Linear h->2) on every token.

    Follows the hub's modeling_qwen2_rm.py (`Qwen2ForProcessRewardModel`) and the model card's
    `make_step_rewards`: softmax over the two logits at each `<extra_0>` separator, class 1 the positive one.
    `forward` is not used; the scorer reads the backbone and calls `step_probabilities` at the separators only.
    """

    backbone_class = "Qwen2Model"
    model_type = "qwen2"
    head_keys = ("score.",)
    unused_keys = ("lm_head.weight",)

    def build_head(self, tensors: dict[str, torch.Tensor], source: str) -> None:
        hidden = self.config.hidden_size
        n_labels = int(getattr(self.config, "num_labels", 2))
        if n_labels != 2:
            raise RmevalError(f"model {self.name!r}: {source}: num_labels is {n_labels}; the PRM head has 2 classes")
        self.score = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 2))
        state = {f"score.{index}.{part}": f"score.{index}.{part}" for index in (0, 2) for part in ("weight", "bias")}
        _load_head(self, tensors, state, source)

    def step_probabilities(self, hidden: torch.Tensor) -> torch.Tensor:
        """P(positive) of hidden states [n, h]: the card's softmax over the head's two logits, class 1."""
        return torch.softmax(self.score(hidden), dim=-1)[:, 1]


def _load_head(model: NativeRewardModel, tensors: dict[str, torch.Tensor], names: dict[str, str], source: str) -> None:
    """Copy checkpoint tensors (key -> own parameter name) into the head, exactly, or say what is wrong."""
    missing = sorted(set(names) - set(tensors))
    if missing:
        raise RmevalError(f"model {model.name!r}: {source}: head weight {missing[0]!r} is missing "
                          f"(expected {sorted(names)})")
    extra = sorted(set(tensors) - set(names))
    if extra:
        raise RmevalError(f"model {model.name!r}: {source}: unknown head weight {extra[0]!r} "
                          f"(this head reads {sorted(names)})")
    own = dict(model.named_parameters())
    with torch.no_grad():
        for key, target in names.items():
            tensor = tensors[key]
            if tuple(own[target].shape) != tuple(tensor.shape):
                raise RmevalError(f"model {model.name!r}: {source}: {key!r} has shape {list(tensor.shape)}, "
                                  f"the config implies {list(own[target].shape)}")
            own[target].copy_(tensor.to(own[target].dtype))


NATIVE_MODELS: dict[str, type[NativeRewardModel]] = {
    "armorm": ArmoRMRewardModel,
    "grm": GRMRewardModel,
    "eurus": EurusRewardModel,
    "inf-orm": INFORMRewardModel,
    "qwen-prm": QwenPRMModel,
}
CONFIG_CLASSES = {"llama": "LlamaConfig", "mistral": "MistralConfig", "qwen2": "Qwen2Config"}


def load_native_model(
    model_class: type[NativeRewardModel],
    name: str,
    path: str,
    *,
    revision: str | None,
    dtype: torch.dtype,
    device_map: str | None,
    attn_implementation: str = "sdpa",
) -> NativeRewardModel:
    """Config + weights of `path` (hub id or folder, pinned `revision`) into `model_class`."""
    import transformers
    from transformers.utils import logging as transformers_logging

    config_class = getattr(transformers, CONFIG_CLASSES[model_class.model_type])
    try:
        config = config_class.from_pretrained(path, revision=revision)
    except OSError as error:
        raise RmevalError(f"model {name!r}: cannot read config.json from {path!r}: {error}") from None
    if config.model_type != model_class.model_type:
        raise RmevalError(f"model {name!r}: {path}/config.json has model_type {config.model_type!r}; "
                          f"the {model_class.__name__} head needs {model_class.model_type!r}")
    checkpoint = open_checkpoint(name, path, revision)
    head_keys, backbone_keys = [], []
    for key in sorted(checkpoint.files):
        if model_class.is_head_key(key):
            head_keys.append(key)
        elif key.startswith("model."):
            backbone_keys.append(key)
        elif key not in model_class.unused_keys:
            raise RmevalError(f"model {name!r}: {checkpoint.files[key]}: unknown weight {key!r} for the "
                              f"{model_class.__name__} head (known: model.*, {', '.join(model_class.head_keys)})")
    if not backbone_keys:
        raise RmevalError(f"model {name!r}: {path}: no backbone weights (model.*) in the checkpoint")
    backbone_class = getattr(transformers, model_class.backbone_class)
    kwargs: dict[str, Any] = {"revision": revision, "config": config, "dtype": dtype, "output_loading_info": True}
    if device_map is not None:
        kwargs["device_map"] = device_map
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # the head keys are "unexpected" for the bare backbone
    try:
        try:
            backbone, info = backbone_class.from_pretrained(path, attn_implementation=attn_implementation, **kwargs)
        except (ValueError, ImportError) as error:  # applied as asked, never another kernel silently
            raise RmevalError(f"model {name!r}: cannot load {path!r} with attn_implementation="
                              f"{attn_implementation!r} (the entry's `attn_implementation`): {error}") from None
    except OSError as error:
        raise RmevalError(f"model {name!r}: cannot load backbone weights from {path!r}: {error}") from None
    finally:
        transformers_logging.set_verbosity(verbosity)
    missing = sorted(k for k in info.get("missing_keys", ()) if "rotary" not in k)
    if missing:
        raise RmevalError(f"model {name!r}: {path}: backbone weight model.{missing[0]} is missing from the checkpoint")
    mismatched = sorted(info.get("mismatched_keys", ()))
    if mismatched:
        raise RmevalError(f"model {name!r}: {path}: backbone weight {mismatched[0]} does not match config.json")
    model = model_class(config, backbone, name)
    source = str(checkpoint.files[head_keys[0]]) if head_keys else path
    model.build_head(checkpoint.read(head_keys), source)
    head_device = backbone.norm.weight.device  # where the last hidden state comes out
    for param in model.head_parameters():
        param.data = param.data.to(device=head_device, dtype=dtype)
    model.attn_implementation = getattr(backbone.config, "_attn_implementation", None) or attn_implementation
    return model.eval()
