"""`prm`: process reward models that score each solution step (Math-Shepherd convention).

Mirrors Math-Shepherd's reference usage (peiyi9979/math-shepherd-mistral-7b-prm model card): the
causal LM reads `tokenizer.encode("{problem} {step 1} ки\n{step 2} ки...")`, BOS included by the
tokenizer; at every step-tag token the probability of the good token against the bad token
(softmax over just those two logits) is the step's score.

Options (registry `options:`): `step_tag` (default "ки"), `good_token` ("+"), `bad_token` ("-"),
`step_separator` ("\n"), and optionally `good_token_id` / `bad_token_id` when the token strings are
ambiguous. Like Math-Shepherd, the candidate ids are `encode(f"{good} {bad}")` without special
tokens (e.g. "▁+", "▁-" for Llama/Mistral tokenizers); the step-tag id is the last id of
`encode(step_tag)`.

Rows without `steps` are scored as a single step (the response). Output: `step_rewards` per row
and `reward` = the product of step scores (other aggregations are computed at metric time).
Only the two candidate rows of the LM head are evaluated, at step-tag positions only, so a batch
never materialises full-vocabulary logits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.models.base import BatchScores, Prepared
from rmeval.models.chat import RenderFn
from rmeval.models.hf import HFScorer
from rmeval.tasks import Pairs


class PRMScorer(HFScorer):
    auto_class = "AutoModelForCausalLM"
    default_padding_side = "right"
    has_steps = True

    def __init__(self, spec: Any, runtime: Any) -> None:
        super().__init__(spec, runtime)
        self.options = spec.adapter_entry.settings(spec.options)  # over the catalogue's defaults
        self.step_tag_id = self._step_tag_id()
        self.candidate_ids = self._candidate_ids()
        self.expected_steps: np.ndarray | None = None
        self.ids_of_rows: list[str] = []

    def _step_tag_id(self) -> int:
        ids = self.tokenizer.encode(self.options["step_tag"], add_special_tokens=False)
        if not ids:
            raise RmevalError(f"model {self.spec.name!r}: step_tag {self.options['step_tag']!r} encodes to no token")
        return int(ids[-1])

    def _candidate_ids(self) -> tuple[int, int]:
        if "good_token_id" in self.options and "bad_token_id" in self.options:
            return int(self.options["good_token_id"]), int(self.options["bad_token_id"])
        text = f"{self.options['good_token']} {self.options['bad_token']}"
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        if len(ids) != 2:
            raise RmevalError(
                f"model {self.spec.name!r}: {text!r} encodes to {len(ids)} tokens, not 2; "
                "set options.good_token_id and options.bad_token_id"
            )
        return int(ids[0]), int(ids[1])

    def renderer(self) -> RenderFn:
        if self.spec.chat_template:
            return super().renderer()
        return lambda prompt, response: f"{prompt} {response}"

    def texts_of(self, pairs: Pairs) -> tuple[list[str], list[str]]:
        tag, separator = self.options["step_tag"], self.options["step_separator"]
        steps = pairs.steps or [[] for _ in pairs.ids]
        step_lists = [row_steps if len(row_steps) else [response] for row_steps, response in zip(steps, pairs.responses, strict=True)]
        self.expected_steps = np.array([len(s) for s in step_lists], dtype=np.int64)
        self.ids_of_rows = pairs.ids
        responses = [separator.join(f"{step.strip()} {tag}" for step in row_steps) for row_steps in step_lists]
        return pairs.prompts, responses

    def prepare(self, pairs: Pairs) -> Prepared:
        prepared = super().prepare(pairs)
        assert self.encoded is not None and self.expected_steps is not None
        tag_counts = np.add.reduceat(self.encoded.flat_ids == self.step_tag_id, self.encoded.offsets[:-1]) if len(
            self.encoded.flat_ids
        ) else np.zeros(len(pairs), dtype=np.int64)
        for index in np.flatnonzero(tag_counts != self.expected_steps):
            row_id = pairs.ids[index]
            if tag_counts[index] == 0:
                raise RmevalError(f"row id={row_id!r}: no step survives truncation to max_length={self.spec.max_length}")
            if not prepared.truncated[index]:
                raise RmevalError(
                    f"row id={row_id!r}: found {tag_counts[index]} step tags for {self.expected_steps[index]} steps; "
                    f"the text itself contains the step tag {self.options['step_tag']!r}"
                )
        return prepared

    def score(self, indices: np.ndarray) -> BatchScores:
        import torch

        ids, mask = self.batch_arrays(indices)
        inputs = self.model_inputs(ids, mask)
        head = self.model.get_output_embeddings()
        with torch.inference_mode():
            hidden = self.model.base_model(**inputs).last_hidden_state
            tag_mask = inputs["input_ids"] == self.step_tag_id
            tag_hidden = hidden[tag_mask]  # row-major: row 0's steps first
            candidates = torch.tensor(self.candidate_ids, device=head.weight.device)
            # Two logits per step, computed in fp32 even for a bf16 model: cheap, and the softmax stays exact.
            logits = tag_hidden.to(head.weight.device).float() @ head.weight[candidates].float().T
            if getattr(head, "bias", None) is not None:
                logits = logits + head.bias[candidates].float()
            good = logits.softmax(dim=-1)[:, 0].cpu().numpy().astype(np.float64)
        counts = tag_mask.sum(dim=1).cpu().numpy()
        step_rewards = [chunk.tolist() for chunk in np.split(good, np.cumsum(counts)[:-1])]
        rewards = np.array([float(np.prod(steps)) if steps else float("nan") for steps in step_rewards])
        return BatchScores(rewards=rewards, step_rewards=step_rewards)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "step_tag_id": self.step_tag_id,
            "candidate_token_ids": list(self.candidate_ids),
            "reward_aggregation": "prod",
        }
