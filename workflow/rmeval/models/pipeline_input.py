"""RewardBench's model input, built as its official scripts build it.

Follows the `rewardbench` package (0.1.4 on PyPI; allenai/reward-bench `scripts/run_rm.py`, `scripts/run_v2.py`,
`rewardbench/utils.py` `prepare_dialogue_from_tokenizer`, `rewardbench/models/pipeline.py`
`RewardBenchPipeline`), the path of a plain sequence classifier (`REWARD_MODEL_CONFIG["default"]` /
`["default_v2"]`):
- the text is `apply_chat_template([user, assistant], tokenize=False)` with the tokenizer's own template (the
  scripts use a fastchat template only for a tokenizer without one; rmeval then uses the registry's);
- the pipeline tokenises that text with the tokenizer's special tokens (`add_special_tokens` left at its
  default), so a template that writes BOS text and a tokenizer that adds BOS give two BOS ids; the pipeline
  then hides the first of the two from attention (its mask is 0 there), which `Encoded.hidden_first` records;
- truncation is the tokenizer's (`truncation=True, max_length=...`): the text's ids are cut to
  `max_length` minus the special ids, from `truncation_side` (run_rm.py sets "left"; run_v2.py keeps the
  tokenizer's own, usually "right"). The template's own tokens are cut like any other: nothing is re-rendered.
Padding is rmeval's (the same ids and reward position for every batch), not the pipeline's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.models.chat import Encoded, RenderFn, special_ids_around

SIDES = ("left", "right")


class PipelineEncoder:
    """Rows -> ids as RewardBenchPipeline's tokenizer call makes them."""

    def __init__(self, tokenizer: Any, render: RenderFn, *, max_length: int, truncation_side: str | None,
                 model_name: str) -> None:
        self.tokenizer = tokenizer
        self.render = render
        self.max_length = max_length
        self.side = truncation_side or str(getattr(tokenizer, "truncation_side", "right"))
        if self.side not in SIDES:
            raise RmevalError(f"model {model_name!r}: truncation side {self.side!r} is not one of {SIDES}")
        self.prefix_ids, self.suffix_ids = special_ids_around(tokenizer)
        self.room = max_length - len(self.prefix_ids) - len(self.suffix_ids)
        if self.room < 1:
            raise RmevalError(f"model {model_name!r}: max_length={max_length} leaves no room beside the tokenizer's "
                              f"{len(self.prefix_ids) + len(self.suffix_ids)} special ids; raise it")
        # `if self.tokenizer.bos_token:` in the pipeline: a tokenizer without BOS never hides a token.
        self.bos_id: int | None = tokenizer.bos_token_id if getattr(tokenizer, "bos_token", None) else None
        self.hidden_rows = 0

    def _cut(self, ids: list[int]) -> tuple[list[int], bool]:
        if len(ids) <= self.room:
            return ids, False
        return (ids[len(ids) - self.room :] if self.side == "left" else ids[: self.room]), True

    def encode(self, ids_of_rows: list[str], prompts: list[str], responses: list[str]) -> Encoded:
        texts = [self.render(prompt, response) for prompt, response in zip(prompts, responses, strict=True)]
        bodies = self.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
        token_lists: list[list[int]] = []
        truncated = np.zeros(len(texts), dtype=bool)
        for index, body in enumerate(bodies):
            kept, truncated[index] = self._cut(list(body))
            token_lists.append([*self.prefix_ids, *kept, *self.suffix_ids])
        hidden = np.array([self.bos_id is not None and len(ids) > 1 and ids[0] == ids[1] == self.bos_id
                           for ids in token_lists], dtype=bool)
        self.hidden_rows = int(hidden.sum())
        lengths = np.fromiter((len(ids) for ids in token_lists), dtype=np.int64, count=len(token_lists))
        offsets = np.zeros(len(token_lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter((t for ids in token_lists for t in ids), dtype=np.int64, count=int(offsets[-1]))
        return Encoded(flat_ids=flat, offsets=offsets, truncated=truncated,
                       hidden_first=hidden if hidden.any() else None)

    def describe(self) -> dict[str, Any]:
        """What `.meta.json` records of this input (beside the template's source and hash)."""
        return {
            "model_input": "text-pipeline",
            "max_length": self.max_length,
            "truncation_side": self.side,
            "tokenizer_special_prefix_ids": list(self.prefix_ids),
            "tokenizer_special_suffix_ids": list(self.suffix_ids),
            "double_bos_rows_hidden": self.hidden_rows,
        }
