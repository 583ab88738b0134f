"""`qwen-prm`: Qwen/Qwen2.5-Math-PRM-7B, native head (no remote code).

The model card: messages [system "Please reason step by step, and put your final answer within \\boxed{}.",
user = the problem, assistant = "<extra_0>".join(steps) + "<extra_0>"], rendered with
`apply_chat_template(tokenize=False, add_generation_prompt=False)` and tokenised with `tokenizer.encode`
(Qwen adds no BOS); the model (hub modeling_qwen2_rm.py, `Qwen2ForProcessRewardModel`) gives two logits per
token, and `make_step_rewards` keeps softmax(...)[1] at every `<extra_0>` id: one reward per step.

rmeval renders the same text (the system prompt is the `system_prompt` option), runs the Qwen2 backbone with
its own head (rmeval.models.heads.QwenPRMModel) and evaluates the head only at the separators. Output:
`step_rewards` per row and `reward` = their product; the other step aggregations are computed at metric time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.models.base import BatchScores, Prepared
from rmeval.models.chat import RenderFn
from rmeval.models.native import NativeHeadScorer
from rmeval.models.steps import check_step_counts, step_lists
from rmeval.tasks import Pairs

QWEN25_IM_START, QWEN25_EXTRA_0 = 151644, 151651


class QwenPRMScorer(NativeHeadScorer):
    head = "qwen-prm"
    has_steps = True

    def __init__(self, spec: Any, runtime: Any) -> None:
        super().__init__(spec, runtime)
        self.options = spec.adapter_entry.settings(spec.options)
        self.separator = str(self.options["step_token"])
        ids = self.tokenizer.encode(self.separator, add_special_tokens=False)
        if len(ids) != 1:
            raise RmevalError(f"model {spec.name!r}: options.step_token {self.separator!r} is {len(ids)} tokens, "
                              "not one special token of the tokenizer")
        self.separator_id = int(ids[0])
        # The published Qwen2.5 vocabulary: <|im_start|> is 151644 and <extra_0> 151651 (vLLM's step_tag_id default
        # for Qwen2ForProcessRewardModel); a real Qwen tokenizer reading the separator elsewhere is a wrong setting.
        if self.tokenizer.convert_tokens_to_ids("<|im_start|>") == QWEN25_IM_START and \
                self.separator == "<extra_0>" and self.separator_id != QWEN25_EXTRA_0:
            raise RmevalError(f"model {spec.name!r}: <extra_0> is id {self.separator_id}, not {QWEN25_EXTRA_0} as "
                              "in the published Qwen2.5 vocabulary")

    def renderer(self) -> RenderFn:
        template = self.spec.chat_template
        system = str(self.options["system_prompt"])

        def render(problem: str, solution: str) -> str:
            messages = [{"role": "system", "content": system}, {"role": "user", "content": problem},
                        {"role": "assistant", "content": solution}]
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False,
                                                      chat_template=template)

        return render

    def texts_of(self, pairs: Pairs) -> tuple[list[str], list[str]]:
        steps = step_lists(pairs)
        self.expected_steps = np.array([len(row) for row in steps], dtype=np.int64)
        return pairs.prompts, ["".join(step + self.separator for step in row) for row in steps]

    def prepare(self, pairs: Pairs) -> Prepared:
        prepared = super().prepare(pairs)
        assert self.encoded is not None
        found = np.array([int((self.encoded.row(i) == self.separator_id).sum()) for i in range(len(pairs))])
        check_step_counts(pairs.ids, found, self.expected_steps, prepared.truncated, self.spec.max_length,
                          self.separator)
        self.tokenization["chat_template_source"] = "registry" if self.spec.chat_template else "tokenizer"
        return prepared

    def score(self, indices: np.ndarray) -> BatchScores:
        import torch

        ids, mask = self.batch_arrays(indices)
        inputs = self.model_inputs(ids, mask)
        if "position_ids" not in inputs:
            from rmeval.models.heads import positions_from_mask

            inputs["position_ids"] = positions_from_mask(inputs["attention_mask"])
        with torch.inference_mode():
            hidden = self.model.model(**inputs).last_hidden_state
            separators = (inputs["input_ids"] == self.separator_id) & inputs["attention_mask"].bool()
            device = next(self.model.head_parameters()).device
            good = self.model.step_probabilities(hidden[separators.to(hidden.device)].to(device))
            good = good.float().cpu().numpy().astype(np.float64)
        counts = separators.sum(dim=1).cpu().numpy()
        step_rewards = [chunk.tolist() for chunk in np.split(good, np.cumsum(counts)[:-1])]
        rewards = np.array([float(np.prod(steps)) if steps else float("nan") for steps in step_rewards])
        return BatchScores(rewards=rewards, step_rewards=step_rewards)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "step_token_id": self.separator_id, "reward_aggregation": "prod",
                "system_prompt": self.options["system_prompt"]}
