"""The API source against a loopback server replaying recorded arXiv responses (2016 and 2026 Atom)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from rmeval.benchmarks.fairness.arxiv.api import ApiFetcher, ApiSettings, build_query
from rmeval.benchmarks.fairness.arxiv.categories import load_table, resolve_group
from rmeval.benchmarks.fairness.arxiv.cli_fetch import fetch_settings
from rmeval.benchmarks.fairness.arxiv.collect import DateWindow
from rmeval.benchmarks.fairness.arxiv.fetch import fetch_candidates
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.cli_settings import settings_json
from rmeval.errors import RmevalError
from workflow_helpers import PAPER_GROUPS

EMPTY_FEED = b"""<?xml version='1.0' encoding='UTF-8'?>
<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns="http://www.w3.org/2005/Atom">
  <title>arXiv Query: empty</title>
  <opensearch:itemsPerPage>10</opensearch:itemsPerPage>
  <opensearch:totalResults>0</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>
</feed>
"""


class ReplayServer:
    """Serves recorded bodies by (start, max_results); faults queued per start are served first."""

    def __init__(self, pages: dict[tuple[int, int], bytes]) -> None:
        self.pages = pages
        self.faults: dict[int, list[str]] = {}
        self.requests: list[tuple[float, str, dict[str, list[str]]]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                query = parse_qs(urlsplit(self.path).query)
                start = int(query.get("start", ["0"])[0])
                size = int(query.get("max_results", ["10"])[0])
                with server.lock:
                    server.requests.append((time.monotonic(), self.path, query))
                    queue = server.faults.get(start, [])
                    fault = queue.pop(0) if queue else None
                if fault == "close":
                    self.connection.close()  # no response at all: a connection error for the client
                    return
                status, body = 200, server.pages.get((start, size), EMPTY_FEED)
                if fault == "503":
                    status, body = 503, b"Service Unavailable"
                elif fault == "400":
                    status, body = 400, b"<error>bad query</error>"
                elif fault == "empty":
                    body = EMPTY_FEED
                elif fault == "truncated":
                    body = body[: len(body) // 2]
                self.send_response(status)
                self.send_header("Content-Type", "application/atom+xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/api/query"

    def starts(self) -> list[int]:
        return [int(q["start"][0]) for _, _, q in self.requests]

    def __enter__(self) -> ReplayServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def pages_2026(shared_data: Path) -> dict[tuple[int, int], bytes]:
    folder = shared_data / "arxiv" / "raw_formats" / "api_atom_2026_arxivpy_json"
    pages = {}
    for start in range(0, 60, 10):
        (path,) = folder.glob(f"q_testing_s{start}_m10_*.json")
        recorded = json.loads(path.read_text())
        assert recorded["status_code"] == 200
        pages[(start, 10)] = recorded["body"].encode("utf-8")
    return pages


@pytest.fixture(scope="module")
def pages_2016(shared_data: Path) -> dict[tuple[int, int], bytes]:
    folder = shared_data / "arxiv" / "raw_formats" / "api_atom_2016_arxivpy"
    return {
        (0, 10): (folder / "search_query=au_del_maestro.xml").read_bytes(),
        (10, 10): (
            folder / "search_query=au_del_maestro+ANDNOT+_28ti_checkerboard+OR+ti_Pyrochlore_29.xml"
        ).read_bytes(),
    }


def api_settings(server: ReplayServer, tmp_path: Path, **api) -> ArxivSettings:
    raw = {
        "base_url": server.url,
        "page_size": 10,
        "delay_seconds": 0.05,
        "retries": 3,
        "backoff_seconds": 0.05,
        "max_results": 30,
        "cache_dir": str(tmp_path / "cache"),
        **api,
    }
    return ArxivSettings.from_mapping({"source": "api", "papers_per_group": 1000, "api": raw})


def test_paging_builds_the_category_query_and_parses_2026_atom(pages_2026, tmp_path):
    with ReplayServer(pages_2026) as server:
        summary = fetch_candidates(
            "computer_science", ["cs"], api_settings(server, tmp_path), tmp_path / "out"
        )
    assert server.starts() == [0, 10, 20]
    query = server.requests[0][2]
    assert query["sortBy"] == ["submittedDate"] and query["sortOrder"] == ["descending"]
    assert query["max_results"] == ["10"]
    terms = query["search_query"][0].split(" OR ")
    assert "cat:cs.AI" in terms and "cat:math.IT" in terms and "cat:cs.SY" not in terms
    source = summary["source"]
    assert source["kind"] == "api" and source["total_results"] == 214881
    assert source["records_fetched"] == 30 and source["pages_downloaded"] == 3 and source["retries"] == 0
    counts = summary["counts"]
    assert counts["records_read"] == 30
    assert counts["single_group"] + counts["mixed_groups"] + counts["outside_group"] == 30
    frame = pd.read_parquet(tmp_path / "out" / "computer_science.candidates.parquet")
    assert "2202.12139" in set(frame["id"])  # first entry of the first page, version stripped
    row = frame.set_index("id").loc["2202.12139"]
    assert row["categories"].split() == sorted(set(row["categories"].split()))
    assert all(c.startswith("cs.") for c in row["categories"].split())
    assert not frame["title"].str.contains("\n").any()


def test_2016_atom_format(pages_2016, tmp_path):
    physics = PAPER_GROUPS["physics"]
    with ReplayServer(pages_2016) as server:
        summary = fetch_candidates(
            "physics", physics, api_settings(server, tmp_path, max_results=20), tmp_path / "o"
        )
    assert server.starts() == [0, 10]
    assert summary["counts"]["single_group"] == 20  # all cond-mat papers
    frame = pd.read_parquet(tmp_path / "o" / "physics.candidates.parquet")
    row = frame.set_index("id").loc["1201.4869"]
    assert row["title"] == "A Luttinger Liquid Core Inside Helium-4 Filled Nanopores"
    assert row["abstract"].startswith(
        "As helium-4 is cooled below 2.17 K it undergoes"
    )  # whitespace collapsed
    assert row["categories"].startswith("cond-mat")


def test_503_connection_error_empty_page_and_truncated_xml_are_retried(pages_2026, tmp_path):
    with ReplayServer(pages_2026) as server:
        server.faults = {0: ["503"], 10: ["empty", "close"], 20: ["truncated"]}
        summary = fetch_candidates(
            "computer_science", ["cs"], api_settings(server, tmp_path), tmp_path / "out"
        )
    assert server.starts() == [0, 0, 10, 10, 10, 20, 20]
    assert summary["source"]["retries"] == 4
    assert summary["counts"]["records_read"] == 30
    clean = tmp_path / "clean"
    with ReplayServer(pages_2026) as server:
        fetch_candidates("computer_science", ["cs"], api_settings(server, clean), clean / "out")
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "out" / "computer_science.candidates.parquet"),
        pd.read_parquet(clean / "out" / "computer_science.candidates.parquet"),
    )


def test_persistent_failure_and_refused_query_are_clear_errors(pages_2026, tmp_path):
    with ReplayServer(pages_2026) as server:
        server.faults = {10: ["503"] * 10}
        with pytest.raises(
            RmevalError, match=r"page start=10 failed after 3 tries \(HTTP 503\).*re-run to resume"
        ):
            fetch_candidates(
                "computer_science", ["cs"], api_settings(server, tmp_path, retries=2), tmp_path / "out"
            )
        assert not (tmp_path / "out" / "computer_science.candidates.parquet").exists()
        assert len(list((tmp_path / "cache").glob("*/start_00000000.json"))) == 1  # the good page is kept
        server.faults = {0: ["400"]}
        with pytest.raises(RmevalError, match="refused the query with HTTP 400"):
            fetch_candidates(
                "computer_science", ["cs"], api_settings(server, tmp_path / "x"), tmp_path / "out"
            )


@pytest.mark.slow(reason="a real fetch process, SIGKILLed between pages and resumed")
def test_resume_after_the_process_is_killed_between_pages(pages_2026, tmp_path):
    cache = tmp_path / "cache"
    with ReplayServer(pages_2026) as server:
        arxiv = {
            "source": "api",
            "papers_per_group": 1000,
            "api": {
                "base_url": server.url,
                "page_size": 10,
                "delay_seconds": 2.0,
                "max_results": 50,
                "cache_dir": str(cache),
            },
        }
        argv = [
            sys.executable,
            "-m",
            "rmeval",
            "arxiv-fetch",
            "--group",
            "computer_science",
            "--categories",
            "cs",
            "--out-dir",
            str(tmp_path / "out"),
            "--settings",
            settings_json(fetch_settings(arxiv, None)),
        ]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not list(cache.glob("*/start_00000010.json")):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)  # during the 2 s wait before page 3
        process.wait()
        assert server.starts() == [0, 10]
        assert not (tmp_path / "out" / "computer_science.candidates.parquet").exists()

        settings = ArxivSettings.from_mapping(arxiv)
        settings.api.delay_seconds = 0.05
        summary = fetch_candidates("computer_science", ["cs"], settings, tmp_path / "out")
    assert server.starts() == [0, 10, 20, 30, 40]  # nothing fetched twice
    assert summary["source"]["pages_from_cache"] == 2 and summary["source"]["pages_downloaded"] == 3
    assert summary["counts"]["records_read"] == 50


@pytest.mark.slow(reason="real waits: the spacing between requests is the thing checked")
def test_configured_spacing_is_honoured_across_parallel_jobs(pages_2026, tmp_path):
    with ReplayServer(pages_2026) as server:
        threads = [
            threading.Thread(
                target=fetch_candidates,
                args=(group, categories, api_settings(server, tmp_path, delay_seconds=0.4), tmp_path / group),
            )
            for group, categories in (("machine_learning", ["cs.LG"]), ("vision", ["cs.CV"]))
        ]
        # Two queries (two page caches) under one cache_dir share its spacing lock, as parallel jobs do.
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    times = sorted(t for t, _, _ in server.requests)
    assert len(times) == 6
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= 0.39, gaps


@pytest.mark.slow(reason="real waits: arXiv's 3 s between requests, checked on the clock")
def test_default_spacing_is_three_seconds(pages_2026, tmp_path):
    defaults = ApiSettings()
    assert defaults.delay_seconds == 3.0
    with ReplayServer(pages_2026) as server:
        settings = ApiSettings(base_url=server.url, page_size=10, cache_dir=str(tmp_path / "cache"))
        fetcher = ApiFetcher(settings, "cat:cs.AI")
        assert fetcher.client.delay_seconds == 3.0
        fetcher.page(0)
        fetcher.page(10)
    (t0, _, _), (t1, _, _) = server.requests
    assert t1 - t0 >= 2.99


def test_short_spacing_only_for_loopback(tmp_path):
    with pytest.raises(RmevalError, match="delay_seconds=1.0 is below the 3 s"):
        ArxivSettings.from_mapping({"source": "api", "api": {"delay_seconds": 1.0}})
    ok = ArxivSettings.from_mapping(
        {"source": "api", "api": {"delay_seconds": 0, "base_url": "http://localhost:1/q"}}
    )
    assert ok.api.delay_seconds == 0


def test_query_with_aliases_and_date_window():
    table = load_table()
    spec = resolve_group("systems_science", ["eess.SY"], table)
    from datetime import date

    assert build_query(spec, DateWindow()) == "cat:eess.SY OR cat:cs.SY"
    window = DateWindow(date(2023, 1, 1), date(2023, 12, 31))
    assert (
        build_query(spec, window)
        == "(cat:eess.SY OR cat:cs.SY) AND submittedDate:[202301010000 TO 202312312359]"
    )
