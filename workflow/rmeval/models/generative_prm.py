"""`generative-prm`: RLHFlow's generative process reward models (RLHFlow/Llama3.1-8B-PRM-Deepseek-Data, -Mistral-Data).

The model card and RLHFlow/RLHF-Reward-Modeling math/README.md: the solution becomes a conversation, one user
turn per step (the first is `problem + " " + step 1`), each answered by an assistant turn "+"; for step k the
conversation up to its "+" turn is rendered with `apply_chat_template` (Llama-3.1: BOS and the dated system
header), and the step's reward is softmax over the logits of ids ["+", "-"] (each `tokenizer.encode(t)[-1]`)
at position -3 of that rendering (the token before the "+": the assistant header's last token), class "+".

A causal LM sees only the past, so rmeval renders the whole conversation once and reads each step at its
prefix's position (`len(ids of the conversation up to step k) - read_offset`), checking that every prefix's
ids are a prefix of the whole conversation's. Only the two candidate rows of the LM head are evaluated.
Too long a conversation loses its trailing steps (marked truncated); output: `step_rewards` per row and
`reward` = their product (the other step aggregations are computed at metric time).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.models.base import BatchScores, Prepared
from rmeval.models.chat import Encoded, template_sha256
from rmeval.models.hf import HFScorer
from rmeval.models.steps import step_lists
from rmeval.tasks import Pairs


class GenerativePRMScorer(HFScorer):
    auto_class = "AutoModelForCausalLM"
    default_padding_side = "right"
    has_steps = True

    def __init__(self, spec: Any, runtime: Any) -> None:
        super().__init__(spec, runtime)
        self.options = spec.adapter_entry.settings(spec.options)
        self.candidate_ids = (self._last_id(self.options["good_token"]), self._last_id(self.options["bad_token"]))
        self.read_offset = int(self.options["read_offset"])
        self.template = self.spec.chat_template or getattr(self.tokenizer, "chat_template", None)
        if not self.template:
            raise RmevalError(f"model {spec.name!r}: its tokenizer has no chat template; set `chat_template`")
        self.positions: list[np.ndarray] = []

    def _last_id(self, text: str) -> int:
        ids = self.tokenizer.encode(text)  # as the card: with special tokens, the last id
        if not ids:
            raise RmevalError(f"model {self.spec.name!r}: {text!r} encodes to no token")
        return int(ids[-1])

    def _ids(self, conversation: list[dict[str, str]]) -> list[int]:
        """`apply_chat_template(conversation)` token ids, as the card tokenises (the template's text, no extras)."""
        text = self.tokenizer.apply_chat_template(conversation, tokenize=False, chat_template=self.template)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _conversation(self, problem: str, steps: list[str]) -> list[dict[str, str]]:
        turns: list[dict[str, str]] = []
        for index, step in enumerate(steps):
            turns.append({"role": "user", "content": f"{problem} {step}" if index == 0 else step})
            turns.append({"role": "assistant", "content": str(self.options["good_token"])})
        return turns

    def _encode_row(self, row_id: str, problem: str, steps: list[str]) -> tuple[list[int], list[int], bool]:
        """(ids, reading positions, truncated): trailing steps go while the conversation exceeds max_length."""
        for kept in range(len(steps), 0, -1):
            full = self._ids(self._conversation(problem, steps[:kept]))
            if len(full) <= self.spec.max_length:
                break
        else:
            raise RmevalError(f"row id={row_id!r}: not even the first step fits max_length={self.spec.max_length}")
        positions = []
        for k in range(1, kept + 1):
            prefix = full if k == kept else self._ids(self._conversation(problem, steps[:k]))
            if full[: len(prefix)] != prefix:
                raise RmevalError(f"row id={row_id!r}: the conversation up to step {k} does not tokenise as a prefix "
                                  "of the whole one; the template is not incremental")
            positions.append(len(prefix) - self.read_offset)
        return full, positions, kept < len(steps)

    def prepare(self, pairs: Pairs) -> Prepared:
        rows = [self._encode_row(row_id, problem, steps)
                for row_id, problem, steps in zip(pairs.ids, pairs.prompts, step_lists(pairs), strict=True)]
        lengths = np.array([len(ids) for ids, _, _ in rows], dtype=np.int64)
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter((t for ids, _, _ in rows for t in ids), dtype=np.int64, count=int(offsets[-1]))
        truncated = np.array([cut for _, _, cut in rows], dtype=bool)
        self.encoded = Encoded(flat_ids=flat, offsets=offsets, truncated=truncated)
        self.positions = [np.asarray(positions, dtype=np.int64) for _, positions, _ in rows]
        digest = hashlib.sha256(flat.tobytes() + offsets.tobytes()).hexdigest()[:16]
        self.tokenization = {"chat_template_source": "registry" if self.spec.chat_template else "tokenizer",
                             "chat_template_sha256": template_sha256(self.template), "input_ids_sha256": digest}
        if not self.pad_from_config:
            self._keep_pad_out_of_rows()
        # The reading positions are part of the input: two rows tie only when ids and positions both match.
        keys = self.encoded.keys([positions.tobytes() for positions in self.positions])
        return Prepared(costs=lengths.copy(), n_tokens=lengths.copy(), truncated=truncated.copy(), keys=keys)

    def score(self, indices: np.ndarray) -> BatchScores:
        import torch

        ids, mask = self.batch_arrays(indices)
        inputs = self.model_inputs(ids, mask)
        width = ids.shape[1]
        lengths = self.encoded.lengths[indices]
        shift = (width - lengths) if self.padding_side == "left" else np.zeros_like(lengths)
        rows = np.concatenate([np.full(len(self.positions[i]), r) for r, i in enumerate(indices)])
        columns = np.concatenate([self.positions[i] + shift[r] for r, i in enumerate(indices)])
        head = self.model.get_output_embeddings()
        with torch.inference_mode():
            hidden = self.model.base_model(**inputs).last_hidden_state
            picked = hidden[torch.from_numpy(rows).to(hidden.device), torch.from_numpy(columns).to(hidden.device)]
            candidates = torch.tensor(self.candidate_ids, device=head.weight.device)
            logits = picked.to(head.weight.device) @ head.weight[candidates].T  # the model's dtype, as the card
            if getattr(head, "bias", None) is not None:
                logits = logits + head.bias[candidates]
            good = logits.float().softmax(dim=-1)[:, 0].cpu().numpy().astype(np.float64)
        counts = [len(self.positions[i]) for i in indices]
        step_rewards = [chunk.tolist() for chunk in np.split(good, np.cumsum(counts)[:-1])]
        rewards = np.array([float(np.prod(steps)) for steps in step_rewards])
        return BatchScores(rewards=rewards, step_rewards=step_rewards)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "candidate_token_ids": list(self.candidate_ids),
                "read_offset": self.read_offset, "reward_aggregation": "prod"}
