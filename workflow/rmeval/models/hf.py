"""The shared path of every local transformers adapter: loading, padding, batched forward.

Subclasses say which Auto class loads the model, which padding side it needs, how the
text is rendered, and how the model's output becomes one scalar per row.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from pathlib import Path
from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.hub import hub_offline, looks_local
from rmeval.models.base import BatchScores, Prepared, RewardScorer, Runtime
from rmeval.models.chat import (
    ChatRenderer,
    Encoded,
    RenderFn,
    RowEncoder,
    chat_template_renderer,
    unused_token_id,
)
from rmeval.models.pipeline_input import PipelineEncoder
from rmeval.registry import ModelSpec
from rmeval.tasks import ModelInput, Pairs

PADDING_SIDES = ("left", "right")


def _log(message: str) -> None:
    print(f"rmeval score: {message}", file=sys.stderr, flush=True)


def local_fingerprint(path: Path) -> str:
    """A content fingerprint of a local model folder (file names and sizes, small text files' bytes)."""
    digest = hashlib.sha256()
    for item in sorted(path.iterdir()):
        if item.is_file():
            digest.update(f"{item.name}:{item.stat().st_size}\n".encode())
            if item.suffix in (".json", ".py", ".jinja"):
                digest.update(item.read_bytes())
    return f"local-sha256:{digest.hexdigest()[:16]}"


def resolve_commit(spec: ModelSpec) -> str | None:
    """The hub commit `spec.revision` (None = main) points to: from the local HF cache first (what
    `rmeval download-model` filled), else from the Hub unless offline. None when unknown."""
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(spec.path, "config.json", revision=spec.revision)
        if isinstance(cached, str):
            return Path(cached).parent.name  # .../snapshots/<commit>/config.json
        if hub_offline():
            return None
        from huggingface_hub import HfApi

        return HfApi().model_info(spec.path, revision=spec.revision).sha
    except Exception:  # noqa: BLE001 - best effort; loading itself reports real problems
        return None


def model_revision(spec: ModelSpec) -> tuple[str | None, str]:
    """(revision to load with, revision to record). Loading pins the resolved commit so tokenizer and
    weights come from the same repository state."""
    if looks_local(spec.path):
        path = Path(spec.path).expanduser()
        if not path.is_dir():
            raise RmevalError(f"model {spec.name!r}: path {spec.path!r} is not a model directory")
        if path.parent.name == "snapshots":  # a Hugging Face cache snapshot: the folder is the commit
            return None, path.name
        return None, local_fingerprint(path)
    commit = resolve_commit(spec)
    if commit:
        return commit, commit
    return spec.revision, spec.revision or "unresolved (hub main)"


def attn_error(spec: ModelSpec, error: BaseException) -> RmevalError:
    """The entry's `attn_implementation` cannot be applied: say so instead of silently loading another kernel
    (the numbers would change: RewardBench issue 169, SDPA on Gemma-2)."""
    return RmevalError(
        f"model {spec.name!r}: cannot load {spec.path!r} with attn_implementation={spec.attn_implementation!r} "
        f"(its registry entry's `attn_implementation`): {error}. Set the entry's `attn_implementation` to one the "
        "model supports (sdpa, eager; flash_attention_2 needs the flash-attn package)"
    )


def loaded_attn_implementation(config: Any, wanted: str) -> str:
    """The kernel transformers actually set on the loaded model's config (what `.meta.json` and the lock record)."""
    return str(getattr(config, "_attn_implementation", None) or wanted)


class HFScorer(RewardScorer):
    """A local transformers reward model scored in padded batches."""

    auto_class = "AutoModelForSequenceClassification"
    default_padding_side = "right"
    supported_padding_sides: tuple[str, ...] = PADDING_SIDES
    default_chat_template: str | None = None  # adapter's format when the registry sets none
    # Builds a text pipeline's input (rmeval.models.pipeline_input) when a benchmark asks (`Pairs.model_input`);
    # the adapters whose models have a pipeline of their own upstream keep rmeval's input.
    follows_text_pipeline = False

    def __init__(self, spec: ModelSpec, runtime: Runtime) -> None:
        import torch

        self.spec = spec
        self.runtime = runtime
        self.torch_dtype = getattr(torch, runtime.dtype)
        self.padding_side = runtime.padding_side or self.default_padding_side
        if self.padding_side not in self.supported_padding_sides:
            raise RmevalError(
                f"model {spec.name!r}: adapter {spec.adapter!r} supports padding {list(self.supported_padding_sides)}, "
                f"not {self.padding_side!r}"
            )
        if not sys.stderr.isatty():
            # transformers' own tqdm bars are carriage-return soup in Snakemake / Slurm log files.
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
        self.load_revision, self.revision = model_revision(spec)
        self.tokenizer = self._load_tokenizer()
        self.model, self.attn_implementation = self._load_model()
        self.model.eval()
        self.pad_from_config = isinstance(getattr(self.model.config, "pad_token_id", None), int)
        self.pad_id = self._pad_id()
        self.input_device = self.model.get_input_embeddings().weight.device
        self.takes_position_ids = self._accepts("position_ids")
        self.encoded: Encoded | None = None
        self.tokenization: dict[str, Any] = {}

    # --- loading ---------------------------------------------------------------------------
    def _load_tokenizer(self) -> Any:
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(
                self.spec.path, revision=self.load_revision, trust_remote_code=self.spec.trust_remote_code
            )
        except OSError as error:
            raise RmevalError(f"model {self.spec.name!r}: cannot load tokenizer from {self.spec.path!r}: {error}") from None

    def _load_kwargs(self) -> dict[str, Any]:
        import transformers
        from packaging.version import Version

        # transformers renamed `torch_dtype` to `dtype` in 4.56; older releases only know the old name.
        dtype_key = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"
        kwargs: dict[str, Any] = {
            "revision": self.load_revision,
            dtype_key: self.torch_dtype,
            "trust_remote_code": self.spec.trust_remote_code,
        }
        if self.runtime.device == "auto-sharded":
            kwargs["device_map"] = "auto"  # e.g. a 13B model over 2 GPUs
        elif self.runtime.device != "cpu":
            kwargs["device_map"] = self.runtime.device
        return kwargs

    def _load_model(self) -> tuple[Any, str]:
        import transformers

        auto = getattr(transformers, self.auto_class)
        kwargs = self._load_kwargs()
        wanted = self.spec.attn_implementation
        try:
            model = auto.from_pretrained(self.spec.path, attn_implementation=wanted, **kwargs)
        except (ValueError, ImportError) as error:
            raise attn_error(self.spec, error) from None
        except OSError as error:
            raise RmevalError(f"model {self.spec.name!r}: cannot load weights from {self.spec.path!r}: {error}") from None
        return model, loaded_attn_implementation(model.config, wanted)

    def _pad_id(self) -> int:
        # The model's own config decides which id its head treats as padding, so pad with that one.
        for candidate in (
            getattr(self.model.config, "pad_token_id", None),
            self.tokenizer.pad_token_id,
            self.tokenizer.eos_token_id,
        ):
            if isinstance(candidate, int):
                if getattr(self.model.config, "pad_token_id", None) is None:
                    self.model.config.pad_token_id = candidate  # HF heads refuse batches > 1 without it
                return candidate
        raise RmevalError(f"model {self.spec.name!r}: no pad, eos or config pad token id to pad batches with")

    def _keep_pad_out_of_rows(self) -> None:
        """A config without `pad_token_id` gets one that no row contains: the HF heads read the reward at the
        last token that is not the pad id, so padding with e.g. EOS would move the reward of a row ending in EOS
        off its last token, unlike the model card's unpadded, one-row-at-a-time call (which reads the last)."""
        assert self.encoded is not None
        vocab = int(self.model.get_input_embeddings().weight.shape[0])
        preferred = [self.pad_id, self.tokenizer.pad_token_id, self.tokenizer.unk_token_id]
        self.pad_id = unused_token_id(self.encoded.flat_ids, preferred, vocab)
        self.model.config.pad_token_id = self.pad_id

    def _accepts(self, argument: str) -> bool:
        parameters = inspect.signature(self.model.forward).parameters
        return argument in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())

    # --- encoding ----------------------------------------------------------------------------
    def renderer(self, model_input: ModelInput | None = None) -> RenderFn:
        if model_input is not None and getattr(self.tokenizer, "chat_template", None):
            # RewardBench's scripts take the tokenizer's template whenever it has one (utils.py
            # check_tokenizer_chat_template), whatever else is configured.
            return chat_template_renderer(self.tokenizer, None, self.spec.name)
        source = "registry" if self.spec.chat_template else "adapter"
        return chat_template_renderer(
            self.tokenizer, self.spec.chat_template or self.default_chat_template, self.spec.name, source
        )

    def texts_of(self, pairs: Pairs) -> tuple[list[str], list[str]]:
        """(prompts, responses) as this adapter renders them; PRMs override."""
        return pairs.prompts, pairs.responses

    def row_encoder_class(self) -> type[RowEncoder]:
        """How rendered text becomes ids; GRM tokenises with the tokenizer's special tokens."""
        return RowEncoder

    def _encoder(self, model_input: ModelInput | None) -> tuple[RenderFn, Any]:
        """(render, encoder): the benchmark's pipeline input when it asks and this adapter follows it, else rmeval's."""
        if model_input is not None:
            render = self.renderer(model_input)
            return render, PipelineEncoder(self.tokenizer, render, max_length=model_input.max_length,
                                           truncation_side=model_input.truncation_side, model_name=self.spec.name)
        render = self.renderer()
        return render, self.row_encoder_class()(
            self.tokenizer,
            render,
            max_length=self.spec.max_length,
            truncation=self.spec.truncation,
            add_bos=self.spec.add_bos,
            model_name=self.spec.name,
        )

    def prepare(self, pairs: Pairs) -> Prepared:
        model_input = pairs.model_input if self.follows_text_pipeline else None
        render, encoder = self._encoder(model_input)
        prompts, responses = self.texts_of(pairs)
        self.encoded = encoder.encode(pairs.ids, prompts, responses)
        # Which template and BOS policy produced the ids (`.meta.json` adapter_details).
        plain = {"chat_template_source": "none (adapter's plain-text format)", "chat_template_sha256": None}
        template = render.describe() if isinstance(render, ChatRenderer) else plain
        ids_digest = hashlib.sha256(self.encoded.flat_ids.tobytes() + self.encoded.offsets.tobytes()).hexdigest()[:16]
        hidden = self.encoded.hidden_first
        if hidden is not None:
            ids_digest = hashlib.sha256(bytes.fromhex(ids_digest) + hidden.tobytes()).hexdigest()[:16]
        own = {"model_input": "rmeval"} if model_input is None else {}
        if pairs.model_input is not None and model_input is None:
            own["model_input"] = f"rmeval (adapter {self.spec.adapter!r} has its own pipeline upstream)"
        self.tokenization = {**template, **own, **encoder.describe(), "input_ids_sha256": ids_digest}
        if not self.pad_from_config and model_input is None:
            # (The official pipeline pads with the tokenizer's pad / EOS id and the head reads the last token that
            # is not that id; in its input mode rmeval keeps that id, so a row ending in it reads the same token.)
            self._keep_pad_out_of_rows()
        lengths = self.encoded.lengths
        return Prepared(costs=lengths.copy(), n_tokens=lengths.copy(), truncated=self.encoded.truncated.copy(),
                        keys=self.encoded.keys())

    # --- scoring -----------------------------------------------------------------------------
    def batch_arrays(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Padded ids and attention mask for rows `indices`, built without a per-row Python loop."""
        assert self.encoded is not None, "prepare() must run before score()"
        lengths = self.encoded.lengths[indices]
        width = int(lengths.max())
        columns = np.arange(width)
        if self.padding_side == "right":
            mask = columns[None, :] < lengths[:, None]
        else:
            mask = columns[None, :] >= (width - lengths)[:, None]
        starts = self.encoded.offsets[indices]
        row_first = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        source = np.repeat(starts - row_first, lengths) + np.arange(int(lengths.sum()))
        ids = np.full((len(indices), width), self.pad_id, dtype=np.int64)
        ids[mask] = self.encoded.flat_ids[source]  # boolean assignment fills row-major, as `source` is
        return ids, mask

    def attention_of(self, indices: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The attention mask: the rows' tokens, less a first token the input hides (RewardBenchPipeline hides the
        first of two BOS ids; positions still count it, as in its call)."""
        hidden = None if self.encoded is None or self.encoded.hidden_first is None else self.encoded.hidden_first[indices]
        if hidden is None or not hidden.any():
            return mask
        attention = mask.copy()
        rows = np.flatnonzero(hidden)
        attention[rows, mask[rows].argmax(axis=1)] = False
        return attention

    def model_inputs(self, ids: np.ndarray, mask: np.ndarray, attention: np.ndarray | None = None) -> dict[str, Any]:
        import torch

        attention = mask if attention is None else attention
        # The head finds each row's last token by this job's pad id: a model server's jobs share one model (and its
        # config) but may pad with different ids (rmeval's unused id, a text pipeline's tokenizer pad).
        self.model.config.pad_token_id = self.pad_id
        inputs = {
            "input_ids": torch.from_numpy(ids).to(self.input_device),
            "attention_mask": torch.from_numpy(attention.astype(np.int64)).to(self.input_device),
        }
        if self.padding_side == "left" and self.takes_position_ids:
            # Positions count real tokens only, so a left-padded row sees the same positions as unpadded.
            positions = np.maximum(np.cumsum(mask, axis=1) - 1, 0)
            inputs["position_ids"] = torch.from_numpy(positions).to(self.input_device)
        return inputs

    def rewards_from_output(self, output: Any, inputs: dict[str, Any]) -> Any:
        """One scalar per row (a tensor of shape [batch])."""
        return output.logits[:, 0]

    def score(self, indices: np.ndarray) -> BatchScores:
        import torch

        ids, mask = self.batch_arrays(indices)
        inputs = self.model_inputs(ids, mask, self.attention_of(indices, mask))
        with torch.inference_mode():
            output = self.model(**inputs)
            rewards = self.rewards_from_output(output, inputs)
        return BatchScores(rewards=rewards.reshape(-1).float().cpu().numpy().astype(np.float64))

    # --- engine hooks --------------------------------------------------------------------------
    def is_out_of_memory(self, error: BaseException) -> bool:
        import torch

        if isinstance(error, torch.cuda.OutOfMemoryError):
            return True
        return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()

    def after_out_of_memory(self) -> None:
        import gc

        import torch

        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def describe(self) -> dict[str, Any]:
        return {
            "revision": self.revision,
            "dtype": self.runtime.dtype,
            "device": str(self.input_device) if self.runtime.device != "auto-sharded" else "cuda (sharded)",
            "n_gpus": self.runtime.n_gpus,
            "padding_side": self.padding_side,
            "attn_implementation": self.attn_implementation,
            "pad_token_id": self.pad_id,
            "model_class": type(self.model).__name__,
            **self.tokenization,
        }
