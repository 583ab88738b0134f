"""`nemotron-api`: Nemotron-4-340B-Reward through its OpenAI-compatible chat-completions endpoint.

The endpoint takes the (user, assistant) conversation and returns the five HelpSteer2 attributes
as the `logprobs.content` entries of the reply: `{"token": "helpfulness", "logprob": 1.62}`, ...
The scalar is a weighted sum of them. Default weights are the model card's recommendation for
using it as a conventional scalar RM (huggingface.co/nvidia/Nemotron-4-340B-Reward: elementwise
weights [0.3, 0.74, 0.46, 0.47, -0.33] on helpfulness, correctness, coherence, complexity,
verbosity), which is also how it was scored on RewardBench.

Options (registry `options:`):
- `base_url` (required), `model` (default: the entry's `path`);
- `api_key_env` (default NVIDIA_API_KEY): the key is read from this variable only, sent only in
  the Authorization header, and never logged, cached or written (error texts are scrubbed);
- `weights`: mapping attribute -> weight (default above);
- `max_concurrency` (8), `timeout_s` (60), `max_retries` (8), `backoff_s` (1.0), `max_backoff_s` (60);
- `cache_dir`: per-request cache (default `$RMEVAL_API_CACHE` or `~/.cache/rmeval/api`). The
  key of an entry is a hash of (base_url, model, messages), so a rerun costs no request;
- `tokenizer` (none), `chars_per_token` (2.5), `template_tokens` (16): how the entry's `max_length` is
  applied before the request (the endpoint rejects an over-long conversation with a 4xx). With a tokenizer the
  conversation is counted exactly; without one, as ceil(characters / chars_per_token), which over-counts
  English prose. A row over `max_length - template_tokens` is cut on the entry's `truncation` side (the start
  of the prompt, or the end of the response), flagged `truncated` and counted in the meta's `n_truncated`.

The HTTP side (concurrency, Retry-After, back-off, cache, key handling) is `rmeval.models.api_client`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.models.api_client import (
    ChatClient,
    ClientSettings,
    TokenCounter,
    default_cache_dir,
    retry_after_seconds,
)
from rmeval.models.base import BatchScores, Prepared, RewardScorer, Runtime
from rmeval.registry import ModelSpec
from rmeval.tasks import Pairs

__all__ = ["ATTRIBUTES", "MODEL_CARD_WEIGHTS", "NemotronApiScorer", "attributes_from_reply", "default_cache_dir",
           "retry_after_seconds"]

ATTRIBUTES = ("helpfulness", "correctness", "coherence", "complexity", "verbosity")
MODEL_CARD_WEIGHTS = {"helpfulness": 0.3, "correctness": 0.74, "coherence": 0.46, "complexity": 0.47, "verbosity": -0.33}


def attributes_from_reply(reply: dict[str, Any]) -> dict[str, float]:
    """The five HelpSteer2 attributes from a chat-completions reply's logprobs."""
    content = reply["choices"][0]["logprobs"]["content"]
    found = {entry["token"]: float(entry["logprob"]) for entry in content}
    missing = [name for name in ATTRIBUTES if name not in found]
    if missing:
        raise KeyError(f"attributes {missing} missing from logprobs (got {sorted(found)})")
    return {name: found[name] for name in ATTRIBUTES}


def fit_conversation(counter: TokenCounter, prompt: str, response: str, budget: int,
                     truncation: str) -> tuple[str, str, bool]:
    """(prompt, response, truncated): cut the prompt's start (prompt-left) or the response's end
    (response-right) first, then the other side, until both fit `budget` tokens together."""
    if counter.count(prompt) + counter.count(response) <= budget:
        return prompt, response, False
    if truncation == "prompt-left":
        prompt = counter.keep_end(prompt, max(0, budget - counter.count(response)))
        if counter.count(prompt) + counter.count(response) > budget:
            response = counter.keep_start(response, max(0, budget - counter.count(prompt)))
    else:
        response = counter.keep_start(response, max(0, budget - counter.count(prompt)))
        if counter.count(prompt) + counter.count(response) > budget:
            prompt = counter.keep_end(prompt, max(0, budget - counter.count(response)))
    return prompt, response, True


class NemotronApiScorer(RewardScorer):
    budget_unit = "requests"

    def __init__(self, spec: ModelSpec, runtime: Runtime) -> None:
        options = spec.adapter_entry.settings(spec.options)  # over the catalogue's defaults
        settings = ClientSettings.from_options(spec, cache_dir=runtime.extra.get("cache_dir"))
        self.spec = spec
        self.model_name = settings.model
        weights = options.get("weights") or MODEL_CARD_WEIGHTS
        bad = sorted(set(weights) - set(ATTRIBUTES))
        if bad:
            raise RmevalError(f"model {spec.name!r}: options.weights has unknown attribute(s) {bad}; known {list(ATTRIBUTES)}")
        self.weights = {name: float(weights.get(name, 0.0)) for name in ATTRIBUTES}
        self.counter = TokenCounter(options.get("tokenizer"), float(options["chars_per_token"]), spec.name)
        self.template_tokens = int(options["template_tokens"])
        self.client = ChatClient(settings, spec.name)
        self.max_concurrency = settings.max_concurrency
        self.pairs: Pairs | None = None
        self.texts: list[tuple[str, str]] = []

    @property
    def counters(self) -> dict[str, int]:
        return self.client.counters

    def _parse(self, row_id: str) -> Any:
        def parse(reply: dict[str, Any]) -> tuple[dict[str, float], int]:
            if "attributes" in reply and "choices" not in reply:  # a cache entry of an earlier rmeval
                return {k: float(v) for k, v in reply["attributes"].items()}, int(reply.get("prompt_tokens", 0))
            try:
                attributes = attributes_from_reply(reply)
            except (KeyError, IndexError, TypeError) as error:
                raise RmevalError(f"row id={row_id!r}: unexpected reply from {self.client.url}: {error}") from None
            return attributes, int((reply.get("usage") or {}).get("prompt_tokens") or 0)

        return parse

    def _score_row(self, index: int) -> tuple[dict[str, float], int]:
        assert self.pairs is not None
        row_id = self.pairs.ids[index]
        prompt, response = self.texts[index]
        messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
        body = {"model": self.model_name, "messages": messages}
        parsed, _usage = self.client.cached(row_id, body, self._parse(row_id))
        return parsed

    # --- RewardScorer ------------------------------------------------------------------------------
    def prepare(self, pairs: Pairs) -> Prepared:
        self.pairs = pairs
        count = len(pairs)
        budget = self.spec.max_length - self.template_tokens
        if budget <= 0:
            raise RmevalError(f"model {self.spec.name!r}: max_length {self.spec.max_length} leaves no room after "
                              f"options.template_tokens {self.template_tokens}")
        truncated = np.zeros(count, dtype=bool)
        self.texts = []
        for index in range(count):
            prompt, response, cut = fit_conversation(self.counter, pairs.prompts[index], pairs.responses[index],
                                                     budget, self.spec.truncation)
            if cut and not response.strip():
                raise RmevalError(f"row id={pairs.ids[index]!r}: nothing of the response fits model "
                                  f"{self.spec.name!r}'s max_length={self.spec.max_length}; raise max_length")
            truncated[index] = cut
            self.texts.append((prompt, response))
        # Tokens are known only from the reply's usage; the engine takes them from BatchScores.
        return Prepared(costs=np.ones(count, dtype=np.int64), n_tokens=np.zeros(count, dtype=np.int64),
                        truncated=truncated)

    def score(self, indices: np.ndarray) -> BatchScores:
        results = self.client.map(self._score_row, [int(i) for i in indices])
        rewards = np.array([sum(self.weights[k] * attrs[k] for k in ATTRIBUTES) for attrs, _ in results], dtype=np.float64)
        tokens = np.array([n for _, n in results], dtype=np.int64)
        return BatchScores(rewards=rewards, n_tokens=tokens)

    def describe(self) -> dict[str, Any]:
        return {
            **self.client.identity(self.model_name),
            "weights": self.weights,
            "token_counter": self.counter.kind,
            **self.client.describe(),
        }

    def close(self) -> None:
        self.client.close()
