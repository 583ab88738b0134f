"""`armorm`: RLHFlow/ArmoRM-Llama3-8B-v0.1, native head (no remote code).

The model card loads `modeling_custom.LlamaForRewardModelWithGating` with `trust_remote_code=True`,
feeds `tokenizer.apply_chat_template(messages, return_tensors="pt")` (the Llama-3 template, one BOS)
and reads `output.score`: the 19 objective rewards, transformed by `reward_transform_matrix` and
weighted by a gating MLP that reads the hidden state at the assistant header. rmeval computes the
same score with `rmeval.models.heads.ArmoRMRewardModel` from the published config and safetensors;
its positions come from the attention mask, so both padding sides work (right is the default).
"""

from __future__ import annotations

from typing import Any

from rmeval.models.native import NativeHeadScorer


class ArmoRMScorer(NativeHeadScorer):
    head = "armorm"

    def _load_model(self) -> tuple[Any, str]:
        model, attn = super()._load_model()
        model.set_gating_pattern(self.tokenizer)  # the tokenizer is loaded first by HFScorer
        return model, attn
