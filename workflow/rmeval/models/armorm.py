"""`armorm`: RLHFlow/ArmoRM-Llama3-8B-v0.1 (remote code).

Mirrors the model card: `AutoModelForSequenceClassification.from_pretrained(..., trust_remote_code=True)`,
input from the Llama-3 chat template, and the scalar is `output.score`, the gated sum over the
19 reward objectives. Its gating network reads the hidden state at the assistant header that the
template writes, and its remote code finds the last token as "first pad token - 1", so batches are
right-padded with the config's pad id (left padding is refused).
"""

from __future__ import annotations

from typing import Any

from rmeval.errors import RmevalError
from rmeval.models.hf import HFScorer


class ArmoRMScorer(HFScorer):
    auto_class = "AutoModelForSequenceClassification"
    default_padding_side = "right"
    supported_padding_sides = ("right",)

    def rewards_from_output(self, output: Any, inputs: dict[str, Any]) -> Any:
        score = getattr(output, "score", None)
        if score is None:
            raise RmevalError(
                f"model {self.spec.name!r}: adapter 'armorm' expects an output with `.score` "
                f"(ArmoRM's gated objective sum), got {type(output).__name__}"
            )
        return score
