"""`sequence-classification`: the generic `AutoModelForSequenceClassification` path.

The reward is logit 0 of the classification head, read at the last non-pad token by the
model's own head (FsfairX-LLaMA3-RM-v0.1, RM-Mistral-7B, Mistral-RM-for-RAFT-GSHF-v0,
tulu-v2.5-13b-preference-mix-rm, Skywork-Reward-V2, ...). The text is the (prompt, response)
conversation rendered with the model's own chat template (or the registry's override), its BOS
text removed and the tokenizer's BOS added as ids, as the authors' usage code does (see
rmeval.models.chat). Either padding side works: positions are passed explicitly for left padding,
and a config without `pad_token_id` is padded with an id no row contains, so the head's
"last non-pad token" is each row's last token, as in the model card's unpadded call.
"""

from __future__ import annotations

from rmeval.models.hf import HFScorer


class SequenceClassificationScorer(HFScorer):
    auto_class = "AutoModelForSequenceClassification"
    default_padding_side = "right"
    follows_text_pipeline = True  # RewardBench's REWARD_MODEL_CONFIG "default" / "default_v2" path
