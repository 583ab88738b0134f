"""One HTTP client for OpenAI-compatible chat-completions endpoints (`nemotron-api`, `judge`).

- bounded concurrency (`max_concurrency` requests in flight, a thread pool of that size);
- 429 waits for `Retry-After` (seconds or an HTTP date); 5xx, timeouts, connection errors and replies cut
  mid-body back off exponentially (`backoff_s` * 2^attempt, at most `max_backoff_s`); other 4xx fail at once
  with the row id;
- a per-request cache: one JSON file per request body, named by the sha256 of (base_url, model, messages,
  sampling settings), holding the raw reply, so a rerun sends no request;
- the key is read from an environment variable only, sent only in the Authorization header, and scrubbed from
  every error text; it is never logged, cached or written;
- counters (requests, retries, cache hits) and the token usage of every reply, summed.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rmeval.errors import RmevalError
from rmeval.io.atomic import write_text_atomic
from rmeval.io.hashing import sha256_text

if TYPE_CHECKING:
    from rmeval.registry import ModelSpec

T = TypeVar("T")


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


@dataclass(frozen=True)
class ClientSettings:
    """The client options of an entry; their defaults are the adapter catalogue's (rmeval.models.catalogue)."""

    base_url: str
    model: str
    api_key_env: str
    max_concurrency: int
    timeout_s: float
    max_retries: int
    backoff_s: float
    max_backoff_s: float
    cache_dir: Path

    @classmethod
    def from_options(cls, spec: ModelSpec, cache_dir: Any = None) -> ClientSettings:
        """The client options of `spec` over their defaults in the adapter catalogue."""
        options = spec.adapter_entry.settings(spec.options)
        if not options.get("base_url"):
            raise RmevalError(f"model {spec.name!r}: options.base_url is required for adapter {spec.adapter!r}")
        return cls(
            base_url=str(options["base_url"]).rstrip("/"),
            model=str(options.get("model") or spec.path),
            api_key_env=str(options.get("api_key_env") or spec.adapter_entry.api_key_env),
            max_concurrency=max(1, int(options["max_concurrency"])),
            timeout_s=float(options["timeout_s"]),
            max_retries=int(options["max_retries"]),
            backoff_s=float(options["backoff_s"]),
            max_backoff_s=float(options["max_backoff_s"]),
            cache_dir=Path(options.get("cache_dir") or cache_dir or default_cache_dir()),
        )


class _Cancelled(Exception):
    """A task not started because an earlier one failed."""


class ChatClient:
    """POSTs chat-completions bodies with retries and a reply cache; thread-safe."""

    def __init__(self, settings: ClientSettings, name: str, key_optional: bool = False) -> None:
        self.settings = settings
        self.name = name
        self.url = settings.base_url + "/chat/completions"
        self._api_key = os.environ.get(settings.api_key_env, "")
        if not self._api_key and not key_optional:
            raise RmevalError(
                f"model {name!r}: environment variable {settings.api_key_env} (options.api_key_env) is not set"
            )
        self.cache_dir = settings.cache_dir
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=settings.max_concurrency, thread_name_prefix="rmeval-api")
        self._lock = threading.Lock()
        self.counters = {"requests": 0, "cache_hits": 0, "retries": 0}
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}

    # --- helpers -------------------------------------------------------------------------------
    def scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def log(self, message: str) -> None:
        print(f"rmeval score [{self.name}]: {self.scrub(message)}", file=sys.stderr, flush=True)

    def _session(self) -> Any:
        import requests

        if not hasattr(self._local, "session"):
            self._local.session = requests.Session()
        return self._local.session

    def _count(self, name: str) -> None:
        with self._lock:
            self.counters[name] += 1

    def _add_usage(self, reply: dict[str, Any]) -> None:
        usage = reply.get("usage") or {}
        with self._lock:
            for key in self.usage:
                value = usage.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self.usage[key] += int(value)

    def cache_path(self, body: dict[str, Any]) -> Path:
        key = json.dumps({"base_url": self.settings.base_url, **body}, sort_keys=True, ensure_ascii=False)
        digest = sha256_text(key)
        return self.cache_dir / digest[:2] / f"{digest}.json"

    def _backoff(self, attempt: int) -> float:
        return min(self.settings.max_backoff_s, self.settings.backoff_s * (2**attempt))

    # --- requests --------------------------------------------------------------------------------
    def post(self, row_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """One request with retries; the parsed JSON reply (not cached: see `cached`)."""
        import requests

        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        retries = self.settings.max_retries
        for attempt in range(retries + 1):
            try:
                self._count("requests")
                response = self._session().post(self.url, json=body, headers=headers, timeout=self.settings.timeout_s)
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
                    hint = f"; check {self.settings.api_key_env}" if status in (401, 403) else ""
                    raise RmevalError(
                        f"row id={row_id!r}: HTTP {status} from {self.url}: {self.scrub(response.text[:300])}{hint}"
                    )
            if attempt == retries:
                raise RmevalError(f"row id={row_id!r}: {self.url} still failing after {retries} retries ({reason})")
            self._count("retries")
            self.log(f"row id={row_id!r}: {reason}; retry {attempt + 1}/{retries} in {wait:.1f} s")
            time.sleep(wait)
        raise AssertionError("unreachable")

    def cached(self, row_id: str, body: dict[str, Any], parse: Callable[[dict[str, Any]], T]) -> tuple[T, dict]:
        """`parse(reply)` of the cached reply for `body`, else of a fresh one (then cached).

        `parse` runs before anything is cached, so a reply it rejects (RmevalError) is never stored.
        Returns (parsed, usage of that reply).
        """
        path = self.cache_path(body)
        if path.exists():
            try:
                reply = json.loads(path.read_text())
            except ValueError:
                reply = None  # a torn cache file from another tool: ask again
            if isinstance(reply, dict):
                self._count("cache_hits")
                return parse(reply), dict(reply.get("usage") or {})
        reply = self.post(row_id, body)
        parsed = parse(reply)
        self._add_usage(reply)
        write_text_atomic(json.dumps(reply, ensure_ascii=False), path, unique=True)  # threads may race on a key
        return parsed, dict(reply.get("usage") or {})

    def map(self, function: Callable[[int], T], indices: Iterable[int]) -> list[T]:
        """`function` over `indices` on the pool, in order; after the first failure no new request starts."""
        failed = threading.Event()

        def guarded(index: int) -> T:
            if failed.is_set():
                raise _Cancelled()
            try:
                return function(index)
            except BaseException:
                failed.set()
                raise

        futures = [self._pool.submit(guarded, index) for index in indices]
        first_error: BaseException | None = None
        results: list[T] = []
        for future in futures:
            try:
                results.append(future.result())
            except _Cancelled:
                continue
            except BaseException as error:  # noqa: BLE001 - re-raised below, after the pool has drained
                first_error = first_error or error
        if first_error is not None:
            raise first_error
        return results

    def identity(self, model_name: str) -> dict[str, str]:
        """The `.meta.json` fields a local model fills with its commit, dtype and device: here the endpoint."""
        return {"revision": f"api:{model_name}", "dtype": "n/a (remote)", "device": f"api:{self.settings.base_url}"}

    def describe(self) -> dict[str, Any]:
        return {"max_concurrency": self.settings.max_concurrency, **self.counters, "usage": dict(self.usage)}

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class TokenCounter:
    """Counts tokens before a request: with a tokenizer when `options.tokenizer` names one (a local folder or a
    hub id already in the cache), else a conservative estimate of ceil(characters / chars_per_token)."""

    def __init__(self, tokenizer: str | None, chars_per_token: float, name: str) -> None:
        self.kind = "estimate"
        self.chars_per_token = float(chars_per_token)
        if self.chars_per_token <= 0:
            raise RmevalError(f"model {name!r}: options.chars_per_token must be > 0")
        self._tokenizer = None
        if tokenizer:
            from transformers import AutoTokenizer

            try:
                self._tokenizer = AutoTokenizer.from_pretrained(tokenizer)
            except Exception as error:  # noqa: BLE001 - any load failure: say which tokenizer
                raise RmevalError(f"model {name!r}: cannot load options.tokenizer {tokenizer!r}: {error}") from error
            self.kind = f"tokenizer:{tokenizer}"

    def count(self, text: str) -> int:
        if self._tokenizer is not None:
            return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])
        return math.ceil(len(text) / self.chars_per_token)

    def keep_start(self, text: str, budget: int) -> str:
        """The longest start of `text` within `budget` tokens."""
        return self._cut(text, budget, keep="start")

    def keep_end(self, text: str, budget: int) -> str:
        """The longest end of `text` within `budget` tokens."""
        return self._cut(text, budget, keep="end")

    def _cut(self, text: str, budget: int, keep: str) -> str:
        if budget <= 0:
            return ""
        if self.count(text) <= budget:
            return text
        if self._tokenizer is not None:
            ids = self._tokenizer(text, add_special_tokens=False)["input_ids"]
            piece = ids[:budget] if keep == "start" else ids[len(ids) - budget:]
            return self._tokenizer.decode(piece)
        chars = int(budget * self.chars_per_token)
        return text[:chars] if keep == "start" else text[len(text) - chars:]
