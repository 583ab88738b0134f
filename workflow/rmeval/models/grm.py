"""`grm`: Ray2333/GRM-llama3-8B-sftreg, native value head (no remote code).

GRM's code (Generalizable-Reward-Model `reward_models/grm_utils.py` and `load_datasets.py`) and its
model card render the conversation with `apply_chat_template(tokenize=False)` and then tokenise that
text with the tokenizer's own special tokens (`encode_plus`), so the Llama-3 tokenizer puts its BOS
in front of the template's: the ids start with two BOS tokens, in training and in the card. This
adapter tokenises the same way (unless the registry sets `add_bos`). The value head is read at
`attention_mask.sum(-1) - 1` upstream, which is the last real token only under right padding;
`rmeval.models.heads.GRMRewardModel` reads the last attended token, so both sides give the same
reward (right is the default).
"""

from __future__ import annotations

from rmeval.models.chat import RowEncoder
from rmeval.models.native import NativeHeadScorer


class TextThenSpecialTokensEncoder(RowEncoder):
    """Render to text, then tokenise it with the tokenizer's special tokens, as GRM's code does."""

    def _strip_bos_text(self, text: str) -> tuple[str, bool]:
        # Keep the template's BOS text: GRM's code tokenises it, then the tokenizer adds its own BOS.
        return text, bool(self.bos_text) and text.startswith(self.bos_text)

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        return self.tokenizer(texts, add_special_tokens=True)["input_ids"]


class GRMScorer(NativeHeadScorer):
    head = "grm"

    def row_encoder_class(self) -> type[RowEncoder]:
        return RowEncoder if self.spec.add_bos is not None else TextThenSpecialTokensEncoder
