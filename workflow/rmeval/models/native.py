"""The scorer shared by the native-head adapters (`armorm`, `grm`, `eurus`).

It is the ordinary transformers path of `rmeval.models.hf` (tokenizer, templates, padded batches,
position ids) with the model built by `rmeval.models.heads` from the checkpoint's config and
weights: no `trust_remote_code`, no code from the model repository. The forward returns the reward
itself, read at a token found from the attention mask, so either padding side gives the rewards
one row at a time gives.
"""

from __future__ import annotations

from typing import Any

from rmeval.models.hf import HFScorer


class NativeHeadScorer(HFScorer):
    head: str = ""  # key of rmeval.models.heads.NATIVE_MODELS
    default_padding_side = "right"

    def _load_model(self) -> tuple[Any, str]:
        from rmeval.models.heads import NATIVE_MODELS, load_native_model

        if self.runtime.device == "auto-sharded":
            device_map: str | None = "auto"
        elif self.runtime.device != "cpu":
            device_map = self.runtime.device
        else:
            device_map = None
        model = load_native_model(
            NATIVE_MODELS[self.head], self.spec.name, self.spec.path,
            revision=self.load_revision, dtype=self.torch_dtype, device_map=device_map,
            attn_implementation=self.spec.attn_implementation,
        )
        return model, str(model.attn_implementation)

    def rewards_from_output(self, output: Any, inputs: dict[str, Any]) -> Any:
        return output  # the native heads return one reward per row

    def describe(self) -> dict[str, Any]:
        details = {**super().describe(), "implementation": f"native ({type(self.model).__module__}.{type(self.model).__name__})"}
        pattern = getattr(self.model, "gating_pattern", None)
        if pattern is not None:
            details["gating_token_ids"] = list(pattern)  # ArmoRM's assistant header
        return details
