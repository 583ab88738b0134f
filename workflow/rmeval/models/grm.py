"""`grm`: Ray2333/GRM-llama3-8B-sftreg (remote code, value head).

Mirrors the model card: loaded with `AutoModelForSequenceClassification` and
`trust_remote_code=True`; its forward returns a tuple `(lm_logits, _, value)` where `value` is the
value head read at the last non-pad token (found from the attention mask, so left padding is
fine). The text is rendered with the model's Llama-3 chat template. Left padding is the default,
with explicit position ids.
"""

from __future__ import annotations

from typing import Any

from rmeval.errors import RmevalError
from rmeval.models.hf import HFScorer


class GRMScorer(HFScorer):
    auto_class = "AutoModelForSequenceClassification"
    default_padding_side = "left"

    def rewards_from_output(self, output: Any, inputs: dict[str, Any]) -> Any:
        if isinstance(output, (tuple, list)) and len(output) >= 3:
            return output[2]
        raise RmevalError(
            f"model {self.spec.name!r}: adapter 'grm' expects the value-head tuple (lm_logits, _, value), "
            f"got {type(output).__name__}"
        )
