"""API faults against loopback servers only (127.0.0.1), bounded in count and time: arXiv 503 storms, replies
slower than the timeout and malformed XML; the reward-model API's 429 bursts and connections reset in the middle
of a reply. Each faulty run must give exactly what a clean run gives."""

from __future__ import annotations

import json
import socket
import struct
import threading
from pathlib import Path

import pandas as pd
import pytest
from drill_helpers import AtomServer, api_block, synthetic_papers
from rmeval.benchmarks.fairness.arxiv.fetch import fetch_candidates
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.cli import main as rmeval_main
from rmeval.errors import RmevalError
from test_models_nemotron import API_KEY, FakeNemotron
from test_models_nemotron import Handler as NemotronHandler

PAPERS = synthetic_papers(12, seed=7)


def _fetch(server: AtomServer, tmp_path: Path, name: str, **api: object) -> tuple[dict, pd.DataFrame]:
    settings = ArxivSettings.from_mapping({"source": "api", "papers_per_group": 5,
                                           "api": api_block(server.url, tmp_path / name / "cache", **api)})
    summary = fetch_candidates("economics", ["econ"], settings, tmp_path / name / "out")
    return summary, pd.read_parquet(tmp_path / name / "out" / "economics.candidates.parquet")


@pytest.fixture(scope="module")
def clean_candidates(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    with AtomServer(PAPERS) as server:
        summary, frame = _fetch(server, tmp_path_factory.mktemp("clean-api"), "clean")
    assert summary["source"]["retries"] == 0 and len(frame) == 10  # papers_per_group x candidate_factor
    return frame


ARXIV_FAULTS = {
    "503 storm": (["503"] * 3, {}, "3 HTTP 503 replies in a row (retries: 3)"),
    "slow replies": (["slow", "slow"], {"timeout_seconds": 0.4}, "2 replies 2 s late with timeout_seconds 0.4"),
    "malformed XML": (["garbage", "half", "garbage"], {}, "an HTML error page, a half Atom document, HTML again"),
}


@pytest.mark.slow(reason="a real wait: each fault is retried after the client's backoff")
@pytest.mark.parametrize("fault", list(ARXIV_FAULTS))
def test_arxiv_api_faults_are_retried_to_the_clean_result(fault: str, clean_candidates: pd.DataFrame,
                                                          tmp_path: Path, drill) -> None:
    faults, api, injected = ARXIV_FAULTS[fault]
    row = drill(f"arXiv API: {fault}", "fault", injected,
                "retried with back-off within arxiv.api.retries; candidates identical to a clean run",
                tried=len(faults))
    with AtomServer(PAPERS, faults=list(faults)) as server:
        summary, frame = _fetch(server, tmp_path, "faulty", **api)
        requests = len(server.requests)
    assert summary["source"]["retries"] == len(faults)
    assert requests == 3 + len(faults), "one extra request per fault, no more"
    row.rows_lost = len(set(clean_candidates["id"]) - set(frame["id"]))
    pd.testing.assert_frame_equal(frame, clean_candidates)


@pytest.mark.slow(reason="a real wait: the retries' backoff, then a resumed fetch")
@pytest.mark.parametrize("fault", ["503", "garbage"], ids=["503-storm", "malformed-xml"])
def test_arxiv_fault_storm_beyond_the_retries_fails_cleanly_then_resumes(
    fault: str, clean_candidates: pd.DataFrame, tmp_path: Path, drill
) -> None:
    row = drill(f"arXiv API: {fault} storm beyond retries", "fault",
                f"4 {fault} replies on page 2 with retries: 3",
                "fails naming the page and the cause, writes no candidates; the rerun resumes from the page cache",
                tried=4)
    with AtomServer(PAPERS, faults=[fault] * 4, clean_requests=1) as server:  # page 0 is served normally
        with pytest.raises(RmevalError) as raised:
            _fetch(server, tmp_path, "storm")
        message = str(raised.value)
        assert "page start=4 failed after 4 tries" in message and "re-run to resume" in message, message
        assert ("HTTP 503" if fault == "503" else "invalid XML") in message, message
        assert not (tmp_path / "storm" / "out" / "economics.candidates.parquet").exists()
        before = len(server.requests)
        summary, frame = _fetch(server, tmp_path, "storm")
        assert [start for _, start in server.requests[before:]] == [4, 8], "page 0 comes from the cache"
    assert summary["source"]["pages_from_cache"] == 1
    row.rows_lost = len(set(clean_candidates["id"]) - set(frame["id"]))
    pd.testing.assert_frame_equal(frame, clean_candidates)


# ----------------------------------------------------------------------------- reward-model API
class FaultyNemotronHandler(NemotronHandler):
    """The recorded-format Nemotron endpoint with faults: a 429 burst for every row, then connection resets."""

    def do_POST(self) -> None:  # noqa: N802
        state = self.server
        with state.lock:
            state.fault_index += 1
            fault = state.fault_plan[state.fault_index - 1] if state.fault_index <= len(state.fault_plan) else None
            state.faults_served += fault is not None
        if fault is None:
            return super().do_POST()
        self.rfile.read(int(self.headers["Content-Length"]))
        if fault == "429":
            body = b'{"error": "rate limited"}'
            self.send_response(429)
            self.send_header("Retry-After", "0.2")
        else:  # "reset": headers and half a body, then a TCP reset
            body = json.dumps({"choices": [{"logprobs": {"content": []}}], "padding": "x" * 200}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if fault == "429":
            self.wfile.write(body)
            return
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


@pytest.fixture()
def nemotron():
    server = FakeNemotron()
    server.RequestHandlerClass = FaultyNemotronHandler
    server.fault_plan = []  # one entry per request, in arrival order: None, "429" or "reset"
    server.fault_index = 0
    server.faults_served = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _nemotron_spec(server: FakeNemotron, cache: Path) -> str:
    return json.dumps({
        "name": "Nemotron-4-340B-Reward", "path": "nvidia/nemotron-4-340b-reward", "adapter": "nemotron-api",
        "resources": {"gpu": 0},
        "options": {"base_url": server.base_url, "model": "nvidia/nemotron-4-340b-reward",
                    "api_key_env": "RMEVAL_DRILL_NEMOTRON_KEY", "max_concurrency": 2, "timeout_s": 5,
                    "backoff_s": 0.05, "cache_dir": str(cache)},
    })


def _nemotron_score(server: FakeNemotron, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    papers = synthetic_papers(4, seed=3)
    data = tmp_path / "economics.parquet"
    pd.DataFrame({"id": [p.id for p in papers], "title": [p.title for p in papers],
                  "abstract": [p.abstract for p in papers]}).to_parquet(data)
    output = tmp_path / name / "economics.parquet"
    monkeypatch.setenv("RMEVAL_DRILL_NEMOTRON_KEY", API_KEY)
    capsys.readouterr()
    status = rmeval_main(["score", "--spec", _nemotron_spec(server, tmp_path / name / "cache"), "--task",
                          "fairness", "--input", str(data), "--output", str(output), "--progress-every", "0",
                          "--checkpoint-every", "2"])
    captured = capsys.readouterr()
    return status, captured.out + captured.err, output


REWARD_API_FAULTS = {
    "429 burst": (["429"] * 12, "12 HTTP 429 replies in a row (Retry-After: 0.2) across all 8 rows"),
    "connection resets": (["reset"] * 6, "6 replies cut mid-body by a TCP reset (Content-Length not reached)"),
}


@pytest.mark.slow(reason="a real wait: each fault is retried after the client's backoff")
@pytest.mark.parametrize("fault", list(REWARD_API_FAULTS))
def test_reward_api_faults_are_retried_to_the_clean_result(
    fault: str, nemotron: FakeNemotron, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], drill
) -> None:
    plan, injected = REWARD_API_FAULTS[fault]
    row = drill(f"reward-model API: {fault}", "fault", injected,
                "each request retried within the adapter's default 8 retries (Retry-After honoured); scores identical to a clean run", tried=len(plan))
    status, clean_log, clean = _nemotron_score(nemotron, tmp_path, "clean", monkeypatch, capsys)
    assert status == 0, clean_log
    nemotron.fault_plan = [None] * nemotron.fault_index + plan  # faults start with the next run
    status, log, output = _nemotron_score(nemotron, tmp_path, "faulty", monkeypatch, capsys)
    assert status == 0, log
    assert nemotron.faults_served == len(plan)
    assert nemotron.requests <= 2 * 8 + len(plan), "retries stay bounded"
    assert ("HTTP 429" if fault == "429 burst" else "ChunkedEncodingError; retry") in log
    row.rows_lost = _lost(clean, output)
    assert output.read_bytes() == clean.read_bytes()
    assert API_KEY not in log


def _lost(reference: Path, candidate: Path) -> int:
    if not candidate.exists():
        return len(pd.read_parquet(reference))
    merged = pd.read_parquet(reference).merge(pd.read_parquet(candidate), on="id", how="left", suffixes=("", "_b"))
    return int((merged["reward"] != merged["reward_b"]).sum())
