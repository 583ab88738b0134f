"""`inf-orm`: infly/INF-ORM-Llama3.1-70B, native head (no remote code).

The model card defines `INFORMForSequenceClassification` (a Llama backbone, score head Linear h->h, ReLU,
Linear h->1; allenai/reward-bench rewardbench/models/inform.py is the same class), feeds
`tokenizer.apply_chat_template(conversation, tokenize=True, return_tensors="pt")` (the Llama-3.1 template
with its dated system header, one BOS) and reads `logits[0][0]`. rmeval builds the head from the checkpoint's
`score.0` / `score.2` tensors (rmeval.models.heads.INFORMRewardModel) and reads the reward at the same token.
"""

from __future__ import annotations

from rmeval.models.native import NativeHeadScorer


class INFORMScorer(NativeHeadScorer):
    head = "inf-orm"
