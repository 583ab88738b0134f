"""A loopback LLM judge: an OpenAI chat-completions endpoint on 127.0.0.1 (http.server in a thread).

It answers the way judges served by vLLM or a hosted API answer (`choices[i].message.content`, `usage`), in
several phrasings of a rating `[[N]]` or a verdict `[[A]]` / `[[B]]`, some of them unparsable on purpose, and it
misbehaves on request: the first requests of a run can be answered 429 with Retry-After, 500, or later than the
client's timeout (`fault_plan`). What it meant by each reply is recorded in `intended` (prompt -> value or None),
so that a test can compute the expected metrics by hand.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JUDGE_MODEL = "loopback/judge-7b"

# (template, parsable): {r} is the rating, {v} the verdict. A rating out of 1-10 is a null, as is a tie [[C]].
RATING_PHRASES = [
    ("The answer is sound.\n\n[[{r}]]", True),
    ("Rating: {r}", True),
    ("Assessment: minor slips.\nScore: {r}/10", True),
    ("**Rating:** [[{r}]]", True),
    ("I would grade this [[{r}/10]].", True),
    ("Grade: {r}", True),
    ("I cannot grade this answer.", False),
    ("Rating: [[{r}5]]", False),  # 15, 25, ...: outside 1-10
]
VERDICT_PHRASES = [
    ("Answer {v} checks out.\n\n[[{v}]]", True),
    ("Judgement: [[{v}]]", True),
    ("Final verdict: **{v}**", True),
    ("[[Assistant {v}]]", True),
    ("After comparing both, the better answer is {v}.", True),
    ("Both are equally good. [[C]]", False),
    ("", False),
]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def judge_reply(user: str, sample: int = 0) -> tuple[str, object]:
    """(reply text, what it means: a rating, 'A' / 'B', or None for an unparsable reply)."""
    digest = _digest(f"{sample}\x00{user}")
    if "## Answer A" in user or "Assistant A's Answer" in user:
        verdict = "AB"[digest[0] % 2]
        template, ok = VERDICT_PHRASES[digest[1] % len(VERDICT_PHRASES)]
        return template.format(v=verdict), verdict if ok else None
    rating = 1 + digest[0] % 10
    template, ok = RATING_PHRASES[digest[1] % len(RATING_PHRASES)]
    return template.format(r=rating), rating if ok else None


class JudgeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, model: str = JUDGE_MODEL, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.model = model
        self.lock = threading.Lock()
        self.requests = 0
        self.faults_served: Counter[str] = Counter()
        self.fault_plan: list[str | None] = []  # per arriving request: None, "429", "500" or "slow"
        self.intended: dict[str, list[object]] = {}  # user message -> meaning of each sample
        self.bodies: list[dict] = []
        self.authorizations: set[str] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self.slow_s = 1.5
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> JudgeServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class JsonHandler(BaseHTTPRequestHandler):
    """Quiet JSON replies, shared by the loopback endpoints of the tests (this judge, the fake Nemotron)."""

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class _Handler(JsonHandler):
    server: JudgeServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        state = self.server
        with state.lock:
            state.requests += 1
            fault = state.fault_plan[state.requests - 1] if state.requests <= len(state.fault_plan) else None
            if fault:
                state.faults_served[fault] += 1
            state.bodies.append(request)
            state.authorizations.add(self.headers.get("Authorization", ""))
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            if self.path != "/v1/chat/completions" or request.get("model") != state.model:
                return self._send(404, {"error": {"message": f"no model {request.get('model')!r}"}})
            if fault == "429":
                return self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
            if fault == "500":
                return self._send(500, {"error": {"message": "internal error"}})
            if fault == "slow":
                time.sleep(state.slow_s)
            user = request["messages"][-1]["content"]
            replies = [judge_reply(user, sample) for sample in range(int(request.get("n", 1)))]
            with state.lock:
                state.intended[user] = [meaning for _, meaning in replies]
            prompt_tokens = sum(len(m["content"].split()) for m in request["messages"])
            self._send(200, {
                "id": f"chatcmpl-{state.requests}", "object": "chat.completion", "model": state.model,
                "choices": [{"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                            for i, (text, _) in enumerate(replies)],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 7 * len(replies),
                          "total_tokens": prompt_tokens + 7 * len(replies)},
            })
        finally:
            with state.lock:
                state.in_flight -= 1


def main() -> None:
    """`python tests/judge_server.py [--port 8400]`: serve until Ctrl-C (the `both-branches` scenario of .test/ by hand)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8400)
    server = JudgeServer(port=parser.parse_args().port)
    print(f"loopback judge {JUDGE_MODEL} at {server.base_url} (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()


if __name__ == "__main__":
    main()
