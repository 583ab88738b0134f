"""A prompt that is a conversation: the turns before the response, as a chat template renders them.

The scoring engine passes every prompt as a string. A multi-turn prompt is a `Conversation`: a `str` whose value is a
plain transcript (what an adapter without a chat template sees: an LLM judge's problem text, a baseline's character
count) and whose `turns` are the messages a chat template renders, the scored response appended as the last
assistant turn (`chat_messages`). It survives pickling (the model server) and is built by a benchmark's task from
its own table; a plain `str` prompt stays one user turn, as before. Roles follow RewardBench's
`prepare_dialogue_from_tokenizer` (allenai/reward-bench, rewardbench/utils.py): turns alternate user, assistant,
..., and the last one before the response is the user's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rmeval.errors import RmevalError

ROLES = ("user", "assistant")
TRANSCRIPT_NAMES = {"user": "User", "assistant": "Assistant"}


def check_turns(turns: Sequence[Any], where: str) -> list[dict[str, str]]:
    """[{"role", "content"}] from turns that alternate user / assistant, start and end with the user's and hold
    text (possibly empty: published data has empty turns); anything else is an error naming `where`, the turn and
    the field."""
    if not isinstance(turns, (list, tuple)) or not turns:
        raise RmevalError(f"{where}: expected a non-empty list of turns, got {type(turns).__name__}")
    messages = []
    for index, turn in enumerate(turns):
        at = f"{where}[{index}]"
        if not isinstance(turn, dict):
            raise RmevalError(f"{at}: expected a mapping with role and content, got {type(turn).__name__}")
        role, content = turn.get("role"), turn.get("content")
        if role != ROLES[index % 2]:
            raise RmevalError(f"{at}: field 'role' is {role!r}; turns alternate user, assistant, ... from the user's")
        if not isinstance(content, str):
            raise RmevalError(f"{at}: field 'content' is {type(content).__name__}, not text")
        messages.append({"role": role, "content": content})
    if messages[-1]["role"] != "user":
        raise RmevalError(f"{where}: the last turn is the assistant's; the response answers a user turn")
    return messages


def transcript(turns: Sequence[dict[str, str]]) -> str:
    """The plain text of the turns: one user turn is its content; more are `User: ...` / `Assistant: ...` blocks."""
    if len(turns) == 1:
        return turns[0]["content"]
    return "\n\n".join(f"{TRANSCRIPT_NAMES[turn['role']]}: {turn['content']}" for turn in turns)


class Conversation(str):
    """A multi-turn prompt: its text is the transcript, `turns` the messages before the response."""

    turns: tuple[dict[str, str], ...]

    def __new__(cls, turns: Sequence[dict[str, str]]) -> Conversation:
        messages = tuple({"role": turn["role"], "content": turn["content"]} for turn in turns)
        value = super().__new__(cls, transcript(messages))
        value.turns = messages
        return value

    def __reduce__(self) -> tuple[Any, ...]:
        return (Conversation, ([dict(turn) for turn in self.turns],))

    def without_first_exchange(self) -> str:
        """The conversation less its oldest user / assistant pair (how a too-long one is cut from the left): a
        `Conversation` while more than one turn is left, else the last user turn's text."""
        rest = self.turns[2:]
        return Conversation(rest) if len(rest) > 1 else rest[0]["content"]


def prompt_of(turns: Sequence[dict[str, str]]) -> str:
    """The engine's prompt for checked turns: the text of a single user turn, else a `Conversation`."""
    return turns[0]["content"] if len(turns) == 1 else Conversation(turns)


def chat_messages(prompt: str, response: str) -> list[dict[str, str]]:
    """The messages a chat template renders for (prompt, response): a conversation's turns, or the prompt as one
    user turn, then the response as the assistant's."""
    turns = [dict(turn) for turn in getattr(prompt, "turns", ())] or [{"role": "user", "content": str(prompt)}]
    return [*turns, {"role": "assistant", "content": response}]
