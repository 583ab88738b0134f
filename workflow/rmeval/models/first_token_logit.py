"""`first-token-logit`: a causal LM whose reward is one logit of the first generated position
(nvidia/Llama-3.1-Nemotron-70B-Reward-HF).

The model card renders [user, assistant] with `apply_chat_template(tokenize=True, add_generation_prompt=False)`,
calls `model.generate(..., max_new_tokens=1, return_dict_in_generate=True, output_scores=True)` and takes
`scores[0][0][0]`: the logit of vocabulary id 0 at the first generated position. Its generation_config has
`do_sample: false`, so no logits processor touches the scores: they are the LM head's logits at the last input
token. rmeval computes exactly that logit, in one padded forward, for the last attended token of each row
(only the one LM-head row, never the full vocabulary).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rmeval.models.base import BatchScores
from rmeval.models.heads import last_attended
from rmeval.models.hf import HFScorer


class FirstTokenLogitScorer(HFScorer):
    auto_class = "AutoModelForCausalLM"
    default_padding_side = "right"

    def __init__(self, spec: Any, runtime: Any) -> None:
        super().__init__(spec, runtime)
        self.token_id = int(spec.adapter_entry.settings(spec.options)["token_id"])

    def score(self, indices: np.ndarray) -> BatchScores:
        import torch

        ids, mask = self.batch_arrays(indices)
        inputs = self.model_inputs(ids, mask)
        head = self.model.get_output_embeddings()
        with torch.inference_mode():
            hidden = self.model.base_model(**inputs).last_hidden_state
            rows = torch.arange(hidden.shape[0], device=hidden.device)
            last = hidden[rows, last_attended(inputs["attention_mask"]).to(hidden.device)].to(head.weight.device)
            # generate() hands out the logits cast to fp32; the row of one vocabulary id is all that is needed.
            reward = (last @ head.weight[self.token_id]).float()
            if getattr(head, "bias", None) is not None:
                reward = reward + head.bias[self.token_id].float()
        return BatchScores(rewards=reward.cpu().numpy().astype(np.float64))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "reward_token_id": self.token_id, "reward_position": "last input token"}
