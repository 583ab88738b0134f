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
  key of an entry is a hash of (base_url, model, messages), so a rerun costs no request.

429 waits for `Retry-After` (seconds or an HTTP date); 5xx, timeouts, connection errors and replies cut mid-body back
off exponentially; other 4xx fail at once with the row id.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.models.base import BatchScores, Prepared, RewardScorer, Runtime
from rmeval.registry import ModelSpec
from rmeval.tasks import Pairs

ATTRIBUTES = ("helpfulness", "correctness", "coherence", "complexity", "verbosity")
MODEL_CARD_WEIGHTS = {"helpfulness": 0.3, "correctness": 0.74, "coherence": 0.46, "complexity": 0.47, "verbosity": -0.33}
KNOWN_OPTIONS = {
    "base_url", "model", "api_key_env", "weights", "max_concurrency", "timeout_s", "max_retries",
    "backoff_s", "max_backoff_s", "cache_dir",
}


def default_cache_dir() -> Path:
    configured = os.environ.get("RMEVAL_API_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "rmeval" / "api"


def retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` as seconds (delta-seconds or HTTP-date), None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def attributes_from_reply(reply: dict[str, Any]) -> dict[str, float]:
    """The five HelpSteer2 attributes from a chat-completions reply's logprobs."""
    content = reply["choices"][0]["logprobs"]["content"]
    found = {entry["token"]: float(entry["logprob"]) for entry in content}
    missing = [name for name in ATTRIBUTES if name not in found]
    if missing:
        raise KeyError(f"attributes {missing} missing from logprobs (got {sorted(found)})")
    return {name: found[name] for name in ATTRIBUTES}


class NemotronApiScorer(RewardScorer):
    budget_unit = "requests"

    def __init__(self, spec: ModelSpec, runtime: Runtime) -> None:
        options = dict(spec.options)
        unknown = sorted(set(options) - KNOWN_OPTIONS)
        if unknown:
            raise RmevalError(f"model {spec.name!r}: unknown nemotron-api option(s) {unknown}; allowed {sorted(KNOWN_OPTIONS)}")
        if not options.get("base_url"):
            raise RmevalError(f"model {spec.name!r}: options.base_url is required for adapter 'nemotron-api'")
        self.spec = spec
        self.url = str(options["base_url"]).rstrip("/") + "/chat/completions"
        self.base_url = str(options["base_url"]).rstrip("/")
        self.model_name = str(options.get("model") or spec.path)
        self.key_env = str(options.get("api_key_env", "NVIDIA_API_KEY"))
        self._api_key = os.environ.get(self.key_env, "")
        if not self._api_key:
            raise RmevalError(f"model {spec.name!r}: environment variable {self.key_env} (options.api_key_env) is not set")
        weights = options.get("weights") or MODEL_CARD_WEIGHTS
        bad = sorted(set(weights) - set(ATTRIBUTES))
        if bad:
            raise RmevalError(f"model {spec.name!r}: options.weights has unknown attribute(s) {bad}; known {list(ATTRIBUTES)}")
        self.weights = {name: float(weights.get(name, 0.0)) for name in ATTRIBUTES}
        self.max_concurrency = max(1, int(options.get("max_concurrency", 8)))
        self.timeout_s = float(options.get("timeout_s", 60))
        self.max_retries = int(options.get("max_retries", 8))
        self.backoff_s = float(options.get("backoff_s", 1.0))
        self.max_backoff_s = float(options.get("max_backoff_s", 60))
        self.cache_dir = Path(options.get("cache_dir") or runtime.extra.get("cache_dir") or default_cache_dir())
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="rmeval-api")
        self.pairs: Pairs | None = None
        self.counters = {"requests": 0, "cache_hits": 0, "retries": 0}
        self._lock = threading.Lock()

    # --- helpers -------------------------------------------------------------------------------
    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _log(self, message: str) -> None:
        print(f"rmeval score [{self.spec.name}]: {self._scrub(message)}", file=sys.stderr, flush=True)

    def _session(self) -> Any:
        import requests

        if not hasattr(self._local, "session"):
            self._local.session = requests.Session()
        return self._local.session

    def _count(self, name: str) -> None:
        with self._lock:
            self.counters[name] += 1

    def _cache_path(self, body: dict[str, Any]) -> Path:
        key = json.dumps({"base_url": self.base_url, **body}, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(key.encode()).hexdigest()
        return self.cache_dir / digest[:2] / f"{digest}.json"

    def _backoff(self, attempt: int) -> float:
        return min(self.max_backoff_s, self.backoff_s * (2**attempt))

    # --- one request -----------------------------------------------------------------------------
    def _request(self, row_id: str, body: dict[str, Any]) -> dict[str, Any]:
        import requests

        headers = {"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json"}
        for attempt in range(self.max_retries + 1):
            try:
                self._count("requests")
                response = self._session().post(self.url, json=body, headers=headers, timeout=self.timeout_s)
            # ChunkedEncodingError: the connection broke in the middle of the reply body (reset, proxy cut).
            except (requests.Timeout, requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as error:
                wait, reason = self._backoff(attempt), f"{type(error).__name__}"
            else:
                status = response.status_code
                if status == 200:
                    try:
                        return response.json()
                    except ValueError:
                        raise RmevalError(f"row id={row_id!r}: {self.url} returned invalid JSON") from None
                if status == 429:
                    after = retry_after_seconds(response.headers.get("Retry-After"))
                    wait, reason = (after if after is not None else self._backoff(attempt)), "HTTP 429 (rate limited)"
                elif status >= 500:
                    wait, reason = self._backoff(attempt), f"HTTP {status}"
                else:
                    hint = f"; check {self.key_env}" if status in (401, 403) else ""
                    raise RmevalError(
                        f"row id={row_id!r}: HTTP {status} from {self.url}: {self._scrub(response.text[:300])}{hint}"
                    )
            if attempt == self.max_retries:
                raise RmevalError(f"row id={row_id!r}: {self.url} still failing after {self.max_retries} retries ({reason})")
            self._count("retries")
            self._log(f"row id={row_id!r}: {reason}; retry {attempt + 1}/{self.max_retries} in {wait:.1f} s")
            time.sleep(wait)
        raise AssertionError("unreachable")

    def _score_row(self, index: int) -> tuple[dict[str, float], int]:
        assert self.pairs is not None
        row_id = self.pairs.ids[index]
        messages = [
            {"role": "user", "content": self.pairs.prompts[index]},
            {"role": "assistant", "content": self.pairs.responses[index]},
        ]
        body = {"model": self.model_name, "messages": messages}
        cache_path = self._cache_path(body)
        if cache_path.exists():
            self._count("cache_hits")
            cached = json.loads(cache_path.read_text())
            return cached["attributes"], int(cached.get("prompt_tokens", 0))
        reply = self._request(row_id, body)
        try:
            attributes = attributes_from_reply(reply)
        except (KeyError, IndexError, TypeError) as error:
            raise RmevalError(f"row id={row_id!r}: unexpected reply from {self.url}: {error}") from None
        prompt_tokens = int((reply.get("usage") or {}).get("prompt_tokens") or 0)
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache_path.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
        temporary.write_text(json.dumps({"attributes": attributes, "prompt_tokens": prompt_tokens, "model": self.model_name}))
        os.replace(temporary, cache_path)
        return attributes, prompt_tokens

    # --- RewardScorer ------------------------------------------------------------------------------
    def prepare(self, pairs: Pairs) -> Prepared:
        self.pairs = pairs
        count = len(pairs)
        # Tokens are known only from the reply's usage; the engine takes them from BatchScores.
        return Prepared(costs=np.ones(count, dtype=np.int64), n_tokens=np.zeros(count, dtype=np.int64),
                        truncated=np.zeros(count, dtype=bool))

    def score(self, indices: np.ndarray) -> BatchScores:
        results = list(self._pool.map(self._score_row, [int(i) for i in indices]))
        rewards = np.array([sum(self.weights[k] * attrs[k] for k in ATTRIBUTES) for attrs, _ in results], dtype=np.float64)
        tokens = np.array([n for _, n in results], dtype=np.int64)
        return BatchScores(rewards=rewards, n_tokens=tokens)

    def describe(self) -> dict[str, Any]:
        return {
            "revision": f"api:{self.model_name}",
            "dtype": "n/a (remote)",
            "device": f"api:{self.base_url}",
            "weights": self.weights,
            "max_concurrency": self.max_concurrency,
            **self.counters,
        }

    def close(self) -> None:
        self._pool.shutdown(wait=True)
