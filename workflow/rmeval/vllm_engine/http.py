"""One scoring request to a vLLM server: token ids in, raw logits out.

`POST /classify` with `input` a list of token-id lists and `use_activation: false` (vLLM 0.32's classify API,
entrypoints/pooling/classify/protocol.py): the ids are taken as they are (no tokenisation, no special tokens added),
and `probs` then holds the classification head's raw logits. The default would apply the activation: sigmoid on one
label since vLLM PR #18313 (softmax on one label, earlier, is always 1.0), which rmeval's statistics must never see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.vllm_engine.process import VllmServerError

CONNECT_S = 10.0
READ_S = 1800.0  # one engine batch on a slow CPU; a hung server is found by the job's own runtime limit


@dataclass(frozen=True)
class Classified:
    logits: np.ndarray  # float64, logit 0 of each row, in request order
    prompt_tokens: int  # what the server counted: the ids sent, nothing added


def classify(session: Any, url: str, model: str, rows: list[list[int]], name: str) -> Classified:
    import requests

    body = {"model": model, "input": rows, "use_activation": False}
    try:
        reply = session.post(f"{url}/classify", json=body, timeout=(CONNECT_S, READ_S))
    except requests.RequestException as error:
        raise VllmServerError(f"engine vllm: the server for {name!r} at {url} stopped answering "
                              f"({type(error).__name__}) during a batch of {len(rows)} rows. Rerun the workflow: this "
                              "job resumes from its checkpoint on a restarted server") from None
    if reply.status_code >= 500:
        raise VllmServerError(f"engine vllm: the server for {name!r} at {url} failed a batch of {len(rows)} rows "
                              f"(HTTP {reply.status_code}: {reply.text[:300]}). Rerun the workflow: this job resumes "
                              "from its checkpoint")
    if reply.status_code != 200:
        raise RmevalError(f"engine vllm: the server for {name!r} refused a batch of {len(rows)} rows "
                          f"(HTTP {reply.status_code}: {reply.text[:300]})")
    document = reply.json()
    data = sorted(document["data"], key=lambda item: item["index"])
    if len(data) != len(rows):
        raise VllmServerError(f"engine vllm: the server for {name!r} answered {len(data)} of {len(rows)} rows")
    logits = np.array([float(item["probs"][0]) for item in data], dtype=np.float64)
    return Classified(logits, int(document.get("usage", {}).get("prompt_tokens", 0)))


def served_model(session: Any, url: str, name: str) -> tuple[str, int | None]:
    """(the model id a running server serves, its max_model_len): `engine: {vllm: {url}}` asks it."""
    import requests

    try:
        reply = session.get(f"{url}/v1/models", timeout=(CONNECT_S, 60))
        reply.raise_for_status()
        first = reply.json()["data"][0]
    except (requests.RequestException, ValueError, KeyError, IndexError) as error:
        raise VllmServerError(f"engine vllm: no vLLM server answers at {url} for {name!r} ({error})") from None
    return str(first["id"]), first.get("max_model_len")


def prefix_cache_counts(session: Any, url: str) -> dict[str, float]:
    """The server's prefix-cache counters (prompt tokens looked up, and found cached) from /metrics."""
    try:
        text = session.get(f"{url}/metrics", timeout=(CONNECT_S, 30)).text
    except Exception:  # noqa: BLE001 - counters are a report, never a reason to fail a job
        return {}
    counts: dict[str, float] = {}
    for key in ("queries", "hits"):
        found = re.findall(rf"^vllm:prefix_cache_{key}_total\{{[^}}]*\}} (\S+)$", text, re.M)
        if found:
            counts[f"prefix_cache_{key}"] = sum(float(value) for value in found)
    found = re.findall(r"^vllm:prompt_tokens_total\{[^}]*\} (\S+)$", text, re.M)
    if found:
        counts["prompt_tokens"] = sum(float(value) for value in found)
    return counts
