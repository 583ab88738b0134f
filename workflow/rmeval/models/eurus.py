"""`eurus`: openbmb/Eurus-RM-7b, native head (no remote code).

The model card loads `EurusRewardModel` with `AutoModel.from_pretrained(..., trust_remote_code=True)`
(which fails on transformers 5: the class never calls `post_init`), tokenises
`"[INST] {prompt} [/INST] {response}"` with the tokenizer's BOS, and the forward returns the
regression head read at the last attended token. rmeval computes the same reward with
`rmeval.models.heads.EurusRewardModel` (Mistral backbone + `regression_head`). The format is this
adapter's default template; the registry's `chat_template` overrides it.
"""

from __future__ import annotations

from rmeval.models.native import NativeHeadScorer

# The model card's format; BOS comes from the tokenizer (the BOS policy in rmeval.models.chat).
EURUS_TEMPLATE = "[INST] {{ messages[0]['content'] }} [/INST] {{ messages[1]['content'] }}"


class EurusScorer(NativeHeadScorer):
    head = "eurus"
    default_chat_template = EURUS_TEMPLATE
