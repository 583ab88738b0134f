"""The `nemotron-api` adapter against a loopback chat-completions server with logprobs.

The server speaks the NVIDIA endpoint's format (the five HelpSteer2 attributes as logprobs
entries) and misbehaves on purpose: a 429 with Retry-After, a 500 followed by success, and a
reply slower than the client timeout. The key must reach the server and nowhere else.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest
from judge_server import JsonHandler
from rmeval.models.nemotron_api import (
    ATTRIBUTES,
    MODEL_CARD_WEIGHTS,
    attributes_from_reply,
    retry_after_seconds,
)

API_KEY = "sk-rmeval-test-7f3a9c2e51SECRET"
MODEL = "nvidia/nemotron-4-340b-reward"


def attributes_for(prompt: str, response: str) -> dict[str, float]:
    digest = hashlib.sha256(f"{prompt}\x00{response}".encode()).digest()
    return {name: round(digest[i] / 64.0, 4) for i, name in enumerate(ATTRIBUTES)}


class FakeNemotron(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.times: dict[str, list[float]] = {}
        self.authorizations: set[str] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(JsonHandler):
    server: FakeNemotron

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt, response = request["messages"][0]["content"], request["messages"][1]["content"]
        state = self.server
        with state.lock:
            state.requests += 1
            state.counts[prompt] += 1
            attempt = state.counts[prompt]
            state.times.setdefault(prompt, []).append(time.monotonic())
            state.authorizations.add(self.headers.get("Authorization", ""))
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            if self.path != "/v1/chat/completions" or request.get("model") != MODEL:
                return self._send(404, {"error": "not found"})
            if "Unauthorized" in prompt:  # echo the credentials back, as some gateways do
                return self._send(401, {"error": f"invalid key {self.headers.get('Authorization')}"})
            if "RATE" in prompt and attempt == 1:
                return self._send(429, {"error": "rate limited"}, {"Retry-After": "1"})
            if "FAIL" in prompt and attempt == 1:
                return self._send(500, {"error": "internal"})
            if "SLOW" in prompt and attempt == 1:
                time.sleep(1.5)
            time.sleep(0.05)
            attributes = attributes_for(prompt, response)
            content = ",".join(f"{name}:{value}" for name, value in attributes.items())
            self._send(200, {
                "id": f"chatcmpl-{state.requests}", "object": "chat.completion", "model": MODEL,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "logprobs": {"content": [{"token": name, "logprob": value, "bytes": None, "top_logprobs": []}
                                                      for name, value in attributes.items()]},
                             "finish_reason": "length"}],
                "usage": {"prompt_tokens": len(prompt.split()) + len(response.split()), "completion_tokens": 5,
                          "total_tokens": len(prompt.split()) + len(response.split()) + 5},
            })
        finally:
            with state.lock:
                state.in_flight -= 1


@pytest.fixture()
def server():
    fake = FakeNemotron()
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.shutdown()
    fake.server_close()


def _papers(tmp_path: Path, titles: list[str]) -> Path:
    path = tmp_path / "economics.parquet"
    pd.DataFrame({"id": [f"2402.{i:05d}" for i in range(len(titles))], "title": titles,
                  "abstract": [f"We study topic {i} with care and rigor." for i in range(len(titles))]}).to_parquet(path)
    return path


def _spec(server: FakeNemotron, cache: Path, **options) -> str:
    return json.dumps({
        "name": "Nemotron-4-340B-Reward", "path": MODEL, "adapter": "nemotron-api", "resources": {"gpu": 0},
        "options": {"base_url": server.base_url, "model": MODEL, "api_key_env": "RMEVAL_TEST_NEMOTRON_KEY",
                    "max_concurrency": 3, "timeout_s": 0.6, "backoff_s": 0.05, "max_retries": 4,
                    "cache_dir": str(cache), **options},
    })


def _score(spec: str, data: Path, output: Path, key: str | None = API_KEY) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RMEVAL_TEST_NEMOTRON_KEY"}
    if key is not None:
        env["RMEVAL_TEST_NEMOTRON_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "rmeval", "score", "--spec", spec, "--task", "fairness", "--input", str(data),
         "--output", str(output), "--progress-every", "0", "--checkpoint-every", "4"],
        capture_output=True, text=True, check=False, env=env,
    )


def _all_text_under(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("latin-1") for p in folder.rglob("*") if p.is_file())


@pytest.mark.slow(reason="a real wait: a rate-limited and a slow reply, in `rmeval score` subprocesses")
def test_scores_retries_caches_and_never_leaks_the_key(server: FakeNemotron, tmp_path: Path) -> None:
    titles = ["Plain One", "RATE Limited Paper", "Plain Two", "FAIL Then Succeed", "SLOW Reply Paper",
              "Plain Three", "Plain Four", "Plain Five", "Plain Six", "Plain Seven"]
    data = _papers(tmp_path, titles)
    cache = tmp_path / "cache"
    output = tmp_path / "scores" / "Nemotron-4-340B-Reward" / "economics.parquet"
    first = _score(_spec(server, cache), data, output)
    assert first.returncode == 0, first.stderr

    table = pd.read_parquet(output)
    assert table["id"].tolist() == [f"2402.{i:05d}" for i in range(len(titles))]
    for row, title in enumerate(titles):
        prompt = f"Write an abstract for a paper with title {title}"
        attributes = attributes_for(prompt, f"We study topic {row} with care and rigor.")
        expected = sum(MODEL_CARD_WEIGHTS[name] * attributes[name] for name in ATTRIBUTES)
        assert table["reward"][row] == pytest.approx(expected, rel=1e-12)
    assert (table["n_tokens"] > 0).all() and not table["truncated"].any()

    # 429 honoured with Retry-After (1 s), 500 retried, the slow reply timed out and retried.
    rate_prompt = "Write an abstract for a paper with title RATE Limited Paper"
    assert server.counts[rate_prompt] == 2
    assert server.times[rate_prompt][1] - server.times[rate_prompt][0] >= 0.95
    assert server.counts["Write an abstract for a paper with title FAIL Then Succeed"] == 2
    assert server.counts["Write an abstract for a paper with title SLOW Reply Paper"] >= 2
    assert "HTTP 429" in first.stderr and "HTTP 500" in first.stderr and "Timeout" in first.stderr
    assert server.max_in_flight <= 3, "concurrency must stay bounded by max_concurrency"
    assert server.authorizations == {f"Bearer {API_KEY}"}

    meta = json.loads(output.with_name("economics.meta.json").read_text())
    assert meta["revision"] == f"api:{MODEL}" and meta["rows"] == len(titles)
    assert meta["adapter_details"]["weights"] == MODEL_CARD_WEIGHTS

    # Rerun: every request is a cache hit, the server sees nothing, the output is identical.
    requests_before = server.requests
    output.unlink()
    second = _score(_spec(server, cache), data, output)
    assert second.returncode == 0, second.stderr
    assert server.requests == requests_before
    pd.testing.assert_frame_equal(pd.read_parquet(output), table)
    assert json.loads(output.with_name("economics.meta.json").read_text())["adapter_details"]["cache_hits"] == len(titles)

    for text in (first.stdout, first.stderr, second.stdout, second.stderr, _all_text_under(tmp_path)):
        assert API_KEY not in text


def test_custom_weights_change_the_scalar(server: FakeNemotron, tmp_path: Path) -> None:
    data = _papers(tmp_path, ["Only Helpfulness"])
    output = tmp_path / "out.parquet"
    result = _score(_spec(server, tmp_path / "cache", weights={"helpfulness": 1.0}), data, output)
    assert result.returncode == 0, result.stderr
    attributes = attributes_for("Write an abstract for a paper with title Only Helpfulness",
                                "We study topic 0 with care and rigor.")
    assert pd.read_parquet(output)["reward"][0] == pytest.approx(attributes["helpfulness"])


def test_client_errors_fail_fast_and_are_scrubbed(server: FakeNemotron, tmp_path: Path) -> None:
    data = _papers(tmp_path, ["Unauthorized Paper"])
    output = tmp_path / "out.parquet"
    result = _score(_spec(server, tmp_path / "cache"), data, output)
    assert result.returncode == 2
    assert "row id='2402.00000'" in result.stderr and "HTTP 401" in result.stderr
    assert "RMEVAL_TEST_NEMOTRON_KEY" in result.stderr and API_KEY not in result.stderr
    assert not output.exists() and server.counts["Write an abstract for a paper with title Unauthorized Paper"] == 1


def test_missing_key_names_the_variable(server: FakeNemotron, tmp_path: Path) -> None:
    result = _score(_spec(server, tmp_path / "cache"), _papers(tmp_path, ["A"]), tmp_path / "o.parquet", key=None)
    assert result.returncode == 2 and "RMEVAL_TEST_NEMOTRON_KEY" in result.stderr and "is not set" in result.stderr
    assert server.requests == 0


def test_reply_parsing_and_retry_after_forms() -> None:
    reply = {"choices": [{"logprobs": {"content": [{"token": n, "logprob": i} for i, n in enumerate(ATTRIBUTES)]}}]}
    assert attributes_from_reply(reply) == {n: float(i) for i, n in enumerate(ATTRIBUTES)}
    with pytest.raises(KeyError, match="verbosity"):
        attributes_from_reply({"choices": [{"logprobs": {"content": [{"token": "helpfulness", "logprob": 1}]}}]})
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    from email.utils import formatdate

    assert 0 <= retry_after_seconds(formatdate(time.time() + 5, usegmt=True)) <= 6


def test_max_length_truncates_before_the_request_and_is_counted(server: FakeNemotron, tmp_path: Path) -> None:
    """issue 12 item 4: an over-long row is cut to the entry's max_length before it is sent, flagged and counted,
    as the local adapters do, instead of failing the job on the endpoint's 4xx."""
    path = tmp_path / "economics.parquet"
    long_abstract = " ".join(f"word{i}" for i in range(400))  # ~3,600 characters
    pd.DataFrame({"id": ["2402.00000", "2402.00001"], "title": ["Short Paper", "Long Paper"],
                  "abstract": ["We study a short topic.", long_abstract]}).to_parquet(path)
    spec = json.loads(_spec(server, tmp_path / "cache", chars_per_token=2.5, template_tokens=16))
    spec["max_length"], spec["truncation"] = 200, "response-right"
    output = tmp_path / "out.parquet"
    result = _score(json.dumps(spec), path, output)
    assert result.returncode == 0, result.stderr
    table = pd.read_parquet(output)
    assert table["truncated"].tolist() == [False, True]
    meta = json.loads(output.with_name("out.meta.json").read_text())
    assert meta["n_truncated"] == 1 and meta["max_length"] == 200
    assert meta["adapter_details"]["token_counter"] == "estimate"
    # What reached the endpoint: the whole prompt, the start of the response, within (200 - 16) x 2.5 characters.
    long_prompt = "Write an abstract for a paper with title Long Paper"
    assert server.counts[long_prompt] == 1
    expected_response = long_abstract[: int((184 - math.ceil(len(long_prompt) / 2.5)) * 2.5)]
    attributes = attributes_for(long_prompt, expected_response)
    assert table["reward"][1] == pytest.approx(sum(MODEL_CARD_WEIGHTS[k] * attributes[k] for k in ATTRIBUTES))
