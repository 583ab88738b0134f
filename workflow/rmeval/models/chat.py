"""Render (prompt, response) rows to token ids: chat template, BOS hygiene, truncation.

All rows are rendered and tokenised once, with one batched call to the fast tokenizer; the
result is a flat id array plus offsets, so the engine's hot loop never touches Python strings.

Tokenisation follows the reward models' own usage code (RLHFlow's `bradley-terry-rm/` training
scripts and model cards, Skywork-Reward-V2's README): render the conversation with
`apply_chat_template(tokenize=False)`, remove the BOS *text* the template wrote, and let the
tokenizer add its special tokens. The BOS string is never tokenised as text: with a
non-legacy SentencePiece layout (Metaspace, `prepend_scheme="first"`, what transformers 5
builds for a Llama/Mistral tokenizer without `legacy: true`) the word after a literal `<s>`
would lose its `▁` (`[` instead of `▁[`), which is not what the model was trained on.

BOS policy:
- a leading BOS text is stripped from the rendered text, which is then tokenised without
  special tokens;
- the ids the tokenizer itself adds around a text (its post-processor: BOS, and EOS for a
  tokenizer with `add_eos_token`) are added back, with exactly one BOS when the model wants
  BOS and none otherwise;
- the model wants BOS when the registry says `add_bos: true`; `add_bos: false` (models trained
  without BOS) drops it; by default (null) it wants BOS when the template writes one or the
  tokenizer adds one by default.

Truncation: a row longer than `max_length` loses tokens from the left of the prompt
(`prompt-left`) or the right of the response (`response-right`). If the configured side cannot
absorb the whole overflow, the other side is cut too. Each row is re-rendered after cutting, so
the template's own tokens (headers, end-of-turn) always survive.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rmeval.conversation import Conversation, chat_messages
from rmeval.errors import RmevalError
from rmeval.io.hashing import sha256_text

RenderFn = Callable[[str, str], str]
TEMPLATE_SOURCES = ("registry", "adapter", "tokenizer")


@dataclass(frozen=True)
class Encoded:
    flat_ids: np.ndarray  # int64, all rows' ids concatenated
    offsets: np.ndarray  # int64, len(rows) + 1
    truncated: np.ndarray  # bool
    # Rows whose first token the attention mask hides (RewardBench's pipeline on a double BOS); None: no row.
    hidden_first: np.ndarray | None = None

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def row(self, index: int) -> np.ndarray:
        return self.flat_ids[self.offsets[index] : self.offsets[index + 1]]

    def keys(self, extra: list[bytes] | None = None) -> np.ndarray:
        """One 16-byte digest per row of exactly what the model sees (ids, a hidden first token, `extra`: what
        else the adapter reads per row), so rows with one key score identically (rmeval.scoring.engine)."""
        buffer = memoryview(self.flat_ids.astype(np.int64, copy=False).tobytes())
        bounds = (self.offsets * 8).tolist()
        hidden = self.hidden_first
        keys = np.empty(len(bounds) - 1, dtype="S16")
        for index in range(len(keys)):
            digest = hashlib.blake2b(buffer[bounds[index] : bounds[index + 1]], digest_size=16)
            if hidden is not None and hidden[index]:
                digest.update(b"hidden-first")
            if extra is not None:
                digest.update(extra[index])
            keys[index] = digest.digest()
        return keys


def template_sha256(template: str) -> str:
    """Short content hash of a chat template (first 16 hex digits of sha256), recorded in .meta.json."""
    return sha256_text(template)[:16]


class ChatRenderer:
    """(prompt, response) -> text through one chat template: the registry's, the adapter's or the tokenizer's.

    `template`, `source` and `sha256` say which template is actually used, for the job's metadata.
    """

    def __init__(self, tokenizer: Any, template: str | None, model_name: str, source: str = "registry") -> None:
        if template is None:
            own = tokenizer.chat_template if getattr(tokenizer, "chat_template", None) else None
            if not own:
                raise RmevalError(
                    f"model {model_name!r}: its tokenizer has no chat template; set `chat_template` in its registry entry"
                )
            template = tokenizer.get_chat_template() if isinstance(own, dict) else own
            source = "tokenizer"
        if source not in TEMPLATE_SOURCES:
            raise ValueError(f"unknown chat template source {source!r}")
        self.tokenizer = tokenizer
        self.template: str = template
        self.source = source
        self.sha256 = template_sha256(template)

    def __call__(self, prompt: str, response: str) -> str:
        # a multi-turn prompt (rmeval.conversation.Conversation) renders its turns; a plain one is one user turn
        return self.tokenizer.apply_chat_template(chat_messages(prompt, response), tokenize=False,
                                                  chat_template=self.template)

    def describe(self) -> dict[str, Any]:
        return {"chat_template_source": self.source, "chat_template_sha256": self.sha256}


def chat_template_renderer(tokenizer: Any, template: str | None, model_name: str, source: str = "registry") -> ChatRenderer:
    """(prompt, response) -> text through the model's own chat template (or the override)."""
    return ChatRenderer(tokenizer, template, model_name, source)


def special_ids_around(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids the tokenizer's post-processor puts before and after a text (e.g. [BOS] and [])."""
    plain = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    full = list(tokenizer("a", add_special_tokens=True)["input_ids"])
    for start in range(len(full) - len(plain) + 1):
        if plain and full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    bos = tokenizer.bos_token_id
    return ([bos] if bos is not None and full[:1] == [bos] else []), []


def unused_token_id(flat_ids: np.ndarray, preferred: list[int | None], vocab_size: int) -> int:
    """The first of `preferred` (else the highest id of the vocabulary) that occurs in no row."""
    present = set(np.unique(flat_ids).tolist())
    for candidate in preferred:
        if isinstance(candidate, int) and 0 <= candidate < vocab_size and candidate not in present:
            return candidate
    for candidate in range(vocab_size - 1, -1, -1):
        if candidate not in present:
            return candidate
    raise RmevalError("every token id of the vocabulary occurs in the rows; no id is free to pad with")


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
        self.bos_text: str | None = tokenizer.bos_token if self.bos_id is not None else None
        self.add_bos = add_bos
        prefix, self.suffix_ids = special_ids_around(tokenizer)
        self.tokenizer_adds_bos = self.bos_id is not None and self.bos_id in prefix
        self.other_prefix_ids = [token for token in prefix if token != self.bos_id]
        self.template_writes_bos: bool | None = None
        self.wants_bos: bool | None = None
        if self.bos_id is None and add_bos:
            raise RmevalError(f"model {model_name!r}: add_bos is true but its tokenizer has no BOS token")

    # --- text -------------------------------------------------------------------------------
    def _strip_bos_text(self, text: str) -> tuple[str, bool]:
        """The rendered text without the BOS string(s) the template wrote at its start."""
        if not self.bos_text:
            return text, False
        stripped = False
        while text.startswith(self.bos_text):
            text = text[len(self.bos_text) :]
            stripped = True
        return text, stripped

    def _render(self, prompt: str, response: str) -> str:
        return self._strip_bos_text(self.render(prompt, response))[0]

    # --- ids --------------------------------------------------------------------------------
    def _decide_bos(self, template_writes_bos: bool) -> bool:
        self.template_writes_bos = template_writes_bos
        if self.bos_id is None:
            return False
        if self.add_bos is not None:
            return self.add_bos
        return template_writes_bos or self.tokenizer_adds_bos

    def _wrap(self, body: list[int]) -> list[int]:
        """The tokenizer's own special ids around the body, with exactly one BOS when the model wants it."""
        start = 0
        while start < len(body) and body[start] == self.bos_id:
            start += 1
        prefix = ([self.bos_id] if self.wants_bos else []) + self.other_prefix_ids
        return [*prefix, *body[start:], *self.suffix_ids]

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        return [self._wrap(ids) for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]]

    def _content_ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _truncate(self, row_id: str, prompt: str, response: str, ids: list[int]) -> list[int]:
        sides = ["prompt", "response"] if self.truncation == "prompt-left" else ["response", "prompt"]
        for _attempt in range(12):
            overflow = len(ids) - self.max_length
            if overflow <= 0:
                return ids
            side = next((s for s in sides if (prompt if s == "prompt" else response)), None)
            if side is None:
                break
            if side == "prompt" and isinstance(prompt, Conversation):  # cut a conversation by its oldest turns
                prompt = prompt.without_first_exchange()
            elif side == "prompt":
                pieces = self._content_ids(prompt)
                prompt = self.tokenizer.decode(pieces[overflow:]) if overflow < len(pieces) else ""
            else:
                pieces = self._content_ids(response)
                response = self.tokenizer.decode(pieces[: len(pieces) - overflow]) if overflow < len(pieces) else ""
            ids = self._tokenize([self._render(prompt, response)])[0]
        raise RmevalError(
            f"row id={row_id!r}: cannot fit model {self.model_name!r}'s max_length={self.max_length} "
            f"even after truncating prompt and response ({len(ids)} tokens left); raise max_length"
        )

    def encode(self, ids_of_rows: list[str], prompts: list[str], responses: list[str]) -> Encoded:
        rendered = [self._strip_bos_text(self.render(p, r)) for p, r in zip(prompts, responses, strict=True)]
        texts = [text for text, _ in rendered]
        self.wants_bos = self._decide_bos(bool(rendered) and rendered[0][1])
        token_lists = self._tokenize(texts) if texts else []
        truncated = np.zeros(len(texts), dtype=bool)
        for index, ids in enumerate(token_lists):
            if len(ids) > self.max_length:
                token_lists[index] = self._truncate(ids_of_rows[index], prompts[index], responses[index], ids)
                truncated[index] = True
        lengths = np.fromiter((len(ids) for ids in token_lists), dtype=np.int64, count=len(token_lists))
        offsets = np.zeros(len(token_lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter((t for ids in token_lists for t in ids), dtype=np.int64, count=int(offsets[-1]))
        return Encoded(flat_ids=flat, offsets=offsets, truncated=truncated)

    def describe(self) -> dict[str, Any]:
        """The BOS policy actually applied, for the job's metadata."""
        return {
            "template_writes_bos": self.template_writes_bos,
            "bos_prepended": bool(self.wants_bos),
            "tokenizer_special_prefix_ids": [*([self.bos_id] if self.tokenizer_adds_bos else []), *self.other_prefix_ids],
            "tokenizer_special_suffix_ids": list(self.suffix_ids),
        }
