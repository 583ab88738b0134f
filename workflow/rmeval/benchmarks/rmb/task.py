"""The `rmb` scoring task: the prepared texts table (id, prompt, conversation, response) -> the engine's pairs, a
multi-turn conversation as a `Conversation` prompt, so that a chat template renders its turns (as RewardBench's
`prepare_dialogue_from_tokenizer` does) and an adapter without one sees its transcript."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rmeval.conversation import check_turns, prompt_of
from rmeval.errors import RmevalError
from rmeval.tasks import Pairs

if TYPE_CHECKING:
    import pandas as pd


def pairs(table: pd.DataFrame, where: str) -> Pairs:
    missing = [column for column in ("id", "conversation", "response") if column not in table.columns]
    if missing:
        raise RmevalError(f"{where}: missing column(s) {missing}; found {list(table.columns)}")
    ids = [str(value) for value in table["id"].tolist()]
    if len(set(ids)) != len(ids):
        raise RmevalError(f"{where}: duplicate ids")
    prompts = []
    for row_id, value in zip(ids, table["conversation"].tolist(), strict=True):
        try:
            turns = json.loads(value)
        except (TypeError, ValueError) as error:
            raise RmevalError(f"{where}: row id={row_id!r}: column 'conversation' is not JSON ({error})") from None
        prompts.append(prompt_of(check_turns(turns, f"{where}: row id={row_id!r}: column 'conversation'")))
    responses = [str(value) for value in table["response"].tolist()]
    return Pairs(ids=ids, prompts=prompts, responses=responses, steps=None)
