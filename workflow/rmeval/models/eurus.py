"""`eurus`: openbmb/Eurus-RM-7b (remote code, `AutoModel`).

Mirrors the model card: `AutoModel.from_pretrained(..., trust_remote_code=True)`, text in the
`[INST] prompt [/INST] response` format with the tokenizer's BOS, and the forward returns the
reward itself (the regression head read at the last attended token). The format is this
adapter's default template; the registry's `chat_template` overrides it.
"""

from __future__ import annotations

from typing import Any

from rmeval.models.hf import HFScorer

# The model card's format; BOS comes from the tokenizer (the BOS policy in rmeval.models.chat).
EURUS_TEMPLATE = "[INST] {{ messages[0]['content'] }} [/INST] {{ messages[1]['content'] }}"


class EurusScorer(HFScorer):
    auto_class = "AutoModel"
    default_padding_side = "right"
    default_chat_template = EURUS_TEMPLATE

    def rewards_from_output(self, output: Any, inputs: dict[str, Any]) -> Any:
        if hasattr(output, "logits"):
            return output.logits[:, 0]
        if isinstance(output, (tuple, list)):
            output = output[0]
        return output
