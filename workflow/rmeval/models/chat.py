"""Render (prompt, response) rows to token ids: chat template, BOS hygiene, truncation.

All rows are rendered and tokenised once, with one batched call to the fast tokenizer; the
result is a flat id array plus offsets, so the engine's hot loop never touches Python strings.

BOS policy (chat-template hygiene):
- the text is tokenised without the tokenizer's own special tokens, so a template that already
  writes BOS never gets a second one;
- leading BOS tokens are then normalised to exactly one when the model wants BOS, none otherwise;
- the model wants BOS when the registry says `add_bos: true`; `add_bos: false` (models trained
  without BOS) strips it; by default (null) it follows the template, or the tokenizer's own
  default when the template writes none.

Truncation: a row longer than `max_length` loses tokens from the left of the prompt
(`prompt-left`) or the right of the response (`response-right`). If the configured side cannot
absorb the whole overflow, the other side is cut too. Each row is re-rendered after cutting, so
the template's own tokens (headers, end-of-turn) always survive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rmeval.errors import RmevalError

RenderFn = Callable[[str, str], str]


@dataclass(frozen=True)
class Encoded:
    flat_ids: np.ndarray  # int64, all rows' ids concatenated
    offsets: np.ndarray  # int64, len(rows) + 1
    truncated: np.ndarray  # bool

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def row(self, index: int) -> np.ndarray:
        return self.flat_ids[self.offsets[index] : self.offsets[index + 1]]


def chat_template_renderer(tokenizer: Any, template: str | None, model_name: str) -> RenderFn:
    """(prompt, response) -> text through the model's own chat template (or the override)."""
    if template is None and not getattr(tokenizer, "chat_template", None):
        raise RmevalError(
            f"model {model_name!r}: its tokenizer has no chat template; set `chat_template` in its registry entry"
        )

    def render(prompt: str, response: str) -> str:
        messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
        return tokenizer.apply_chat_template(messages, tokenize=False, chat_template=template)

    return render


class RowEncoder:
    """Tokenises rows with a render function, BOS policy and truncation."""

    def __init__(
        self,
        tokenizer: Any,
        render: RenderFn,
        *,
        max_length: int,
        truncation: str,
        add_bos: bool | None,
        model_name: str,
    ) -> None:
        self.tokenizer = tokenizer
        self.render = render
        self.max_length = max_length
        self.truncation = truncation
        self.model_name = model_name
        self.bos_id: int | None = tokenizer.bos_token_id
        self.add_bos = add_bos

    def _tokenizer_adds_bos(self) -> bool:
        if self.bos_id is None:
            return False
        probe = self.tokenizer("a", add_special_tokens=True)["input_ids"]
        return bool(probe) and probe[0] == self.bos_id

    def _wants_bos(self, first_text: str) -> bool:
        if self.bos_id is None:
            if self.add_bos:
                raise RmevalError(f"model {self.model_name!r}: add_bos is true but its tokenizer has no BOS token")
            return False
        if self.add_bos is not None:
            return self.add_bos
        bos_text = self.tokenizer.bos_token
        return bool(bos_text and first_text.startswith(bos_text)) or self._tokenizer_adds_bos()

    def _fix_bos(self, ids: list[int], wants_bos: bool) -> list[int]:
        start = 0
        while start < len(ids) and ids[start] == self.bos_id:
            start += 1
        body = ids[start:]
        return [self.bos_id, *body] if wants_bos else body

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        return self.tokenizer(texts, add_special_tokens=False)["input_ids"]

    def _content_ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _truncate(self, row_id: str, prompt: str, response: str, ids: list[int], wants_bos: bool) -> list[int]:
        sides = ["prompt", "response"] if self.truncation == "prompt-left" else ["response", "prompt"]
        for _attempt in range(12):
            overflow = len(ids) - self.max_length
            if overflow <= 0:
                return ids
            side = next((s for s in sides if (prompt if s == "prompt" else response)), None)
            if side is None:
                break
            if side == "prompt":
                pieces = self._content_ids(prompt)
                prompt = self.tokenizer.decode(pieces[overflow:]) if overflow < len(pieces) else ""
            else:
                pieces = self._content_ids(response)
                response = self.tokenizer.decode(pieces[: len(pieces) - overflow]) if overflow < len(pieces) else ""
            ids = self._fix_bos(self._tokenize([self.render(prompt, response)])[0], wants_bos)
        raise RmevalError(
            f"row id={row_id!r}: cannot fit model {self.model_name!r}'s max_length={self.max_length} "
            f"even after truncating prompt and response ({len(ids)} tokens left); raise max_length"
        )

    def encode(self, ids_of_rows: list[str], prompts: list[str], responses: list[str]) -> Encoded:
        texts = [self.render(prompt, response) for prompt, response in zip(prompts, responses, strict=True)]
        wants_bos = self._wants_bos(texts[0]) if texts else False
        token_lists = [self._fix_bos(ids, wants_bos) for ids in self._tokenize(texts)]
        truncated = np.zeros(len(texts), dtype=bool)
        for index, ids in enumerate(token_lists):
            if len(ids) > self.max_length:
                token_lists[index] = self._truncate(ids_of_rows[index], prompts[index], responses[index], ids, wants_bos)
                truncated[index] = True
        lengths = np.fromiter((len(ids) for ids in token_lists), dtype=np.int64, count=len(token_lists))
        offsets = np.zeros(len(token_lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter((t for ids in token_lists for t in ids), dtype=np.int64, count=int(offsets[-1]))
        return Encoded(flat_ids=flat, offsets=offsets, truncated=truncated)
